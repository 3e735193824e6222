// cb_gpu_bench: bandwidth of the reduction kernels against the GPU's device-to-device copy,
// timed with CUDA events, counting bytes read + written (copy: 2 x size; dst op= src:
// 3 x size). The copy is the ceiling: at large sizes a reduction is bound by memory
// bandwidth as the copy is, so its fraction of the copy's rate says what is left. Also sweeps
// the reduction grid (blocks per multiprocessor) so one run on a GPU gives tuning data.
//
//   cb_gpu_bench [-m MIN:MAX] [--matrix-size SIZE] [-J FILE] [--quick]
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "core/errors.hpp"
#include "gpu/cuda_check.hpp"
#include "gpu/device.hpp"
#include "gpu/reduce.hpp"
#include "gpu/stream.hpp"

namespace cb::gpu {
namespace {

struct Settings {
  size_t min_bytes = size_t{1} << 20;
  size_t max_bytes = size_t{1} << 30;
  size_t matrix_bytes = size_t{256} << 20;  // every dtype x op at this size
  std::string json_path;
  bool quick = false;  // fewer sizes and no grid sweep (a smoke test)
};

size_t parse_size(const std::string& s) {
  size_t pos = 0;
  const double v = std::stod(s, &pos);
  const std::string unit = s.substr(pos);
  double scale = 1;
  if (unit == "K" || unit == "k") scale = 1 << 10;
  if (unit == "M" || unit == "m") scale = 1 << 20;
  if (unit == "G" || unit == "g") scale = 1 << 30;
  if (!unit.empty() && scale == 1) throw UsageError("bad size '" + s + "' (use K, M or G)");
  return static_cast<size_t>(v * scale);
}

// Mean seconds per call of `op`, timed with events around enough calls for ~20 ms.
double seconds_per_call(const std::function<void()>& op, const Stream& stream) {
  Event start(true), stop(true);
  for (int i = 0; i < 3; ++i) op();  // warm-up: first launches load modules, fault pages
  start.record(stream.handle());
  op();
  stop.record(stream.handle());
  stop.synchronize();
  const double once = std::max(Event::elapsed_s(start, stop), 1e-7);
  const int calls = static_cast<int>(std::clamp(0.02 / once, 5.0, 2000.0));
  start.record(stream.handle());
  for (int i = 0; i < calls; ++i) op();
  stop.record(stream.handle());
  stop.synchronize();
  return Event::elapsed_s(start, stop) / calls;
}

struct Buffers {
  void* dst = nullptr;
  void* src = nullptr;
  explicit Buffers(size_t bytes) : dst(device_alloc(bytes)), src(device_alloc(bytes)) {
    // 0x3C in every byte: finite, normal values in every dtype (half 0x3C3C = 1.06).
    device_memset(dst, 0x3C, bytes);
    device_memset(src, 0x3C, bytes);
  }
  ~Buffers() {
    device_free(dst);
    device_free(src);
  }
  Buffers(const Buffers&) = delete;
  Buffers& operator=(const Buffers&) = delete;
};

class Bench {
 public:
  explicit Bench(const Settings& s) : settings_(s), buffers_(s.max_bytes) {}

  double copy_gbps(size_t bytes) {
    const double t = seconds_per_call(
        [&] {
          cuda_check(cudaMemcpyAsync(buffers_.dst, buffers_.src, bytes, cudaMemcpyDeviceToDevice,
                                     static_cast<cudaStream_t>(stream_.handle())),
                     "cudaMemcpyAsync");
        },
        stream_);
    const double gbps = 2.0 * bytes / t / 1e9;
    record({{"kind", "copy"},
            {"bytes", bytes},
            {"time_us", t * 1e6},
            {"moved_bytes", 2 * bytes},
            {"GBps", gbps}});
    return gbps;
  }

