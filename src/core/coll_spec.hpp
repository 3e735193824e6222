// The registry of collectives: for each one, what it is (its buffers, the in-place rule,
// the bandwidth convention, exact validation data) and which backends run it. Backends,
// the benchmark list, the replay and validation ask here instead of keeping lists of
// their own (cf. nccl-tests' struct testColl). Adding a collective: its spec in one
// core/coll_<name>.cpp, one line in coll_registry.cpp, then its backend calls.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "core/args.hpp"

namespace cb {

class CountMatrix;  // core/vcounts.hpp

// The backends the registry knows of, as bits of CollSpec::backends.
enum class BackendKind : uint8_t { Mpi, Nccl, Engine };
inline constexpr unsigned backend_bit(BackendKind k) {
  return 1u << static_cast<unsigned>(k);
}
inline constexpr unsigned kAllBackends = backend_bit(BackendKind::Mpi) |
                                         backend_bit(BackendKind::Nccl) |
                                         backend_bit(BackendKind::Engine);
std::string_view to_string(BackendKind k);  // "mpi", "nccl", "engine"

struct CollSpec {
  Coll coll;
  bool reduces;  // --dtype/--op select a reduction
  bool rooted;   // -k/--root applies
  // Elements in each buffer for `count` elements per rank (alltoall: per peer). A
  // collective without a send buffer (bcast) has send_elements 0 and works in recv.
  size_t (*send_elements)(size_t count, int nranks);
  size_t (*recv_elements)(size_t count, int nranks);
  // nccl-tests conventions: algbw = algbw_elements x dtype size / time; busbw = algbw x factor.
  size_t (*algbw_elements)(size_t count, int nranks);
  double (*bus_factor)(int nranks);
  // Host images of the buffers before the operation (inputs, and outputs poisoned), and
  // the number of wrong elements after it. `input` is the send image, or for in-place and
  // bcast the recv image itself; both have the sizes above. In place, recv holds the
  // input and receives the result (MPI_IN_PLACE on every rank).
  void (*fill)(const CollArgs& args, int rank, int nranks, std::byte* send, std::byte* recv);
  size_t (*check)(const CollArgs& args, int rank, int nranks, const std::byte* recv);
  unsigned backends;  // backend_bit()s of the backends that run it (0: none yet; then
                      // fill and check are null: only traces name it)
  // Elements of recv in place, where the input does not fit in recv_elements
  // (MPI_Reduce_scatter_block: recv holds all n blocks of the input, the result is its
  // first block); null: recv_elements.
  size_t (*in_place_recv_elements)(size_t count, int nranks) = nullptr;
  // false: no message size (barrier): one measurement, no buffers; -m, -T, -l refused.
  bool sized = true;
  // -l/--in-place is defined (not for alltoallv, whose blocks differ in size).
  bool in_place_defined = true;
  // Per-rank or per-peer counts differ (alltoallv, alltoallw, the v forms):
  // CollArgs::counts holds them (--counts), count is their mean, and the buffer sizes come
  // from the matrix through counted_send/counted_recv (elements, the same on every rank:
  // the largest any rank needs).
  bool varying_counts = false;
  size_t (*counted_send)(const CountMatrix& m, bool in_place) = nullptr;
  size_t (*counted_recv)(const CountMatrix& m, bool in_place) = nullptr;
  // What the message size means with --counts, for the header line ("average bytes per
  // peer; every rank sends size x ranks"), and the busiest rank's load over the average.
  std::string_view counts_meaning = {};
  double (*counts_imbalance)(const CountMatrix& m) = nullptr;
  // Every rank's result must be the same bits (allreduce, allgather, bcast): -c compares
  // them across ranks as well as against the expected values. Not for reduce_scatter and
  // alltoall(v), whose results differ per rank, nor reduce (only the root has one).
  bool same_on_all_ranks = false;
  // Neighborhood collectives: elements of `rank`'s send or receive buffer on
  // args.topology (they differ per rank); null for the others.
  size_t (*neighbor_elements)(const CollArgs& args, int rank, bool send) = nullptr;
  // gpu::fill_collective()/check_collective() know it (core/verify_values.hpp): -c on
  // device buffers fills and checks there. Otherwise the images go through the host.
  bool device_validation = false;

  std::string_view name() const;
  bool runs_on(BackendKind k) const { return (backends & backend_bit(k)) != 0; }
  // Elements of send and recv for `args` on `nranks` ranks: in place, there is no send
  // buffer (recv holds the input).
  size_t send_elements_of(const CollArgs& a, int nranks) const {
    if (a.counts) return counted_send(*a.counts, a.in_place);
    return a.in_place ? 0 : send_elements(a.count, nranks);
  }
  // Elements of recv: recv_elements, or in place in_place_recv_elements where defined.
  size_t recv_elements_for(size_t count, int nranks, bool in_place) const {
    return in_place && in_place_recv_elements ? in_place_recv_elements(count, nranks)
                                              : recv_elements(count, nranks);
  }
  size_t recv_elements_of(const CollArgs& a, int nranks) const {
    if (a.counts) return counted_recv(*a.counts, a.in_place);
    return recv_elements_for(a.count, nranks, a.in_place);
  }
};

// Every collective collbench knows, benchmarked or only traced (backends == 0).
std::span<const CollSpec* const> coll_specs();
// The spec of `coll`; null only for Coll::None.
const CollSpec* find_coll_spec(Coll coll);
// Why `backend` cannot run `coll` (empty: it can), for error messages.
std::string coll_unsupported(Coll coll, BackendKind backend);
bool coll_is_rooted(Coll coll);  // false for Coll::None
bool coll_reduces(Coll coll);

// The one-block-per-rank collectives (gather, scatter and the v forms): elements of rank
// `rank`'s block and where it starts in a buffer of all blocks (count each, or with
// args.counts the matrix's CountMatrix::block()).
size_t rank_block_elements(const CollArgs& a, int rank);
size_t rank_block_offset(const CollArgs& a, int rank);

// Neighborhood collectives: elements on the edge from rank `from` to rank `to` (count, or
// with args.counts the sender's block for allgatherv and count(from, to) for alltoallv/w).
size_t neighbor_edge_elements(const CollArgs& a, int from, int to);

// Fill of the reductions whose result is every rank's input combined (allreduce, reduce):
// each rank's inputs, and its output poisoned against the expected result.
void fill_reduction(const CollArgs& a, int rank, int nranks, std::byte* send, std::byte* recv);

extern const CollSpec kAllreduceSpec, kBcastSpec, kAlltoallSpec;
extern const CollSpec kAllgatherSpec, kReduceScatterSpec, kReduceSpec;
extern const CollSpec kBarrierSpec, kAlltoallvSpec, kAlltoallwSpec;
extern const CollSpec kGatherSpec, kScatterSpec, kGathervSpec, kScattervSpec;
extern const CollSpec kAllgathervSpec, kReduceScatterVSpec;
extern const CollSpec kNeighborAllgatherSpec, kNeighborAllgathervSpec, kNeighborAlltoallSpec;
extern const CollSpec kNeighborAlltoallvSpec, kNeighborAlltoallwSpec;

}  // namespace cb
