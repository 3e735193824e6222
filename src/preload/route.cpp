#include "preload/route.hpp"

#include <climits>
#include <string>

#include "core/errors.hpp"

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

// A derived type's constructor arguments (MPI_Type_get_contents); frees the derived types
// it returns.
struct Contents {
  int combiner = MPI_COMBINER_NAMED;
  std::vector<int> ints;
  std::vector<MPI_Aint> addrs;
  std::vector<MPI_Datatype> types;
  bool ok = false;
  explicit Contents(MPI_Datatype t) {
    int ni = 0, na = 0, nt = 0;
    if (PMPI_Type_get_envelope(t, &ni, &na, &nt, &combiner) != MPI_SUCCESS) return;
    if (combiner == MPI_COMBINER_NAMED) {
      ok = true;
      return;
    }
    ints.resize(static_cast<size_t>(ni));
    addrs.resize(static_cast<size_t>(na));
    types.resize(static_cast<size_t>(nt));
    ok = PMPI_Type_get_contents(t, ni, na, nt, ints.data(), addrs.data(), types.data()) ==
         MPI_SUCCESS;
    if (!ok) types.clear();
  }
  ~Contents() {
    for (MPI_Datatype& t : types)
      if (!predefined(t)) PMPI_Type_free(&t);
  }
  Contents(const Contents&) = delete;
  Contents& operator=(const Contents&) = delete;
};

struct Shape {
  int size = 0;
  MPI_Aint lb = 0, extent = 0, true_lb = 0, true_extent = 0;
  explicit Shape(MPI_Datatype t) {
    PMPI_Type_size(t, &size);
    PMPI_Type_get_extent(t, &lb, &extent);
    PMPI_Type_get_true_extent(t, &true_lb, &true_extent);
  }
  bool tight() const { return extent == size; }  // consecutive elements leave no gap
};

// Whether one element of `t` is its bytes without gaps, in typemap order, from its true
// lower bound: predefined types (MPI_DOUBLE_INT's 12 bytes too), and contiguous, vector,
// hvector, resized and dup types of such types whose blocks follow each other. Other
// constructors (indexed, struct, subarray ...) are taken as scattered: packed, which is
// right for any layout.
bool dense(MPI_Datatype t, int depth = 0) {
  const Shape s(t);
  if (s.true_extent != s.size || depth > 16) return false;
  const Contents c(t);
  if (!c.ok) return false;
  if (c.combiner == MPI_COMBINER_NAMED) return true;
  if (c.types.empty() || !dense(c.types[0], depth + 1)) return false;
  const Shape old(c.types[0]);
  switch (c.combiner) {
    case MPI_COMBINER_DUP:
    case MPI_COMBINER_RESIZED:
      return true;
    case MPI_COMBINER_CONTIGUOUS:
      return c.ints[0] <= 1 || old.tight();
    case MPI_COMBINER_VECTOR:  // count, blocklength, stride (in old's extents)
      return (static_cast<long>(c.ints[0]) * c.ints[1] <= 1 || old.tight()) &&
             (c.ints[0] <= 1 || c.ints[2] == c.ints[1]);
    case MPI_COMBINER_HVECTOR:  // count, blocklength; stride in bytes
      return (static_cast<long>(c.ints[0]) * c.ints[1] <= 1 || old.tight()) &&
             (c.ints[0] <= 1 || c.addrs[0] == static_cast<MPI_Aint>(c.ints[1]) * old.extent);
    default:
      return false;
  }
}

