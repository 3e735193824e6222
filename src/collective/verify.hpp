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

}  // namespace cb
