#include "harness/environment.hpp"

#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

#include <sched.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "config.hpp"
#include "core/errors.hpp"
#include "core/settings.hpp"
#include "engine/mpi_library_info.hpp"
#include "gpu/device.hpp"
#include "harness/rdma.hpp"
#include "harness/timer.hpp"
#include "harness/version.hpp"

namespace cb {
namespace {

std::string field_of(const std::string& path, const std::string& key) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key, 0) != 0) continue;
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    auto value = line.substr(colon + 1);
    value.erase(0, value.find_first_not_of(" \t"));
    return value;
  }
  return {};
}

// Cost of one clock read: the per-iteration stamps of the distribution pass pay it.
double clock_read_ns() {
  double best = 1e9;
  for (int i = 0; i < 1000; ++i) {
    const double a = now_s();
    const double b = now_s();
    best = std::min(best, (b - a) * 1e9);
  }
  return best;
}

// Every name detect_launcher() gives, in a fixed order (ranks compare their index).
constexpr const char* kLauncherNames[] = {"none", "mpirun (hydra)", "mpirun (Open MPI)", "srun",
                                          "unknown"};

// Launcher variables that describe the job's size and layout (never a rank's own number),
// recorded as rank 0 saw them when set.
constexpr const char* kLauncherVariables[] = {"SLURM_JOB_ID",
                                              "SLURM_JOB_NUM_NODES",
                                              "SLURM_NNODES",
                                              "SLURM_NTASKS",
                                              "SLURM_NTASKS_PER_NODE",
                                              "SLURM_TASKS_PER_NODE",
                                              "SLURM_STEP_ID",
                                              "SLURM_STEP_NUM_NODES",
                                              "SLURM_STEP_NUM_TASKS",
                                              "SLURM_STEP_TASKS_PER_NODE",
                                              "SLURM_MPI_TYPE",
                                              "PMI_SIZE",
                                              "MPI_LOCALNRANKS",
                                              "OMPI_COMM_WORLD_SIZE",
                                              "OMPI_COMM_WORLD_LOCAL_SIZE",
                                              "OMPI_UNIVERSE_SIZE"};

int launcher_index(const std::string& name) {
  const auto* it = std::find(std::begin(kLauncherNames), std::end(kLauncherNames), name);
  return static_cast<int>(it - std::begin(kLauncherNames));
}

// CB_LINE_RATE_GBPS: a line rate to use instead of libibverbs' (a NIC it does not list,
// such as plain Ethernet under TCP); 0 when unset.
double line_rate_setting() {
  const auto text = setting_text("CB_LINE_RATE_GBPS");
  if (!text) return 0;
  char* end = nullptr;
  const double v = std::strtod(text->c_str(), &end);
  if (end == text->c_str() || *end != '\0' || !std::isfinite(v) || v <= 0 || v > 1e6)
    throw UsageError(
        "CB_LINE_RATE_GBPS must be a line rate in Gb/s, a number above 0 and at "
        "most 1000000 (got '" +
        *text + "')");
  return v;
}

std::string host_of_rank(const Control& ctl, int rank) {
  for (const auto& [name, ranks] : ctl.hosts())
    if (std::find(ranks.begin(), ranks.end(), rank) != ranks.end()) return name;
  return "?";
}

