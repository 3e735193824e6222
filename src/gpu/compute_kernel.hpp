// The overlap benchmarks' compute on the GPU (cb_i* with -d cuda): where a DL framework
// runs its compute while a collective is in flight. A plain C++ header; without CUDA the
// call throws UsageError with gpu::unavailable_reason().
#pragma once

#include "gpu/stream.hpp"

namespace cb::gpu {

// Enqueues on `stream` a kernel that does floating-point work for about `seconds` of
// device time, and returns at once. Self-timed like the CPU dummy compute (the GPU's
// nanosecond %globaltimer, read between short runs of FMAs), so no calibration can drift
// with clocks or contention: a collective sharing the SMs slows the collective, not the
// compute's duration. One block of 256 threads on every multiprocessor: the
// compute reaches every SM, as a framework's kernels do, while each SM keeps room (threads,
// registers, shared memory) for the collective's blocks. A kernel that filled every SM for
// its whole duration would keep NCCL's kernel from starting until it ends: frameworks leave
// the collective room too (kernels of many short blocks, or persistent kernels given an SM
// margin for communication).
// Throws UsageError without a usable GPU, RuntimeError when the launch fails.
void launch_compute(double seconds, StreamHandle stream);

}  // namespace cb::gpu
