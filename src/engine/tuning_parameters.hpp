// Numbers the algorithms read while building a schedule, from the tuning table's optional
// "parameters" object ({"hierarchical_allreduce_small_bytes": 16384, ...}; a parameter the
// table leaves out keeps the default below). The engine's Comm holds them, so an algorithm
// reads them through Group::comm()->tuning().
#pragma once

#include <cstddef>

namespace cb::engine {

struct TuningParameters {
  // Hierarchical allreduce: up to this many bytes, every rank of a node reduces all of the
  // node's inputs (flat) and the node leaders use recursive doubling; above it, the node
  // reduces into its leader and the leaders use a ring.
  size_t hierarchical_allreduce_small_bytes = 16384;
  // Hierarchical bcast: up to this many bytes, binomial among one rank per node; above it,
  // scatter + allgather.
  size_t hierarchical_bcast_small_bytes = 16384;

  bool operator==(const TuningParameters&) const = default;
};

}  // namespace cb::engine