// One buffer of data movement: `count` elements of `type` at `buf`. Its byte count is the
// type signature's size, the same on every rank (MPI requires it); whether its bytes lie
// in order without gaps (then the engine moves them where they are, from the true lower
// bound) or must be packed is this rank's business only.
struct Described {
  size_t bytes = 0;
  bool packed = false;
  void* at = nullptr;  // the first byte, when not packed
  bool derived = false;
};
std::string describe(const void* buf, MPI_Count count, MPI_Datatype type, Described* d) {
  if (type == MPI_DATATYPE_NULL) return "invalid datatype";
  if (count < 0) return "invalid count";
  const Shape s(type);
  if (s.size < 0) return "invalid datatype";
  if (static_cast<size_t>(count) > kMaxBytes) return "over 2 GiB";
  d->bytes = static_cast<size_t>(count) * static_cast<size_t>(s.size);
  d->derived = !predefined(type);
  const bool one_dense = d->derived ? dense(type) : s.true_extent == s.size;
  d->packed = buf == MPI_BOTTOM || !one_dense || (count > 1 && !s.tight());
  if (!d->packed) d->at = static_cast<std::byte*>(const_cast<void*>(buf)) + s.true_lb;
  return {};
}

// Where Packing puts a side that `d` says must be packed.
void pack_side(Packing::Side& side, Packing::Target target, const void* buf, MPI_Count count,
               MPI_Datatype type, bool before, bool after) {
  side.target = target;
  side.user = const_cast<void*>(buf);
  side.count = count;
  side.type = type;
  side.before = before;
  side.after = after;
}

bool is_predefined_op(MPI_Op op) {
  for (MPI_Op p : {MPI_BAND, MPI_BOR, MPI_BXOR, MPI_LAND, MPI_LOR, MPI_LXOR, MPI_REPLACE, MPI_NO_OP,
                   MPI_OP_NULL})
    if (op == p) return true;
  return false;
}

// A predefined type whose layout is the engine's Dtype: same size and, for the complex and
// pair types (C structs), the same extent (MPI_LONG_DOUBLE_INT's included), lower bound 0.
std::optional<Dtype> if_laid_out_as(MPI_Datatype t, Dtype dt, int type_size) {
  int size = 0;
  MPI_Aint lb = 0, extent = 0;
  if (PMPI_Type_size(t, &size) != MPI_SUCCESS ||
      PMPI_Type_get_extent(t, &lb, &extent) != MPI_SUCCESS)
    return std::nullopt;
  if (size != type_size || lb != 0 || static_cast<size_t>(extent) != dtype_size(dt))
    return std::nullopt;
  return dt;
}

template <typename V>
std::optional<Dtype> pair_of(MPI_Datatype t, Dtype dt) {
  return if_laid_out_as(t, dt, static_cast<int>(sizeof(V) + sizeof(int)));
}

}  // namespace

