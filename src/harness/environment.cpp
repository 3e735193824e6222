#include "harness/environment.hpp"

#include <cstdlib>

#include <sys/utsname.h>
#include <time.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "backends/mpi_library.hpp"
#include "config.hpp"
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

}  // namespace

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
  // A run under LD_PRELOAD (the engine's preload, the recorder) is not the MPI library's
  // own: recorded so that its figures are never taken for MPI's.
  if (const char* preload = std::getenv("LD_PRELOAD"); preload && *preload)
    out["ld_preload"] = preload;
  nlohmann::json gpu;
  gpu::describe(gpu);
  out["gpu"] = gpu;
  nlohmann::json rdma;
  describe_rdma(rdma);
  out["rdma"] = rdma;
}

}  // namespace cb
