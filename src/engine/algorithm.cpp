#include "engine/algorithm.hpp"

#include <array>

#include "engine/algos/algos.hpp"

namespace cb::engine {

int build_operation(Schedule& s, const Algorithm& algo, const CollArgs& args, const Group& group,
                    Comm& comm) {
  const int tag = comm.next_tag();
  s.set_op(comm.operations());
  s.set_mem(args.recv.mem);
  s.set_group(&group);
  const bool keep_own_block =
      args.coll == Coll::ReduceScatter && args.in_place && group.rank() != 0 && args.count;
  const size_t block = args.count * dtype_size(args.dtype);
  // Only where it is kept: a rooted collective's non-root may have no receive buffer (the
  // preload's gather, where MPI says it is not significant), and null + offset is undefined.
  std::byte* own = keep_own_block ? static_cast<std::byte*>(args.recv.ptr) +
                                        block * static_cast<size_t>(group.rank())
                                  : nullptr;
  std::byte* saved = keep_own_block ? s.scratch(block) : nullptr;
  if (keep_own_block) {
    s.copy(saved, own, block);
    s.end_round();
  }
  algo.build(s, args, group);
  if (keep_own_block) {
    s.copy(own, saved, block);
    s.end_round();
  }
  s.set_group(nullptr);
  return tag;
}

bool start_small(SmallOp& op, const Algorithm& algo, const CollArgs& args, const Group& group,
                 Comm& comm) {
  if (!algo.small || !comm.idle()) return false;
  comm.next_tag();
  op = algo.small(args, group);
  op.seq = op.slots->next();
  return true;
}

std::span<const Algorithm* const> all_algorithms() {
  static constexpr const Algorithm* kAll[] = {&kAllreduceRecursiveDoubling,
                                              &kAllreduceRabenseifner,
                                              &kAllreduceRing,
                                              &kAllreduceShmFlat,
                                              &kAllreduceShm,
                                              &kAllreduceCma,
                                              &kAllreduceHierarchical,
                                              &kAllreduceSmall,
                                              &kAllreduceIpcOneShot,
                                              &kAllreduceIpcTwoShot,
                                              &kBcastBinomial,
                                              &kBcastScatterAllgather,
                                              &kBcastChain,
                                              &kBcastShm,
                                              &kBcastCma,
                                              &kBcastHierarchical,
                                              &kBcastSmall,
                                              &kBcastIpc,
                                              &kAlltoallPairwise,
                                              &kAlltoallBruck,
                                              &kAlltoallLinear,
                                              &kAlltoallShm,
                                              &kAlltoallSmall,
                                              &kAlltoallIpc,
                                              &kAllgatherRing,
                                              &kAllgatherRecursiveDoubling,
                                              &kAllgatherBruck,
                                              &kAllgatherShm,
                                              &kAllgatherSmall,
                                              &kReduceScatterRing,
                                              &kReduceScatterRecursiveHalving,
                                              &kReduceScatterPairwise,
                                              &kReduceScatterShm,
                                              &kReduceScatterSmall,
                                              &kReduceBinomial,
                                              &kReduceRabenseifner,
                                              &kReduceShm,
                                              &kReduceCma,
                                              &kReduceSmall,
                                              &kBarrierDissemination,
                                              &kBarrierShm,
                                              &kBarrierSmall,
                                              &kAlltoallvPairwise,
                                              &kAlltoallvShm,
                                              &kAlltoallvSmall,
                                              &kGatherBinomial,
                                              &kGatherShm,
                                              &kGathervBinomial,
                                              &kGathervShm,
                                              &kScatterBinomial,
                                              &kScatterShm,
                                              &kScattervBinomial,
                                              &kScattervShm,
                                              &kAllgathervBinomial,
                                              &kAllgathervShm,
                                              &kNeighborAllgatherExchange,
                                              &kNeighborAllgathervExchange,
                                              &kNeighborAlltoallExchange,
                                              &kNeighborAlltoallvExchange,
                                              &kNeighborAlltoallwExchange,
                                              &kAllreduceMpi,
                                              &kBcastMpi,
                                              &kAlltoallMpi,
                                              &kAllgatherMpi,
                                              &kReduceScatterMpi,
                                              &kReduceMpi,
                                              &kBarrierMpi,
                                              &kAlltoallvMpi,
                                              &kGatherMpi,
                                              &kGathervMpi,
                                              &kScatterMpi,
                                              &kScattervMpi,
                                              &kAllgathervMpi,
                                              &kNeighborAllgatherMpi,
                                              &kNeighborAllgathervMpi,
                                              &kNeighborAlltoallMpi,
                                              &kNeighborAlltoallvMpi,
                                              &kNeighborAlltoallwMpi};
  return kAll;
}

const Algorithm* find_algorithm(Coll coll, std::string_view name) {
  for (const Algorithm* a : all_algorithms())
    if (a->coll == coll && a->name == name) return a;
  return nullptr;
}

std::string algorithm_names(Coll coll) {
  std::string out;
  for (const Algorithm* a : all_algorithms())
    if (a->coll == coll) out += (out.empty() ? "" : ", ") + std::string(a->name);
  return out;
}

}  // namespace cb::engine
