// Collectives among the ranks of one node that read each other's memory directly (see
// NodeShm): the work items that shared-memory algorithms put in a schedule as Poll steps.
// `op` numbers the operation identically on every local rank (Schedule::op() * 4 + phase).
#pragma once

#include <memory>
#include <vector>

#include "core/vcounts.hpp"
#include "engine/schedule.hpp"
#include "engine/shm/node_shm.hpp"

namespace cb::engine {

enum class ShmReduceMode {
  Flat,      // every rank reduces the whole vector from all inputs: fewest syncs, small data
  Scatter,   // rank i reduces block i of each chunk, then every rank gathers all blocks
  ToLeader,  // as Scatter, but only local rank 0 gathers (first half of a hierarchy)
};

// out = reduction of every local rank's `in` (in may equal out), pipelined in chunks of
// CB_SHM_CHUNK_BYTES (256 KiB) that stay in cache; private inputs are staged through
// shared memory, or with `direct` (needs shm.cma(), Scatter or ToLeader) read where they
// lie with cross-memory attach (shm_reduce_direct.hpp). All local ranks pass the same
// `direct`. ToLeader gathers the result on local rank `root` (0 unless given).
std::unique_ptr<Pollable> shm_reduce(NodeShm& shm, uint64_t op, const void* in, void* out,
                                     size_t count, Dtype dt, Op rop, ShmReduceMode mode,
                                     int root = 0, bool direct = false);

// Every local rank receives `bytes` of local rank `root`'s buffer, copied straight from it
// when it is in shared memory or with `direct` (cross-memory attach, needs shm.cma()),
// else through the root's staging slots. All local ranks pass the same `direct`.
std::unique_ptr<Pollable> shm_bcast(NodeShm& shm, uint64_t op, void* buf, size_t bytes, int root,
                                    bool direct = false);

// Block j of rank i's `in` goes to block i of rank j's `out`; each rank copies its blocks
// straight from the others' buffers. in == out is allowed (in place).
std::unique_ptr<Pollable> shm_alltoall(NodeShm& shm, uint64_t op, const void* in, void* out,
                                       size_t block_bytes);

// Every local rank's `block_bytes` of `in` land in block i (i = its local rank) of every
// rank's `out`, copied straight from it. In place: in is block `me` of out.
std::unique_ptr<Pollable> shm_allgather(NodeShm& shm, uint64_t op, const void* in, void* out,
                                        size_t block_bytes);

// out (count elements) = block `me` of the reduction of every local rank's `in` (count x
// ranks elements), read in place. in == out is MPI's in place (the result replaces block 0).
std::unique_ptr<Pollable> shm_reduce_scatter(NodeShm& shm, uint64_t op, const void* in, void* out,
                                             size_t count, Dtype dt, Op rop);

// Alltoallv: rank i's block for rank j (counts(i, j) elements of `width` bytes, at the
// matrix's offsets; matrix ranks are communicator ranks, shm.members()) goes to rank j,
// which copies it straight from rank i's `in`.
std::unique_ptr<Pollable> shm_alltoallv(NodeShm& shm, uint64_t op, const void* in, void* out,
                                        const CountMatrix& counts, size_t width);

// Gather(v), scatter(v) and allgatherv: local rank i's block is bytes[i] at offsets[i] of a
// buffer of all blocks; `root` is a local rank. Gather: `in` is my block, `out` the root's
// buffer of all blocks; each rank copies its block straight into it when it is in shared
// memory, else the root copies every block out of the ranks' inputs. Scatter: `in` is the
// root's buffer of all blocks; each rank copies its block out of it into `out`.
// Allgather: every rank copies every rank's `in` into its `out`. In place, a rank's own
// block of the buffer of all blocks is its `in` (gather, allgather) or `out` (scatter).
enum class ShmBlocksMode { Gather, Scatter, Allgather };
std::unique_ptr<Pollable> shm_blocks(NodeShm& shm, uint64_t op, ShmBlocksMode mode, const void* in,
                                     void* out, std::vector<size_t> bytes,
                                     std::vector<size_t> offsets, int root);

// Barrier: every local rank has arrived (one counter each, no data).
std::unique_ptr<Pollable> shm_barrier(NodeShm& shm, uint64_t op);

size_t shm_chunk_bytes();  // CB_SHM_CHUNK_BYTES

}  // namespace cb::engine
