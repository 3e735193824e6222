#include "preload/route.hpp"

#include <climits>

namespace cb::preload {
namespace {

constexpr size_t kMaxBytes = INT_MAX;  // the engine's MPI transport sends an int count

// Reasons of the communicator (the same on every rank of a call); empty when it can go on.
std::string comm_reason(MPI_Comm comm, int* rank, int* size) {
  if (comm == MPI_COMM_NULL) return "invalid communicator";
  int inter = 0;
  if (PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS) return "invalid communicator";
  if (inter) return "intercommunicator";
  PMPI_Comm_rank(comm, rank);
  PMPI_Comm_size(comm, size);
  return {};
}

bool predefined(MPI_Datatype type) {
  int ints = 0, addrs = 0, types = 0, combiner = 0;
  return PMPI_Type_get_envelope(type, &ints, &addrs, &types, &combiner) == MPI_SUCCESS &&
         combiner == MPI_COMBINER_NAMED;
}

// Bytes of one element of a type that data movement can copy as bytes, or a reason.
std::string byte_type(MPI_Datatype type, size_t* width) {
  if (type == MPI_DATATYPE_NULL) return "invalid datatype";
  if (!predefined(type)) return "derived datatype";
  int size = 0;
  MPI_Aint lb = 0, extent = 0, true_lb = 0, true_extent = 0;
  PMPI_Type_size(type, &size);
  PMPI_Type_get_extent(type, &lb, &extent);
  PMPI_Type_get_true_extent(type, &true_lb, &true_extent);
  if (size <= 0 || lb != 0 || true_lb != 0 || extent != size || true_extent != size)
    return "non-contiguous datatype";  // MPI_DOUBLE_INT and the like
  *width = static_cast<size_t>(size);
  return {};
}

bool is_predefined_op(MPI_Op op) {
  for (MPI_Op p : {MPI_BAND, MPI_BOR, MPI_BXOR, MPI_LAND, MPI_LOR, MPI_LXOR, MPI_MAXLOC, MPI_MINLOC,
                   MPI_REPLACE, MPI_NO_OP, MPI_OP_NULL})
    if (op == p) return true;
  return false;
}

}  // namespace

std::optional<Dtype> reduction_dtype(MPI_Datatype t, bool* is_unsigned) {
  *is_unsigned = false;
  bool floating = false;
  if (t == MPI_FLOAT || t == MPI_DOUBLE || t == MPI_REAL || t == MPI_DOUBLE_PRECISION) {
    floating = true;
  } else if (t == MPI_UNSIGNED || t == MPI_UNSIGNED_LONG || t == MPI_UNSIGNED_LONG_LONG ||
             t == MPI_UINT8_T || t == MPI_UINT32_T || t == MPI_UINT64_T || t == MPI_UNSIGNED_CHAR) {
    *is_unsigned = true;
  } else if (!(t == MPI_INT || t == MPI_LONG || t == MPI_LONG_LONG_INT || t == MPI_LONG_LONG ||
               t == MPI_INT8_T || t == MPI_INT32_T || t == MPI_INT64_T || t == MPI_SIGNED_CHAR ||
               t == MPI_INTEGER || t == MPI_AINT || t == MPI_OFFSET || t == MPI_COUNT)) {
    return std::nullopt;  // MPI_CHAR and MPI_BYTE do not reduce; 2-byte integers, long double...
  }
  int size = 0;
  if (PMPI_Type_size(t, &size) != MPI_SUCCESS) return std::nullopt;
  if (floating) {
    if (size == 4) return Dtype::Float;
    if (size == 8) return Dtype::Double;
    return std::nullopt;
  }
  if (size == 1) return Dtype::Char;  // int8
  if (size == 4) return Dtype::Int32;
  if (size == 8) return Dtype::Int64;
  return std::nullopt;
}

std::optional<Op> op_of(MPI_Op op) {
  if (op == MPI_SUM) return Op::Sum;
  if (op == MPI_PROD) return Op::Prod;
  if (op == MPI_MAX) return Op::Max;
  if (op == MPI_MIN) return Op::Min;
  return std::nullopt;
}

Route reduction(Coll coll, const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype type,
                MPI_Op op, int root, MPI_Comm comm) {
  Route r;
  int rank = 0, size = 1;
  if (r.reason = comm_reason(comm, &rank, &size); !r.reason.empty()) return r;
  if (count < 0) return {{}, "invalid count"};
  if (count == 0) return {{}, "empty"};
  if (static_cast<size_t>(count) > kMaxBytes) return {{}, "over 2 GiB"};  // products below fit
  if (type == MPI_DATATYPE_NULL) return {{}, "invalid datatype"};
  if (!predefined(type)) return {{}, "derived datatype"};
  bool is_unsigned = false;
  const std::optional<Dtype> dt = reduction_dtype(type, &is_unsigned);
  if (!dt) return {{}, "datatype not reduced by the engine"};
  const std::optional<Op> o = op_of(op);
  if (!o) return {{}, is_predefined_op(op) ? "op other than sum/prod/max/min" : "user op"};
  if (is_unsigned && (*o == Op::Max || *o == Op::Min)) return {{}, "unsigned max/min"};
  const bool rooted = coll == Coll::Reduce;
  if (rooted && (root < 0 || root >= size)) return {{}, "invalid root"};

  const size_t n = static_cast<size_t>(size);
  const size_t block = static_cast<size_t>(count) * dtype_size(*dt);
  const size_t in_bytes = coll == Coll::ReduceScatter ? n * block : block;
  if (in_bytes > kMaxBytes) return {{}, "over 2 GiB"};

  CollArgs& a = r.args;
  a.coll = coll;
  a.count = static_cast<size_t>(count);
  a.dtype = *dt;
  a.op = *o;
  a.root = rooted ? root : 0;
  const bool in_place = sendbuf == MPI_IN_PLACE;
  if (rooted && rank != root) {
    // MPI_IN_PLACE is the root's choice only. Elsewhere recvbuf is not significant (it
    // may be null), so the engine reads the input "in place" from sendbuf and leaves it
    // as it was (engine/algos/reduce_common.hpp), keeping its partial sums in scratch.
    if (in_place) return {{}, "MPI_IN_PLACE at a non-root"};
    if (sendbuf == MPI_BOTTOM) return {{}, "MPI_BOTTOM"};
    a.in_place = true;
    a.recv = {const_cast<void*>(sendbuf), block, Mem::Host};
    a.send = a.recv;
    return r;
  }
  const size_t recv_bytes = coll == Coll::ReduceScatter && in_place ? n * block : block;
  if (recvbuf == MPI_BOTTOM || (!in_place && sendbuf == MPI_BOTTOM)) return {{}, "MPI_BOTTOM"};
  a.in_place = in_place;
  a.recv = {recvbuf, recv_bytes, Mem::Host};
  a.send = in_place ? a.recv : Buf{const_cast<void*>(sendbuf), in_bytes, Mem::Host};
  return r;
}

Route bcast(void* buffer, MPI_Count count, MPI_Datatype type, int root, MPI_Comm comm) {
  Route r;
  int rank = 0, size = 1;
  if (r.reason = comm_reason(comm, &rank, &size); !r.reason.empty()) return r;
  if (count < 0) return {{}, "invalid count"};
  if (root < 0 || root >= size) return {{}, "invalid root"};
  if (static_cast<size_t>(count) > kMaxBytes) return {{}, "over 2 GiB"};
  size_t width = 0;
  if (r.reason = byte_type(type, &width); !r.reason.empty()) return r;
  const size_t bytes = static_cast<size_t>(count) * width;  // the same on every rank
  if (bytes == 0) return {{}, "empty"};
  if (bytes > kMaxBytes) return {{}, "over 2 GiB"};
  if (buffer == MPI_BOTTOM) return {{}, "MPI_BOTTOM"};
  CollArgs& a = r.args;
  a.coll = Coll::Bcast;
  a.count = bytes;
  a.dtype = Dtype::Char;
  a.root = root;
  a.recv = {buffer, bytes, Mem::Host};
  return r;
}

Route exchange(Coll coll, const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
               void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  Route r;
  int rank = 0, size = 1;
  if (r.reason = comm_reason(comm, &rank, &size); !r.reason.empty()) return r;
  const bool in_place = sendbuf == MPI_IN_PLACE;  // MPI: on every rank or on none
  if (recvcount < 0 || (!in_place && sendcount < 0)) return {{}, "invalid count"};
  if (static_cast<size_t>(recvcount) > kMaxBytes ||
      (!in_place && static_cast<size_t>(sendcount) > kMaxBytes))
    return {{}, "over 2 GiB"};
  size_t rwidth = 0, swidth = 0;
  if (r.reason = byte_type(recvtype, &rwidth); !r.reason.empty()) return r;
  if (!in_place) {
    if (r.reason = byte_type(sendtype, &swidth); !r.reason.empty()) return r;
    if (static_cast<size_t>(sendcount) * swidth != static_cast<size_t>(recvcount) * rwidth)
      return {{}, "mismatched send/recv types"};
  }
  const size_t n = static_cast<size_t>(size);
  const size_t block = static_cast<size_t>(recvcount) * rwidth;  // per peer / per rank
  if (block == 0) return {{}, "empty"};
  if (n * block > kMaxBytes) return {{}, "over 2 GiB"};
  if (recvbuf == MPI_BOTTOM || (!in_place && sendbuf == MPI_BOTTOM)) return {{}, "MPI_BOTTOM"};
  CollArgs& a = r.args;
  a.coll = coll;
  a.count = block;
  a.dtype = Dtype::Char;
  a.in_place = in_place;
  a.recv = {recvbuf, n * block, Mem::Host};
  const size_t send_bytes = coll == Coll::Alltoall ? n * block : block;
  a.send = in_place ? a.recv : Buf{const_cast<void*>(sendbuf), send_bytes, Mem::Host};
  return r;
}

Route barrier(MPI_Comm comm) {
  Route r;
  int rank = 0, size = 1;
  r.reason = comm_reason(comm, &rank, &size);
  r.args.coll = Coll::Barrier;
  return r;
}

}  // namespace cb::preload
