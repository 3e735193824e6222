// The dummy compute of the overlap benchmarks: real floating-point work (OMB's 25 x 25
// kernel, kept bounded) whose result is consumed. It is self-timed like OMB's: work runs
// in batches of about a microsecond until the requested time has passed, so the compute
// matches its target even when start-up calibration and steady state differ.
// With device buffers the compute is GpuCompute instead: a kernel on the GPU, where DL
// frameworks compute while their collectives are in flight.
#pragma once

#include <cstdint>

#include "gpu/stream.hpp"

namespace cb {

class DummyCompute {
 public:
  DummyCompute();  // sizes the batches (a few ms)
  // Computes for at least `seconds` (overshoot: one batch); returns the time taken.
  double run_for(double seconds);
  float checksum() const { return sink_; }  // keeps the work observable

 private:
  void run(uint64_t units);
  void unit();

  static constexpr int kN = 25;
  float a_[kN][kN];
  float x_[kN];
  float y_[kN];
  float sink_ = 0;
  uint64_t batch_ = 1;  // units per clock read, about 1 us
};

// The compute of a non-blocking benchmark with device buffers: gpu::launch_compute's kernel
// on a stream of its own, not the backend's, so that it and the collective can run at the
// same time, as a framework's compute and communication streams do. Made on the current
// device, once the benchmark has selected it.
class GpuCompute {
 public:
  GpuCompute();  // one untimed launch: the kernel's module loads at its first launch
  // Enqueues about `seconds` of device compute and returns at once; done() tells when it ends.
  void start(double seconds);
  bool done() const { return done_.query(); }

 private:
  gpu::Stream stream_;
  gpu::Event done_;
};

}  // namespace cb
