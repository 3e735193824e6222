// The validation data of every collective, written once for host and device:
// core/verify.cpp's input_value() and apply_op() and harness/memory.cpp's
// pattern_byte() are these functions, and the validation kernels run them too. What still
// has a host twin (store_element / load_element / store_poison as encode / decode /
// poison, the CollSpec fill and check) is checked equal on the host by
// tests/core/verify_values_test.cpp for many (dtype, op, rank, nranks, index).
//
// Plain C++ when compiled without nvcc (CB_HOST_DEVICE is then empty).
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/types.hpp"

#if defined(__CUDACC__)
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#define CB_HOST_DEVICE __host__ __device__
#else
#define CB_HOST_DEVICE
#endif

#if !defined(__CUDA_ARCH__)
#include <bit>

#include "core/half.hpp"
#endif

namespace cb {

// What a collective's validation data depends on: the fields of CollArgs that matter,
// and where the caller stands.
struct CollData {
  Coll coll = Coll::Allreduce;  // Allreduce, Bcast, Alltoall, Allgather or ReduceScatter
  Dtype dtype = Dtype::Float;
  Op op = Op::Sum;   // Allreduce, ReduceScatter; the others' data use Op::Max's range
  size_t count = 0;  // elements per rank (Alltoall: per peer)
  int root = 0;      // Bcast
  bool in_place = false;
  int rank = 0;
  int nranks = 1;
};

}  // namespace cb