std::optional<Dtype> reduction_dtype(MPI_Datatype t, bool* is_unsigned) {
  *is_unsigned = false;
  // MPI_MAXLOC/MPI_MINLOC's pairs (MPI_2INTEGER: Fortran's INTEGER pair, the C 2INT's layout
  // where INTEGER is 4 bytes).
  if (t == MPI_FLOAT_INT) return pair_of<float>(t, Dtype::FloatInt);
  if (t == MPI_DOUBLE_INT) return pair_of<double>(t, Dtype::DoubleInt);
  if (t == MPI_LONG_INT) return pair_of<long>(t, Dtype::LongInt);
  if (t == MPI_2INT || t == MPI_2INTEGER) return pair_of<int>(t, Dtype::IntInt);
  if (t == MPI_SHORT_INT) return pair_of<short>(t, Dtype::ShortInt);
  if (t == MPI_LONG_DOUBLE_INT) return pair_of<long double>(t, Dtype::LongDoubleInt);
  // Complex: C's, C++'s and Fortran's single and double precision (COMPLEX is two REALs).
  // Fortran's sized types (MPI_INTEGER4 ...: BLACS's) are optional: MPI_DATATYPE_NULL where
  // the library lacks them, which no call's type equals here.
  if (t == MPI_C_FLOAT_COMPLEX || t == MPI_C_COMPLEX || t == MPI_CXX_FLOAT_COMPLEX ||
      t == MPI_COMPLEX || t == MPI_COMPLEX8)
    return if_laid_out_as(t, Dtype::ComplexFloat, static_cast<int>(2 * sizeof(float)));
  if (t == MPI_C_DOUBLE_COMPLEX || t == MPI_CXX_DOUBLE_COMPLEX || t == MPI_DOUBLE_COMPLEX ||
      t == MPI_COMPLEX16)
    return if_laid_out_as(t, Dtype::ComplexDouble, static_cast<int>(2 * sizeof(double)));
  bool floating = false;
  if (t == MPI_FLOAT || t == MPI_DOUBLE || t == MPI_REAL || t == MPI_DOUBLE_PRECISION ||
      t == MPI_REAL4 || t == MPI_REAL8) {
    floating = true;
  } else if (t == MPI_UNSIGNED || t == MPI_UNSIGNED_LONG || t == MPI_UNSIGNED_LONG_LONG ||
             t == MPI_UINT8_T || t == MPI_UINT16_T || t == MPI_UINT32_T || t == MPI_UINT64_T ||
             t == MPI_UNSIGNED_CHAR || t == MPI_UNSIGNED_SHORT) {
    *is_unsigned = true;
  } else if (!(t == MPI_INT || t == MPI_LONG || t == MPI_LONG_LONG_INT || t == MPI_LONG_LONG ||
               t == MPI_INT8_T || t == MPI_INT16_T || t == MPI_INT32_T || t == MPI_INT64_T ||
               t == MPI_SIGNED_CHAR || t == MPI_SHORT || t == MPI_INTEGER || t == MPI_INTEGER1 ||
               t == MPI_INTEGER2 || t == MPI_INTEGER4 || t == MPI_INTEGER8 || t == MPI_AINT ||
               t == MPI_OFFSET || t == MPI_COUNT)) {
    return std::nullopt;  // MPI_CHAR and MPI_BYTE do not reduce; long double, bool ...
  }
  int size = 0;
  if (PMPI_Type_size(t, &size) != MPI_SUCCESS) return std::nullopt;
  if (floating) {
    if (size == 4) return Dtype::Float;
    if (size == 8) return Dtype::Double;
    return std::nullopt;
  }
  if (size == 1) return Dtype::Char;  // int8
  if (size == 2) return Dtype::Int16;
  if (size == 4) return Dtype::Int32;
  if (size == 8) return Dtype::Int64;
  return std::nullopt;
}

std::optional<Op> op_of(MPI_Op op) {
  if (op == MPI_SUM) return Op::Sum;
  if (op == MPI_PROD) return Op::Prod;
  if (op == MPI_MAX) return Op::Max;
  if (op == MPI_MIN) return Op::Min;
  if (op == MPI_MAXLOC) return Op::MaxLoc;
  if (op == MPI_MINLOC) return Op::MinLoc;
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
  // MPI requires the same datatype on every rank, and defines the predefined ops on
  // predefined types only (MPICH 4.0.2 refuses MPI_SUM on a vector of MPI_INT): a derived
  // type comes with a user op, on every rank alike.
  if (!predefined(type)) return {{}, "derived datatype"};
  bool is_unsigned = false;
  const std::optional<Dtype> dt = reduction_dtype(type, &is_unsigned);
  if (!dt) return {{}, "datatype not reduced by the engine"};
  const std::optional<Op> o = op_of(op);
  if (!o) return {{}, is_predefined_op(op) ? "op other than sum/prod/max/min" : "user op"};
  // MPI defines no other (MPI_MAX on a complex type, MPI_SUM on MPI_2INT, MPI_MAXLOC on
  // MPI_INT): erroneous, MPI reports it.
  if (!op_applies(*dt, *o)) return {{}, "op not defined on the datatype"};
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
    // Both reasons are erroneous programs (MPI reports them).
    if (in_place) return {{}, "MPI_IN_PLACE at a non-root"};
    if (sendbuf == MPI_BOTTOM) return {{}, "MPI_BOTTOM"};
    a.in_place = true;
    a.recv = {const_cast<void*>(sendbuf), block, Mem::Host};
    a.send = a.recv;
    return r;
  }
  const size_t recv_bytes = coll == Coll::ReduceScatter && in_place ? n * block : block;
  // A predefined type at address 0: erroneous (MPI reports it).
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
  if (root < 0 || root >= size) return {{}, "invalid root"};
  Described d;
  if (r.reason = describe(buffer, count, type, &d); !r.reason.empty()) return r;
  if (d.bytes == 0) return {{}, "empty"};  // the same on every rank
  if (d.bytes > kMaxBytes) return {{}, "over 2 GiB"};
  CollArgs& a = r.args;
  r.derived = d.derived;
  a.coll = Coll::Bcast;
  a.count = d.bytes;
  a.dtype = Dtype::Char;
  a.root = root;
  a.recv = {d.at, d.bytes, Mem::Host};
  if (d.packed) {  // the root packs its data, the others unpack what came
    r.packing = std::make_shared<Packing>();
    Packing::Side& side = rank == root ? r.packing->send : r.packing->recv;
    pack_side(side, Packing::Target::Recv, buffer, count, type, rank == root, rank != root);
  }
  return r;
}

