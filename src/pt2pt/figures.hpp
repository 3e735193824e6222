// The figures of one message size that the two-sided and the one-sided runners share:
// OMB's headline from pass 1 (total time of the timed loop), the distribution from pass 2
// (one time per iteration), as JSON record fields and table cells.
#pragma once

#include <vector>

#include "harness/options.hpp"
#include "harness/runner.hpp"
#include "harness/stats.hpp"

namespace cb {

// iteration_us, and latency_us with avg = total / (ops_per_iteration x iterations) (OMB's
// figure) and the distribution divided alike; the Latency (us), -f and -z columns.
void latency_figures(const Options& o, int iters, double total_s,
                     const std::vector<double>& per_iter_s, double ops_per_iteration,
                     SizeOutcome& out);

// iteration_us, bandwidth_MBps (MB per iteration x iterations / total), bandwidth_GBps and
// the bandwidth at the iteration-time percentiles; no table cell (the caller's headline).
struct BandwidthFigures {
  double mbps = 0;
  double mb_per_iteration = 0;
  Summary iteration_us;
};
BandwidthFigures bandwidth_figures(const Options& o, int iters, double total_s,
                                   const std::vector<double>& per_iter_s, double mb_per_iteration,
                                   SizeOutcome& out);
// The -f (min, max bandwidth, iterations) and -z columns after the headline.
void bandwidth_detail_cells(const Options& o, int iters, const BandwidthFigures& f,
                            SizeOutcome& out);

}  // namespace cb