namespace cb::values {

// A splitmix-style hash of (rank, index).
CB_HOST_DEVICE inline uint32_t mix(int rank, uint64_t index) {
  uint64_t x =
      index * 0x9E3779B97F4A7C15ull + static_cast<uint64_t>(rank + 1) * 0xC2B2AE3D27D4EB4Full;
  x ^= x >> 31;
  x *= 0xBF58476D1CE4E5B9ull;
  x ^= x >> 29;
  return static_cast<uint32_t>(x);
}

// Largest integer magnitude every partial result may reach and still be exact in dt.
CB_HOST_DEVICE inline double exact_limit(Dtype dt) {
  switch (dt) {
    case Dtype::Char:
      return 127;
    case Dtype::BFloat16:
      return 256;
    case Dtype::Half:
      return 2048;
    default:
      return 1 << 20;
  }
}

// Most factors of 2 a product may collect.
CB_HOST_DEVICE inline int max_doublings(Dtype dt) {
  switch (dt) {
    case Dtype::Char:
      return 6;
    case Dtype::Half:
      return 14;
    default:
      return 30;
  }
}

// dtype_size(), usable on the device.
CB_HOST_DEVICE inline size_t element_size(Dtype dt) {
  switch (dt) {
    case Dtype::Char:
      return 1;
    case Dtype::Int32:
    case Dtype::Float:
      return 4;
    case Dtype::Int64:
    case Dtype::Double:
      return 8;
    case Dtype::Half:
    case Dtype::BFloat16:
      return 2;
    default:  // the engine's own types (core/types.hpp): never benchmarked
      break;
  }
  return 1;
}

// --vary-data: generation g > 0 of the inputs differs from the plain ones (g = 0) in the
// first element of every 64-byte line (kVaryLineBytes), whose value is taken from another
// index; the other elements keep their plain values. The timed loops store exactly these
// elements before each iteration (one store per cache line); -c fills and checks a
// generation through the same functions, so every element is still checked exactly.
inline constexpr uint64_t kVaryLineBytes = 64;

CB_HOST_DEVICE inline uint64_t varied_index(Dtype dt, uint64_t index, uint32_t generation) {
  const uint64_t per_line = kVaryLineBytes / element_size(dt);
  if (generation == 0 || index % per_line != 0) return index;
  return index ^ (static_cast<uint64_t>(generation) << 40) ^ (uint64_t{1} << 63);
}

// Rank `rank`'s input at element `index` for a reduction `op` over `nranks` ranks (sum:
// |v| <= limit / nranks, so any partial sum stays within the limit; prod: +-1 or +-2, with
// 2 only on the first ranks, so |product| <= 2^max_doublings; max/min: the full range).
// `generation`: --vary-data's (varied_index()).
CB_HOST_DEVICE inline double input_value(Dtype dt, Op op, int rank, int nranks, uint64_t index,
                                         uint32_t generation = 0) {
  const uint32_t h = values::mix(rank, varied_index(dt, index, generation));
  switch (op) {
    case Op::Sum: {
      const int divisor = nranks < 1 ? 1 : nranks;
      const double share = values::exact_limit(dt) / divisor;
      const auto r = static_cast<uint32_t>(1.0 < share ? share : 1.0);
      return static_cast<double>(h % (2 * r + 1)) - r;
    }
    case Op::Prod: {
      const double magnitude = (rank < values::max_doublings(dt) && (h & 1)) ? 2.0 : 1.0;
      return (h & 2) ? -magnitude : magnitude;
    }
    case Op::Max:
    case Op::Min: {
      const auto r = static_cast<uint32_t>(values::exact_limit(dt));
      return static_cast<double>(h % (2 * r + 1)) - r;
    }
    default:  // the engine's own operators (core/types.hpp): never benchmarked
      break;
  }
  return 0;
}

// a op b, with std::max / std::min spelled out for the device (same results).
CB_HOST_DEVICE inline double apply_op(Op op, double a, double b) {
  switch (op) {
    case Op::Sum:
      return a + b;
    case Op::Prod:
      return a * b;
    case Op::Max:
      return a < b ? b : a;
    case Op::Min:
      return b < a ? b : a;
    default:  // the engine's own operators (core/types.hpp): never benchmarked
      break;
  }
  return a;
}

// ---- What each collective's buffers hold (collective/{allreduce,bcast,alltoall}.cpp). ----

// Allreduce result at element i: rank 0's input combined with every other rank's in order.
CB_HOST_DEVICE inline double allreduce_expected(Dtype dt, Op op, int nranks, uint64_t i,
                                                uint32_t generation = 0) {
  double acc = values::input_value(dt, op, 0, nranks, i, generation);
  for (int r = 1; r < nranks; ++r)
    acc = values::apply_op(op, acc, values::input_value(dt, op, r, nranks, i, generation));
  return acc;
}

// Bcast data at element i (rank root's, for every rank).
CB_HOST_DEVICE inline double bcast_value(Dtype dt, int root, int nranks, uint64_t i,
                                         uint32_t generation = 0) {
  return values::input_value(dt, Op::Max, root, nranks, i, generation);
}

// Element j of the alltoall block that rank `from` sends to rank `to`.
CB_HOST_DEVICE inline double alltoall_value(Dtype dt, size_t count, int from, int to, int nranks,
                                            uint64_t j) {
  return values::input_value(dt, Op::Max, from, nranks, static_cast<uint64_t>(to) * count + j);
}

// Element j of rank `from`'s allgather contribution (block `from` of every result).
CB_HOST_DEVICE inline double allgather_value(Dtype dt, int from, int nranks, uint64_t j,
                                             uint32_t generation = 0) {
  return values::input_value(dt, Op::Max, from, nranks, j, generation);
}
// Reduce_scatter: rank r's input element k is input_value(dt, op, r, nranks, k) for k <
// count x nranks, and its result element j is allreduce_expected at r x count + j.

// ---- Element encoding: store_element() / load_element() as raw little-endian bits. ----

// The bits store_element(dt, v) writes, in the low dtype_size(dt) bytes.
CB_HOST_DEVICE inline uint64_t encode(Dtype dt, double v) {
  switch (dt) {
    case Dtype::Char:
      return static_cast<uint8_t>(static_cast<int8_t>(v));
    case Dtype::Int32:
      return static_cast<uint32_t>(static_cast<int32_t>(v));
    case Dtype::Int64:
      return static_cast<uint64_t>(static_cast<int64_t>(v));
    case Dtype::Float: {
#if defined(__CUDA_ARCH__)
      return __float_as_uint(static_cast<float>(v));
#else
      return std::bit_cast<uint32_t>(static_cast<float>(v));
#endif
    }
    case Dtype::Double: {
#if defined(__CUDA_ARCH__)
      return static_cast<uint64_t>(__double_as_longlong(v));
#else
      return std::bit_cast<uint64_t>(v);
#endif
    }
    case Dtype::Half: {
#if defined(__CUDA_ARCH__)
      return __half_as_ushort(__float2half_rn(static_cast<float>(v)));  // RNE, as float_to_half
#else
      return float_to_half(static_cast<float>(v));
#endif
    }
    case Dtype::BFloat16: {
#if defined(__CUDA_ARCH__)
      return __bfloat16_as_ushort(__float2bfloat16_rn(static_cast<float>(v)));
#else
      return float_to_bf16(static_cast<float>(v));
#endif
    }
    default:  // the engine's own types (core/types.hpp): never benchmarked
      break;
  }
  return 0;
}

// load_element(): the value of the low dtype_size(dt) bytes of `bits`.
CB_HOST_DEVICE inline double decode(Dtype dt, uint64_t bits) {
  switch (dt) {
    case Dtype::Char:
      return static_cast<int8_t>(static_cast<uint8_t>(bits));
    case Dtype::Int32:
      return static_cast<int32_t>(static_cast<uint32_t>(bits));
    case Dtype::Int64:
      return static_cast<double>(static_cast<int64_t>(bits));
    case Dtype::Float: {
#if defined(__CUDA_ARCH__)
      return __uint_as_float(static_cast<uint32_t>(bits));
#else
      return std::bit_cast<float>(static_cast<uint32_t>(bits));
#endif
    }
    case Dtype::Double: {
#if defined(__CUDA_ARCH__)
      return __longlong_as_double(static_cast<long long>(bits));
#else
      return std::bit_cast<double>(bits);
#endif
    }
    case Dtype::Half: {
#if defined(__CUDA_ARCH__)
      return __half2float(__ushort_as_half(static_cast<unsigned short>(bits)));
#else
      return half_to_float(static_cast<uint16_t>(bits));
#endif
    }
    case Dtype::BFloat16: {
#if defined(__CUDA_ARCH__)
      return __bfloat162float(__ushort_as_bfloat16(static_cast<unsigned short>(bits)));
#else
      return bf16_to_float(static_cast<uint16_t>(bits));
#endif
    }
    default:  // the engine's own types (core/types.hpp): never benchmarked
      break;
  }
  return 0;
}

// store_poison(): the complement of the expected element's bits, never equal to them.
CB_HOST_DEVICE inline uint64_t poison(Dtype dt, double expected) {
  return ~values::encode(dt, expected);  // only the low dtype_size(dt) bytes are stored
}

// ---- Element k of a collective's buffers, as gpu::fill_collective() / check_collective()
// write and check them (the kernels are these in a grid-stride loop). ----

// Elements of the result that check_collective() judges (and fill_collective() poisons
// when the input is elsewhere): count, or count x nranks for Alltoall and Allgather.
CB_HOST_DEVICE inline size_t elements(const CollData& d) {
  const size_t all = d.count * static_cast<size_t>(d.nranks);
  switch (d.coll) {
    case Coll::Alltoall:
    case Coll::Allgather:
      return all;
    default:
      return d.count;
  }
}

// Elements of the input buffer fill_collective() writes: as elements(), but count x
// nranks for ReduceScatter (in place too), and for Allgather count out of place (in place
// the whole of recv: block `rank` input, the others poisoned).
CB_HOST_DEVICE inline size_t input_elements(const CollData& d) {
  const size_t all = d.count * static_cast<size_t>(d.nranks);
  switch (d.coll) {
    case Coll::ReduceScatter:
      return all;
    case Coll::Allgather:
      return d.in_place ? all : d.count;
    default:
      return values::elements(d);
  }
}

// The value element k of the result must have (CollSpec::check()'s expectation).
CB_HOST_DEVICE inline double expected_at(const CollData& d, size_t k) {
  switch (d.coll) {
    case Coll::Allreduce:
    case Coll::Reduce:  // on the root (the only rank whose result is checked)
      return values::allreduce_expected(d.dtype, d.op, d.nranks, k);
    case Coll::Bcast:
      return values::bcast_value(d.dtype, d.root, d.nranks, k);
    case Coll::Allgather:  // block `from` of the result is rank `from`'s contribution
      return values::allgather_value(d.dtype, static_cast<int>(k / d.count), d.nranks, k % d.count);
    case Coll::ReduceScatter:
      return values::allreduce_expected(d.dtype, d.op, d.nranks,
                                        static_cast<uint64_t>(d.rank) * d.count + k);
    default: {  // Alltoall: block `from` of the result came from rank `from`
      const int from = static_cast<int>(k / d.count);
      return values::alltoall_value(d.dtype, d.count, from, d.rank, d.nranks, k % d.count);
    }
  }
}

// Whether fill_collective() writes this rank's data into recv (in place, and Bcast, whose
// only buffer is recv) rather than into send.
CB_HOST_DEVICE inline bool input_is_recv(const CollData& d) {
  return d.in_place || d.coll == Coll::Bcast;
}

// The bits of element k of the input buffer before the operation. Bcast: the root's data
// on the root, its poison everywhere else.
CB_HOST_DEVICE inline uint64_t input_bits_at(const CollData& d, size_t k) {
  switch (d.coll) {
    case Coll::Allreduce:
    case Coll::Reduce:
      return values::encode(d.dtype, values::input_value(d.dtype, d.op, d.rank, d.nranks, k));
    case Coll::Bcast: {
      const double v = values::bcast_value(d.dtype, d.root, d.nranks, k);
      return d.rank == d.root ? values::encode(d.dtype, v) : values::poison(d.dtype, v);
    }
    case Coll::Allgather: {  // in place: recv, whose block `rank` is the input
      const int from = d.in_place ? static_cast<int>(k / d.count) : d.rank;
      const double v = values::allgather_value(d.dtype, from, d.nranks, k % d.count);
      return from == d.rank ? values::encode(d.dtype, v) : values::poison(d.dtype, v);
    }
    case Coll::ReduceScatter:
      return values::encode(d.dtype, values::input_value(d.dtype, d.op, d.rank, d.nranks, k));
    default: {  // Alltoall: block `to` of the input goes to rank `to`
      const int to = static_cast<int>(k / d.count);
      return values::encode(
          d.dtype, values::alltoall_value(d.dtype, d.count, d.rank, to, d.nranks, k % d.count));
    }
  }
}

// Whether this rank's result is defined and checked (Reduce: only on the root).
CB_HOST_DEVICE inline bool result_checked(const CollData& d) {
  return d.coll != Coll::Reduce || d.rank == d.root;
}

// Whether element k of a result (its raw bits) is wrong, compared as values.
CB_HOST_DEVICE inline bool wrong_at(const CollData& d, size_t k, uint64_t bits) {
  return values::decode(d.dtype, bits) != values::expected_at(d, k);
}

// ---- Point-to-point validation: the byte pattern (harness/memory.cpp's fill and check). ----

CB_HOST_DEVICE inline uint8_t pattern_byte(uint32_t seed, size_t index) {
  uint32_t x = static_cast<uint32_t>(index) * 0x9E3779B1u + (seed + 1) * 0x85EBCA6Bu +
               static_cast<uint32_t>(static_cast<uint64_t>(index) >> 32);
  x ^= x >> 15;
  x *= 0x2C1B3C6Du;
  x ^= x >> 12;
  return static_cast<uint8_t>(x);
}

}  // namespace cb::values
