// Collectives among the ranks of one node on device buffers through CUDA IPC (IpcNode):
// the work items the IPC algorithms (algos/*_ipc*.cpp) put in a schedule as Poll steps.
// `op` numbers the operation identically on every rank (Schedule::op() * 4).
//
// Synchronisation is on the host, through the node's shared-memory operation slots
// (PeerSync): a rank enqueues its copy or kernel, waits for its event, then publishes a
// counter; its peers wait for that counter before they enqueue what reads the data. No
// kernel ever spins on another process's flag, so the collectives stay correct (and no
// slower) without MPS, where kernels of different processes time-slice and a spinning
// kernel could wait a whole slice. Results are bit-identical on every rank: reductions
// fold the inputs in rank order.
#pragma once

#include <memory>

#include "core/types.hpp"
#include "engine/ipc/ipc_node.hpp"
#include "engine/schedule.hpp"
#include "engine/shm/node_shm.hpp"

namespace cb::engine {

// One-shot (two_shot false): every rank reduces the whole vector from all ranks' staged
// inputs (two host synchronisations per chunk; best for small messages). Two-shot: rank i
// reduces block i into its result area (a reduce-scatter), then every rank copies all
// blocks (an allgather): each byte is reduced once, three synchronisations per chunk.
std::unique_ptr<Pollable> ipc_allreduce(NodeShm& shm, IpcNode& ipc, uint64_t op, const void* in,
                                        void* out, size_t count, Dtype dt, Op rop, bool two_shot);

// The root stages its buffer, every other rank copies it out of the root's scratch.
std::unique_ptr<Pollable> ipc_bcast(NodeShm& shm, IpcNode& ipc, uint64_t op, void* buf,
                                    size_t bytes, int root);

// Every rank stages its whole input; rank j copies block j of every rank's staged input.
// in == out is allowed (in place).
std::unique_ptr<Pollable> ipc_alltoall(NodeShm& shm, IpcNode& ipc, uint64_t op, const void* in,
                                       void* out, size_t block_bytes);

}  // namespace cb::engine
