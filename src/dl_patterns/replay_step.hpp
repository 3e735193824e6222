// Runs one replayed training step on a backend: emulated backward compute in slices,
// each collective started non-blocking when its data is ready (no limit on how many are in
// flight), in-flight collectives tested between slices, and a wait for all of them at each
// step boundary. Also the untimed validation step. Buffers (share_buffers(); in place
// where the frameworks reduce in place) are allocated once; a message whose buffer an
// earlier message of the step still uses waits for that one before it starts.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "backends/backend.hpp"
#include "backends/control.hpp"
#include "dl_patterns/replay_plan.hpp"
#include "dl_patterns/replay_stats.hpp"
#include "harness/compute.hpp"

namespace cb::dl {

struct StepSample {  // this rank, microseconds
  double step_us = 0;
  double compute_us = 0;  // measured emulated compute (slices overshoot by ~1 us at most)
  double idle_us = 0;
};

// The collective a message runs, without buffers (their memory kind only): allreduces are
// in place, as the frameworks reduce gradients, and take the forced engine algorithm.
CollArgs message_args(const ReplayMessage& m, Mem mem, const std::string& algo);

class StepRunner {
 public:
  // `algo` forces the engine algorithm of allreduce messages (empty: the backend chooses).
  // `buffers` is share_buffers(plan, ranks): one allocation per shared buffer.
  // `groups`: per plan.groups entry, the backend on that group's sub-communicator, or null
  // where this rank is not in the group (it skips the group's messages).
  StepRunner(Backend& be, const Control& ctl, const ReplayPlan& plan, const BufferPlan& buffers,
             Mem mem, const std::string& algo, std::vector<Backend*> groups = {});
  ~StepRunner();
  StepRunner(const StepRunner&) = delete;
  StepRunner& operator=(const StepRunner&) = delete;

  const std::vector<CollArgs>& args() const { return args_; }
  // The backend a message runs on here (its group's), or null when this rank skips it.
  Backend* backend_of(size_t message) const;

  // One step, starting with a barrier. With `record`, per-message launch times and
  // latencies are added to launch() and latency().
  StepSample run(const std::vector<ReplayAction>& actions, bool record);

  // In validation_batches() (messages of one segment sharing no buffer): fresh exact inputs,
  // the batch started and completed (no compute), every element checked, before the next
  // batch refills the buffers. Returns this rank's wrong elements.
  long long validate();

  const std::vector<LatencyStats>& launch() const { return launch_; }  // us after step start
  const std::vector<LatencyStats>& latency() const { return latency_; }
  // Forgets what launch() and latency() recorded (a new --repeat pass).
  void clear_records();

 private:
  struct InFlight {
    size_t message;
    double start_s;
    std::unique_ptr<Request> request;
  };
  void launch_message(size_t message, double step_start_s, bool record);
  // Tests every in-flight request once; completions are timed here.
  void progress(bool record);
  template <typename Done>
  void poll_until(Done&& done, bool record);
  // Until `message` (launched in this step) has completed: a Wait action.
  void wait_for(size_t message, bool record);
  void wait_all(bool record);

  Backend& be_;
  std::vector<Backend*> groups_;
  const Control& ctl_;
  const ReplayPlan& plan_;
  BufferPlan plan_buffers_;
  std::vector<Buf> buffers_;         // one per shared buffer (plan_buffers_.bytes)
  std::vector<CollArgs> args_;       // per message
  std::vector<InFlight> in_flight_;  // launch order; a completed one has no request
  size_t first_open_ = 0;            // in_flight_[0, first_open_) have completed
  std::vector<bool> open_;           // per message: launched in this step, not yet complete
  std::vector<LatencyStats> launch_, latency_;
  DummyCompute compute_;
};

}  // namespace cb::dl
