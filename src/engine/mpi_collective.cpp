#include "engine/mpi_collective.hpp"

#include <cstdint>
#include <cstdlib>
#include <map>
#include <mutex>
#include <tuple>

#include "core/coll_spec.hpp"
#include "core/layout.hpp"
#include "core/mpi_check.hpp"
#include "core/mpi_compat.hpp"
#include "core/topology.hpp"
#include "core/vcounts.hpp"
#include "engine/mpi_half_op.hpp"
#include "engine/mpi_library_info.hpp"

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

// -D's derived types, made once per (layout, count, base type) and kept while a persistent
// or pending operation may still use them: freed when MPI_Finalize deletes MPI_COMM_SELF's
// attributes, which it does first (MPI 4.0, 11.2.4), so the library has none left over.
struct LayoutTypes {
  std::mutex lock;
  std::map<std::tuple<const LayoutSpec*, size_t, MPI_Datatype>, MPI_Datatype> made;
  bool hooked = false;
};
LayoutTypes& layout_types() {
  static LayoutTypes types;
  return types;
}
int free_layout_types(MPI_Comm, int, void*, void*) {
  LayoutTypes& t = layout_types();
  const std::lock_guard<std::mutex> hold(t.lock);
  for (auto& [key, type] : t.made) MPI_Type_free(&type);
  t.made.clear();
  return MPI_SUCCESS;
}

// -D: one element of the layout's derived type per block (core/layout.hpp), built with
// the constructor the layout names (MPI libraries treat vectors and indexed types
// differently, which is what -D measures) and resized to the block's extent.
MPI_Datatype layout_type(const LayoutSpec& l, size_t count, MPI_Datatype base) {
  LayoutTypes& types = layout_types();
  const std::lock_guard<std::mutex> hold(types.lock);
  auto& made = types.made;
  const auto key = std::make_tuple(&l, count, base);
  if (const auto it = made.find(key); it != made.end()) return it->second;
  if (!types.hooked) {
    int keyval = MPI_KEYVAL_INVALID;
    CB_MPI(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, free_layout_types, &keyval, nullptr));
    CB_MPI(MPI_Comm_set_attr(MPI_COMM_SELF, keyval, nullptr));
    types.hooked = true;
  }
  MPI_Datatype t = MPI_DATATYPE_NULL, resized = MPI_DATATYPE_NULL;
  if (l.kind == LayoutSpec::Kind::Contiguous) {
    CB_MPI(MPI_Type_contiguous(as_mpi_count(count), base, &t));
  } else if (l.kind == LayoutSpec::Kind::Vector) {
    CB_MPI(MPI_Type_vector(as_mpi_count(count / l.stride), as_mpi_count(l.block),
                           as_mpi_count(l.stride), base, &t));
  } else {
    std::vector<int> lengths, displs;
    for (const auto& [at, length] : layout_runs(l, count)) {
      displs.push_back(as_mpi_count(at));
      lengths.push_back(as_mpi_count(length));
    }
    CB_MPI(MPI_Type_indexed(static_cast<int>(lengths.size()), lengths.data(), displs.data(), base,
                            &t));
  }
  MPI_Aint lb = 0, extent = 0;
  CB_MPI(MPI_Type_get_extent(base, &lb, &extent));
  CB_MPI(MPI_Type_create_resized(t, 0, extent * static_cast<MPI_Aint>(count), &resized));
  CB_MPI(MPI_Type_free(&t));
  CB_MPI(MPI_Type_commit(&resized));
  made[key] = resized;
  return resized;
}

