// Inputs whose collective results are exactly predictable in every dtype and op, and the
// element access that fills and checks them. Integers are kept small enough that every
// partial result, in any order, is exact even in bfloat16 and int8.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/types.hpp"

namespace cb {

double load_element(const std::byte* base, size_t index, Dtype dt);
void store_element(std::byte* base, size_t index, Dtype dt, double value);

// Rank `rank`'s input at element `index` for a reduction `op` over `nranks` ranks.
// Bcast and alltoall data use Op::Max (no accumulation, so the widest range).
double input_value(Dtype dt, Op op, int rank, int nranks, uint64_t index);

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

}  // namespace cb
