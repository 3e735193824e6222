// reduce_many (gpu/ipc.hpp): one pass over n inputs, the inner loop of the IPC allreduce,
// where the inputs are the node's ranks' buffers mapped into this process. Memory-bound
// like reduce_kernels.cu: 16-byte loads when every pointer allows them, a grid that fills
// the GPU once. The element arithmetic is reduce_body.cuh's.
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "core/errors.hpp"
#include "gpu/cuda_check.hpp"
#include "gpu/ipc.hpp"
#include "gpu/launch.hpp"
#include "gpu/reduce_body.cuh"

namespace cb::gpu {
namespace {

// The engine's host-only element types and operators (core/types.hpp: int16, complex, the
// MPI_MAXLOC pairs) have no device kernel: a clear error instead of a wrong result.
template <typename What>
[[noreturn]] void unsupported_on_device(const char* fn, What what) {
  throw RuntimeError(std::string(fn) + ": " + std::string(to_string(what)) +
                     " is not reduced on the device (host reduction only)");
}

using namespace kernels;  // NOLINT(google-build-using-namespace): this file is their launcher

struct Inputs {  // by value into the kernel's parameter space
  const void* p[kMaxIpcInputs];
  int n;
};

// Sum/prod of 16-bit floats accumulate in float; everything else folds in storage type.
template <typename Fmt, typename O>
constexpr bool kWideAccumulate = kIsFloat16<Fmt> && !O::kSelects;

template <typename Fmt, typename O>
__global__ void __launch_bounds__(kThreadsPerBlock)
    reduce_many_vectors(uint4* out, Inputs in, size_t vectors) {
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  for (size_t v = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; v < vectors;
       v += stride) {
    const uint4 first = static_cast<const uint4*>(in.p[0])[v];
    if constexpr (kWideAccumulate<Fmt, O>) {
      float2 acc[4] = {Fmt::widen2(first.x), Fmt::widen2(first.y), Fmt::widen2(first.z),
                       Fmt::widen2(first.w)};
      for (int k = 1; k < in.n; ++k) {
        const uint4 x = static_cast<const uint4*>(in.p[k])[v];
        const uint32_t w[4] = {x.x, x.y, x.z, x.w};
        CB_UNROLL
        for (int j = 0; j < 4; ++j) {
          const float2 y = Fmt::widen2(w[j]);
          acc[j] = make_float2(O::combine(acc[j].x, y.x), O::combine(acc[j].y, y.y));
        }
      }
      out[v] = make_uint4(Fmt::narrow2(acc[0]), Fmt::narrow2(acc[1]), Fmt::narrow2(acc[2]),
                          Fmt::narrow2(acc[3]));
    } else {
      uint4 acc = first;
      for (int k = 1; k < in.n; ++k)
        acc = combine_vector<Fmt, O>(acc, static_cast<const uint4*>(in.p[k])[v]);
      out[v] = acc;
    }
  }
}

template <typename Fmt, typename O>
__global__ void __launch_bounds__(kThreadsPerBlock)
    reduce_many_elements(typename Fmt::Storage* out, Inputs in, size_t begin, size_t count) {
  using S = typename Fmt::Storage;
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  for (size_t i = begin + blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < count;
       i += stride) {
    if constexpr (kWideAccumulate<Fmt, O>) {
      float acc = Fmt::widen(static_cast<const S*>(in.p[0])[i]);
      for (int k = 1; k < in.n; ++k)
        acc = O::combine(acc, Fmt::widen(static_cast<const S*>(in.p[k])[i]));
      out[i] = Fmt::narrow(acc);
    } else {
      S acc = static_cast<const S*>(in.p[0])[i];
      for (int k = 1; k < in.n; ++k) acc = combine<Fmt, O>(acc, static_cast<const S*>(in.p[k])[i]);
      out[i] = acc;
    }
  }
}

template <typename Fmt, typename O>
void launch(void* out, const Inputs& in, size_t count, cudaStream_t stream) {
  using S = typename Fmt::Storage;
  constexpr size_t kLanes = kVectorBytes / sizeof(S);
  bool vectors_ok = reinterpret_cast<uintptr_t>(out) % kVectorBytes == 0;
  for (int k = 0; k < in.n; ++k)
    vectors_ok = vectors_ok && reinterpret_cast<uintptr_t>(in.p[k]) % kVectorBytes == 0;
  const size_t vectors = vectors_ok ? count / kLanes : 0;
  // Two blocks per SM keep enough loads in flight with n >= 2 inputs per element.
  auto blocks = [](size_t items) { return grid_blocks(items, 2); };
  if (vectors) {
    reduce_many_vectors<Fmt, O>
        <<<blocks(vectors), kThreadsPerBlock, 0, stream>>>(static_cast<uint4*>(out), in, vectors);
    check_launch("reduce_many_vectors");
  }
  const size_t begin = vectors * kLanes;
  if (begin < count) {
    reduce_many_elements<Fmt, O><<<blocks(count - begin), kThreadsPerBlock, 0, stream>>>(
        static_cast<S*>(out), in, begin, count);
    check_launch("reduce_many_elements");
  }
}

template <typename Fmt>
void launch_op(void* out, const Inputs& in, size_t count, Op op, cudaStream_t s) {
  switch (op) {
    case Op::Sum:
      return launch<Fmt, SumOp>(out, in, count, s);
    case Op::Prod:
      return launch<Fmt, ProdOp>(out, in, count, s);
    case Op::Max:
      return launch<Fmt, MaxOp>(out, in, count, s);
    case Op::Min:
      return launch<Fmt, MinOp>(out, in, count, s);
    default:
      break;
  }
  unsupported_on_device("reduce_many", op);
}

}  // namespace

void reduce_many(void* out, const void* const* in, int n, size_t count, Dtype dt, Op op,
                 StreamHandle stream) {
  if (n < 1 || n > kMaxIpcInputs)
    throw RuntimeError("reduce_many: " + std::to_string(n) + " inputs (1 to " +
                       std::to_string(kMaxIpcInputs) + ")");
  if (count == 0) return;
  Inputs x{};
  for (int k = 0; k < n; ++k) x.p[k] = in[k];
  x.n = n;
  const auto s = static_cast<cudaStream_t>(stream);
  switch (dt) {
    case Dtype::Char:
      return launch_op<Native<int8_t>>(out, x, count, op, s);
    case Dtype::Int32:
      return launch_op<Native<int32_t>>(out, x, count, op, s);
    case Dtype::Int64:
      return launch_op<Native<int64_t>>(out, x, count, op, s);
    case Dtype::Float:
      return launch_op<Native<float>>(out, x, count, op, s);
    case Dtype::Double:
      return launch_op<Native<double>>(out, x, count, op, s);
    case Dtype::Half:
      return launch_op<HalfFormat>(out, x, count, op, s);
    case Dtype::BFloat16:
      return launch_op<Bf16Format>(out, x, count, op, s);
    default:
      break;
  }
  unsupported_on_device("reduce_many", dt);
}

}  // namespace cb::gpu
