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

// A complex element as MPI stores it (C99's float _Complex, Fortran's COMPLEX): the real
// part, then the imaginary part. The product is the textbook formula, which is what C99's
// multiplication computes for finite operands whose products do not overflow (C99's Annex G
// recovery of infinities from NaN results is not done).
template <typename T>
struct Complex {
  T re, im;
  CB_REDUCE_OP friend Complex operator+(Complex a, Complex b) { return {a.re + b.re, a.im + b.im}; }
  CB_REDUCE_OP friend Complex operator*(Complex a, Complex b) {
    return {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
  }
};

// An element of MPI's pair types for MPI_MAXLOC/MPI_MINLOC (MPI_FLOAT_INT is
// struct { float value; int index; }): the C struct, so its size is the MPI type's extent.
template <typename V>
struct LocPair {
  V value;
  int index;
};

// The unsigned type integer sums and products wrap in: at least unsigned int, since narrower
// operands are promoted to (signed) int, where 16-bit products overflow.
template <typename T>
using Wrapping =
    std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;

struct SumOp {
  static constexpr bool kSelects = false;
  template <typename T>
  CB_REDUCE_OP static T combine(T a, T b) {
    if constexpr (std::is_integral_v<T>) {
      using U = Wrapping<T>;  // unsigned arithmetic wraps; signed would be UB
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
      using U = Wrapping<T>;
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

// MPI_MAXLOC / MPI_MINLOC: the larger (smaller) value with its index; equal values keep a's
// value with the lower of the two indices, as MPI defines. Unordered values (a NaN) keep a,
// as MPICH's loop does (a is its in-out operand there).
struct MaxLocOp {
  static constexpr bool kSelects = false;
  template <typename P>
  CB_REDUCE_OP static P combine(P a, P b) {
    if (a.value == b.value) return {a.value, a.index < b.index ? a.index : b.index};
    return a.value < b.value ? b : a;
  }
};

struct MinLocOp {
  static constexpr bool kSelects = false;
  template <typename P>
  CB_REDUCE_OP static P combine(P a, P b) {
    if (a.value == b.value) return {a.value, a.index < b.index ? a.index : b.index};
    return b.value < a.value ? b : a;
  }
};

}  // namespace cb::reduce_ops
