// The single-copy form of the node's allreduce and reduce for private buffers (a
// program's own memory), with cross-memory attach: rank i reduces block i of the whole
// vector reading the peers' inputs where they lie, straight into its output, and then
// copies the other blocks out of their owners' outputs. Against the staged form it saves
// the copy of every input into shared memory and of every result out of it.
#pragma once

#include <memory>

#include "engine/shm/peer_sync.hpp"
#include "engine/shm/shm_collectives.hpp"

namespace cb::engine {

// Continues an operation whose buffers `sync` has published; `out` as for shm_reduce.
// Needs shm.cma() (shared buffers are read in place, private ones with CMA); mode
// Scatter or ToLeader.
std::unique_ptr<Pollable> reduce_direct(NodeShm& shm, PeerSync& sync, const void* in, void* out,
                                        size_t count, Dtype dt, Op rop, ShmReduceMode mode,
                                        int root);

}  // namespace cb::engine