Route exchange(Coll coll, const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
               void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  Route r;
  int rank = 0, size = 1;
  if (r.reason = comm_reason(comm, &rank, &size); !r.reason.empty()) return r;
  const bool in_place = sendbuf == MPI_IN_PLACE;  // MPI: on every rank or on none
  const MPI_Count n = size;
  const MPI_Count peers = coll == Coll::Alltoall ? n : 1;  // blocks in the send buffer
  if (recvcount < 0 || (!in_place && sendcount < 0)) return {{}, "invalid count"};
  if (recvcount > static_cast<MPI_Count>(kMaxBytes) ||
      (!in_place && sendcount > static_cast<MPI_Count>(kMaxBytes)))
    return {{}, "over 2 GiB"};
  Described out, in;
  if (r.reason = describe(recvbuf, recvcount * n, recvtype, &out); !r.reason.empty()) return r;
  const size_t block = out.bytes / static_cast<size_t>(n);  // per peer / per rank
  if (!in_place) {
    if (r.reason = describe(sendbuf, sendcount * peers, sendtype, &in); !r.reason.empty()) return r;
    if (in.bytes != block * static_cast<size_t>(peers)) return {{}, "mismatched send/recv types"};
  }
  if (block == 0) return {{}, "empty"};
  if (out.bytes > kMaxBytes) return {{}, "over 2 GiB"};
  CollArgs& a = r.args;
  r.derived = out.derived || (!in_place && in.derived);
  a.coll = coll;
  a.count = block;
  a.dtype = Dtype::Char;
  a.in_place = in_place;
  a.recv = {out.at, out.bytes, Mem::Host};
  a.send = in_place ? a.recv : Buf{in.at, in.bytes, Mem::Host};
  if (out.packed || (!in_place && in.packed)) {
    r.packing = std::make_shared<Packing>();
    if (out.packed)
      pack_side(r.packing->recv, Packing::Target::Recv, recvbuf, recvcount * n, recvtype, in_place,
                true);
    if (!in_place && in.packed)
      pack_side(r.packing->send, Packing::Target::Send, sendbuf, sendcount * peers, sendtype, true,
                false);
  }
  return r;
}

