// Throughput of reduce_host's accumulate form (dst += src), the operation every collective
// algorithm runs per received chunk, next to a memcpy of the same size.
//
// "bytes_per_second" counts memory traffic: reduce reads dst and src and writes dst (3x the
// buffer size per call); memcpy reads src and writes dst (2x). Sizes are per buffer.
// Each Dtype is measured with the variant picked for this CPU ("best") and with the
// portable baseline, which shows what the AVX2/F16C variant buys.
#include <benchmark/benchmark.h>

#include <cstring>
#include <string>
#include <vector>

#include "engine/reduce_host.hpp"
#include "core/half.hpp"

namespace {

using cb::Dtype;

constexpr size_t kSizes[] = {4 << 10, 256 << 10, 4 << 20, 64 << 20};

std::string size_label(size_t bytes) {
  return bytes >= (1 << 20) ? std::to_string(bytes >> 20) + "MiB"
                            : std::to_string(bytes >> 10) + "KiB";
}

// Buffer of `bytes` holding the value 1 in the given Dtype: ordinary numbers, so no
// denormal slow paths; repeated sums only ever grow towards inf, which costs the same.
std::vector<std::byte> ones(Dtype dt, size_t bytes) {
  std::vector<std::byte> one(cb::dtype_size(dt));
  const auto set = [&](auto v) { std::memcpy(one.data(), &v, sizeof v); };
  switch (dt) {
    case Dtype::Char:
      set(int8_t{1});
      break;
    case Dtype::Int32:
      set(int32_t{1});
      break;
    case Dtype::Int64:
      set(int64_t{1});
      break;
    case Dtype::Float:
      set(1.0f);
      break;
    case Dtype::Double:
      set(1.0);
      break;
    case Dtype::Half:
      set(cb::float_to_half(1.0f));
      break;
    case Dtype::BFloat16:
      set(cb::float_to_bf16(1.0f));
      break;
    default:  // the engine's own types (core/types.hpp): never benchmarked
      break;
  }
  std::vector<std::byte> buf(bytes);
  for (size_t off = 0; off + one.size() <= bytes; off += one.size()) {
    std::memcpy(&buf[off], one.data(), one.size());
  }
  return buf;
}

void reduce_sum(benchmark::State& state, Dtype dt, size_t bytes, bool baseline) {
  std::vector<std::byte> dst = ones(dt, bytes);
  const std::vector<std::byte> src = ones(dt, bytes);
  const size_t count = bytes / cb::dtype_size(dt);
  for (auto _ : state) {
    if (baseline) {
      cb::engine::detail::reduce_host_baseline(dst.data(), dst.data(), src.data(), count, dt,
                                               cb::Op::Sum);
    } else {
      cb::engine::reduce_host(dst.data(), src.data(), count, dt, cb::Op::Sum);
    }
    benchmark::DoNotOptimize(dst.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * 3 * bytes));
}

void copy(benchmark::State& state, size_t bytes) {
  std::vector<std::byte> dst(bytes, std::byte{0});
  const std::vector<std::byte> src(bytes, std::byte{1});
  for (auto _ : state) {
    std::memcpy(dst.data(), src.data(), bytes);
    benchmark::DoNotOptimize(dst.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * 2 * bytes));
}

bool register_all() {
  benchmark::AddCustomContext("reduce_host_variant",
                              std::string(cb::engine::detail::reduce_host_variant()));
  for (const size_t bytes : kSizes) {
    benchmark::RegisterBenchmark(("memcpy/" + size_label(bytes)).c_str(), copy, bytes);
  }
  for (const Dtype dt : cb::kAllDtypes) {
    for (const bool baseline : {false, true}) {
      for (const size_t bytes : kSizes) {
        const std::string name = "reduce_sum/" + std::string(cb::to_string(dt)) + "/" +
                                 size_label(bytes) + (baseline ? "/baseline" : "/best");
        benchmark::RegisterBenchmark(name.c_str(), reduce_sum, dt, bytes, baseline);
      }
    }
  }
  return true;
}

[[maybe_unused]] const bool kRegistered = register_all();

}  // namespace
