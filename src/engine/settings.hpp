// The engine's tunables from the environment, read once (core/settings.hpp parses them):
//   CB_RANKS_PER_NODE     virtual nodes of k consecutive ranks; unset or 0: physical nodes
//   CB_ENGINE_SHM         shared memory on the node (default on; 0/off: MPI only)
//   CB_SHM_HEAP_BYTES     shared heap per rank for --backend engine's buffers (default
//                         4 GiB, sparse: each buffer's pages reserved when allocated; the
//                         preload's communicators have none)
//   CB_SHM_STAGING_BYTES  staging per rank and communicator (default 16 MiB; less when the
//                         budget cannot hold it, down to 1 MiB)
//   CB_SHM_CHANNEL_BYTES  point-to-point channel data per rank and communicator, shared
//                         among the senders: 64 KiB to 1 MiB each (default 8 MiB)
//   CB_SHM_MAX_BYTES      budget of this process's shared memory (the segments' control,
//                         channels and staging, reserved at creation; not heap buffers):
//                         past it a new communicator's engine runs without shared memory
//                         (default, and 0: 1 GiB, or half of /dev/shm shared among the
//                         communicator's local ranks where that is less)
//   CB_ENGINE_CMA         cross-memory attach on private buffers (default on where the
//                         kernel permits it; 0/off: never, as where it is refused)
//   CB_SHM_CMA_BYTES      point-to-point messages from this size use cross-memory attach
//                         (default, and 0: never)
//   CB_SHM_CHUNK_BYTES    chunk of the pipelined shm collectives (default 256 KiB)
//   CB_RING_SEGMENT_BYTES segment of the ring allreduce (default 256 KiB)
//   CB_BCAST_SEGMENT_BYTES segment of the chain bcast (default 128 KiB)
//   CB_ALLTOALL_WINDOW    peers in flight in the linear alltoall (default 8)
// Sizes take K/M/G/T suffixes; a value that is not understood or out of range is a
// UsageError naming the variable. Comm's constructor reads them first, so that such an
// error surfaces when the engine is created, on every rank alike.
#pragma once

#include <cstddef>

namespace cb::engine {

struct EngineSettings {
  int ranks_per_node;  // 0: physical nodes
  bool shm;
  size_t shm_heap_bytes;
  size_t shm_staging_bytes;
  size_t shm_channel_bytes;
  size_t shm_max_bytes;  // 0: the default budget (see NodeShm)
  bool cma;
  size_t shm_cma_bytes;  // SIZE_MAX: never
  size_t shm_chunk_bytes;
  size_t ring_segment_bytes;
  size_t bcast_segment_bytes;
  int alltoall_window;
};

// Read at the first call; a call that throws leaves nothing cached, so the next one retries.
const EngineSettings& engine_settings();

}  // namespace cb::engine
