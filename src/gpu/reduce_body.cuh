// The reduction kernels' arithmetic and per-thread loops as __host__ __device__ code
// (internal; included by .cu files only): reduce_kernels.cu runs them on the GPU, and
// tests/gpu/reduce_emulation_test.cu runs the very same code on the host over simulated
// grids, so the element semantics, the 16-bit pair conversions and the head/vector/tail
// index arithmetic are checked against reduce_host even where no GPU exists.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "core/reduce_ops.hpp"

#define CB_HD __host__ __device__
#define CB_HD_INLINE __host__ __device__ __forceinline__
// Unrolling matters on the device only; the host compiler would warn about the pragma.
#if defined(__CUDA_ARCH__)
#define CB_UNROLL _Pragma("unroll")
#else
#define CB_UNROLL
#endif

namespace cb::gpu::kernels {

inline constexpr size_t kVectorBytes = sizeof(uint4);  // 16: the widest load a thread can issue
inline constexpr int kUnroll = 4;                      // vectors loaded before any is combined

CB_HD_INLINE float bits_to_float(uint32_t v) {
  float f;
  memcpy(&f, &v, sizeof f);  // a register move on the device
  return f;
}

// ---- Element formats: how a dtype is stored and the type it is combined in. ----

template <typename T>
struct Native {
  using Storage = T;
  CB_HD static T widen(T v) { return v; }
  CB_HD static T narrow(T v) { return v; }
};

// 16-bit floats are combined in float and rounded back to nearest-even (cvt.rn), the same
// as the host's float_to_half / float_to_bf16. Pairs use the packed conversions
// (cvt.rn.f16x2.f32 / cvt.rn.bf16x2.f32 on sm_80+), which round each half alike.
struct HalfFormat {
  using Storage = uint16_t;
  CB_HD static float widen(uint16_t v) { return __half2float(__ushort_as_half(v)); }
  CB_HD static uint16_t narrow(float f) { return __half_as_ushort(__float2half_rn(f)); }
  CB_HD static float2 widen2(uint32_t v) {
    return __half22float2(__halves2half2(__ushort_as_half(static_cast<uint16_t>(v)),
                                         __ushort_as_half(static_cast<uint16_t>(v >> 16))));
  }
  CB_HD static uint32_t narrow2(float2 f) {
    const __half2 h = __float22half2_rn(f);
    return static_cast<uint32_t>(__half_as_ushort(__low2half(h))) |
           static_cast<uint32_t>(__half_as_ushort(__high2half(h))) << 16;
  }
};

struct Bf16Format {
  using Storage = uint16_t;
  CB_HD static float widen(uint16_t v) { return __bfloat162float(__ushort_as_bfloat16(v)); }
  CB_HD static uint16_t narrow(float f) { return __bfloat16_as_ushort(__float2bfloat16_rn(f)); }
  CB_HD static float2 widen2(uint32_t v) {
    return make_float2(bits_to_float(v << 16), bits_to_float(v & 0xFFFF0000u));
  }
  CB_HD static uint32_t narrow2(float2 f) {
    const __nv_bfloat162 h = __float22bfloat162_rn(f);
    return static_cast<uint32_t>(__bfloat16_as_ushort(__low2bfloat16(h))) |
           static_cast<uint32_t>(__bfloat16_as_ushort(__high2bfloat16(h))) << 16;
  }
};

// The element operators (sum, prod, max, min): one definition for host and device.
using reduce_ops::MaxOp;
using reduce_ops::MinOp;
using reduce_ops::ProdOp;
using reduce_ops::SumOp;

template <typename Fmt, typename O>
CB_HD_INLINE typename Fmt::Storage combine(typename Fmt::Storage a, typename Fmt::Storage b) {
  if constexpr (O::kSelects) {
    return O::keeps_a(Fmt::widen(a), Fmt::widen(b)) ? a : b;  // bit for bit, never re-rounded
  } else {
    return Fmt::narrow(O::combine(Fmt::widen(a), Fmt::widen(b)));
  }
}

// Two 16-bit elements held in one 32-bit word.
template <typename Fmt, typename O>
CB_HD_INLINE uint32_t combine_pair(uint32_t a, uint32_t b) {
  if constexpr (O::kSelects) {
    const uint32_t low = combine<Fmt, O>(static_cast<uint16_t>(a), static_cast<uint16_t>(b));
    const uint32_t high =
        combine<Fmt, O>(static_cast<uint16_t>(a >> 16), static_cast<uint16_t>(b >> 16));
    return low | high << 16;
  } else {
    const float2 x = Fmt::widen2(a);
    const float2 y = Fmt::widen2(b);
    return Fmt::narrow2(make_float2(O::combine(x.x, y.x), O::combine(x.y, y.y)));
  }
}

template <typename Fmt>
constexpr bool kIsFloat16 = std::is_same_v<Fmt, HalfFormat> || std::is_same_v<Fmt, Bf16Format>;

template <typename Fmt, typename O>
CB_HD_INLINE uint4 combine_vector(uint4 a, uint4 b) {
  if constexpr (kIsFloat16<Fmt>) {
    return make_uint4(combine_pair<Fmt, O>(a.x, b.x), combine_pair<Fmt, O>(a.y, b.y),
                      combine_pair<Fmt, O>(a.z, b.z), combine_pair<Fmt, O>(a.w, b.w));
  } else {
    using S = typename Fmt::Storage;
    constexpr int kLanes = static_cast<int>(kVectorBytes / sizeof(S));
    S x[kLanes], y[kLanes];  // register arrays: the copies compile to moves
    memcpy(x, &a, kVectorBytes);
    memcpy(y, &b, kVectorBytes);
    CB_UNROLL
    for (int i = 0; i < kLanes; ++i) x[i] = combine<Fmt, O>(x[i], y[i]);
    uint4 r;
    memcpy(&r, x, kVectorBytes);
    return r;
  }
}

// ---- Per-thread loops. dst may be exactly a and/or b: every element is read by the thread
// that writes it, before it writes it, so no pointer is __restrict__. `thread` is the
// global thread index and `stride` the grid's thread count. ----

// How a call is split: elements [0, head) and [head + vectors * lanes, count) one at a
// time, the vectors in between 16 bytes at a time (all three buffers aligned alike), or
// everything byte-wise when elements are not even naturally aligned.
struct Plan {
  bool bytewise = false;
  size_t head = 0;
  size_t vectors = 0;
};

CB_HD_INLINE Plan plan_reduce(const void* dst, const void* a, const void* b, size_t count,
                              size_t element) {
  const auto d = reinterpret_cast<uintptr_t>(dst);
  const auto pa = reinterpret_cast<uintptr_t>(a);
  const auto pb = reinterpret_cast<uintptr_t>(b);
  Plan p;
  if ((d | pa | pb) % element != 0) {
    p.bytewise = true;
    return p;
  }
  p.head = count;  // offsets that differ within 16 bytes: all scalar
  const size_t offset = d % kVectorBytes;
  if (pa % kVectorBytes == offset && pb % kVectorBytes == offset) {
    p.head = ((kVectorBytes - offset) % kVectorBytes) / element;
    if (p.head > count) p.head = count;
    p.vectors = (count - p.head) / (kVectorBytes / element);
  }
  return p;
}

template <typename Fmt, typename O>
CB_HD_INLINE void reduce_aligned_thread(size_t thread, size_t stride, typename Fmt::Storage* dst,
                                        const typename Fmt::Storage* a,
                                        const typename Fmt::Storage* b, size_t head, size_t vectors,
                                        size_t count) {
  using S = typename Fmt::Storage;
  constexpr size_t kLanes = kVectorBytes / sizeof(S);
  for (size_t i = thread; i < head; i += stride) dst[i] = combine<Fmt, O>(a[i], b[i]);
  for (size_t i = head + vectors * kLanes + thread; i < count; i += stride)
    dst[i] = combine<Fmt, O>(a[i], b[i]);

  uint4* dv = reinterpret_cast<uint4*>(dst + head);
  const uint4* av = reinterpret_cast<const uint4*>(a + head);
  const uint4* bv = reinterpret_cast<const uint4*>(b + head);
  size_t v = thread;
  for (; v + (kUnroll - 1) * stride < vectors; v += kUnroll * stride) {
    uint4 x[kUnroll], y[kUnroll];
    CB_UNROLL
    for (int k = 0; k < kUnroll; ++k) {
      x[k] = av[v + k * stride];
      y[k] = bv[v + k * stride];
    }
    CB_UNROLL
    for (int k = 0; k < kUnroll; ++k) dv[v + k * stride] = combine_vector<Fmt, O>(x[k], y[k]);
  }
  for (; v < vectors; v += stride) dv[v] = combine_vector<Fmt, O>(av[v], bv[v]);
}

// Elements not naturally aligned (an odd byte offset, say): the GPU faults on misaligned
// loads, so each element is assembled from its bytes into an unsigned integer of its width
// with shifts, then reinterpreted, and stored byte by byte (store_bytes). (memcpy of unknown
// alignment into a 16-bit local was what this did first: on the H100 its half and bfloat16
// sums and products came out with a wrong low byte while the host emulation of the same
// code was right.)
template <size_t kBytes>
struct UnsignedOf;
template <>
struct UnsignedOf<1> {
  using type = uint8_t;
};
template <>
struct UnsignedOf<2> {
  using type = uint16_t;
};
template <>
struct UnsignedOf<4> {
  using type = uint32_t;
};
template <>
struct UnsignedOf<8> {
  using type = uint64_t;
};

template <typename S>
CB_HD_INLINE S load_bytes(const unsigned char* p) {
  using U = typename UnsignedOf<sizeof(S)>::type;
  U v = 0;
  CB_UNROLL
  for (size_t k = 0; k < sizeof(S); ++k) v |= static_cast<U>(static_cast<U>(p[k]) << (8 * k));
  S out;
  memcpy(&out, &v, sizeof(S));  // both naturally aligned locals: a register move
  return out;
}

// On the device each byte of an element up to 4 bytes wide is taken out of a 32-bit
// register with a byte permute (prmt) before its 8-bit store. The H100 run of 2026-11-27
// still found the low byte wrong with shifts alone, for half and bfloat16 sum and product
// only: the results of the float-to-16-bit conversion, stored with st.u8 straight from their
// 16-bit register (max and min, which store a loaded element, were right; so were the loads).
// The permute puts each byte in a 32-bit register of its own. Not yet run on a GPU.
template <typename S>
CB_HD_INLINE void store_bytes(unsigned char* p, S value) {
  using U = typename UnsignedOf<sizeof(S)>::type;
  U v;
  memcpy(&v, &value, sizeof(S));
#if defined(__CUDA_ARCH__)
  if constexpr (sizeof(S) <= sizeof(uint32_t)) {
    const uint32_t word = v;
    CB_UNROLL
    for (unsigned k = 0; k < sizeof(S); ++k)
      p[k] = static_cast<unsigned char>(__byte_perm(word, 0u, 0x4440u + k));  // byte k, zeros
  } else  // NOLINT(readability-misleading-indentation): the #if leaves one branch on the host
#endif
  {
    CB_UNROLL
    for (size_t k = 0; k < sizeof(S); ++k) p[k] = static_cast<unsigned char>(v >> (8 * k));
  }
}

template <typename Fmt, typename O>
CB_HD_INLINE void reduce_bytewise_thread(size_t thread, size_t stride, unsigned char* dst,
                                         const unsigned char* a, const unsigned char* b,
                                         size_t count) {
  using S = typename Fmt::Storage;
  for (size_t i = thread; i < count; i += stride) {
    const S x = load_bytes<S>(a + i * sizeof(S));
    const S y = load_bytes<S>(b + i * sizeof(S));
    store_bytes<S>(dst + i * sizeof(S), combine<Fmt, O>(x, y));
  }
}

}  // namespace cb::gpu::kernels
