// Element-wise reduction of device buffers by CUDA kernels, with exactly the semantics of
// the host reduction (engine/reduce_host.hpp), so that an algorithm's result
// does not depend on where its local work ran.
#pragma once

#include <cstddef>

#include "core/types.hpp"
#include "gpu/stream.hpp"

namespace cb::gpu {

// dst[i] = a[i] op b[i] for i < count, enqueued on `stream` (returns at once).
void reduce(void* dst, const void* a, const void* b, size_t count, Dtype dt, Op op,
            StreamHandle stream);

// dst[i] = dst[i] op src[i]: the accumulate form every algorithm uses.
void reduce(void* dst, const void* src, size_t count, Dtype dt, Op op, StreamHandle stream);

// Contract (as reduce_host, which is the reference the tests compare against bit for bit):
//  * Pointers must be device-accessible (device, managed or pinned host memory) and need
//    no alignment: any byte offset works. When dst, a and b share their offset within 16
//    bytes (and it is a multiple of the element size), the bulk moves in 16-byte vectors
//    with a scalar head and tail; otherwise elements are moved one at a time (byte by byte
//    when they are not even naturally aligned), correct but slower.
//  * Buffers must not overlap, except that dst may be exactly a and/or exactly b.
//  * Char (int8), Int32, Int64: Sum and Prod wrap modulo 2^bits.
//  * Float, Double: IEEE arithmetic, subnormals kept (built with -ftz=false).
//  * Half, BFloat16: widened to float, combined, rounded back to nearest-even.
//  * Max/Min: a NaN operand wins (a's when both are), else a > b ? a : b (a < b ? a : b),
//    so equal operands (+0 and -0 included) give b; the chosen operand is returned
//    bit for bit. NaNs produced by Sum/Prod have an unspecified payload.
// Throws RuntimeError when the launch fails (its CUDA error string included).

namespace detail {
// Resident blocks per multiprocessor that the vectorised kernels launch (grid-stride
// loops cover the rest). cb_gpu_bench sweeps it; 0 restores the default.
void set_reduce_blocks_per_sm(int blocks);
int reduce_blocks_per_sm();
}  // namespace detail

}  // namespace cb::gpu
