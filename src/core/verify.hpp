// Inputs whose collective results are exactly predictable in every dtype and op, and the
// element access that fills and checks them. Integers are kept small enough that every
// partial result, in any order, is exact even in bfloat16 and int8.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/types.hpp"

namespace cb {

double load_element(const std::byte* base, size_t index, Dtype dt);
void store_element(std::byte* base, size_t index, Dtype dt, double value);

// Rank `rank`'s input at element `index` for a reduction `op` over `nranks` ranks.
// Bcast and alltoall data use Op::Max (no accumulation, so the widest range). `generation`:
// --vary-data's (values::varied_index(); 0: the plain inputs).
double input_value(Dtype dt, Op op, int rank, int nranks, uint64_t index, uint32_t generation = 0);

double apply_op(Op op, double a, double b);

// The bitwise complement of `expected` stored as dt: never equal to it, so a poisoned
// output that is not overwritten is always caught.
void store_poison(std::byte* base, size_t index, Dtype dt, double expected);

// How many of the elements [first, first + count) of `recv` differ from expected(i), i
// counted from 0: the check every CollSpec runs.
template <typename Expected>
size_t count_wrong(const std::byte* recv, size_t first, size_t count, Dtype dt,
                   Expected&& expected) {
  size_t wrong = 0;
  for (size_t i = 0; i < count; ++i) wrong += load_element(recv, first + i, dt) != expected(i);
  return wrong;
}

// ---- Agreement across ranks (-c): results that must be the same bits on every rank. ----

// A 64-bit hash of `bytes` bytes of raw bits (not cryptographic: two buffers that differ
// in any bit hash alike with a chance of about 2^-64).
uint64_t bits_hash(const std::byte* data, size_t bytes);

// The ranks whose hash differs from rank 0's (hashes[r]: rank r's), in rank order; empty
// when every rank has rank 0's bits.
std::vector<int> differing_ranks(std::span<const uint64_t> hashes);

// "1, 2" (at most `shown` ranks, then ", ... (N in all)").
std::string rank_list(const std::vector<int>& ranks, size_t shown = 16);

// Whether reducing dt with op can give different bits in different orders of the
// contributions: floating point (float, double, half, bfloat16) with sum or prod. Max and
// min are exact in any order; integer sums and products wrap alike in any order.
bool order_sensitive(Dtype dt, Op op);

// Rank `rank`'s input at element `index` for the order-sensitive pass of -c: inputs whose
// reduction depends on the order of the contributions (so only the agreement of the
// ranks' results is checked, not a value). Sum: for each element one rank gives +1,
// another -1 and every other rank a value between 1/8 and 1 of 1's half ulp, signed, so
// the result is 0, a sum of the small values, or a rounding of them depending on when the
// large ones cancel. Prod: +-(1 + m x 2^-mantissa), m random below 2^(mantissa-2), so
// every product rounds. Finite (half: up to ~40 ranks; beyond, infinities still compare).
double order_sensitive_value(Dtype dt, Op op, int rank, int nranks, uint64_t index);

// This rank's inputs of the order-sensitive pass: `count` elements into `in`.
void fill_order_sensitive(Dtype dt, Op op, int rank, int nranks, std::byte* in, size_t count);

}  // namespace cb