// Gather and scatter: every rank's block has the same bytes (MPI requires the root's count
// x type size to equal each other rank's), the root holds n of them. The decision reads
// only the block's bytes, the root and the communicator; the root's buffer of n blocks and
// MPI_IN_PLACE there are the root's business. Another rank's insignificant side (gather:
// receive; scatter: send) is never looked at: its engine arguments are left empty, which
// no algorithm reads off the root (engine/algos/rank_blocks.hpp, shm_blocks.cpp).
Route gather(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
             MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  Route r;
  int rank = 0, size = 1;
  if (r.reason = comm_reason(comm, &rank, &size); !r.reason.empty()) return r;
  if (root < 0 || root >= size) return {{}, "invalid root"};
  const bool at_root = rank == root;
  const bool in_place = sendbuf == MPI_IN_PLACE;
  // Erroneous (MPI reports it): MPI_IN_PLACE is the root's only.
  if (in_place && !at_root) return {{}, "MPI_IN_PLACE at a non-root"};
  const MPI_Count n = size;
  Described in, all;
  size_t block = 0;
  if (at_root) {
    if (recvcount < 0) return {{}, "invalid count"};
    if (recvcount > static_cast<MPI_Count>(kMaxBytes)) return {{}, "over 2 GiB"};
    if (r.reason = describe(recvbuf, recvcount * n, recvtype, &all); !r.reason.empty()) return r;
    block = all.bytes / static_cast<size_t>(n);
  }
  if (!in_place) {
    if (r.reason = describe(sendbuf, sendcount, sendtype, &in); !r.reason.empty()) return r;
    if (at_root && in.bytes != block) return {{}, "mismatched send/recv types"};
    block = in.bytes;
  }
  if (block == 0) return {{}, "empty"};  // the same on every rank
  if (block > kMaxBytes / static_cast<size_t>(n)) return {{}, "over 2 GiB"};
  CollArgs& a = r.args;
  r.derived = (at_root && all.derived) || (!in_place && in.derived);
  a.coll = Coll::Gather;
  a.count = block;
  a.dtype = Dtype::Char;
  a.root = root;
  a.in_place = in_place;
  if (at_root) a.recv = {all.at, all.bytes, Mem::Host};
  a.send = in_place ? a.recv : Buf{in.at, in.bytes, Mem::Host};
  if ((at_root && all.packed) || (!in_place && in.packed)) {
    r.packing = std::make_shared<Packing>();
    if (at_root && all.packed)  // in place, the root's own block goes in with the others
      pack_side(r.packing->recv, Packing::Target::Recv, recvbuf, recvcount * n, recvtype, in_place,
                true);
    if (!in_place && in.packed)
      pack_side(r.packing->send, Packing::Target::Send, sendbuf, sendcount, sendtype, true, false);
  }
  return r;
}

Route scatter(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
              MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  Route r;
  int rank = 0, size = 1;
  if (r.reason = comm_reason(comm, &rank, &size); !r.reason.empty()) return r;
  if (root < 0 || root >= size) return {{}, "invalid root"};
  const bool at_root = rank == root;
  const bool in_place = recvbuf == MPI_IN_PLACE;
  if (in_place && !at_root) return {{}, "MPI_IN_PLACE at a non-root"};
  const MPI_Count n = size;
  Described all, out;
  size_t block = 0;
  if (at_root) {
    if (sendcount < 0) return {{}, "invalid count"};
    if (sendcount > static_cast<MPI_Count>(kMaxBytes)) return {{}, "over 2 GiB"};
    if (r.reason = describe(sendbuf, sendcount * n, sendtype, &all); !r.reason.empty()) return r;
    block = all.bytes / static_cast<size_t>(n);
  }
  if (!in_place) {
    if (r.reason = describe(recvbuf, recvcount, recvtype, &out); !r.reason.empty()) return r;
    if (at_root && out.bytes != block) return {{}, "mismatched send/recv types"};
    block = out.bytes;
  }
  if (block == 0) return {{}, "empty"};
  if (block > kMaxBytes / static_cast<size_t>(n)) return {{}, "over 2 GiB"};
  CollArgs& a = r.args;
  r.derived = (at_root && all.derived) || (!in_place && out.derived);
  a.coll = Coll::Scatter;
  a.count = block;
  a.dtype = Dtype::Char;
  a.root = root;
  a.in_place = in_place;
  // In place, the root's result is its block of the n it sends (RankBlocks): its recv is them.
  const Buf blocks{all.at, all.bytes, Mem::Host};
  a.recv = in_place ? blocks : Buf{out.at, out.bytes, Mem::Host};
  if (at_root) a.send = in_place ? a.recv : blocks;
  if ((at_root && all.packed) || (!in_place && out.packed)) {
    r.packing = std::make_shared<Packing>();
    if (at_root && all.packed)  // packed in; in place the root's own block needs no unpack
      pack_side(r.packing->send, in_place ? Packing::Target::Recv : Packing::Target::Send, sendbuf,
                sendcount * n, sendtype, true, false);
    if (!in_place && out.packed)
      pack_side(r.packing->recv, Packing::Target::Recv, recvbuf, recvcount, recvtype, false, true);
  }
  return r;
}

