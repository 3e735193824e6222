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

// A collective without data (barrier): no sizes; OMB's small-message iterations.
constexpr BenchDesc sizeless(std::string_view name, std::string_view title, const CollSpec& spec) {
  BenchDesc d = blocking(name, title, spec, 0);
  d.default_sizes = {0, 0};
  return d;
}

// Message size semantics and default ranges as OMB's osu_<name>.
const BenchDesc kBenches[] = {
    blocking("allreduce", "Allreduce Latency Test", kAllreduceSpec, 64 << 20),
    nonblocking("iallreduce", "Non-blocking Allreduce Latency Test", kAllreduceSpec, 16 << 20),
    blocking("bcast", "Broadcast Latency Test", kBcastSpec, 64 << 20),
    nonblocking("ibcast", "Non-blocking Broadcast Latency Test", kBcastSpec, 16 << 20),
    blocking("alltoall", "All-to-All Personalized Exchange Latency Test", kAlltoallSpec, 4 << 20),
    nonblocking("ialltoall", "Non-blocking All-to-All Latency Test", kAlltoallSpec, 1 << 20),
    blocking("reduce", "Reduce Latency Test", kReduceSpec, 64 << 20),
    nonblocking("ireduce", "Non-blocking Reduce Latency Test", kReduceSpec, 16 << 20),
    sizeless("barrier", "Barrier Latency Test", kBarrierSpec),
    // Alltoallv: the size is the average bytes per peer (--counts spreads them).
    blocking("alltoallv", "All-to-Allv Personalized Exchange Latency Test", kAlltoallvSpec,
             4 << 20),
    nonblocking("ialltoallv", "Non-blocking All-to-Allv Latency Test", kAlltoallvSpec, 1 << 20),
    blocking("allgather", "Allgather Latency Test", kAllgatherSpec, 16 << 20),
    nonblocking("iallgather", "Non-blocking Allgather Latency Test", kAllgatherSpec, 4 << 20),
    blocking("reduce_scatter", "Reduce_scatter Latency Test", kReduceScatterSpec, 16 << 20),
    nonblocking("ireduce_scatter", "Non-blocking Reduce_scatter Latency Test", kReduceScatterSpec,
                4 << 20),
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
