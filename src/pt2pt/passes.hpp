// The two timed passes of every point-to-point runner (two-sided, one-sided, exchange),
// as OMB times them: after a barrier, warmup and then the timed loop between two clock
// reads (pass 1: the headline figure carries no timer cost); after another barrier, a clock
// read after every iteration (pass 2: the distribution OMB does not keep). A template, so
// that the iteration is inlined into the loops as it was written there.
#pragma once

#include <vector>

#include "backends/control.hpp"
#include "harness/timer.hpp"

namespace cb {

struct Passes {
  double total = 0;             // pass 1: seconds for `iters` iterations (0 where inactive)
  std::vector<double> samples;  // pass 2: seconds of each iteration (0 where inactive)
};

// Pass 1's loop: `warmup` untimed iterations, then `iters` between two clock reads;
// returns their seconds. cb_latency_mt runs it in each thread (pt2pt/workers.cpp).
template <typename Iteration>
double timed_loop(int warmup, int iters, Iteration&& iteration) {
  for (int i = 0; i < warmup; ++i) iteration();
  const double t0 = now_s();
  for (int i = 0; i < iters; ++i) iteration();
  return now_s() - t0;
}

// Pass 2's loop: a clock read after every iteration; record(i, seconds of iteration i).
template <typename Iteration, typename Record>
void sampled_loop(int iters, Iteration&& iteration, Record&& record) {
  double prev = now_s();
  for (int i = 0; i < iters; ++i) {
    iteration();
    const double t = now_s();
    record(i, t - prev);
    prev = t;
  }
}

// Ranks that are not `active` take the barriers only. `begin` and `end` run around each
// pass's loop, untimed (one-sided: the lock that flush holds over the loop).
template <typename Iteration, typename Begin, typename End>
Passes timed_passes(const Control& ctl, bool active, int warmup, int iters, Iteration&& iteration,
                    Begin&& begin, End&& end) {
  Passes p;
  p.samples.assign(static_cast<size_t>(iters), 0.0);
  ctl.barrier();
  if (active) {
    begin();
    p.total = timed_loop(warmup, iters, iteration);
    end();
  }
  ctl.barrier();
  if (active) {
    begin();
    sampled_loop(iters, iteration,
                 [&p](int i, double s) { p.samples[static_cast<size_t>(i)] = s; });
    end();
  }
  return p;
}

template <typename Iteration>
Passes timed_passes(const Control& ctl, bool active, int warmup, int iters, Iteration&& iteration) {
  const auto nothing = [] {};
  return timed_passes(ctl, active, warmup, iters, iteration, nothing, nothing);
}

}  // namespace cb
