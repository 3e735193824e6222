// Which MPI collective calls libcb_engine_preload.so gives to the engine, and as what
// collbench collective. Each function turns one call's MPI arguments into CollArgs, or
// names the reason it passes through to PMPI (a short category, counted per reason by
// CB_PRELOAD_VERBOSE). The answer depends only on arguments MPI requires to match across
// the ranks of a call (communicator, count and datatype of reductions, op, root, the
// in-place choice where MPI makes every rank take it, the byte size of a block), so every
// rank of a call decides alike.
//
// Reductions (allreduce, reduce, reduce_scatter_block) keep their element type: a
// predefined type that is a collbench Dtype of the same layout (signed or unsigned integers
// of 1, 2, 4 or 8 bytes, float, double, single and double complex, the MPI_MAXLOC pairs
// MPI_FLOAT_INT ... MPI_LONG_DOUBLE_INT) with an operator op_applies() allows (integers and
// reals: MPI_SUM/PROD/MAX/MIN, unsigned sum and prod only, which wrap bit for bit alike;
// complex: sum and prod; pairs: MPI_MAXLOC/MINLOC); MPI requires the same datatype on every
// rank. Data movement
// (bcast, alltoall, allgather, gather, scatter) moves bytes: count x the type's size, which MPI
// makes every rank agree on whatever type each rank describes them with. A buffer whose bytes do
// not lie in typemap order without gaps (a vector type, MPI_BOTTOM with absolute addresses,
// MPI_DOUBLE_INT x 2 ...) is packed before the call and unpacked after (Packing): the layout of a
// rank's buffer never decides the route.
//
// Counts are MPI_Count: the int bindings and the MPI-4 large-count ones (MPI_Allreduce_c,
// ...) share these; a buffer above 2 GiB passes through ("over 2 GiB").
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/args.hpp"
#include "core/vcounts.hpp"

namespace cb::preload {

// Buffers the engine cannot move in place, with MPI_Pack/MPI_Unpack (MPI_COMM_SELF: the
// native representation) into bytes of their own: `send` packed before the call, `recv`
// unpacked after it (and packed before too where it is also the input: in place, a
// bcast's root). Each side names the CollArgs buffer its bytes become.
class Packing {
 public:
  enum class Target { None, Send, Recv };
  struct Side {
    Target target = Target::None;
    void* user = nullptr;  // the application's buffer, count and type
    MPI_Count count = 0;
    MPI_Datatype type = MPI_DATATYPE_NULL;
    bool before = false, after = false;  // pack before the call, unpack after it
    std::vector<std::byte> bytes;
  };
  Side send, recv;

  Packing() = default;
  Packing(const Packing&) = delete;
  Packing& operator=(const Packing&) = delete;
  ~Packing();
  // Allocates the bytes, packs what goes in and points `a`'s buffers at the bytes. With
  // `keep_types` (a non-blocking call, unpacked later), holds a duplicate of the receive
  // type: the application may free its own before the operation completes. Throws
  // RuntimeError on an MPI error.
  void pack(CollArgs& a, bool keep_types);
  void unpack();  // after the call
  // `recv.type` is a type made for this call (allgatherv's blocks at their displacements):
  // freed with the Packing, never duplicated.
  void own_recv_type() { own_type_ = true; }

 private:
  bool own_type_ = false;
};

struct Route {
  CollArgs args;
  std::string reason;  // empty: the engine runs args
  // Not remembered per call signature (preload.cpp): a derived type's handle may be freed
  // and reused for another type, and Packing's bytes belong to one call.
  bool derived = false;
  std::shared_ptr<Packing> packing;  // null: the engine moves the application's buffers
  // The v-forms' blocks (args.counts points at it). Its counts are the call's arrays, which
  // the signature does not hold: such a route is never remembered (preload.cpp).
  std::shared_ptr<const CountMatrix> counts;
  bool engine() const { return reason.empty(); }
};

// MPI_Allreduce, MPI_Reduce (root), MPI_Reduce_scatter_block (count = recvcount).
Route reduction(Coll coll, const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype type,
                MPI_Op op, int root, MPI_Comm comm);
Route bcast(void* buffer, MPI_Count count, MPI_Datatype type, int root, MPI_Comm comm);
// MPI_Alltoall and MPI_Allgather.
Route exchange(Coll coll, const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
               void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm);
// MPI_Gather and MPI_Scatter. The receive side of a gather and the send side of a scatter
// are significant at the root only, and MPI_IN_PLACE is the root's alone: another rank's
// such arguments may be anything and are never looked at. A block's bytes (the root's count
// x type size of that side, another rank's of its own block) are what every rank agrees on.
Route gather(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
             MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm);
Route scatter(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
              MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm);
// MPI_Allgatherv (C, D: int, int or MPI_Count, MPI_Aint for the _c form). Every rank passes
// every block's count, and MPI makes recvcounts[j] x the receive type's size equal on every
// rank (rank j's send bytes): the route and the engine's blocks are those byte sizes, the
// same on all ranks. Where the blocks lie in recvbuf (displs, the receive type's layout) is
// each rank's own business: blocks packed in rank order in a dense type are moved in place,
// any other layout (gaps, another order, a strided type) is packed into the engine's
// rank-order bytes and unpacked after, through a type of the blocks at their displacements.
// MPI_IN_PLACE is every rank's or none's: its own block is read from recvbuf at displs[rank].
template <typename C, typename D>
Route allgatherv(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                 const C* recvcounts, const D* displs, MPI_Datatype recvtype, MPI_Comm comm);
Route barrier(MPI_Comm comm);

// The collbench element type of a predefined MPI type in a reduction (same size; complex and
// pair types: same size and extent); nullopt for types the engine does not reduce.
// *is_unsigned says whether max/min would differ.
std::optional<Dtype> reduction_dtype(MPI_Datatype type, bool* is_unsigned);
std::optional<Op> op_of(MPI_Op op);

}  // namespace cb::preload
