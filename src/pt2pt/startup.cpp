// OMB's start-up benchmarks (c/mpi/startup/): cb_init (osu_init: how long MPI_Init takes,
// or with -I MPI_Session_init) and cb_hello (osu_hello). They time or run MPI's start-up
// itself, so they cannot use bench_main() (which starts MPI first): one small main each,
// chosen by CB_STARTUP (src/pt2pt/CMakeLists.txt). Table output only, as OMB's.
#include <mpi.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "config.hpp"

namespace {

constexpr int kUsage = 2;  // collbench's exit status for bad input

double now_ms() {
  // CLOCK_REALTIME, as OMB's osu_init (no MPI clock before MPI is up).
  using clock = std::chrono::system_clock;
  return std::chrono::duration<double, std::milli>(clock::now().time_since_epoch()).count();
}

struct Args {
  bool session = false;
  bool help = false, version = false;
  std::string bad;
};

Args parse(int argc, char** argv, bool init) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string_view s = argv[i];
    if (s == "-h" || s == "--help") {
      a.help = true;
    } else if (s == "-v" || s == "--version") {
      a.version = true;
    } else if (init && (s == "-I" || s == "--session")) {
      a.session = true;
    } else {
      a.bad = std::string(s);
    }
  }
  return a;
}

int usage(const char* exe, bool init, const Args& a) {
  if (a.version) {
    std::printf("collbench %s\n", CB_VERSION);
    return 0;
  }
  std::printf("Usage: %s [options]\n", exe);
  if (init) std::printf("  -I, --session   time MPI_Session_init instead of MPI_Init (MPI 4.0)\n");
  std::printf("  -h, --help      this text\n  -v, --version   collbench's version\n");
  if (!a.bad.empty()) {
    std::fprintf(stderr, "collbench: error: unknown option '%s' (run %s --help)\n", a.bad.c_str(),
                 exe);
    return kUsage;
  }
  return 0;
}

// osu_init: each rank's start-up time, min / max / avg over the ranks on rank 0.
int run_init(const Args& a) {
  MPI_Session session = MPI_SESSION_NULL;
  MPI_Comm comm = MPI_COMM_WORLD;
  const double t0 = now_ms();
  if (a.session) {
    if (MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &session) != MPI_SUCCESS) {
      std::fprintf(stderr, "collbench: error: MPI_Session_init failed\n");
      return 3;
    }
  } else {
    MPI_Init(nullptr, nullptr);
  }
  const double ms = now_ms() - t0;
  if (a.session) {  // a communicator over every process, to gather the times
    MPI_Group world;
    if (MPI_Group_from_session_pset(session, "mpi://WORLD", &world) != MPI_SUCCESS ||
        MPI_Comm_create_from_group(world, "collbench.init", MPI_INFO_NULL, MPI_ERRORS_RETURN,
                                   &comm) != MPI_SUCCESS) {
      std::fprintf(stderr, "collbench: error: no communicator from the mpi://WORLD process set\n");
      return 3;
    }
    MPI_Group_free(&world);
  }
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  double min = 0, max = 0, sum = 0;
  MPI_Reduce(&ms, &min, 1, MPI_DOUBLE, MPI_MIN, 0, comm);
  MPI_Reduce(&ms, &max, 1, MPI_DOUBLE, MPI_MAX, 0, comm);
  MPI_Reduce(&ms, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, comm);
  if (rank == 0) {
    std::printf("# collbench MPI Init Test v%s\n", CB_VERSION);
    std::printf("# Timed: %s (CLOCK_REALTIME before and after, per rank)\n",
                a.session ? "MPI_Session_init" : "MPI_Init");
    std::printf("nprocs: %d, min: %.0f ms, max: %.0f ms, avg: %.0f ms\n", size, min, max,
                sum / size);
    std::fflush(stdout);
  }
  if (a.session) {
    MPI_Comm_free(&comm);
    MPI_Session_finalize(&session);
  } else {
    MPI_Finalize();
  }
  return 0;
}

// osu_hello: start MPI, say how many processes there are, stop.
int run_hello() {
  MPI_Init(nullptr, nullptr);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (rank == 0) {
    std::printf("# collbench MPI Hello World Test v%s\n", CB_VERSION);
    std::printf("This is a test with %d processes\n", size);
    std::fflush(stdout);
  }
  MPI_Finalize();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const bool init = std::strcmp(CB_STARTUP, "init") == 0;
  const Args a = parse(argc, argv, init);
  if (a.help || a.version || !a.bad.empty()) {
    // Before MPI is up the rank is the launcher's (PMI_RANK, OMPI_COMM_WORLD_RANK): one
    // rank speaks, every rank exits alike.
    const char* r = std::getenv("PMI_RANK");
    if (!r) r = std::getenv("OMPI_COMM_WORLD_RANK");
    if (r && std::strcmp(r, "0") != 0) return a.bad.empty() ? 0 : kUsage;
    const char* slash = std::strrchr(argv[0], '/');
    return usage(slash ? slash + 1 : argv[0], init, a);
  }
  return init ? run_init(a) : run_hello();
}
