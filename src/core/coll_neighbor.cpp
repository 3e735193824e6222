// The neighborhood collectives (MPI_Neighbor_allgather[v], MPI_Neighbor_alltoall[v|w]) on
// the topology of -N (CollArgs::topology, core/topology.hpp): a rank sends to its
// destinations and receives one block from each of its sources, packed in neighbor order.
// The message size is one block (the mean with --counts), as OMB's osu_neighbor_*; the v
// and w forms take the block of each edge from the count matrix: allgatherv a rank's
// CountMatrix::block, alltoallv/w count(sender, receiver). algbw counts what the average
// rank receives (count x mean degree); busbw = algbw: every block crosses a link. MPI
// defines no in-place form.
#include "core/coll_spec.hpp"
#include "core/errors.hpp"
#include "core/topology.hpp"
#include "core/vcounts.hpp"
#include "core/verify.hpp"
#include "core/verify_values.hpp"

namespace cb {
namespace {

const Topology& topology(const CollArgs& a) {
  if (!a.topology) throw RuntimeError(std::string(to_string(a.coll)) + " without a topology");
  return *a.topology;
}

bool gathers(const CollArgs& a) {
  return a.coll == Coll::NeighborAllgather || a.coll == Coll::NeighborAllgatherv;
}

// Element j of what `from` sends to `to` (allgather: the same to every destination).
double edge_value(const CollArgs& a, int from, int to, size_t j) {
  const int n = topology(a).nranks();
  if (gathers(a)) return values::allgather_value(a.dtype, from, n, j, a.generation);
  return values::input_value(a.dtype, Op::Max, from, n, (uint64_t(to) << 32) | j, a.generation);
}

// The blocks of a rank's send (to its destinations) or receive (from its sources) buffer.
struct Edges {
  const CollArgs& a;
  int rank;
  bool incoming;
  const std::vector<int>& peers() const {
    return incoming ? topology(a).sources(rank) : topology(a).destinations(rank);
  }
  size_t size(size_t k) const {
    const int peer = peers()[k];
    return incoming ? neighbor_edge_elements(a, peer, rank) : neighbor_edge_elements(a, rank, peer);
  }
  size_t total() const {
    if (!incoming && gathers(a)) return neighbor_edge_elements(a, rank, rank);  // one block, to all
    size_t all = 0;
    for (size_t k = 0; k < peers().size(); ++k) all += size(k);
    return all;
  }
};

void fill(const CollArgs& a, int rank, int, std::byte* send, std::byte* recv) {
  const Edges out{a, rank, false}, in{a, rank, true};
  if (gathers(a)) {
    for (size_t j = 0; j < out.total(); ++j)
      store_element(send, j, a.dtype, edge_value(a, rank, rank, j));
  } else {
    size_t at = 0;
    for (size_t k = 0; k < out.peers().size(); at += out.size(k), ++k)
      for (size_t j = 0; j < out.size(k); ++j)
        store_element(send, at + j, a.dtype, edge_value(a, rank, out.peers()[k], j));
  }
  size_t at = 0;
  for (size_t k = 0; k < in.peers().size(); at += in.size(k), ++k)
    for (size_t j = 0; j < in.size(k); ++j)
      store_poison(recv, at + j, a.dtype, edge_value(a, in.peers()[k], rank, j));
}

size_t check(const CollArgs& a, int rank, int, const std::byte* recv) {
  const Edges in{a, rank, true};
  size_t wrong = 0, at = 0;
  for (size_t k = 0; k < in.peers().size(); at += in.size(k), ++k)
    wrong += count_wrong(recv, at, in.size(k), a.dtype,
                         [&](size_t j) { return edge_value(a, in.peers()[k], rank, j); });
  return wrong;
}

size_t elements(const CollArgs& a, int rank, bool send) {
  return Edges{a, rank, !send}.total();
}

// Without a topology (the registry's generic sizes): one block per rank.
size_t one(size_t count, int) {
  return count;
}
size_t times_n(size_t count, int n) {
  return count * static_cast<size_t>(n);
}
double one_factor(int) {
  return 1.0;
}

constexpr CollSpec neighbor(Coll coll, bool varying) {
  const bool gather = coll == Coll::NeighborAllgather || coll == Coll::NeighborAllgatherv;
  return {
      .coll = coll,
      .reduces = false,
      .rooted = false,
      .send_elements = gather ? one : times_n,
      .recv_elements = times_n,
      .algbw_elements = times_n,
      .bus_factor = one_factor,
      .fill = fill,
      .check = check,
      .backends = backend_bit(BackendKind::Mpi) | backend_bit(BackendKind::Engine),
      .in_place_defined = false,
      .varying_counts = varying,
      .counts_meaning = gather ? "average bytes per rank's block" : "average bytes per edge",
      .counts_imbalance = gather ? [](const CountMatrix& m) { return m.block_imbalance(); }
                                 : [](const CountMatrix& m) { return m.imbalance(); },
      .neighbor_elements = elements,
  };
}

}  // namespace

size_t neighbor_edge_elements(const CollArgs& a, int from, int to) {
  if (!a.counts) return a.count;
  return gathers(a) ? a.counts->block(from) : a.counts->count(from, to);
}

const CollSpec kNeighborAllgatherSpec = neighbor(Coll::NeighborAllgather, false);
const CollSpec kNeighborAllgathervSpec = neighbor(Coll::NeighborAllgatherv, true);
const CollSpec kNeighborAlltoallSpec = neighbor(Coll::NeighborAlltoall, false);
const CollSpec kNeighborAlltoallvSpec = neighbor(Coll::NeighborAlltoallv, true);
const CollSpec kNeighborAlltoallwSpec = neighbor(Coll::NeighborAlltoallw, true);

}  // namespace cb
