#include "engine/reduce_host.hpp"

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <type_traits>

#include "core/errors.hpp"
#include "core/half.hpp"
#include "core/reduce_ops.hpp"

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#endif

// The kernels are templates, all inlined into one function per instruction-set variant
// (baseline, and AVX2 + F16C), which switches once per call on Dtype, Op and
// operand aliasing. The variant is picked once, from the CPU, on first use.
// Everything on the element path is forced inline: in functions this large g++ otherwise
// stops inlining small helpers, leaving per-element calls (and baseline code in the AVX2
// variant).
#define CB_INLINE [[gnu::always_inline]] inline

namespace cb::engine {
namespace {

// ---- Element formats: how a Dtype is stored, and the type it is combined in. ----

template <typename T>
struct Native {
  using Storage = T;
  CB_INLINE static T widen(T v) { return v; }
  CB_INLINE static T narrow(T v) { return v; }
};

struct HalfFormat {
  using Storage = uint16_t;
  CB_INLINE static float widen(uint16_t v) { return half_to_float(v); }
  CB_INLINE static uint16_t narrow(float v) { return float_to_half(v); }
};

struct Bf16Format {
  using Storage = uint16_t;
  CB_INLINE static float widen(uint16_t v) { return bf16_to_float(v); }
  CB_INLINE static uint16_t narrow(float v) { return float_to_bf16(v); }
};

// Two 16-bit elements per 32-bit word, combined half by half. Vectorised, this needs only
// shifts and masks within each 32-bit lane, where widening 16-bit elements to 32-bit lanes
// and narrowing them back costs cross-lane shuffles.
template <typename Fmt16>
struct PairOf {
  using Storage = uint32_t;
  using Element = Fmt16;
};

// 16-bit floating formats run in pairs (two in a 32-bit word): the converted pair vectorises
// where one element at a time does not (bench/reduce_host_bench.cpp compares them). 16-bit
// integers vectorise as they are.
template <typename Fmt>
constexpr bool kInPairs = std::is_same_v<Fmt, HalfFormat> || std::is_same_v<Fmt, Bf16Format>;

template <typename Fmt>
constexpr bool kIsPair = requires {
  typename Fmt::Element;
};

// The element operators (sum, prod, max, min): one definition for host and device.
using reduce_ops::MaxLocOp;
using reduce_ops::MaxOp;
using reduce_ops::MinLocOp;
using reduce_ops::MinOp;
using reduce_ops::ProdOp;
using reduce_ops::SumOp;

template <typename T>
using ComplexFormat = Native<reduce_ops::Complex<T>>;
template <typename V>
using LocFormat = Native<reduce_ops::LocPair<V>>;
template <typename Fmt>
constexpr bool kIsComplex =
    std::is_same_v<Fmt, ComplexFormat<float>> || std::is_same_v<Fmt, ComplexFormat<double>>;
template <typename Fmt>
constexpr bool kIsLocPair = requires(typename Fmt::Storage p) {
  p.index;
};

template <typename Fmt, typename O>
CB_INLINE typename Fmt::Storage combine_element(typename Fmt::Storage a, typename Fmt::Storage b) {
  if constexpr (kIsPair<Fmt>) {
    using E = typename Fmt::Element;
    const uint32_t low = combine_element<E, O>(static_cast<uint16_t>(a), static_cast<uint16_t>(b));
    const uint32_t high =
        combine_element<E, O>(static_cast<uint16_t>(a >> 16), static_cast<uint16_t>(b >> 16));
    return (high << 16) | low;
  } else if constexpr (O::kSelects) {
    return O::keeps_a(Fmt::widen(a), Fmt::widen(b)) ? a : b;
  } else {
    return Fmt::narrow(O::combine(Fmt::widen(a), Fmt::widen(b)));
  }
}

// ---- Unaligned element access: memcpy of a fixed size compiles to a plain (vector) move.

template <typename S>
CB_INLINE S load(const std::byte* base, size_t i) {
  S v;
  std::memcpy(&v, base + i * sizeof(S), sizeof(S));
  return v;
}

template <typename S>
CB_INLINE void store(std::byte* base, size_t i, S v) {
  std::memcpy(base + i * sizeof(S), &v, sizeof(S));
}

// ---- Loops, one per aliasing pattern so that `__restrict` is always truthful. ----

template <typename Fmt, typename O>
CB_INLINE void combine_distinct(std::byte* __restrict dst, const std::byte* __restrict a,
                                const std::byte* __restrict b, size_t count) {
  using S = typename Fmt::Storage;
  for (size_t i = 0; i < count; ++i) {
    store<S>(dst, i, combine_element<Fmt, O>(load<S>(a, i), load<S>(b, i)));
  }
}

// io[i] = io[i] op other[i], or other[i] op io[i] when !kIoIsA (operand order matters for
// which NaN or which signed zero Max/Min return).
template <typename Fmt, typename O, bool kIoIsA>
CB_INLINE void combine_into(std::byte* __restrict io, const std::byte* __restrict other,
                            size_t count) {
  using S = typename Fmt::Storage;
  for (size_t i = 0; i < count; ++i) {
    const S mine = load<S>(io, i);
    const S theirs = load<S>(other, i);
    store<S>(
        io, i,
        kIoIsA ? combine_element<Fmt, O>(mine, theirs) : combine_element<Fmt, O>(theirs, mine));
  }
}

template <typename Fmt, typename O>
CB_INLINE void combine_self(std::byte* io, size_t count) {
  using S = typename Fmt::Storage;
  for (size_t i = 0; i < count; ++i) {
    const S v = load<S>(io, i);
    store<S>(io, i, combine_element<Fmt, O>(v, v));
  }
}

struct Operands {
  std::byte* dst;
  const std::byte* a;
  const std::byte* b;
  size_t count;
};

enum class Aliasing { None, DstIsA, DstIsB };

// One stretch of elements [first, first + count) in the given aliasing form.
template <typename Fmt, typename O, Aliasing kAliasing>
CB_INLINE void combine_range(const Operands& x, size_t first, size_t count) {
  const size_t off = first * sizeof(typename Fmt::Storage);
  if constexpr (kAliasing == Aliasing::None) {
    combine_distinct<Fmt, O>(x.dst + off, x.a + off, x.b + off, count);
  } else if constexpr (kAliasing == Aliasing::DstIsA) {
    combine_into<Fmt, O, true>(x.dst + off, x.b + off, count);
  } else {
    combine_into<Fmt, O, false>(x.dst + off, x.a + off, count);
  }
}

// g++ -O2 (the "very cheap" vectoriser cost model) only vectorises a loop whose trip count
// is a known multiple of the vector length, so elements are fed in fixed-size blocks: large
// ones for the bulk (less loop overhead), then one-vector ones so that a remainder of up to
// a kilobyte is not left to scalar code. Only the last < 32 bytes run scalar. The sizes
// were chosen with bench/reduce_host_bench.cpp: the one-vector blocks matter most for odd
// sizes of a few KB, whose remainder would otherwise run scalar.
inline constexpr size_t kLargeBlockBytes = 1024;
inline constexpr size_t kSmallBlockBytes = 32;  // one AVX2 vector

// Runs whole blocks of kBlockBytes starting at element `done`; returns the new `done`.
template <size_t kBlockBytes, typename Fmt, typename O, Aliasing kAliasing>
CB_INLINE size_t combine_blocks(const Operands& x, size_t done) {
  constexpr size_t kBlock = kBlockBytes / sizeof(typename Fmt::Storage);
  for (; x.count - done >= kBlock; done += kBlock) {
    combine_range<Fmt, O, kAliasing>(x, done, kBlock);
  }
  return done;
}

template <typename Fmt, typename O, Aliasing kAliasing>
CB_INLINE void combine_in_blocks(const Operands& x) {
  size_t done = combine_blocks<kLargeBlockBytes, Fmt, O, kAliasing>(x, 0);
  done = combine_blocks<kSmallBlockBytes, Fmt, O, kAliasing>(x, done);
  combine_range<Fmt, O, kAliasing>(x, done, x.count - done);
}

template <typename Fmt, typename O>
CB_INLINE void combine_elements(const Operands& x) {
  if (x.dst == x.a && x.dst == x.b) {
    combine_self<Fmt, O>(x.dst, x.count);
  } else if (x.dst == x.a) {
    combine_in_blocks<Fmt, O, Aliasing::DstIsA>(x);
  } else if (x.dst == x.b) {
    combine_in_blocks<Fmt, O, Aliasing::DstIsB>(x);
  } else {
    combine_in_blocks<Fmt, O, Aliasing::None>(x);
  }
}

template <typename Fmt, typename O>
CB_INLINE void combine(const Operands& x) {
  if constexpr (kInPairs<Fmt>) {
    combine_elements<PairOf<Fmt>, O>({x.dst, x.a, x.b, x.count / 2});
    if (x.count % 2 != 0) {
      const size_t last = (x.count - 1) * sizeof(typename Fmt::Storage);
      combine_elements<Fmt, O>({x.dst + last, x.a + last, x.b + last, 1});
    }
  } else {
    combine_elements<Fmt, O>(x);
  }
}

// Only the operators op_applies() allows are instantiated per format (reduce_host checks the
// pair first): complex numbers have no order, pairs only maxloc and minloc.
template <typename Fmt>
CB_INLINE void combine_as(const Operands& x, Op op) {
  if constexpr (kIsLocPair<Fmt>) {
    if (op == Op::MaxLoc) return combine<Fmt, MaxLocOp>(x);
    return combine<Fmt, MinLocOp>(x);
  } else {
    switch (op) {
      case Op::Sum:
        return combine<Fmt, SumOp>(x);
      case Op::Prod:
        return combine<Fmt, ProdOp>(x);
      default:
        break;
    }
    if constexpr (!kIsComplex<Fmt>) {
      if (op == Op::Max) return combine<Fmt, MaxOp>(x);
      return combine<Fmt, MinOp>(x);
    }
  }
}

// ---- Instruction-set variants, selected once per process. ----

struct Baseline {};  // whatever the build targets: SSE2 on x86-64
struct Avx2F16c {};  // Haswell, Zen and later

#if defined(__x86_64__)
// F16C converts eight halves per instruction, several times faster than the portable bit
// manipulation, so Half gets a hand-written body. Max/Min compare in float and then pick
// the original 16-bit lanes, exactly like combine_element. Each 8-element chunk is loaded
// before it is stored, so exact aliasing of dst with a or b is fine.
template <typename O>
[[gnu::target("avx2,f16c")]] void combine_half_f16c(const Operands& x) {
  size_t i = 0;
  for (; x.count - i >= 8; i += 8) {
    const size_t off = i * sizeof(uint16_t);
    const __m128i a16 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(x.a + off));
    const __m128i b16 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(x.b + off));
    const __m256 a = _mm256_cvtph_ps(a16);
    const __m256 b = _mm256_cvtph_ps(b16);
    __m128i r16;
    if constexpr (O::kSelects) {
      constexpr int kPredicate = std::is_same_v<O, MaxOp> ? _CMP_GT_OQ : _CMP_LT_OQ;
      const __m256 keep_a = _mm256_or_ps(_mm256_cmp_ps(a, b, kPredicate),
                                         _mm256_cmp_ps(a, a, _CMP_UNORD_Q));  // a is NaN
      // Narrow the 32-bit all-ones/all-zeros lanes to 16 bits (signed saturation keeps them).
      const __m256i mask32 = _mm256_castps_si256(keep_a);
      const __m128i mask16 =
          _mm_packs_epi32(_mm256_castsi256_si128(mask32), _mm256_extracti128_si256(mask32, 1));
      r16 = _mm_blendv_epi8(b16, a16, mask16);
    } else {
      const __m256 r = std::is_same_v<O, SumOp> ? _mm256_add_ps(a, b) : _mm256_mul_ps(a, b);
      r16 = _mm256_cvtps_ph(r, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    }
    _mm_storeu_si128(reinterpret_cast<__m128i*>(x.dst + off), r16);
  }
  for (; i < x.count; ++i) {
    store<uint16_t>(x.dst, i,
                    combine_element<HalfFormat, O>(load<uint16_t>(x.a, i), load<uint16_t>(x.b, i)));
  }
}
#endif

template <typename Isa>
CB_INLINE void reduce_half(const Operands& x, Op op) {
#if defined(__x86_64__)
  if constexpr (std::is_same_v<Isa, Avx2F16c>) {
    switch (op) {
      case Op::Sum:
        return combine_half_f16c<SumOp>(x);
      case Op::Prod:
        return combine_half_f16c<ProdOp>(x);
      case Op::Max:
        return combine_half_f16c<MaxOp>(x);
      case Op::Min:
        return combine_half_f16c<MinOp>(x);
      default:
        break;  // not applicable (reduce_host checked)
    }
  }
#endif
  combine_as<HalfFormat>(x, op);
}

template <typename Isa>
CB_INLINE void reduce(const Operands& x, Dtype dt, Op op) {
  switch (dt) {
    case Dtype::Char:
      return combine_as<Native<int8_t>>(x, op);
    case Dtype::Int32:
      return combine_as<Native<int32_t>>(x, op);
    case Dtype::Int64:
      return combine_as<Native<int64_t>>(x, op);
    case Dtype::Float:
      return combine_as<Native<float>>(x, op);
    case Dtype::Double:
      return combine_as<Native<double>>(x, op);
    case Dtype::Half:
      return reduce_half<Isa>(x, op);
    case Dtype::BFloat16:
      return combine_as<Bf16Format>(x, op);
    case Dtype::Int16:
      return combine_as<Native<int16_t>>(x, op);
    case Dtype::ComplexFloat:
      return combine_as<ComplexFormat<float>>(x, op);
    case Dtype::ComplexDouble:
      return combine_as<ComplexFormat<double>>(x, op);
    case Dtype::FloatInt:
      return combine_as<LocFormat<float>>(x, op);
    case Dtype::DoubleInt:
      return combine_as<LocFormat<double>>(x, op);
    case Dtype::LongInt:
      return combine_as<LocFormat<long>>(x, op);
    case Dtype::IntInt:
      return combine_as<LocFormat<int>>(x, op);
    case Dtype::ShortInt:
      return combine_as<LocFormat<short>>(x, op);
    case Dtype::LongDoubleInt:
      return combine_as<LocFormat<long double>>(x, op);
  }
}

// Everything above is inlined into these, so each is compiled whole for its target.
void reduce_baseline(const Operands& x, Dtype dt, Op op) {
  reduce<Baseline>(x, dt, op);
}

#if defined(__x86_64__)
[[gnu::target("avx2,f16c")]] void reduce_avx2_f16c(const Operands& x, Dtype dt, Op op) {
  reduce<Avx2F16c>(x, dt, op);
}

// __builtin_cpu_supports("avx2") also checks that the OS saves the YMM registers; F16C is
// read from CPUID directly because not every compiler's builtin knows it.
bool cpu_has_avx2_f16c() {
  __builtin_cpu_init();  // may run before libgcc's own constructor has filled the CPU model
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  const bool f16c = __get_cpuid(1, &eax, &ebx, &ecx, &edx) != 0 && (ecx & bit_F16C) != 0;
  return f16c && __builtin_cpu_supports("avx2");
}
#endif

using ReduceFn = void (*)(const Operands&, Dtype, Op);

struct Variant {
  ReduceFn fn;
  std::string_view name;
};

Variant best_variant() {
#if defined(__x86_64__)
  if (cpu_has_avx2_f16c()) return {reduce_avx2_f16c, "avx2+f16c"};
#endif
  return {reduce_baseline, "baseline"};
}

const Variant& selected_variant() {
  static const Variant variant = best_variant();
  return variant;
}

Operands make_operands(void* dst, const void* a, const void* b, size_t count, Dtype dt, Op op) {
  if (!op_applies(dt, op))
    throw RuntimeError("reduce_host: " + std::string(to_string(op)) + " is not defined on " +
                       std::string(to_string(dt)));
  return {static_cast<std::byte*>(dst), static_cast<const std::byte*>(a),
          static_cast<const std::byte*>(b), count};
}

}  // namespace

void reduce_host(void* dst, const void* a, const void* b, size_t count, Dtype dt, Op op) {
  if (count == 0) return;
  selected_variant().fn(make_operands(dst, a, b, count, dt, op), dt, op);
}

void reduce_host(void* dst, const void* src, size_t count, Dtype dt, Op op) {
  reduce_host(dst, dst, src, count, dt, op);
}

namespace detail {

void reduce_host_baseline(void* dst, const void* a, const void* b, size_t count, Dtype dt, Op op) {
  if (count == 0) return;
  reduce_baseline(make_operands(dst, a, b, count, dt, op), dt, op);
}

std::string_view reduce_host_variant() {
  return selected_variant().name;
}

}  // namespace detail

}  // namespace cb::engine
