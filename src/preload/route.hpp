// Which MPI collective calls libcb_engine_preload.so gives to the engine, and as what
// collbench collective. Each function turns one call's MPI arguments into CollArgs, or
// names the reason it passes through to PMPI (a short category, counted per reason by
// CB_PRELOAD_VERBOSE). The answer depends only on arguments MPI requires to match across
// the ranks of a call (communicator, count and datatype of reductions, op, root, the
// in-place choice where MPI makes every rank take it, the byte size of a block), so every
// rank of a call decides alike.
//
// Reductions (allreduce, reduce, reduce_scatter_block) keep their element type: a
// predefined type that is a collbench Dtype of the same size (signed or unsigned integers
// of 1, 4 or 8 bytes, float, double) and MPI_SUM/PROD/MAX/MIN (unsigned: sum and prod
// only, which wrap bit for bit alike). Data movement (bcast, alltoall, allgather) moves
// bytes: any predefined type whose elements are contiguous (size == extent).
//
// Counts are MPI_Count: the int bindings and the MPI-4 large-count ones (MPI_Allreduce_c,
// ...) share these; a buffer above 2 GiB passes through ("over 2 GiB").
#pragma once

#include <mpi.h>

#include <cstdint>
#include <optional>
#include <string>

#include "core/args.hpp"

namespace cb::preload {

struct Route {
  CollArgs args;
  std::string reason;  // empty: the engine runs args
  bool engine() const { return reason.empty(); }
};

// MPI_Allreduce, MPI_Reduce (root), MPI_Reduce_scatter_block (count = recvcount).
Route reduction(Coll coll, const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype type,
                MPI_Op op, int root, MPI_Comm comm);
Route bcast(void* buffer, MPI_Count count, MPI_Datatype type, int root, MPI_Comm comm);
// MPI_Alltoall and MPI_Allgather.
Route exchange(Coll coll, const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
               void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm);
Route barrier(MPI_Comm comm);

// The collbench element type of a predefined MPI type in a reduction (same size); nullopt
// for types the engine does not reduce. *is_unsigned says whether max/min would differ.
std::optional<Dtype> reduction_dtype(MPI_Datatype type, bool* is_unsigned);
std::optional<Op> op_of(MPI_Op op);

}  // namespace cb::preload