  void reduce_row(size_t bytes, Dtype dt, Op op, double copy, int blocks_per_sm = 0) {
    detail::set_reduce_blocks_per_sm(blocks_per_sm);
    const size_t count = bytes / dtype_size(dt);
    const double t = seconds_per_call(
        [&] { reduce(buffers_.dst, buffers_.src, count, dt, op, stream_.handle()); }, stream_);
    detail::set_reduce_blocks_per_sm(0);
    const double gbps = 3.0 * bytes / t / 1e9;
    nlohmann::json r = {{"kind", "reduce"},       {"bytes", bytes},
                        {"dtype", to_string(dt)}, {"op", to_string(op)},
                        {"time_us", t * 1e6},     {"moved_bytes", 3 * bytes},
                        {"GBps", gbps},           {"fraction_of_copy", gbps / copy}};
    r["blocks_per_sm"] = blocks_per_sm ? nlohmann::json(blocks_per_sm) : nlohmann::json("auto");
    std::printf("%12zu  %-8s %-5s %6s %10.2f us %9.1f GB/s  %5.1f%% of copy\n", bytes,
                std::string(to_string(dt)).c_str(), std::string(to_string(op)).c_str(),
                blocks_per_sm ? std::to_string(blocks_per_sm).c_str() : "auto", t * 1e6, gbps,
                100 * gbps / copy);
    record(std::move(r));
  }

  void run() {
    std::printf("# sizes: bytes per buffer; GB/s = bytes read + written / time (10^9 B)\n");
    std::vector<size_t> sizes;
    for (size_t b = settings_.min_bytes; b <= settings_.max_bytes; b *= settings_.quick ? 8 : 2)
      sizes.push_back(b);
    for (size_t bytes : sizes) {
      const double copy = copy_gbps(bytes);
      std::printf("%12zu  copy                  %9.1f GB/s\n", bytes, copy);
      for (Dtype dt : {Dtype::Float, Dtype::Half, Dtype::BFloat16})
        reduce_row(bytes, dt, Op::Sum, copy);
    }
    const size_t m = std::min(settings_.matrix_bytes, settings_.max_bytes);
    const double copy = copy_gbps(m);
    std::printf("# every dtype and op at %zu bytes (copy %.1f GB/s)\n", m, copy);
    for (Dtype dt : kAllDtypes)
      for (Op op : kAllOps) reduce_row(m, dt, op, copy);
    if (settings_.quick) return;
    std::printf("# grid sweep: blocks per multiprocessor\n");
    for (Dtype dt : {Dtype::Float, Dtype::Half})
      for (int blocks : {1, 2, 4, 8, 16, 32}) reduce_row(m, dt, Op::Sum, copy, blocks);
  }

  nlohmann::json document() const {
    nlohmann::json doc = {{"schema", "collbench.gpu_kernels/1"}, {"results", results_}};
    describe(doc["gpu"]);
    int device = 0;
    cudaGetDevice(&device);
    doc["device_index"] = device;
    return doc;
  }

 private:
  void record(nlohmann::json r) { results_.push_back(std::move(r)); }

  const Settings& settings_;
  Stream stream_;
  Buffers buffers_;
  nlohmann::json results_ = nlohmann::json::array();
};

int run(int argc, char** argv) {
  Settings s;
  std::string range, matrix;
  CLI::App app("cb_gpu_bench: reduction kernels vs device-to-device copy bandwidth");
  app.add_option("-m,--message-size", range, "MIN:MAX bytes per buffer (default 1M:1G)");
  app.add_option("--matrix-size", matrix, "size for every dtype x op (default 256M)");
  app.add_option("-J,--json", s.json_path, "write results as JSON");
  app.add_flag("--quick", s.quick, "few sizes, no grid sweep");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  try {
    if (!range.empty()) {
      const auto colon = range.find(':');
      if (colon != std::string::npos) s.min_bytes = parse_size(range.substr(0, colon));
      s.max_bytes = parse_size(colon == std::string::npos ? range : range.substr(colon + 1));
    }
    if (!matrix.empty()) s.matrix_bytes = parse_size(matrix);
    if (s.min_bytes < 16 || s.min_bytes > s.max_bytes)
      throw UsageError("-m: need 16 <= MIN <= MAX");
    const std::string why = unavailable_reason();
    if (!why.empty()) throw UsageError(why);
    select_device(0);
    Bench bench(s);
    bench.run();
    if (!s.json_path.empty()) {
      std::ofstream out(s.json_path);
      out << bench.document().dump(2) << "\n";
      if (!out) throw RuntimeError("cannot write " + s.json_path);
    }
    return kExitOk;
  } catch (const UsageError& e) {
    std::fprintf(stderr, "cb_gpu_bench: %s\n", e.what());
    return kExitUsage;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cb_gpu_bench: error: %s\n", e.what());
    return kExitRuntime;
  }
}

}  // namespace
}  // namespace cb::gpu

int main(int argc, char** argv) {
  return cb::gpu::run(argc, argv);
}
