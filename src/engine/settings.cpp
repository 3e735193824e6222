#include "engine/settings.hpp"

#include <cstdint>

#include "core/settings.hpp"

namespace cb::engine {
namespace {

constexpr size_t KiB = size_t{1} << 10, MiB = size_t{1} << 20, GiB = size_t{1} << 30,
                 TiB = size_t{1} << 40;

EngineSettings read_settings() {
  EngineSettings s{};
  s.ranks_per_node = static_cast<int>(setting_int("CB_RANKS_PER_NODE", 0, 0, 1 << 20));
  s.shm = setting_flag("CB_ENGINE_SHM", true);
  s.shm_heap_bytes = setting_bytes("CB_SHM_HEAP_BYTES", 4 * GiB, 4 * KiB, 1 * TiB);
  s.shm_staging_bytes = setting_bytes("CB_SHM_STAGING_BYTES", 16 * MiB, 64 * KiB, 16 * GiB);
  s.shm_channel_bytes = setting_bytes("CB_SHM_CHANNEL_BYTES", 8 * MiB, 64 * KiB, 1 * GiB);
  s.shm_max_bytes = setting_bytes("CB_SHM_MAX_BYTES", 0, 0, SIZE_MAX);
  // As before: unset or 0 means never (always the pipelined copy through shared memory).
  s.cma = setting_flag("CB_ENGINE_CMA", true);
  s.shm_cma_bytes = setting_bytes("CB_SHM_CMA_BYTES", 0, 0, SIZE_MAX);
  if (s.shm_cma_bytes == 0) s.shm_cma_bytes = SIZE_MAX;
  s.shm_chunk_bytes = setting_bytes("CB_SHM_CHUNK_BYTES", 256 * KiB, 64, 1 * GiB);
  s.ring_segment_bytes = setting_bytes("CB_RING_SEGMENT_BYTES", 256 * KiB, 64, 1 * GiB);
  s.bcast_segment_bytes = setting_bytes("CB_BCAST_SEGMENT_BYTES", 128 * KiB, 64, 1 * GiB);
  s.alltoall_window = static_cast<int>(setting_int("CB_ALLTOALL_WINDOW", 8, 1, 1 << 20));
  return s;
}

}  // namespace

const EngineSettings& engine_settings() {
  // A throwing initializer leaves the static uninitialized: the next call reads again.
  static const EngineSettings settings = read_settings();
  return settings;
}

}  // namespace cb::engine
