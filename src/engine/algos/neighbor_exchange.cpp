// The neighborhood collectives (neighbor_allgather[v], neighbor_alltoall[v|w]) by direct
// exchange on args.topology (core/topology.hpp, the lists the MPI backend's distributed
// graph is made of): one round that sends a block to every destination and receives one
// from every source, each through the transport the communicator has for that peer
// (shared memory on the node, MPI between nodes). One schedule serves the five: the
// allgathers send their one block to every destination, the alltoalls block k of the send
// buffer to destination k; the received blocks are packed in source order; every edge's
// size comes from neighbor_edge_elements(), as the spec and the MPI library's arrays have
// it (alltoallw: the same blocks, MPI's byte displacements being only its way of saying
// where they start).
//
// Edge order is MPI's: sends are posted in destination order and receives in source
// order, and each transport matches messages of one tag from one peer in posting order,
// so where a peer appears on several edges the k-th block sent to it lands in its k-th
// block from this rank, as the MPI library matches them; an edge from a rank to itself is
// a local copy, paired the same way. MPI allows both in a distributed graph; core/topology
// refuses them in -N graph:FILE today, so these two paths wait for a topology that has them.
#include <vector>

#include "core/coll_spec.hpp"
#include "core/errors.hpp"
#include "core/topology.hpp"
#include "engine/algos/algos.hpp"
#include "engine/algos/common.hpp"

namespace cb::engine {
namespace {

bool gathers(Coll c) {
  return c == Coll::NeighborAllgather || c == Coll::NeighborAllgatherv;
}

std::string cannot_run(const CollArgs& a, const Group& g) {
  if (!a.topology) return "exchange: a neighborhood collective needs a topology (-N)";
  if (!g.comm())
    return "exchange: the topology's ranks are the whole communicator's, not a subgroup's";
  if (a.topology->nranks() != g.size())
    return "exchange: the topology has " + std::to_string(a.topology->nranks()) +
           " ranks, the communicator " + std::to_string(g.size());
  return {};
}

void build(Schedule& s, const CollArgs& a, const Group& g) {
  const Topology& t = *a.topology;
  const int me = g.rank();
  const size_t w = width(a);
  const bool one_block = gathers(a.coll);
  const auto* in = static_cast<const std::byte*>(a.send.ptr);
  auto* out = static_cast<std::byte*>(a.recv.ptr);
  std::vector<const std::byte*> to_self;  // blocks of this rank's self-edges, in order
  size_t at = 0;
  for (int to : t.destinations(me)) {
    const size_t bytes = neighbor_edge_elements(a, me, to) * w;
    const std::byte* block = one_block ? in : in + at;
    if (to == me)
      to_self.push_back(block);
    else
      s.send(block, bytes, to);
    at += one_block ? 0 : bytes;
  }
  at = 0;
  size_t self = 0;  // self-edges among the sources so far
  for (int from : t.sources(me)) {
    const size_t bytes = neighbor_edge_elements(a, from, me) * w;
    if (from != me)
      s.recv(out + at, bytes, from);
    else if (self++ < to_self.size())
      s.copy(out + at, to_self[self - 1], bytes);
    at += bytes;
  }
  // A valid topology lists every edge at both ends alike (core/topology.hpp), self-edges
  // included; checked here rather than in cannot_run(), whose verdict must not differ
  // between ranks.
  if (self != to_self.size())
    throw RuntimeError("neighborhood collective: rank " + std::to_string(me) +
                       " is among its own destinations " + std::to_string(to_self.size()) +
                       " times but not as often among its sources: the topology is not one "
                       "MPI accepts");
  s.end_round();
}

constexpr std::string_view kSummary =
    "one round: a block to every destination and from every source, over the peer's "
    "transport (shared memory on the node)";

}  // namespace

#define CB_NEIGHBOR_EXCHANGE(variable, collective) \
  const Algorithm variable{                        \
      .coll = collective,                          \
      .name = "exchange",                          \
      .summary = kSummary,                         \
      .cannot_run = cannot_run,                    \
      .build = build,                              \
      .rerunnable = true,                          \
  };
CB_NEIGHBOR_EXCHANGE(kNeighborAllgatherExchange, Coll::NeighborAllgather)
CB_NEIGHBOR_EXCHANGE(kNeighborAllgathervExchange, Coll::NeighborAllgatherv)
CB_NEIGHBOR_EXCHANGE(kNeighborAlltoallExchange, Coll::NeighborAlltoall)
CB_NEIGHBOR_EXCHANGE(kNeighborAlltoallvExchange, Coll::NeighborAlltoallv)
CB_NEIGHBOR_EXCHANGE(kNeighborAlltoallwExchange, Coll::NeighborAlltoallw)
#undef CB_NEIGHBOR_EXCHANGE

}  // namespace cb::engine
