// The figures cb_replay reports, computed from measured times: per-message latency
// statistics, the per-message-size table (as Horovod's timeline or a profiler's allreduce
// table shows it) and the step accounting (exposed communication, overlap, bus bandwidth).
// Pure arithmetic, unit-tested; the runner only measures and reduces over ranks.
#pragma once

#include <cstddef>
#include <limits>
#include <string>
#include <vector>

#include "core/types.hpp"
#include "dl_patterns/replay_plan.hpp"

namespace cb::dl {

// Latency (launch to observed completion) of one message over iterations, and later ranks.
struct LatencyStats {
  double sum_us = 0;
  double min_us = std::numeric_limits<double>::infinity();
  double max_us = 0;
  double samples = 0;  // a double so that sums over ranks reduce like the others

  void add(double us);
  double avg_us() const { return samples > 0 ? sum_us / samples : 0; }
};

// One row of the per-size table: messages of one collective and size in a step.
struct SizeRow {
  Coll coll = Coll::Allreduce;
  size_t bytes = 0;
  size_t per_step = 0;  // messages of this size in one step
  LatencyStats latency;
};

// Rows ordered by collective, then size (largest first, as the big buckets matter most).
std::vector<SizeRow> size_table(const std::vector<ReplayMessage>& messages,
                                const std::vector<LatencyStats>& latency);

// Lines for the text report ("# " prefixed so the table stays machine-readable). With
// `steps` > 1 (--steps: the messages are a table's N training steps) a "Per step" column
// gives each count / N.
std::vector<std::string> size_table_lines(const std::vector<SizeRow>& rows, size_t steps = 1);

struct StepFigures {
  double step_us = 0;      // mean over iterations of the slowest rank's step
  double compute_us = 0;   // mean emulated compute per step
  double pure_us = 0;      // mean slowest-rank time of the same step without compute
  double exposed_us = 0;   // step - compute, at least 0: communication the compute did not hide
  double overlap_pct = 0;  // 100 x (1 - exposed / pure), within [0, 100]
  double busbw_GBps = 0;   // bus bytes / pure time, 10^9 B/s
};

// `bus_bytes`: the step's bytes weighted by each collective's bus factor (bus_bytes()).
StepFigures step_figures(double step_us, double compute_us, double pure_us, double bus_bytes);

// nccl-tests' bus bytes of one step over `nranks`: allreduce 2(n-1)/n x bytes; bcast and
// reduce 1 x bytes; alltoall, allgather and reduce_scatter (n-1)/n x the n-rank buffer.
double bus_bytes(const std::vector<ReplayMessage>& messages, int nranks);

}  // namespace cb::dl
