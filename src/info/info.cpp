// cb_info: what this build and this machine have, as text and (-J FILE) as JSON.
//
//   cb_info [-J FILE]               one process (MPI singleton)
//   mpirun -n N cb_info [-J FILE]   also lists the hosts and ranks of the job
//
// The JSON ("collbench.info/1") holds the same "environment" block as every result JSON,
// plus what only matters here: CUDA architectures, whether MPI is CUDA-aware, NCCL's version,
// and the machine's floors (info/floors.hpp), measured by rank 0 while the others sleep.
#include <mpi.h>
#include <time.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>

#include <string>
#include "engine/algorithm.hpp"
#include "engine/select.hpp"
#include "engine/settings.hpp"
#include "engine/shm/cma.hpp"

#include "backends/control.hpp"
#include "config.hpp"
#include "core/errors.hpp"
#include "core/mpi_check.hpp"
#include "harness/environment.hpp"
#include "harness/rdma.hpp"
#include "info/floors.hpp"

#if CB_HAVE_NCCL
#include <nccl.h>
#endif

namespace cb {
namespace {

using nlohmann::json;

// {"cuda_aware": true|false|null, "cuda_aware_detail": "how we know"}
json mpi_cuda_support() {
  json out;
  cb::describe_mpi_cuda_awareness(out);
  return out;
}

#if CB_HAVE_NCCL
std::string nccl_version_text(int code) {
  // 2.9 and later: MMmmpp (22809 = 2.28.9); earlier: Mmpp (2708 = 2.7.8).
  const int major = code >= 10000 ? code / 10000 : code / 1000;
  const int minor = code >= 10000 ? code % 10000 / 100 : code % 1000 / 100;
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(code % 100);
}
#endif

json nccl_info() {
#if CB_HAVE_NCCL
  int code = 0;
  const ncclResult_t rc = ncclGetVersion(&code);  // works without a GPU
  if (rc != ncclSuccess)
    return {{"unavailable", std::string("ncclGetVersion failed: ") + ncclGetErrorString(rc)}};
  return {{"version", nccl_version_text(code)},
          {"version_code", code},
          {"header_version_code", NCCL_VERSION_CODE}};
#else
  return {{"unavailable", "collbench was built without NCCL (COLLBENCH_NCCL=OFF or not found)"}};
#endif
}

// Probed before MPI_Init (it forks): may two sibling processes, as two ranks are, read
// each other's memory with cross-memory attach?
cb::engine::CmaVerdict cma_probe;

// The engine's algorithms and the tuning table in force (CB_TUNING_FILE or built in).
json engine_info() {
  json out;
  out["cross_memory_attach"] = {{"available", cma_probe.available},
                                {"detail", cma_probe.detail},
                                {"ptrace_scope", cb::engine::ptrace_scope_text()}};
  // What the engine will do: the kernel's verdict, unless CB_ENGINE_CMA=0 turns it off.
  try {
    out["cross_memory_attach"]["used"] = cma_probe.available && cb::engine::engine_settings().cma;
  } catch (const std::exception& e) {
    out["cross_memory_attach"]["used"] = false;
    out["cross_memory_attach"]["setting_error"] = e.what();
  }
  out["algorithms"] = json::array();
  for (const auto* a : cb::engine::all_algorithms())
    out["algorithms"].push_back(
        {{"coll", cb::to_string(a->coll)}, {"name", a->name}, {"summary", a->summary}});
  try {
    cb::engine::TuningTable::load_default().to_json(out["tuning"]);
  } catch (const std::exception& e) {
    out["tuning"] = {{"error", e.what()}};
  }
  return out;
}

// The ranks of rank 0's host, from environment.hosts.
std::vector<int> root_host_ranks(const json& env) {
  for (const auto& h : env["hosts"]) {
    std::vector<int> ranks = h["ranks"].get<std::vector<int>>();
    if (std::find(ranks.begin(), ranks.end(), 0) != ranks.end()) return ranks;
  }
  return {0};
}

// Rank 0 measures the floors while the other ranks wait in a barrier they poll every
// millisecond, asleep in between: a busy-polling rank would take a core from the measurement.
json floors(const Control& ctl, const json& env, info::FloorsMode mode) {
  json out;
  if (ctl.is_root()) {
    try {  // the other ranks wait below: an error here must reach the barrier too
      out = info::measure_floors(mode, info::floors_cpus(env["binding"], root_host_ranks(env)));
    } catch (const std::exception& e) {
      out = {{"mode", mode == info::FloorsMode::Long ? "long" : "quick"}, {"error", e.what()}};
    }
  }
  MPI_Request req = MPI_REQUEST_NULL;
  CB_MPI(MPI_Ibarrier(ctl.comm(), &req));
  const timespec nap{0, 1000000};
  for (int done = 0;;) {
    CB_MPI(MPI_Test(&req, &done, MPI_STATUS_IGNORE));
    if (done) break;
    nanosleep(&nap, nullptr);
  }
  return out;
}

json collect(const Control& ctl, info::FloorsMode mode) {
  json info;
  info["schema"] = "collbench.info/1";
  describe_environment(ctl, info["environment"]);
  info["build"] = {{"cuda_architectures", CB_HAVE_CUDA ? CB_CUDA_ARCHITECTURES : ""}};
  info["mpi"] = mpi_cuda_support();
  info["nccl"] = nccl_info();
  info["engine"] = engine_info();
  info["floors"] = floors(ctl, info["environment"], mode);
  return info;
}

// --- text ------------------------------------------------------------------------------

void section(const char* name) {
  std::printf("[%s]\n", name);
}

void row(const std::string& key, const std::string& value) {
  std::printf("  %-20s %s\n", key.c_str(), value.c_str());
}

std::string str(const json& j, const char* key, const std::string& fallback = "") {
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) return fallback;
  return it->is_string() ? it->get<std::string>() : it->dump();
}

std::string yes_no(bool b) {
  return b ? "yes" : "no";
}

std::string gib(double bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f GiB", bytes / (1024.0 * 1024 * 1024));
  return text;
}

void print_build(const json& env, const json& build) {
  const json& cb = env["collbench"];
  const json& f = cb["features"];
  section("collbench");
  row("version", str(cb, "version"));
  row("git revision", str(cb, "git_revision"));
  row("build type", str(cb, "build_type"));
  row("sanitizer", str(cb, "sanitize").empty() ? "none" : str(cb, "sanitize"));
  row("compiler", str(cb, "compiler"));
  row("features", "cuda=" + yes_no(f.value("cuda", false)) + " nccl=" +
                      yes_no(f.value("nccl", false)) + " verbs=" + yes_no(f.value("verbs", false)));
  row("CUDA architectures", f.value("cuda", false) ? str(build, "cuda_architectures") : "none");
}

void print_mpi(const json& env, const json& mpi) {
  section("MPI");
  row("library", str(env["mpi"], "library"));
  row("standard", str(env["mpi"], "standard"));
  const json& aware = mpi["cuda_aware"];
  row("CUDA-aware", (aware.is_null() ? std::string("unknown") : yes_no(aware.get<bool>())) + " (" +
                        str(mpi, "cuda_aware_detail") + ")");
}

void print_cuda(const json& gpu) {
  section("CUDA");
  row("runtime", str(gpu, "runtime", "none"));
  row("driver", str(gpu, "driver", "none"));
  if (gpu.contains("unavailable")) {
    row("devices", "none: " + str(gpu, "unavailable"));
    return;
  }
  row("devices", std::to_string(gpu["devices"].size()));
  for (const auto& d : gpu["devices"])
    row("device " + str(d, "index"), str(d, "name") + ", compute " + str(d, "compute_capability") +
                                         ", " + gib(d.value("memory_bytes", 0.0)) + ", " +
                                         str(d, "multiprocessors") + " SMs, PCI " +
                                         str(d, "pci_bus_id"));
}

void print_nccl(const json& nccl) {
  section("NCCL");
  if (nccl.contains("unavailable"))
    row("version", "none: " + str(nccl, "unavailable"));
  else
    row("version", str(nccl, "version") + " (code " + str(nccl, "version_code") + ")");
}

// The line rate cb_bw, cb_bibw and cb_mbw_mr compare bandwidth with (% Line): the
// slowest of the nodes' fastest active ports, or why there is none.
void print_line_rate(const json& line) {
  if (!line["rate_gbps"].is_number()) {
    row("line rate",
        "none: " + str(line, "unavailable") + "; cb_bw, cb_bibw, cb_mbw_mr print no % Line column");
    return;
  }
  char rate[32];
  std::snprintf(rate, sizeof rate, "%g Gb/s", line["rate_gbps"].get<double>());
  const std::string from = str(line, "source") == "CB_LINE_RATE_GBPS"
                               ? "CB_LINE_RATE_GBPS"
                               : str(line, "device") + " port " + str(line, "port");
  row("line rate", std::string(rate) + " (" + from +
                       "); cb_bw, cb_bibw, cb_mbw_mr print % Line when their pairs span nodes");
}

void print_rdma(const json& rdma, const json& line) {
  section("RDMA");
  print_line_rate(line);
  if (rdma.contains("unavailable")) {
    row("devices", "none: " + str(rdma, "unavailable"));
    return;
  }
  row("devices", std::to_string(rdma["devices"].size()));
  char rate[32];
  std::snprintf(rate, sizeof rate, "%g Gb/s", max_link_rate_gbps(rdma));
  row("fastest active link", rate);
  for (const auto& d : rdma["devices"]) {
    row(str(d, "name"), str(d, "node_type") + ", GUID " + str(d, "node_guid") + ", firmware " +
                            str(d, "firmware", "?") +
                            (d.contains("error") ? ", " + str(d, "error") : ""));
    for (const auto& p : d["ports"]) {
      if (p.contains("error")) {
        row("  port " + str(p, "port"), str(p, "error"));
        continue;
      }
      std::snprintf(rate, sizeof rate, "%g Gb/s", p.value("rate_gbps", 0.0));
      row("  port " + str(p, "port"), str(p, "state") + ", " + str(p, "link_layer") + ", " +
                                          str(p, "width") + " " + str(p, "speed") + " = " + rate +
                                          ", MTU " + str(p, "mtu_bytes"));
    }
  }
}

void print_machine(const json& env) {
  section("CPU and memory");
  row("host", str(env, "hostname"));
  row("CPU", str(env["cpu"], "model"));
  row("logical cores", str(env["cpu"], "logical_cores"));
  row("memory", gib(env.value("memory_bytes", 0.0)));
  row("OS", str(env, "os"));
  char timer[96];
  std::snprintf(timer, sizeof timer, "resolution %g ns, one read %.0f ns",
                env["timer"].value("resolution_ns", 0.0),
                env["timer"].value("read_overhead_ns", 0.0));
  row("timer", timer);
}

void print_ranks(const json& env) {
  section("ranks");
  const int nodes = env.value("nodes", 1);
  row("ranks",
      str(env, "nranks") + " on " + std::to_string(nodes) + (nodes == 1 ? " host" : " hosts"));
  const json& launcher = env["launcher"];
  const json& per_node = launcher["ranks_per_node"];
  row("launcher", str(launcher, "name") +
                      (launcher["detected_from"].get<std::string>().empty()
                           ? ""
                           : " (" + str(launcher, "detected_from") + ")") +
                      ", ranks per node " +
                      (per_node.is_array() ? per_node.dump() : str(launcher, "ranks_per_node")) +
                      (launcher["same_on_all_ranks"].get<bool>() ? "" : "; ranks disagree"));
  for (const auto& h : env["hosts"]) {
    std::string ranks;
    for (const auto& r : h["ranks"]) ranks += (ranks.empty() ? "" : ",") + r.dump();
    row(str(h, "name"), "ranks " + ranks);
  }
}

void print_engine(const json& engine) {
  section("engine");
  const json& cma = engine["cross_memory_attach"];
  const bool used = cma["used"].get<bool>();
  row("cross-memory attach",
      (cma["available"].get<bool>() ? "available: " : "unavailable: ") + str(cma, "detail") +
          (used ? "; private buffers can be read in one copy (cma algorithms)"
                : std::string(cma["available"].get<bool>() ? "; off by CB_ENGINE_CMA" : "") +
                      "; private buffers take the pipelined shared-memory copy"));
  for (const auto& a : engine["algorithms"])
    row(str(a, "coll") + "/" + str(a, "name"), str(a, "summary"));
  const json& t = engine["tuning"];
  if (t.contains("error")) {
    row("tuning table", "error: " + str(t, "error"));
    return;
  }
  row("tuning table", str(t, "origin") + ", " + std::to_string(t["rules"].size()) + " rules");
  for (const auto& r : t["rules"]) {
    const std::string hi = r["max_bytes"].is_null() ? "inf" : r["max_bytes"].dump();
    const bool any = r["ranks"][0] == 1 && r["ranks"][1] >= (1 << 30);
    const std::string ranks =
        any ? "any ranks" : "ranks " + r["ranks"][0].dump() + ".." + r["ranks"][1].dump();
    row("  " + str(r, "coll"),
        r["min_bytes"].dump() + ".." + hi + " B, " + ranks + ": " + str(r, "algo"));
  }
}

void print(const json& info) {
  const json& env = info["environment"];
  std::printf("# collbench info v%s\n", CB_VERSION);
  print_build(env, info["build"]);
  print_mpi(env, info["mpi"]);
  print_cuda(env["gpu"]);
  print_nccl(info["nccl"]);
  print_rdma(env["rdma"], env["line_rate"]);
  print_machine(env);
  print_ranks(env);
  print_engine(info["engine"]);
  info::print_floors(info["floors"]);
  std::fflush(stdout);
}

void write_json(const json& info, const std::string& path) {
  std::ofstream out(path);
  if (!out) throw UsageError("cannot write JSON file '" + path + "': " + std::strerror(errno));
  out << info.dump(2) << "\n";
  if (!out.flush()) throw RuntimeError("writing '" + path + "' failed");
}

// Returns the exit status; every rank returns the same.
int run(int argc, char** argv) {
  Control ctl;
  CLI::App app(
      "collbench: what this build and machine have (build, MPI, CUDA, NCCL, RDMA, CPU) and "
      "the floors it allows (cache-line hand-off, copy bandwidth, 2-rank collectives)",
      "cb_info");
  std::string json_path, floors_text = "quick";
  app.add_option("-J,--json", json_path, "also write everything as JSON to FILE")
      ->type_name("FILE");
  app.add_option("--floors", floors_text,
                 "measure the floors: quick (about 1 s), long (more samples, about 5 s) or off")
      ->type_name("MODE")
      ->check(CLI::IsMember({"off", "quick", "long"}));
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    if (ctl.is_root()) std::printf("%s", app.help().c_str());
    return kExitOk;
  } catch (const CLI::ParseError& e) {
    if (ctl.is_root())
      std::fprintf(stderr, "collbench: error: %s (run cb_info --help for the options)\n", e.what());
    return kExitUsage;
  }
  const json info = collect(ctl, info::parse_floors_mode(floors_text));
  if (ctl.is_root()) print(info);
  agreed(ctl, [&] {
    if (ctl.is_root() && !json_path.empty()) write_json(info, json_path);
  });
  return kExitOk;
}

}  // namespace
}  // namespace cb

int main(int argc, char** argv) {
  cb::cma_probe = cb::engine::cma_probe_siblings();
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  int status = cb::kExitOk;
  try {
    status = cb::run(argc, argv);
  } catch (const cb::ExitRequest& e) {
    status = e.status;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "collbench: error: %s\n", e.what());
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, cb::kExitRuntime);
  }
  MPI_Finalize();
  return status;
}
