#include "collective/benches.hpp"

#include "collective/runners.hpp"
#include "core/coll_spec.hpp"

namespace cb {
namespace {

// OMB's iteration counts for every collective: 1000/100 up to 8 KiB, 100/10 above.
constexpr IterationDefaults kCollIterations{1000, 100, 100, 10};

constexpr BenchDesc blocking(std::string_view name, std::string_view title, const CollSpec& spec,
                             size_t max_bytes) {
  return {.name = name,
          .title = title,
          .family = Family::Collective,
          .default_sizes = {4, max_bytes},
          .defaults = kCollIterations,
          .coll = &spec,
          .make_runner = make_collective_runner};
}

constexpr BenchDesc nonblocking(std::string_view name, std::string_view title, const CollSpec& spec,
                                size_t max_bytes) {
  return {.name = name,
          .title = title,
          .family = Family::NonblockingCollective,
          .default_sizes = {4, max_bytes},
          .defaults = kCollIterations,
          .coll = &spec,
          .make_runner = make_overlap_runner};
}

constexpr BenchDesc persistent(std::string_view name, std::string_view title, const CollSpec& spec,
                               size_t max_bytes) {
  BenchDesc d = blocking(name, title, spec, max_bytes);
  d.persistent = true;
  return d;
}

// A collective without data (barrier): no sizes; OMB's small-message iterations.
constexpr BenchDesc sizeless(BenchDesc d) {
  d.default_sizes = {0, 0};
  return d;
}

// Message size semantics and default ranges as OMB's osu_<name>: each collective in its
// blocking, non-blocking (osu_i<name>) and persistent (osu_<name>_persistent) form.
const BenchDesc kBenches[] = {
    blocking("allreduce", "Allreduce Latency Test", kAllreduceSpec, 64 << 20),
    nonblocking("iallreduce", "Non-blocking Allreduce Latency Test", kAllreduceSpec, 16 << 20),
    persistent("allreduce_persistent", "Persistent Allreduce Latency Test", kAllreduceSpec,
               64 << 20),
    blocking("bcast", "Broadcast Latency Test", kBcastSpec, 64 << 20),
    nonblocking("ibcast", "Non-blocking Broadcast Latency Test", kBcastSpec, 16 << 20),
    persistent("bcast_persistent", "Persistent Broadcast Latency Test", kBcastSpec, 64 << 20),
    blocking("alltoall", "All-to-All Personalized Exchange Latency Test", kAlltoallSpec, 4 << 20),
    nonblocking("ialltoall", "Non-blocking All-to-All Latency Test", kAlltoallSpec, 1 << 20),
    persistent("alltoall_persistent", "Persistent All-to-All Latency Test", kAlltoallSpec, 4 << 20),
    blocking("reduce", "Reduce Latency Test", kReduceSpec, 64 << 20),
    nonblocking("ireduce", "Non-blocking Reduce Latency Test", kReduceSpec, 16 << 20),
    persistent("reduce_persistent", "Persistent Reduce Latency Test", kReduceSpec, 64 << 20),
    sizeless(blocking("barrier", "Barrier Latency Test", kBarrierSpec, 0)),
    sizeless(nonblocking("ibarrier", "Non-blocking Barrier Latency Test", kBarrierSpec, 0)),
    sizeless(persistent("barrier_persistent", "Persistent Barrier Latency Test", kBarrierSpec, 0)),
    // Alltoallv, alltoallw: the size is the average bytes per peer (--counts spreads them).
    blocking("alltoallv", "All-to-Allv Personalized Exchange Latency Test", kAlltoallvSpec,
             4 << 20),
    nonblocking("ialltoallv", "Non-blocking All-to-Allv Latency Test", kAlltoallvSpec, 1 << 20),
    persistent("alltoallv_persistent", "Persistent All-to-Allv Latency Test", kAlltoallvSpec,
               4 << 20),
    blocking("alltoallw", "All-to-Allw Personalized Exchange Latency Test", kAlltoallwSpec,
             4 << 20),
    nonblocking("ialltoallw", "Non-blocking All-to-Allw Latency Test", kAlltoallwSpec, 1 << 20),
    persistent("alltoallw_persistent", "Persistent All-to-Allw Latency Test", kAlltoallwSpec,
               4 << 20),
    blocking("allgather", "Allgather Latency Test", kAllgatherSpec, 16 << 20),
    nonblocking("iallgather", "Non-blocking Allgather Latency Test", kAllgatherSpec, 4 << 20),
    persistent("allgather_persistent", "Persistent Allgather Latency Test", kAllgatherSpec,
               16 << 20),
    // The v forms: the size is a rank's average block (--counts spreads them).
    blocking("allgatherv", "Allgatherv Latency Test", kAllgathervSpec, 16 << 20),
    nonblocking("iallgatherv", "Non-blocking Allgatherv Latency Test", kAllgathervSpec, 4 << 20),
    persistent("allgatherv_persistent", "Persistent Allgatherv Latency Test", kAllgathervSpec,
               16 << 20),
    blocking("reduce_scatter", "Reduce_scatter Latency Test", kReduceScatterSpec, 16 << 20),
    nonblocking("ireduce_scatter", "Non-blocking Reduce_scatter Latency Test", kReduceScatterSpec,
                4 << 20),
    persistent("reduce_scatter_persistent", "Persistent Reduce_scatter Latency Test",
               kReduceScatterSpec, 16 << 20),
    blocking("reduce_scatterv", "Reduce_scatter (vector) Latency Test", kReduceScatterVSpec,
             16 << 20),
    nonblocking("ireduce_scatterv", "Non-blocking Reduce_scatter (vector) Latency Test",
                kReduceScatterVSpec, 4 << 20),
    persistent("reduce_scatterv_persistent", "Persistent Reduce_scatter (vector) Latency Test",
               kReduceScatterVSpec, 16 << 20),
    blocking("gather", "Gather Latency Test", kGatherSpec, 16 << 20),
    nonblocking("igather", "Non-blocking Gather Latency Test", kGatherSpec, 4 << 20),
    persistent("gather_persistent", "Persistent Gather Latency Test", kGatherSpec, 16 << 20),
    blocking("gatherv", "Gatherv Latency Test", kGathervSpec, 16 << 20),
    nonblocking("igatherv", "Non-blocking Gatherv Latency Test", kGathervSpec, 4 << 20),
    persistent("gatherv_persistent", "Persistent Gatherv Latency Test", kGathervSpec, 16 << 20),
    blocking("scatter", "Scatter Latency Test", kScatterSpec, 16 << 20),
    nonblocking("iscatter", "Non-blocking Scatter Latency Test", kScatterSpec, 4 << 20),
    persistent("scatter_persistent", "Persistent Scatter Latency Test", kScatterSpec, 16 << 20),
    blocking("scatterv", "Scatterv Latency Test", kScattervSpec, 16 << 20),
    nonblocking("iscatterv", "Non-blocking Scatterv Latency Test", kScattervSpec, 4 << 20),
    persistent("scatterv_persistent", "Persistent Scatterv Latency Test", kScattervSpec, 16 << 20),
    // Neighborhood collectives on -N's topology: the size is one neighbor's block.
    blocking("neighbor_allgather", "Neighborhood Allgather Latency Test", kNeighborAllgatherSpec,
             1 << 20),
    nonblocking("ineighbor_allgather", "Non-blocking Neighborhood Allgather Latency Test",
                kNeighborAllgatherSpec, 1 << 20),
    blocking("neighbor_allgatherv", "Neighborhood Allgatherv Latency Test", kNeighborAllgathervSpec,
             1 << 20),
    nonblocking("ineighbor_allgatherv", "Non-blocking Neighborhood Allgatherv Latency Test",
                kNeighborAllgathervSpec, 1 << 20),
    blocking("neighbor_alltoall", "Neighborhood All-to-All Latency Test", kNeighborAlltoallSpec,
             1 << 20),
    nonblocking("ineighbor_alltoall", "Non-blocking Neighborhood All-to-All Latency Test",
                kNeighborAlltoallSpec, 1 << 20),
    blocking("neighbor_alltoallv", "Neighborhood All-to-Allv Latency Test", kNeighborAlltoallvSpec,
             1 << 20),
    nonblocking("ineighbor_alltoallv", "Non-blocking Neighborhood All-to-Allv Latency Test",
                kNeighborAlltoallvSpec, 1 << 20),
    blocking("neighbor_alltoallw", "Neighborhood All-to-Allw Latency Test", kNeighborAlltoallwSpec,
             1 << 20),
    nonblocking("ineighbor_alltoallw", "Non-blocking Neighborhood All-to-Allw Latency Test",
                kNeighborAlltoallwSpec, 1 << 20),
};

}  // namespace

std::span<const BenchDesc> collective_benches() {
  return kBenches;
}

const BenchDesc* find_collective_bench(std::string_view name) {
  for (const BenchDesc& d : kBenches)
    if (d.name == name) return &d;
  return nullptr;
}

}  // namespace cb
