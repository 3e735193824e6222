#include <array>

#include "core/coll_spec.hpp"

namespace cb {

std::string_view to_string(BackendKind k) {
  switch (k) {
    case BackendKind::Mpi:
      return "mpi";
    case BackendKind::Nccl:
      return "nccl";
    case BackendKind::Engine:
      return "engine";
  }
  return "?";
}

std::string_view CollSpec::name() const {
  return to_string(coll);
}

std::span<const CollSpec* const> coll_specs() {
  static constexpr std::array<const CollSpec*, 20> kSpecs = {&kAllreduceSpec,
                                                             &kBcastSpec,
                                                             &kAlltoallSpec,
                                                             &kAllgatherSpec,
                                                             &kReduceScatterSpec,
                                                             &kReduceSpec,
                                                             &kBarrierSpec,
                                                             &kAlltoallvSpec,
                                                             &kGatherSpec,
                                                             &kScatterSpec,
                                                             &kGathervSpec,
                                                             &kScattervSpec,
                                                             &kAllgathervSpec,
                                                             &kReduceScatterVSpec,
                                                             &kAlltoallwSpec,
                                                             &kNeighborAllgatherSpec,
                                                             &kNeighborAllgathervSpec,
                                                             &kNeighborAlltoallSpec,
                                                             &kNeighborAlltoallvSpec,
                                                             &kNeighborAlltoallwSpec};
  return kSpecs;
}

const CollSpec* find_coll_spec(Coll coll) {
  for (const CollSpec* s : coll_specs())
    if (s->coll == coll) return s;
  return nullptr;
}

std::string coll_unsupported(Coll coll, BackendKind backend) {
  const CollSpec* s = find_coll_spec(coll);
  if (s && s->runs_on(backend)) return {};
  return "the " + std::string(to_string(backend)) + " backend does not run " +
         std::string(to_string(coll));
}

bool coll_is_rooted(Coll coll) {
  const CollSpec* s = find_coll_spec(coll);
  return s && s->rooted;
}

bool coll_reduces(Coll coll) {
  const CollSpec* s = find_coll_spec(coll);
  return s && s->reduces;
}

}  // namespace cb