MpiCall mpi_call(const CollArgs& a, int rank) {
  const MpiReduction r = mpi_datatype_and_op(a.dtype, a.op);
  const void* in = a.in_place ? MPI_IN_PLACE : a.send.ptr;
  void* out = a.recv.ptr;
  const bool root = rank == a.root;
  switch (a.coll) {
    // Reduce: MPI_IN_PLACE is the root's alone; the others send from recv, their input,
    // and pass no receive buffer (insignificant there; the same buffer twice would alias).
    case Coll::Reduce:
      if (a.in_place && !root) {
        in = a.recv.ptr;
        out = nullptr;
      }
      break;
    // Gather(v) in place: the root's input is its block of recv (MPI_IN_PLACE); the
    // others send their block of recv, where the harness keeps it in place.
    case Coll::Gather:
    case Coll::Gatherv:
      if (a.in_place && !root)
        in = a.recv.bytes_at(rank_block_offset(a, rank) * dtype_size(a.dtype));
      break;
    // Scatter(v) in place: the root's n blocks are in recv and its own stays there
    // (MPI_IN_PLACE as recvbuf); the others receive into their block of recv.
    case Coll::Scatter:
    case Coll::Scatterv:
      if (a.in_place) {
        in = a.recv.ptr;
        out = root ? MPI_IN_PLACE
                   : static_cast<void*>(
                         a.recv.bytes_at(rank_block_offset(a, rank) * dtype_size(a.dtype)));
      }
      break;
    default:
      break;
  }
  if (a.layout) return {in, out, 1, layout_type(*a.layout, a.count, r.type), r.op};
  return {in, out, as_mpi_count(a.count), r.type, r.op};
}

[[noreturn]] void not_in_mpi(const CollArgs& a) {
  throw UsageError("the MPI library has no collective for " + std::string(to_string(a.coll)));
}

}  // namespace

void refuse_mpi_count(size_t n) {
  throw UsageError("message of " + std::to_string(n) + " elements exceeds MPI's int count");
}

bool MpiCountArrays::holds(const CollArgs& a, int r) const {
  return topology == a.topology && matrix == a.counts && coll == a.coll && rank == r &&
         dtype == a.dtype;
}

MpiCountArrays MpiCountArrays::for_args(const CollArgs& a, int r) {
  MpiCountArrays v;
  v.topology = a.topology;
  v.matrix = a.counts;
  v.coll = a.coll;
  v.rank = r;
  v.dtype = a.dtype;
  return v;
}

void fill_count_arrays(const CollArgs& a, int rank, MpiCountArrays& v) {
  if (a.topology) return fill_neighbor_arrays(a, rank, v);
  const CountMatrix& m = *a.counts;
  const auto n = static_cast<size_t>(m.nranks());
  if (v.holds(a, rank)) return;
  v = MpiCountArrays::for_args(a, rank);
  for (size_t p = 0; p < n; ++p) {
    const int peer = static_cast<int>(p);
    if (a.coll == Coll::Alltoallv || a.coll == Coll::Alltoallw) {
      v.scounts.push_back(as_mpi_count(m.count(rank, peer)));
      v.rcounts.push_back(as_mpi_count(m.count(peer, rank)));
      v.sdispls.push_back(as_mpi_count(m.send_offset(rank, peer)));
      v.rdispls.push_back(as_mpi_count(m.recv_offset(rank, peer)));
    } else {  // one block per rank, the same arrays for sending and receiving
      v.scounts.push_back(as_mpi_count(m.block(peer)));
      v.sdispls.push_back(as_mpi_count(m.block_offset(peer)));
    }
  }
  if (a.coll != Coll::Alltoallv && a.coll != Coll::Alltoallw) {
    v.rcounts = v.scounts;
    v.rdispls = v.sdispls;
  }
  if (a.coll == Coll::Alltoallw) {  // displacements in bytes, a datatype per peer
    const MPI_Datatype type = mpi_datatype_and_op(a.dtype, a.op).type;
    const auto width = static_cast<int>(dtype_size(a.dtype));
    for (size_t p = 0; p < n; ++p) {
      v.sdispls[p] = as_mpi_count(size_t(v.sdispls[p]) * size_t(width));
      v.rdispls[p] = as_mpi_count(size_t(v.rdispls[p]) * size_t(width));
    }
    v.types.assign(n, type);
  }
}

void fill_neighbor_arrays(const CollArgs& a, int rank, MpiCountArrays& v) {
  if (v.holds(a, rank)) return;
  v = MpiCountArrays::for_args(a, rank);
  const auto count = [&](int from, int to) { return neighbor_edge_elements(a, from, to); };
  // Blocks packed in neighbor order: what goes to each destination, what comes from each
  // source (elements; alltoallw: bytes).
  const size_t width = a.coll == Coll::NeighborAlltoallw ? dtype_size(a.dtype) : 1;
  size_t at = 0;
  for (int to : a.topology->destinations(rank)) {
    v.scounts.push_back(as_mpi_count(count(rank, to)));
    v.sdispls.push_back(as_mpi_count(at * width));
    at += count(rank, to);
  }
  at = 0;
  for (int from : a.topology->sources(rank)) {
    v.rcounts.push_back(as_mpi_count(count(from, rank)));
    v.rdispls.push_back(as_mpi_count(at * width));
    at += count(from, rank);
  }
  const MPI_Datatype type = mpi_datatype_and_op(a.dtype, a.op).type;
  v.stypes.assign(v.scounts.size(), type);
  v.types.assign(v.rcounts.size(), type);
  v.sdispls_aint.assign(v.sdispls.begin(), v.sdispls.end());
  v.rdispls_aint.assign(v.rdispls.begin(), v.rdispls.end());
}

