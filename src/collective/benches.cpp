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

constexpr BenchDesc nonblocking(std::string_view name, std::string_view title,
                                const CollSpec& spec, size_t max_bytes) {
  return {.name = name,
          .title = title,
          .family = Family::NonblockingCollective,
          .default_sizes = {4, max_bytes},
          .defaults = kCollIterations,
          .coll = &spec,
          .make_runner = make_overlap_runner};
}

// Message size semantics and default ranges as OMB's osu_<name>.
const BenchDesc kBenches[] = {
    blocking("allreduce", "Allreduce Latency Test", kAllreduceSpec, 64 << 20),
    nonblocking("iallreduce", "Non-blocking Allreduce Latency Test", kAllreduceSpec, 16 << 20),
    blocking("bcast", "Broadcast Latency Test", kBcastSpec, 64 << 20),
    nonblocking("ibcast", "Non-blocking Broadcast Latency Test", kBcastSpec, 16 << 20),
    blocking("alltoall", "All-to-All Personalized Exchange Latency Test", kAlltoallSpec, 4 << 20),
    nonblocking("ialltoall", "Non-blocking All-to-All Latency Test", kAlltoallSpec, 1 << 20),
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
