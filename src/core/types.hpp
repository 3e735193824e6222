// Vocabulary shared by every part of collbench: memory kinds, element types,
// reduction operators and collectives, with their names and parsers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace cb {

enum class Mem : uint8_t { Host, Cuda };
enum class Dtype : uint8_t { Char, Int32, Int64, Float, Double, Half, BFloat16 };
enum class Op : uint8_t { Sum, Prod, Max, Min };
enum class Coll : uint8_t {
  None,
  Allreduce,
  Bcast,
  Alltoall,
  Allgather,
  ReduceScatter,
  Reduce,
  Barrier,
  Alltoallv,
  Gather,
  Scatter,
  Gatherv,
  Scatterv,
  Allgatherv,
  ReduceScatterV,  // MPI_Reduce_scatter (per-rank counts); ReduceScatter is the block form
  Alltoallw,
  NeighborAllgather,
  NeighborAllgatherv,
  NeighborAlltoall,
  NeighborAlltoallv,
  NeighborAlltoallw
};

inline constexpr Dtype kAllDtypes[] = {Dtype::Char,   Dtype::Int32, Dtype::Int64,   Dtype::Float,
                                       Dtype::Double, Dtype::Half,  Dtype::BFloat16};
inline constexpr Op kAllOps[] = {Op::Sum, Op::Prod, Op::Max, Op::Min};

size_t dtype_size(Dtype dt);
bool dtype_is_integer(Dtype dt);

std::string_view to_string(Mem m);
std::string_view to_string(Dtype dt);
std::string_view to_string(Op op);
std::string_view to_string(Coll c);

// Parsers accept the canonical names above plus common aliases
// ("int" for int32, "fp16"/"bf16", "h"/"d" memory letters ...); nullopt if unknown.
std::optional<Mem> parse_mem(std::string_view s);
std::optional<Dtype> parse_dtype(std::string_view s);
std::optional<Op> parse_op(std::string_view s);
std::optional<Coll> parse_coll(std::string_view s);

// A "one of: a, b, c" list for error messages.
std::string dtype_choices();
std::string op_choices();

}  // namespace cb
