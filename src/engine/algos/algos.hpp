// Every algorithm the engine has (defined one per file in this folder).
#pragma once

#include "engine/algorithm.hpp"

namespace cb::engine {

extern const Algorithm kAllreduceRecursiveDoubling;
extern const Algorithm kAllreduceRabenseifner;
extern const Algorithm kAllreduceRing;
extern const Algorithm kAllreduceShmFlat;
extern const Algorithm kAllreduceShm;
extern const Algorithm kAllreduceCma;
extern const Algorithm kAllreduceHierarchical;
extern const Algorithm kAllreduceSmall;
extern const Algorithm kAllreduceIpcOneShot;  // CUDA IPC (device buffers, one node)
extern const Algorithm kAllreduceIpcTwoShot;
extern const Algorithm kBcastBinomial;
extern const Algorithm kBcastScatterAllgather;
extern const Algorithm kBcastChain;
extern const Algorithm kBcastShm;
extern const Algorithm kBcastCma;
extern const Algorithm kBcastHierarchical;
extern const Algorithm kBcastSmall;
extern const Algorithm kBcastIpc;
extern const Algorithm kAlltoallPairwise;
extern const Algorithm kAlltoallBruck;
extern const Algorithm kAlltoallLinear;
extern const Algorithm kAlltoallShm;
extern const Algorithm kAlltoallSmall;
extern const Algorithm kAlltoallIpc;
extern const Algorithm kAllgatherRing;
extern const Algorithm kAllgatherRecursiveDoubling;
extern const Algorithm kAllgatherBruck;
extern const Algorithm kAllgatherShm;
extern const Algorithm kAllgatherSmall;
extern const Algorithm kReduceScatterRing;
extern const Algorithm kReduceScatterRecursiveHalving;
extern const Algorithm kReduceScatterPairwise;
extern const Algorithm kReduceScatterShm;
extern const Algorithm kReduceScatterSmall;
extern const Algorithm kReduceBinomial;
extern const Algorithm kReduceRabenseifner;
extern const Algorithm kReduceShm;
extern const Algorithm kReduceCma;
extern const Algorithm kReduceSmall;
extern const Algorithm kBarrierDissemination;
extern const Algorithm kBarrierShm;
extern const Algorithm kBarrierSmall;
extern const Algorithm kAlltoallvPairwise;
extern const Algorithm kAlltoallvShm;
extern const Algorithm kAlltoallvSmall;
extern const Algorithm kGatherBinomial;
extern const Algorithm kGatherShm;
extern const Algorithm kGathervBinomial;
extern const Algorithm kGathervShm;
extern const Algorithm kScatterBinomial;
extern const Algorithm kScatterShm;
extern const Algorithm kScattervBinomial;
extern const Algorithm kScattervShm;
extern const Algorithm kAllgathervBinomial;
extern const Algorithm kAllgathervShm;
// The neighborhood collectives by direct exchange (neighbor_exchange.cpp), one schedule for
// the five.
extern const Algorithm kNeighborAllgatherExchange;
extern const Algorithm kNeighborAllgathervExchange;
extern const Algorithm kNeighborAlltoallExchange;
extern const Algorithm kNeighborAlltoallvExchange;
extern const Algorithm kNeighborAlltoallwExchange;
// The MPI library's own collective (mpi_passthrough.cpp), one for each collective.
extern const Algorithm kAllreduceMpi;
extern const Algorithm kBcastMpi;
extern const Algorithm kAlltoallMpi;
extern const Algorithm kAllgatherMpi;
extern const Algorithm kReduceScatterMpi;
extern const Algorithm kReduceMpi;
extern const Algorithm kBarrierMpi;
extern const Algorithm kAlltoallvMpi;
extern const Algorithm kGatherMpi;
extern const Algorithm kGathervMpi;
extern const Algorithm kScatterMpi;
extern const Algorithm kScattervMpi;
extern const Algorithm kAllgathervMpi;
extern const Algorithm kNeighborAllgatherMpi;
extern const Algorithm kNeighborAllgathervMpi;
extern const Algorithm kNeighborAlltoallMpi;
extern const Algorithm kNeighborAlltoallvMpi;
extern const Algorithm kNeighborAlltoallwMpi;

}  // namespace cb::engine
