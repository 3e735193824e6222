// Where local work of a schedule runs: reductions and copies on the host now; a device
// executor (CUDA kernels on a stream) plugs in here without any algorithm changing.
#pragma once

#include "engine/schedule.hpp"

namespace cb::engine {

class Executor {
 public:
  virtual ~Executor() = default;
  virtual Mem mem() const = 0;
  // Starts a Reduce or Copy step; returns true if it has already completed.
  virtual bool start(Step& step) = 0;
  virtual bool test(Step& step) = 0;
};

class HostExecutor final : public Executor {
 public:
  Mem mem() const override { return Mem::Host; }
  bool start(Step& step) override;
  bool test(Step&) override { return true; }
};

}  // namespace cb::engine
