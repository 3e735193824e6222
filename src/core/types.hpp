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
// The first seven are the benchmarks' element types (kAllDtypes: --dtype, fill and check,
// NCCL, traces). The others only the engine reduces, for the MPI types that the drop-in
// (docs/preload.md) hands it: 16-bit integers, complex numbers (a real and an imaginary
// part) and MPI's value-index pairs of MPI_MAXLOC/MPI_MINLOC (MPI_FLOAT_INT ...: the C
// struct {value; int index}, padding included: reduce_ops.hpp's LocPair). They have names
// (to_string) but parse_dtype() does not accept them: no benchmark fills or checks them.
enum class Dtype : uint8_t {
  Char,
  Int32,
  Int64,
  Float,
  Double,
  Half,
  BFloat16,
  Int16,
  ComplexFloat,   // MPI_C_FLOAT_COMPLEX, MPI_COMPLEX
  ComplexDouble,  // MPI_C_DOUBLE_COMPLEX, MPI_DOUBLE_COMPLEX
  FloatInt,       // MPI_FLOAT_INT
  DoubleInt,      // MPI_DOUBLE_INT
  LongInt,        // MPI_LONG_INT
  IntInt,         // MPI_2INT
  ShortInt,       // MPI_SHORT_INT
  LongDoubleInt   // MPI_LONG_DOUBLE_INT (host only)
};
// Sum, Prod, Max, Min: kAllOps, the benchmarks' operators. MaxLoc and MinLoc (MPI's, on the
// pair types only) the engine runs for the drop-in.
enum class Op : uint8_t { Sum, Prod, Max, Min, MaxLoc, MinLoc };
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

// Bytes one element takes in memory (a pair type's: its C struct's, padding included).
size_t dtype_size(Dtype dt);
bool dtype_is_integer(Dtype dt);
// Whether the engine reduces `dt` with `op` (the one table of which operator applies to which
// type): integers and real floating types take sum, prod, max and min; complex types sum and
// prod; the pair types maxloc and minloc. MPI defines no other of these combinations.
bool op_applies(Dtype dt, Op op);

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
