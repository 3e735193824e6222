// Grid sizes for cb_gpu's kernels (internal). Kernels loop grid-stride, so the grid only
// needs to fill the GPU once; more blocks would just queue behind the resident ones.
#pragma once

#include <cstddef>

namespace cb::gpu {

inline constexpr int kThreadsPerBlock = 256;

// Multiprocessors of the current device, asked of the runtime once per device.
int multiprocessor_count();

// Blocks for `items` work items (one per thread per pass), at most
// blocks_per_sm x multiprocessors, at least 1.
unsigned grid_blocks(size_t items, int blocks_per_sm);

}  // namespace cb::gpu
