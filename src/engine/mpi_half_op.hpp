// MPI's datatype and reduction operator for a collbench (dtype, op), in one place for
// every MPI call that reduces (allreduce, reduce, reduce_scatter and their non-blocking
// forms). MPI defines no 16-bit float type, so half and bfloat16 go to MPI as Horovod
// sends them: a contiguous 2-byte datatype (MPI_Type_contiguous(2, MPI_BYTE), committed
// once) with user-defined commutative operators (MPI_Op_create, created once), whose
// arithmetic is the engine's host reduction (core/half.hpp, core/reduce_ops.hpp: widened to
// float, rounded back to nearest even). Both are freed at MPI_Finalize.
#pragma once

#include <mpi.h>

#include <string>

#include "core/types.hpp"

namespace cb {

struct MpiReduction {
  MPI_Datatype type;  // MPI_DATATYPE_NULL: none (never for collbench's dtypes)
  MPI_Op op;
  bool user_defined;  // collbench's own MPI_Op (half, bfloat16)
};

// The datatype and operator to pass to MPI for `dt` and `op`; for collectives that only
// move data, `type` alone (half and bfloat16: the 2-byte contiguous type).
MpiReduction mpi_datatype_and_op(Dtype dt, Op op);

// How MPI reduces dt with op, for the table header and the JSON: "MPI_SUM on MPI_FLOAT",
// "user-defined (fp16, collbench) on MPI_Type_contiguous(2, MPI_BYTE)".
std::string mpi_reduction_description(Dtype dt, Op op);

}  // namespace cb
