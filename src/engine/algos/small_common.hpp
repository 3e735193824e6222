// What the `small` algorithms share (one per collective, each a file that only says which
// SmallOp its arguments make): whether they can run, the schedule form (one Poll step that
// runs alone, Schedule::exclusive) and the Algorithm entry. The operation itself is
// engine/shm/small_slots.hpp.
#pragma once

#include <memory>
#include <string>

#include "engine/algorithm.hpp"
#include "engine/algos/shm_common.hpp"
#include "engine/shm/small_slots.hpp"

namespace cb::engine {

// The SmallOp of `kind` on the group's communicator (null slots when it has none).
inline SmallOp small_op(const Group& g, SmallKind kind, const void* in, void* out, size_t bytes) {
  SmallOp op;
  op.slots = g.comm() ? g.comm()->small() : nullptr;
  op.kind = kind;
  op.in = static_cast<const std::byte*>(in);
  op.out = static_cast<std::byte*>(out);
  op.bytes = bytes;
  return op;
}

// The SmallOp of a call (without its sequence number). `bytes` is what a rank writes into
// its slot: the vector (allreduce, reduce), the message (bcast), its block (allgather), a
// block per peer (alltoall, reduce_scatter). Where the input is: MPI's in place is the
// result buffer, for allgather the rank's own block of it.
inline SmallOp small_describe(SmallKind kind, const CollArgs& a, const Group& g) {
  const size_t n = static_cast<size_t>(g.size()), block = a.count * dtype_size(a.dtype);
  std::byte* recv = static_cast<std::byte*>(a.recv.ptr);
  SmallOp op;
  switch (kind) {
    case SmallKind::Bcast:
      op = small_op(g, kind, recv, recv, block);
      break;
    case SmallKind::Allgather:
      op = small_op(g, kind, a.in_place ? recv + block * static_cast<size_t>(g.rank()) : a.send.ptr,
                    recv, block);
      break;
    case SmallKind::Alltoall:
    case SmallKind::ReduceScatter:
      op = small_op(g, kind, input_of(a), recv, block * n);
      break;
    case SmallKind::Alltoallv:  // packed in rank order: the send buffer as it is
      op = small_op(g, kind, a.send.ptr, recv,
                    a.counts ? a.counts->send_total(g.rank()) * dtype_size(a.dtype) : 0);
      op.counts = a.counts;
      break;
    case SmallKind::Barrier:
      op = small_op(g, kind, nullptr, nullptr, 0);
      break;
    default:  // allreduce, reduce
      op = small_op(g, kind, input_of(a), recv, block);
  }
  op.count = a.count;  // the reductions'
  op.dt = a.dtype;
  op.op = a.op;
  op.root = a.root;
  return op;
}

// The same on every rank: the group, the memory kind and the byte count decide.
inline std::string small_cannot_run(const SmallOp& op, const CollArgs& a, const Group& g) {
  if (std::string why = needs_node_shm(a, g, "small"); !why.empty()) return why;
  if (!op.slots || g.size() != g.comm()->size())
    return "small runs on a whole communicator that lies on one node";
  size_t bytes = op.bytes;  // alltoallv: the largest row, which every rank knows alike
  if (op.kind == SmallKind::Alltoallv) {
    if (!a.counts) return "alltoallv needs its count matrix";
    if (a.in_place) return "alltoallv has no in-place form";
    bytes = a.counts->max_send_total() * dtype_size(a.dtype);
  }
  if (bytes > kSmallSlotBytes)
    return "small holds at most " + std::to_string(kSmallSlotBytes) +
           " bytes per rank in its slot; this call writes " + std::to_string(bytes);
  return {};
}

class SmallPoll final : public Pollable {
 public:
  explicit SmallPoll(const SmallOp& op) : op_(op) {}
  bool advance() override { return op_.advance(); }

 private:
  SmallOp op_;
};

inline void build_small(Schedule& s, SmallOp op) {
  op.seq = op.slots->next();  // at the build, in call order
  s.set_exclusive();
  s.poll(std::make_unique<SmallPoll>(op));
  s.end_round();
}

template <SmallKind Kind>
SmallOp describe(const CollArgs& a, const Group& g) {
  return small_describe(Kind, a, g);
}

// The Algorithm entry of the small form of `coll`, whose operation is `Kind`.
template <SmallKind Kind>
constexpr Algorithm small_algorithm(Coll coll, std::string_view summary) {
  return {.coll = coll,
          .name = "small",
          .summary = summary,
          .cannot_run = [](const CollArgs& a,
                           const Group& g) { return small_cannot_run(describe<Kind>(a, g), a, g); },
          .build = [](Schedule& s, const CollArgs& a,
                      const Group& g) { build_small(s, describe<Kind>(a, g)); },
          .small = describe<Kind>};
}

}  // namespace cb::engine
