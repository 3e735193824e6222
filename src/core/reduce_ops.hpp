// The element operators of every reduction, written once for the host kernels
// (engine/reduce_host.cpp) and the CUDA kernels (gpu/reduce_body.cuh).
// Arithmetic operators compute a value; selecting ones pick an operand, so that max and
// min return one of their inputs bit for bit, never re-rounded.
#pragma once

#include <type_traits>

#if defined(__CUDACC__)
#define CB_REDUCE_OP __host__ __device__ __forceinline__
#else
#define CB_REDUCE_OP [[gnu::always_inline]] inline
#endif

namespace cb::reduce_ops {

struct SumOp {
  static constexpr bool kSelects = false;
  template <typename T>
  CB_REDUCE_OP static T combine(T a, T b) {
    if constexpr (std::is_integral_v<T>) {
      using U = std::make_unsigned_t<T>;  // unsigned arithmetic wraps; signed would be UB
      return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
    } else {
      return a + b;
    }
  }
};

struct ProdOp {
  static constexpr bool kSelects = false;
  template <typename T>
  CB_REDUCE_OP static T combine(T a, T b) {
    if constexpr (std::is_integral_v<T>) {
      using U = std::make_unsigned_t<T>;
      return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
    } else {
      return a * b;
    }
  }
};

// `a != a` is the NaN test: a NaN a is kept, and a NaN b wins the comparison's "else";
// ties (+0 vs -0 included) go to b. Bitwise | rather than || so that no branch is left to
// stop if-conversion and vectorisation.
struct MaxOp {
  static constexpr bool kSelects = true;
  template <typename T>
  CB_REDUCE_OP static bool keeps_a(T a, T b) {
    return (a > b) | (a != a);  // NOLINT(misc-redundant-expression)
  }
};

struct MinOp {
  static constexpr bool kSelects = true;
  template <typename T>
  CB_REDUCE_OP static bool keeps_a(T a, T b) {
    return (a < b) | (a != a);  // NOLINT(misc-redundant-expression)
  }
};

}  // namespace cb::reduce_ops
