// cb_copybw: this machine's memory-copy bandwidth by size, with 1 thread and with one
// thread per core: the bound that intra-node collectives are measured against (a
// collective that must deliver S bytes into a rank's buffer cannot beat S / copy rate).
// Plain process (no MPI); writes a collbench.result/1 document with -J.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <vector>

#include "backends/control.hpp"
#include "core/errors.hpp"
#include "harness/environment.hpp"
#include "harness/report.hpp"
#include "harness/sizes.hpp"
#include "info/floors.hpp"

namespace {

// Best of five timed batches: GB/s of bytes copied (10^9 B/s), buffers pre-touched, each
// batch about 64 MiB per thread (info/floors.hpp's copy_rates, which cb_info's floors use).
// `piece`: bytes per memcpy call. glibc switches to non-temporal stores for one large
// copy (above ~3/4 of the L3), which on some machines is slower than the same bytes copied
// in cache-sized pieces, as pipelined collectives copy them; so both are measured.
double copy_rate(size_t bytes, int threads, size_t piece) {
  const auto rates = cb::info::copy_rates(bytes, threads, piece, 5, (size_t{256} << 20) / 4);
  return *std::max_element(rates.begin(), rates.end());
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("collbench memory-copy bandwidth (the bound for intra-node collectives)",
               "cb_copybw");
  std::string range = "1K:64M", json_path;
  app.add_option("-m,--message-size", range, "[MIN:]MAX bytes");
  app.add_option("-J,--json", json_path, "write results as JSON");
  CLI11_PARSE(app, argc, argv);
  cb::SizeRange sizes;
  try {
    sizes = cb::parse_size_range(range, {1024, 64u << 20});
  } catch (const std::exception& e) {
    std::fprintf(stderr, "collbench: error: %s\n", e.what());
    return cb::kExitUsage;
  }
  MPI_Init(&argc, &argv);
  int status = 0;
  {
    cb::Control ctl;
    nlohmann::json doc;
    doc["benchmark"] = {
        {"name", "copy_bw"}, {"title", "Memory Copy Bandwidth"}, {"executable", "cb_copybw"}};
    doc["backend"] = {{"name", "memcpy"}, {"library", "glibc memcpy"}};
    doc["argv"] = std::vector<std::string>(argv, argv + argc);
    const int cores = cb::cores_on_node();
    try {
      cb::describe_environment(ctl, doc["environment"]);  // collective: every rank is here
      cb::Report report(true, json_path, doc);
      constexpr size_t kPiece = size_t{256} << 10;  // the engine's shm chunk
      std::printf("# collbench Memory Copy Bandwidth (GB/s = 1e9 B/s of bytes copied)\n");
      std::printf("# best of one memcpy and memcpy in 256 KiB pieces (columns 4-7: each)\n");
      const std::string all_label = std::to_string(cores) + " threads";
      std::printf("%-10s%16s%16s%16s%16s%16s%16s\n", "# Size", "1 thread", all_label.c_str(),
                  "1t whole", "1t pieces", "all whole", "all pieces");
      for (size_t bytes : cb::size_sweep(sizes)) {
        const double one_whole = copy_rate(bytes, 1, bytes);
        const double one_pieces = copy_rate(bytes, 1, kPiece);
        const double all_whole = copy_rate(bytes, cores, bytes);
        const double all_pieces = copy_rate(bytes, cores, kPiece);
        const double one = std::max(one_whole, one_pieces);
        const double all = std::max(all_whole, all_pieces);
        std::printf("%-10zu%16.2f%16.2f%16.2f%16.2f%16.2f%16.2f\n", bytes, one, all, one_whole,
                    one_pieces, all_whole, all_pieces);
        std::fflush(stdout);
        report.add_result({{"bytes", bytes},
                           {"copy_GBps_1_thread", one},
                           {"copy_GBps_all_threads", all},
                           {"copy_GBps_1_thread_whole", one_whole},
                           {"copy_GBps_1_thread_pieces", one_pieces},
                           {"copy_GBps_all_threads_whole", all_whole},
                           {"copy_GBps_all_threads_pieces", all_pieces},
                           {"piece_bytes", kPiece},
                           {"threads", cores}});
      }
      report.finish("complete");
    } catch (const cb::ExitRequest& e) {  // a bad CB_* setting, already reported
      status = e.status;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "collbench: error: %s\n", e.what());
      status = cb::kExitRuntime;
    }
  }
  MPI_Finalize();
  return status;
}