// environment.launcher and environment.line_rate, with one reduction over the ranks for
// what they must agree on: the lowest line rate, the first rank without one, the launcher.
void describe_launch_and_line_rate(const Control& ctl, const nlohmann::json& rdma,
                                   nlohmann::json& out) {
  double override_gbps = 0;
  agreed(ctl, [&] { override_gbps = line_rate_setting(); });
  const LauncherGuess launcher =
      detect_launcher([](const char* name) { return std::getenv(name); }, ctl.size());
  const nlohmann::json port = fastest_active_port(rdma);
  const double mine = override_gbps > 0 ? override_gbps
                      : port.is_null()  ? 0.0
                                        : port["rate_gbps"].get<double>();
  const double index = launcher_index(launcher.name);
  const std::vector<double> folded =
      ctl.max({-mine, -(mine > 0 ? double(ctl.size()) : double(ctl.rank())), index, -index});
  const double lowest = -folded[0];
  const int first_without = static_cast<int>(-folded[1]);

  std::vector<int> counts;
  for (const auto& [name, ranks] : ctl.hosts()) counts.push_back(static_cast<int>(ranks.size()));
  nlohmann::json vars = nlohmann::json::object();
  for (const char* name : kLauncherVariables)
    if (const char* v = std::getenv(name); v && *v) vars[name] = v;
  out["launcher"] = {{"name", launcher.name},
                     {"detected_from", launcher.variable},
                     {"same_on_all_ranks", folded[2] == -folded[3]},
                     {"nodes", ctl.node_count()},
                     {"ranks_per_node", ranks_per_node_json(counts)},
                     {"variables", vars}};

  nlohmann::json line;
  if (lowest > 0) {
    line["rate_gbps"] = lowest;
    if (override_gbps > 0) {
      line["source"] = "CB_LINE_RATE_GBPS";
    } else {
      line["source"] = "libibverbs";
      for (const char* key : {"device", "port", "link_layer", "width", "speed"})
        line[key] = port[key];
    }
    out["line_rate"] = line;
    return;
  }
  line["rate_gbps"] = nullptr;
  line["source"] = "none";
  if (first_without != ctl.rank()) {
    line["unavailable"] = "no active RDMA port on host " + host_of_rank(ctl, first_without) +
                          " (rank " + std::to_string(first_without) + ")";
  } else if (rdma.contains("unavailable")) {
    line["unavailable"] = std::string("no RDMA device (") + (CB_HAVE_VERBS ? "libibverbs: " : "") +
                          rdma["unavailable"].get<std::string>() + ")";
  } else {
    line["unavailable"] = "no active RDMA port (libibverbs lists " +
                          std::to_string(rdma["devices"].size()) +
                          " device(s), none with an active port)";
  }
  out["line_rate"] = line;
}

// The CPUs this process may run on (sched_getaffinity) as ranges: "0", "0-1", "0,2-3".
std::string affinity_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return "unknown";
  std::string out;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (!CPU_ISSET(cpu, &set)) continue;
    int last = cpu;
    while (last + 1 < CPU_SETSIZE && CPU_ISSET(last + 1, &set)) ++last;
    out += (out.empty() ? "" : ",") + std::to_string(cpu) +
           (last > cpu ? "-" + std::to_string(last) : std::string());
    cpu = last;
  }
  return out;
}

// Where the launcher let each rank run (so that a comparison of libraries says how each
// was launched, and a binding the user did not ask for is visible): every rank's CPU list,
// and whether every rank is bound to fewer CPUs than its node has.
nlohmann::json describe_binding(const Control& ctl) {
  constexpr int kWidth = 256;
  char mine[kWidth] = {};
  const std::string cpus = affinity_cpus();
  std::snprintf(mine, sizeof mine, "%s", cpus.c_str());
  std::vector<char> all(static_cast<size_t>(kWidth) * static_cast<size_t>(ctl.size()));
  MPI_Allgather(mine, kWidth, MPI_CHAR, all.data(), kWidth, MPI_CHAR, ctl.comm());
  nlohmann::json per_rank = nlohmann::json::array();
  int bound = 1;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0 || CPU_COUNT(&set) >= cores_on_node()) bound = 0;
  for (int r = 0; r < ctl.size(); ++r)
    per_rank.push_back(std::string(all.data() + static_cast<size_t>(r) * kWidth));
  return {{"cpus_per_rank", per_rank}, {"bound", ctl.min(static_cast<double>(bound)) == 1.0}};
}

}  // namespace

LauncherGuess detect_launcher(const std::function<const char*(const char*)>& get, int nranks) {
  const auto set = [&](const char* name) {
    const char* v = get(name);
    return v != nullptr && *v != '\0';
  };
  if (set("MPI_LOCALNRANKS")) return {"mpirun (hydra)", "MPI_LOCALNRANKS"};
  if (set("OMPI_COMM_WORLD_SIZE")) return {"mpirun (Open MPI)", "OMPI_COMM_WORLD_SIZE"};
  if (set("SLURM_PROCID")) {
    if (set("SLURM_STEP_ID")) return {"srun", "SLURM_STEP_ID"};
    if (set("SLURM_STEPID")) return {"srun", "SLURM_STEPID"};
  }
  if (nranks == 1 && !set("PMI_SIZE") && !set("PMI_RANK") && !set("PMIX_RANK")) return {"none", ""};
  return {"unknown", ""};
}

