#include "harness/compute.hpp"

#include <algorithm>

#include "gpu/compute_kernel.hpp"
#include "harness/timer.hpp"

namespace cb {

DummyCompute::DummyCompute() {
  for (int i = 0; i < kN; ++i) {
    x_[i] = 0.5f + static_cast<float>(i) / kN;
    y_[i] = 1.0f / static_cast<float>(i + 1);
    for (int j = 0; j < kN; ++j) a_[i][j] = static_cast<float>((i * kN + j) % 7) * 0.125f;
  }
  // Best of three runs of >= 1 ms: the unit cost without interruptions.
  double best = 1e9;
  for (int rep = 0; rep < 3; ++rep) {
    for (uint64_t units = 64;; units *= 2) {
      const double t0 = now_s();
      run(units);
      const double dt = now_s() - t0;
      if (dt >= 1e-3) {
        best = std::min(best, dt / static_cast<double>(units));
        break;
      }
    }
  }
  batch_ = std::max<uint64_t>(1, static_cast<uint64_t>(1e-6 / best));
}

// OMB's kernel x[i] = x[i] + a[i][j] * a[j][i] + y[j], damped by 1/2 so that it stays
// finite however long it runs.
void DummyCompute::unit() {
  for (int i = 0; i < kN; ++i) {
    float acc = x_[i];
    for (int j = 0; j < kN; ++j) acc = 0.5f * acc + a_[i][j] * a_[j][i] + y_[j];
    x_[i] = acc;
  }
}

void DummyCompute::run(uint64_t units) {
  for (uint64_t u = 0; u < units; ++u) unit();
  sink_ += x_[static_cast<int>(units % kN)];  // read the result: the work cannot vanish
}

double DummyCompute::run_for(double seconds) {
  const double t0 = now_s();
  double elapsed = 0;
  while (elapsed < seconds) {
    run(batch_);
    elapsed = now_s() - t0;
  }
  return elapsed;
}

GpuCompute::GpuCompute() {
  start(0);
  done_.synchronize();
}

void GpuCompute::start(double seconds) {
  gpu::launch_compute(seconds, stream_.handle());
  done_.record(stream_.handle());
}

}  // namespace cb
