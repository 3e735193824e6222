// The dummy compute of the overlap benchmarks: real floating-point work (OMB's 25 x 25
// kernel, kept bounded) whose result is consumed. It is self-timed like OMB's: work runs
// in batches of about a microsecond until the requested time has passed, so the compute
// matches its target even when start-up calibration and steady state differ.
#pragma once

#include <cstdint>

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

}  // namespace cb