MPI_Comm make_graph_comm(MPI_Comm parent, const Topology& t, int rank) {
  const std::vector<int>& in = t.sources(rank);
  const std::vector<int>& out = t.destinations(rank);
  MPI_Comm graph = MPI_COMM_NULL;
  CB_MPI(MPI_Dist_graph_create_adjacent(parent, static_cast<int>(in.size()), in.data(),
                                        MPI_UNWEIGHTED, static_cast<int>(out.size()), out.data(),
                                        MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &graph));
  MPI_Comm_set_errhandler(graph, MPI_ERRORS_RETURN);
  return graph;
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

std::string mpi_persistent_refuses(const CollArgs& a) {
  const bool broken =
      a.coll == Coll::Allgather || a.coll == Coll::Gather || a.coll == Coll::Scatter;
  if (!broken || !mpi_compat::mpi_persistent_gather_scatter_bug(mpi_library_version())) return {};
  return "MPICH 4.0's persistent " + std::string(to_string(a.coll)) +
         " is defective (its later MPI_Start calls deliver the first start's data again; "
         "scatter hangs on 3 ranks), so its timings would be of a wrong operation: run the "
         "blocking or non-blocking benchmark, or a newer MPI (MPICH 5 is correct)";
}

// MPI_<Name>(args...), MPI_I<name>(args..., &req), MPI_<Name>_init(args..., info, &req), or
// the blocking call bound to copies of its arguments (*bound): the forms of one collective
// from one argument list.
#define CB_MPI_FORMS(Name, name, ...)                              \
  do {                                                             \
    if (form == MpiForm::Blocking)                                 \
      CB_MPI(MPI_##Name(__VA_ARGS__));                             \
    else if (form == MpiForm::Nonblocking)                         \
      CB_MPI(MPI_I##name(__VA_ARGS__, &req));                      \
    else if (form == MpiForm::Bound)                               \
      *bound = [=] { CB_MPI(MPI_##Name(__VA_ARGS__)); };           \
    else                                                           \
      CB_MPI(MPI_##Name##_init(__VA_ARGS__, MPI_INFO_NULL, &req)); \
  } while (false)

namespace {
MPI_Request dispatch(MpiForm form, const CollArgs& a, MPI_Comm comm, int rank, MpiCountArrays& v,
                     std::function<void()>* bound);
}  // namespace

MPI_Request call_mpi_collective(MpiForm form, const CollArgs& a, MPI_Comm comm, int rank,
                                MpiCountArrays& v) {
  if (form == MpiForm::Bound) throw RuntimeError("call_mpi_collective: use bind_mpi_collective");
  return dispatch(form, a, comm, rank, v, nullptr);
}

std::function<void()> bind_mpi_collective(const CollArgs& a, MPI_Comm comm, int rank,
                                          MpiCountArrays& v) {
  std::function<void()> bound;
  dispatch(MpiForm::Bound, a, comm, rank, v, &bound);
  return bound;
}

namespace {
MPI_Request dispatch(MpiForm form, const CollArgs& a, MPI_Comm comm, int rank, MpiCountArrays& v,
                     std::function<void()>* bound) {
  const MpiCall c = mpi_call(a, rank);
  MPI_Request req = MPI_REQUEST_NULL;
  if (a.counts || a.topology) fill_count_arrays(a, rank, v);
  switch (a.coll) {
    case Coll::Allreduce:
      CB_MPI_FORMS(Allreduce, allreduce, c.in, c.out, c.count, c.type, c.op, comm);
      break;
    case Coll::Bcast:
      CB_MPI_FORMS(Bcast, bcast, c.out, c.count, c.type, a.root, comm);
      break;
    case Coll::Alltoall:
      CB_MPI_FORMS(Alltoall, alltoall, c.in, c.count, c.type, c.out, c.count, c.type, comm);
      break;
    case Coll::Reduce:
      CB_MPI_FORMS(Reduce, reduce, c.in, c.out, c.count, c.type, c.op, a.root, comm);
      break;
    case Coll::Barrier:
      CB_MPI_FORMS(Barrier, barrier, comm);
      break;
    case Coll::Alltoallv:
      CB_MPI_FORMS(Alltoallv, alltoallv, c.in, v.scounts.data(), v.sdispls.data(), c.type, c.out,
                   v.rcounts.data(), v.rdispls.data(), c.type, comm);
      break;
    case Coll::Alltoallw:
      CB_MPI_FORMS(Alltoallw, alltoallw, c.in, v.scounts.data(), v.sdispls.data(), v.types.data(),
                   c.out, v.rcounts.data(), v.rdispls.data(), v.types.data(), comm);
      break;
    case Coll::Allgather:  // in place: block `rank` of recv is the input
      CB_MPI_FORMS(Allgather, allgather, c.in, c.count, c.type, c.out, c.count, c.type, comm);
      break;
    case Coll::Allgatherv:  // in place: block `rank` of recv is the input
      CB_MPI_FORMS(Allgatherv, allgatherv, c.in, v.scounts[size_t(rank)], c.type, c.out,
                   v.rcounts.data(), v.rdispls.data(), c.type, comm);
      break;
    case Coll::ReduceScatter:  // in place: recv holds all n blocks, the result is its first
      CB_MPI_FORMS(Reduce_scatter_block, reduce_scatter_block, c.in, c.out, c.count, c.type, c.op,
                   comm);
      break;
    case Coll::ReduceScatterV:  // in place: as the block form
      CB_MPI_FORMS(Reduce_scatter, reduce_scatter, c.in, c.out, v.rcounts.data(), c.type, c.op,
                   comm);
      break;
    case Coll::Gather:
      CB_MPI_FORMS(Gather, gather, c.in, c.count, c.type, c.out, c.count, c.type, a.root, comm);
      break;
    case Coll::Gatherv:
      CB_MPI_FORMS(Gatherv, gatherv, c.in, v.scounts[size_t(rank)], c.type, c.out, v.rcounts.data(),
                   v.rdispls.data(), c.type, a.root, comm);
      break;
    case Coll::Scatter:
      CB_MPI_FORMS(Scatter, scatter, c.in, c.count, c.type, c.out, c.count, c.type, a.root, comm);
      break;
    // On the distributed-graph communicator of args.topology (`comm` is one).
    case Coll::NeighborAllgather:
      CB_MPI_FORMS(Neighbor_allgather, neighbor_allgather, c.in, c.count, c.type, c.out, c.count,
                   c.type, comm);
      break;
    case Coll::NeighborAllgatherv:
      CB_MPI_FORMS(Neighbor_allgatherv, neighbor_allgatherv, c.in,
                   as_mpi_count(a.counts->block(rank)), c.type, c.out, v.rcounts.data(),
                   v.rdispls.data(), c.type, comm);
      break;
    case Coll::NeighborAlltoall:
      CB_MPI_FORMS(Neighbor_alltoall, neighbor_alltoall, c.in, c.count, c.type, c.out, c.count,
                   c.type, comm);
      break;
    case Coll::NeighborAlltoallv:
      CB_MPI_FORMS(Neighbor_alltoallv, neighbor_alltoallv, c.in, v.scounts.data(), v.sdispls.data(),
                   c.type, c.out, v.rcounts.data(), v.rdispls.data(), c.type, comm);
      break;
    case Coll::NeighborAlltoallw: {  // MPI_Aint byte displacements, as the standard has them
      CB_MPI_FORMS(Neighbor_alltoallw, neighbor_alltoallw, c.in, v.scounts.data(),
                   v.sdispls_aint.data(), v.stypes.data(), c.out, v.rcounts.data(),
                   v.rdispls_aint.data(), v.types.data(), comm);
      break;
    }
    case Coll::Scatterv:
      CB_MPI_FORMS(Scatterv, scatterv, c.in, v.scounts.data(), v.sdispls.data(), c.type, c.out,
                   v.rcounts[size_t(rank)], c.type, a.root, comm);
      break;
    default:
      not_in_mpi(a);
  }
  return req;
}
}  // namespace

#undef CB_MPI_FORMS

}  // namespace cb