template <typename C, typename D>
Route allgatherv(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                 const C* recvcounts, const D* displs, MPI_Datatype recvtype, MPI_Comm comm) {
  Route r;
  int rank = 0, size = 1;
  if (r.reason = comm_reason(comm, &rank, &size); !r.reason.empty()) return r;
  if (!recvcounts || !displs) return {{}, "invalid count"};
  const bool in_place = sendbuf == MPI_IN_PLACE;  // MPI: on every rank or on none
  if (recvtype == MPI_DATATYPE_NULL) return {{}, "invalid datatype"};
  const Shape shape(recvtype);
  if (shape.size < 0) return {{}, "invalid datatype"};
  const size_t n = static_cast<size_t>(size), type_size = static_cast<size_t>(shape.size);
  // Every block's bytes (the same on every rank), and whether this rank's blocks lie packed
  // in rank order: displacement j the sum of the counts before it (an empty block's
  // displacement is never used).
  std::vector<size_t> bytes(n);
  MPI_Count elements = 0;
  bool in_order = true;
  for (size_t j = 0; j < n; ++j) {
    const MPI_Count c = static_cast<MPI_Count>(recvcounts[j]);
    if (c < 0) return {{}, "invalid count"};
    if (c > static_cast<MPI_Count>(kMaxBytes)) return {{}, "over 2 GiB"};
    if (c > 0 && static_cast<MPI_Count>(displs[j]) != elements) in_order = false;
    elements += c;
    if (static_cast<size_t>(elements) > kMaxBytes) return {{}, "over 2 GiB"};
    bytes[j] = static_cast<size_t>(c) * type_size;
  }
  Described all, in;
  if (r.reason = describe(recvbuf, elements, recvtype, &all); !r.reason.empty()) return r;
  if (all.bytes > kMaxBytes) return {{}, "over 2 GiB"};
  if (!in_place) {
    if (r.reason = describe(sendbuf, sendcount, sendtype, &in); !r.reason.empty()) return r;
    if (in.bytes != bytes[static_cast<size_t>(rank)]) return {{}, "mismatched send/recv types"};
  }
  if (all.bytes == 0) return {{}, "empty"};  // the same on every rank
  // The engine's blocks: a count matrix (core/vcounts.hpp) whose rows are alike, held once.
  r.counts = std::make_shared<const CountMatrix>(CountMatrix::rows_alike(std::move(bytes)));
  CollArgs& a = r.args;
  r.derived = all.derived || (!in_place && in.derived);
  a.coll = Coll::Allgatherv;
  a.count = r.counts->mean();  // the tuning table's size: the mean block, as for cb_allgatherv
  a.counts = r.counts.get();
  a.dtype = Dtype::Char;
  a.in_place = in_place;
  const bool direct = in_order && !all.packed;
  a.recv = {direct ? all.at : nullptr, all.bytes, Mem::Host};
  a.send = in_place ? a.recv : Buf{in.at, in.bytes, Mem::Host};
  // An empty send block (a null buffer, say, which is MPI_BOTTOM) is never read: not packed.
  const bool pack_send = !in_place && in.packed && in.bytes > 0;
  if (!direct || pack_send) {
    r.packing = std::make_shared<Packing>();
    if (!direct) {
      // The blocks at their displacements, in rank order: one element of a type made for
      // this call (the Packing frees it). In place this rank's own block is packed in too.
      std::vector<int> lengths(n);
      std::vector<MPI_Aint> at(n);
      for (size_t j = 0; j < n; ++j) {
        lengths[j] = static_cast<int>(recvcounts[j]);
        at[j] = static_cast<MPI_Aint>(displs[j]) * shape.extent;
      }
      MPI_Datatype blocks = MPI_DATATYPE_NULL;
      if (PMPI_Type_create_hindexed(size, lengths.data(), at.data(), recvtype, &blocks) !=
              MPI_SUCCESS ||
          PMPI_Type_commit(&blocks) != MPI_SUCCESS) {
        if (blocks != MPI_DATATYPE_NULL) PMPI_Type_free(&blocks);
        return {{}, "internal error"};
      }
      pack_side(r.packing->recv, Packing::Target::Recv, recvbuf, 1, blocks, in_place, true);
      r.packing->own_recv_type();
      r.derived = true;
    }
    if (pack_send)
      pack_side(r.packing->send, Packing::Target::Send, sendbuf, sendcount, sendtype, true, false);
  }
  return r;
}

