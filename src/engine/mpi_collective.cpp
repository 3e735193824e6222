#include "engine/mpi_collective.hpp"

#include <cstdint>
#include <cstdlib>

#include "core/coll_spec.hpp"
#include "core/mpi_check.hpp"
#include "core/mpi_compat.hpp"
#include "core/vcounts.hpp"
#include "engine/mpi_half_op.hpp"
#include "engine/mpi_library.hpp"

namespace cb {
namespace {

// A collective's arguments in MPI's terms (mpi_half_op.hpp: half and bfloat16 travel as a
// contiguous 2-byte type and reduce with collbench's MPI_Op).
struct MpiCall {
  const void* in;
  void* out;
  int count;
  MPI_Datatype type;
  MPI_Op op;
};

MpiCall mpi_call(const CollArgs& a, int rank) {
  const MpiReduction r = mpi_datatype_and_op(a.dtype, a.op);
  const void* in = a.in_place ? MPI_IN_PLACE : a.send.ptr;
  void* out = a.recv.ptr;
  // Reduce: MPI_IN_PLACE is the root's alone; the others send from recv, their input, and
  // pass no receive buffer (insignificant there; the same buffer twice would alias).
  if (a.coll == Coll::Reduce && a.in_place && rank != a.root) {
    in = a.recv.ptr;
    out = nullptr;
  }
  return {in, out, as_mpi_count(a.count), r.type, r.op};
}

[[noreturn]] void not_in_mpi(const CollArgs& a) {
  throw UsageError("the MPI library has no collective for " + std::string(to_string(a.coll)));
}

}  // namespace

int as_mpi_count(size_t n) {
  if (n > static_cast<size_t>(INT32_MAX))
    throw UsageError("message of " + std::to_string(n) + " elements exceeds MPI's int count");
  return static_cast<int>(n);
}

void fill_count_arrays(const CountMatrix& m, int rank, MpiCountArrays& v) {
  const auto n = static_cast<size_t>(m.nranks());
  bool same = v.scounts.size() == n;
  for (size_t p = 0; same && p < n; ++p)
    same = v.scounts[p] == static_cast<int>(m.count(rank, int(p))) &&
           v.rcounts[p] == static_cast<int>(m.count(int(p), rank)) &&
           v.sdispls[p] == static_cast<int>(m.send_offset(rank, int(p))) &&
           v.rdispls[p] == static_cast<int>(m.recv_offset(rank, int(p)));
  if (same) return;
  v.scounts.resize(n);
  v.rcounts.resize(n);
  v.sdispls.resize(n);
  v.rdispls.resize(n);
  for (size_t p = 0; p < n; ++p) {
    const int peer = static_cast<int>(p);
    v.scounts[p] = as_mpi_count(m.count(rank, peer));
    v.rcounts[p] = as_mpi_count(m.count(peer, rank));
    v.sdispls[p] = as_mpi_count(m.send_offset(rank, peer));
    v.rdispls[p] = as_mpi_count(m.recv_offset(rank, peer));
  }
}

std::string mpi_collective_refuses(const CollArgs& a) {
  // MPICH 4.0's device-level (ch4) reduce reads MPI_IN_PLACE as a buffer at a root other
  // than 0 above 2 KiB and crashes (SIGSEGV at 0xffffffffffffffff); its MPIR algorithms
  // are right. Say so rather than crash.
  if (a.coll == Coll::Reduce && a.in_place && a.root != 0 && a.count * dtype_size(a.dtype) > 2048 &&
      mpi_compat::mpi_reduce_in_place_root_bug(mpi_library_version()))
    return "MPICH 4.0's ch4 MPI_Reduce crashes with MPI_IN_PLACE at a root other than 0 above "
           "2 KiB; set MPIR_CVAR_REDUCE_DEVICE_COLLECTIVE=0 (its MPIR algorithms are correct), "
           "use root 0, or leave out -l";
  return {};
}

MPI_Request post_mpi_collective(const CollArgs& a, MPI_Comm comm, int rank, MpiCountArrays& v) {
  const MpiCall c = mpi_call(a, rank);
  MPI_Request req = MPI_REQUEST_NULL;
  switch (a.coll) {
    case Coll::Allreduce:
      CB_MPI(MPI_Iallreduce(c.in, c.out, c.count, c.type, c.op, comm, &req));
      break;
    case Coll::Bcast:
      CB_MPI(MPI_Ibcast(c.out, c.count, c.type, a.root, comm, &req));
      break;
    case Coll::Alltoall:
      CB_MPI(MPI_Ialltoall(c.in, c.count, c.type, c.out, c.count, c.type, comm, &req));
      break;
    case Coll::Reduce:
      CB_MPI(MPI_Ireduce(c.in, c.out, c.count, c.type, c.op, a.root, comm, &req));
      break;
    case Coll::Barrier:
      CB_MPI(MPI_Ibarrier(comm, &req));
      break;
    case Coll::Alltoallv:
      fill_count_arrays(*a.counts, rank, v);
      CB_MPI(MPI_Ialltoallv(c.in, v.scounts.data(), v.sdispls.data(), c.type, c.out,
                            v.rcounts.data(), v.rdispls.data(), c.type, comm, &req));
      break;
    case Coll::Allgather:  // in place: block `rank` of recv is the input
      CB_MPI(MPI_Iallgather(c.in, c.count, c.type, c.out, c.count, c.type, comm, &req));
      break;
    case Coll::ReduceScatter:  // in place: recv holds all n blocks, the result is its first
      CB_MPI(MPI_Ireduce_scatter_block(c.in, c.out, c.count, c.type, c.op, comm, &req));
      break;
    default:
      not_in_mpi(a);
  }
  return req;
}

void run_mpi_collective(const CollArgs& a, MPI_Comm comm, int rank, MpiCountArrays& v) {
  const MpiCall c = mpi_call(a, rank);
  switch (a.coll) {
    case Coll::Allreduce:
      CB_MPI(MPI_Allreduce(c.in, c.out, c.count, c.type, c.op, comm));
      break;
    case Coll::Bcast:
      CB_MPI(MPI_Bcast(c.out, c.count, c.type, a.root, comm));
      break;
    case Coll::Alltoall:
      CB_MPI(MPI_Alltoall(c.in, c.count, c.type, c.out, c.count, c.type, comm));
      break;
    case Coll::Reduce:
      CB_MPI(MPI_Reduce(c.in, c.out, c.count, c.type, c.op, a.root, comm));
      break;
    case Coll::Barrier:
      CB_MPI(MPI_Barrier(comm));
      break;
    case Coll::Alltoallv:
      fill_count_arrays(*a.counts, rank, v);
      CB_MPI(MPI_Alltoallv(c.in, v.scounts.data(), v.sdispls.data(), c.type, c.out,
                           v.rcounts.data(), v.rdispls.data(), c.type, comm));
      break;
    case Coll::Allgather:
      CB_MPI(MPI_Allgather(c.in, c.count, c.type, c.out, c.count, c.type, comm));
      break;
    case Coll::ReduceScatter:
      CB_MPI(MPI_Reduce_scatter_block(c.in, c.out, c.count, c.type, c.op, comm));
      break;
    default:
      not_in_mpi(a);
  }
}

}  // namespace cb