nlohmann::json ranks_per_node_json(const std::vector<int>& ranks_on_each_node) {
  if (ranks_on_each_node.empty()) return 0;
  const int first = ranks_on_each_node.front();
  if (std::all_of(ranks_on_each_node.begin(), ranks_on_each_node.end(),
                  [&](int n) { return n == first; }))
    return first;
  return ranks_on_each_node;
}

std::string cpu_model() {
  return field_of("/proc/cpuinfo", "model name");
}

void describe_environment(const Control& ctl, nlohmann::json& out) {
  nlohmann::json hosts = nlohmann::json::array();
  for (const auto& [name, ranks] : ctl.hosts()) hosts.push_back({{"name", name}, {"ranks", ranks}});
  int mpi_major = 0, mpi_minor = 0;
  MPI_Get_version(&mpi_major, &mpi_minor);
  utsname u{};
  uname(&u);
  timespec res{};
  clock_getres(CLOCK_MONOTONIC, &res);

  out["hostname"] = ctl.hostname();
  out["nranks"] = ctl.size();
  out["nodes"] = ctl.node_count();
  out["max_ranks_per_node"] = ctl.max_ranks_per_node();
  out["hosts"] = hosts;
  out["mpi"] = {{"library", mpi_library_version()},
                {"standard", std::to_string(mpi_major) + "." + std::to_string(mpi_minor)}};
  describe_mpi_library(out["mpi"]);
  describe_mpi_cuda_awareness(out["mpi"]);
  out["collbench"] = {{"version", CB_VERSION},
                      {"git_revision", git_revision()},
                      {"build_type", CB_BUILD_TYPE},
                      {"sanitize", CB_SANITIZE},
                      {"compiler", CB_CXX_COMPILER},
                      {"features",
                       {{"cuda", bool(CB_HAVE_CUDA)},
                        {"nccl", bool(CB_HAVE_NCCL)},
                        {"verbs", bool(CB_HAVE_VERBS)}}}};
  out["cpu"] = {{"model", cpu_model()}, {"logical_cores", cores_on_node()}};
  out["memory_bytes"] = [] {
    const std::string kb = field_of("/proc/meminfo", "MemTotal");
    try {
      return std::stoull(kb) * 1024ULL;
    } catch (const std::exception&) {
      return 0ULL;
    }
  }();
  out["os"] = std::string(u.sysname) + " " + u.release + " " + u.machine;
  out["timer"] = {{"clock", "std::chrono::steady_clock (CLOCK_MONOTONIC)"},
                  {"resolution_ns", res.tv_sec * 1e9 + static_cast<double>(res.tv_nsec)},
                  {"read_overhead_ns", clock_read_ns()}};
  out["wait_mode"] = ctl.wait_mode() == WaitMode::Yield ? "yield" : "spin";
  out["binding"] = describe_binding(ctl);
  // A run under LD_PRELOAD (the engine's preload, the recorder) is not the MPI library's
  // own: recorded so that its figures are never taken for MPI's.
  if (const char* preload = std::getenv("LD_PRELOAD"); preload && *preload)
    out["ld_preload"] = preload;
  // The CB_* settings in force (algorithm choices, tuning file, shared memory ...): they
  // change what was measured, so a document names them.
  nlohmann::json cb_vars = nlohmann::json::object();
  for (char** e = environ; *e; ++e) {
    const std::string_view kv(*e);
    const size_t eq = kv.find('=');
    if (kv.starts_with("CB_") && eq != std::string_view::npos)
      cb_vars[std::string(kv.substr(0, eq))] = std::string(kv.substr(eq + 1));
  }
  if (!cb_vars.empty()) out["cb_variables"] = cb_vars;
  nlohmann::json gpu;
  gpu::describe(gpu);
  out["gpu"] = gpu;
  nlohmann::json rdma;
  describe_rdma(rdma);
  out["rdma"] = rdma;
  describe_launch_and_line_rate(ctl, rdma, out);
}

}  // namespace cb