template Route allgatherv<int, int>(const void*, MPI_Count, MPI_Datatype, void*, const int*,
                                    const int*, MPI_Datatype, MPI_Comm);
#if MPI_VERSION >= 4
template Route allgatherv<MPI_Count, MPI_Aint>(const void*, MPI_Count, MPI_Datatype, void*,
                                               const MPI_Count*, const MPI_Aint*, MPI_Datatype,
                                               MPI_Comm);
#endif

Route barrier(MPI_Comm comm) {
  Route r;
  int rank = 0, size = 1;
  r.reason = comm_reason(comm, &rank, &size);
  r.args.coll = Coll::Barrier;
  return r;
}

}  // namespace cb::preload

namespace cb::preload {

Packing::~Packing() {
  if (own_type_) PMPI_Type_free(&recv.type);
}

namespace {

// MPI_Pack/MPI_Unpack of `side`'s user buffer. MPICH 4.0.2 refuses MPI_BOTTOM (a null
// pointer) as their buffer, which a type of absolute addresses needs: then the buffer is
// `base` (any valid address) and the type `count` elements shifted by -base.
template <typename F>
int with_user(const Packing::Side& side, F&& f) {
  if (side.user != MPI_BOTTOM) return f(side.user, static_cast<int>(side.count), side.type);
  void* base = const_cast<std::byte*>(side.bytes.data());
  MPI_Aint at = 0;
  PMPI_Get_address(base, &at);
  const int length = static_cast<int>(side.count);
  const MPI_Aint shift = -at;
  MPI_Datatype shifted = MPI_DATATYPE_NULL;
  int rc = PMPI_Type_create_hindexed(1, &length, &shift, side.type, &shifted);
  if (rc == MPI_SUCCESS) rc = PMPI_Type_commit(&shifted);
  if (rc == MPI_SUCCESS) rc = f(base, 1, shifted);
  if (shifted != MPI_DATATYPE_NULL) PMPI_Type_free(&shifted);
  return rc;
}

}  // namespace

void Packing::pack(CollArgs& a, bool keep_types) {
  for (Side* side : {&send, &recv}) {
    if (side->target == Target::None) continue;
    Buf& buf = side->target == Target::Send ? a.send : a.recv;
    side->bytes.resize(buf.bytes);
    buf.ptr = side->bytes.data();
    if (!side->before) continue;
    int position = 0;
    const int rc = with_user(*side, [&](void* user, int count, MPI_Datatype type) {
      return PMPI_Pack(user, count, type, side->bytes.data(), static_cast<int>(side->bytes.size()),
                       &position, MPI_COMM_SELF);
    });
    if (rc != MPI_SUCCESS || static_cast<size_t>(position) != side->bytes.size())
      throw RuntimeError("MPI_Pack of a non-contiguous buffer failed (" + std::to_string(position) +
                         " of " + std::to_string(side->bytes.size()) + " bytes)");
  }
  if (a.in_place) a.send = a.recv;
  if (keep_types && recv.after && !own_type_) {
    MPI_Datatype copy = MPI_DATATYPE_NULL;
    if (PMPI_Type_dup(recv.type, &copy) != MPI_SUCCESS)
      throw RuntimeError("MPI_Type_dup of the receive type failed");
    recv.type = copy;
    own_type_ = true;
  }
}

void Packing::unpack() {
  if (!recv.after) return;
  int position = 0;
  const int rc = with_user(recv, [&](void* buf, int count, MPI_Datatype type) {
    return PMPI_Unpack(recv.bytes.data(), static_cast<int>(recv.bytes.size()), &position, buf,
                       count, type, MPI_COMM_SELF);
  });
  if (rc != MPI_SUCCESS) throw RuntimeError("MPI_Unpack into a non-contiguous buffer failed");
}

}  // namespace cb::preload
