// Element-wise reduction of host buffers: the arithmetic every collective algorithm runs
// when it combines a received chunk with its own.
#pragma once

#include <cstddef>
#include <string_view>

#include "core/types.hpp"

namespace cb::engine {

// dst[i] = dst[i] op src[i] for i < count. The accumulate form every algorithm uses.
void reduce_host(void* dst, const void* src, size_t count, Dtype dt, Op op);

// dst[i] = a[i] op b[i] for i < count.
void reduce_host(void* dst, const void* a, const void* b, size_t count, Dtype dt, Op op);

// Contract and semantics (both overloads):
//  * count is in elements. Pointers need no alignment at all: elements are accessed with
//    memcpy semantics, so any byte offset is valid.
//  * Buffers must not overlap, except that dst may be exactly a and/or exactly b.
//  * Char (int8), Int32, Int64: Sum and Prod wrap modulo 2^bits (two's complement).
//  * Float, Double: native IEEE arithmetic.
//  * Half, BFloat16: each element is widened to float, combined, and rounded back to
//    nearest-even. For Sum and Prod that equals the correctly rounded result, because
//    float carries more than twice the 16-bit formats' precision (no double-rounding).
//  * Max/Min on floating types: if either operand is NaN the result is NaN (a's NaN when
//    both are). Otherwise like a > b ? a : b (Max) / a < b ? a : b (Min): when the operands
//    compare equal, +0 and -0 included, the result is b. Max/Min return one operand
//    bit-for-bit (a Half or BFloat16 result is never re-rounded).
//  * A NaN produced by Sum/Prod is a NaN of unspecified payload.
//  * Int16 as the other integers. ComplexFloat, ComplexDouble: Sum and Prod only, part by
//    part and (re*re - im*im, re*im + im*re) (core/reduce_ops.hpp).
//  * The pair types (FloatInt ... LongDoubleInt): MaxLoc and MinLoc only, as MPI defines
//    them (equal values: the lower index); padding bytes of the result are unspecified.
//  * A combination op_applies() refuses throws RuntimeError.
// On x86-64 an AVX2 + F16C variant is used where the CPU has it (checked once); results
// are identical to the baseline build target apart from NaN payloads of Sum/Prod.

namespace detail {

// reduce_host forced onto the baseline variant, so tests cover both variants and the
// micro-benchmark can measure what AVX2 buys.
void reduce_host_baseline(void* dst, const void* a, const void* b, size_t count, Dtype dt, Op op);

// Name of the variant reduce_host uses on this CPU: "avx2+f16c" or "baseline".
std::string_view reduce_host_variant();

}  // namespace detail

}  // namespace cb::engine
