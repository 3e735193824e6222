#include "dl_patterns/replay_step.hpp"

#include <sched.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <utility>

#include "core/coll_spec.hpp"
#include "gpu/memory.hpp"
#include "harness/fault.hpp"
#include "harness/timer.hpp"

namespace cb::dl {

CollArgs message_args(const ReplayMessage& m, Mem mem, const std::string& algo) {
  CollArgs a;
  a.coll = m.coll;
  a.count = m.count;
  a.dtype = m.dtype;
  a.op = m.op;
  a.root = m.root;
  a.counts = m.counts.get();
  a.in_place = replayed_in_place(m.coll);
  a.send.mem = a.recv.mem = mem;
  if (m.coll == Coll::Allreduce) a.algo = algo;
  return a;
}

StepRunner::StepRunner(Backend& be, const Control& ctl, const ReplayPlan& plan,
                       const BufferPlan& buffers, Mem mem, const std::string& algo,
                       std::vector<Backend*> groups)
    : be_(be), groups_(std::move(groups)), ctl_(ctl), plan_(plan), plan_buffers_(buffers) {
  const int n = ctl.size();
  if (groups_.size() != plan.groups.size())
    throw std::logic_error("StepRunner: a backend (or null) per process group expected");
  for (size_t bytes : plan_buffers_.bytes) buffers_.push_back(be.alloc(bytes, mem));
  for (size_t k = 0; k < plan.messages.size(); ++k) {
    const ReplayMessage& m = plan.messages[k];
    const BufferElements e = buffer_elements(m, plan.ranks_of(m, n));
    const size_t width = dtype_size(m.dtype);
    const Buf& buf = buffers_.at(plan_buffers_.buffer_of.at(k));
    CollArgs a = message_args(m, buf.mem, algo);
    a.recv = buf.slice(0, e.recv * width);
    a.send = a.in_place ? a.recv : e.send ? buf.slice(e.recv * width, e.send * width) : Buf{};
    args_.push_back(a);
  }
  open_.assign(plan.messages.size(), false);
  launch_.resize(plan.messages.size());
  latency_.resize(plan.messages.size());
}

void StepRunner::clear_records() {
  launch_.assign(launch_.size(), LatencyStats{});
  latency_.assign(latency_.size(), LatencyStats{});
}

StepRunner::~StepRunner() {
  in_flight_.clear();  // requests complete before their buffers go
  for (Buf& b : buffers_) be_.free(b);
}

Backend* StepRunner::backend_of(size_t message) const {
  const int g = plan_.messages.at(message).group;
  return g < 0 ? &be_ : groups_.at(static_cast<size_t>(g));
}

void StepRunner::launch_message(size_t message, double step_start_s, bool record) {
  Backend* be = backend_of(message);
  if (!be) return;  // not in the message's process group
  // Its buffer's previous user, if still running, must finish first (share_buffers()).
  if (const size_t before = plan_buffers_.waits_for.at(message); before != SIZE_MAX)
    wait_for(before, record);
  const double start = now_s();
  in_flight_.push_back({message, start, be->start(args_[message])});
  open_[message] = true;
  if (record) launch_[message].add((start - step_start_s) * 1e6);
}

void StepRunner::progress(bool record) {
  for (size_t i = first_open_; i < in_flight_.size(); ++i) {
    InFlight& f = in_flight_[i];
    if (!f.request || !f.request->test()) continue;
    if (record) latency_[f.message].add((now_s() - f.start_s) * 1e6);
    f.request.reset();
    open_[f.message] = false;
  }
  while (first_open_ < in_flight_.size() && !in_flight_[first_open_].request) ++first_open_;
}

template <typename Done>
void StepRunner::poll_until(Done&& done, bool record) {
  // Spinning first and then yielding, as the engine waits: a descheduled peer gets the
  // core back sooner on a crowded node.
  constexpr int kSpinPolls = 2000;
  const bool yield = ctl_.wait_mode() == WaitMode::Yield;
  for (int polls = 0; !done(); ++polls) {
    progress(record);
    if (!done() && (yield || polls >= kSpinPolls)) sched_yield();
  }
}

void StepRunner::wait_for(size_t message, bool record) {
  // Completed, or never launched in this step: nothing to wait for.
  poll_until([&] { return !open_.at(message); }, record);
}

void StepRunner::wait_all(bool record) {
  poll_until([&] { return first_open_ == in_flight_.size(); }, record);
  be_.sync();
  for (Backend* g : groups_)
    if (g) g->sync();
  in_flight_.clear();
  first_open_ = 0;
  open_.assign(open_.size(), false);
}

StepSample StepRunner::run(const std::vector<ReplayAction>& actions, bool record) {
  using Kind = ReplayAction::Kind;
  StepSample s;
  ctl_.barrier();
  const double t0 = now_s();
  for (const ReplayAction& a : actions) {
    switch (a.kind) {
      case Kind::Compute:
        // Slices, with the in-flight collectives tested after each: a library without
        // asynchronous progress moves only inside such calls.
        for (double left = a.us * 1e-6; left > 0;) {
          const double done = compute_.run_for(std::min(left, kProgressSliceUs * 1e-6));
          s.compute_us += done * 1e6;
          left -= done;
          progress(record);
        }
        break;
      case Kind::Idle: {
        const double idle0 = now_s(), until = idle0 + a.us * 1e-6;
        while (now_s() < until) {
          progress(record);
          if (ctl_.wait_mode() == WaitMode::Yield) sched_yield();
        }
        s.idle_us += (now_s() - idle0) * 1e6;
        break;
      }
      case Kind::Launch:
        launch_message(a.message, t0, record);
        break;
      case Kind::WaitAll:
        wait_all(record);
        break;
      case Kind::Wait:
        wait_for(a.message, record);
        break;
    }
  }
  s.step_us = (now_s() - t0) * 1e6;
  return s;
}

long long StepRunner::validate() {
  long long wrong = 0;
  bool corrupt = injected_fault() == Fault::Corrupt;
  // A shared buffer holds one message at a time: each batch is filled, run and checked
  // before the next one refills its buffers (no message of a batch waits for another).
  for (const auto& [first, end] : validation_batches(plan_, plan_buffers_)) {
    for (size_t k = first; k < end; ++k) {  // inputs of the whole batch before any starts
      const Backend* be = backend_of(k);
      if (!be) continue;                            // skipped here
      const int n = be->size(), rank = be->rank();  // in the message's group
      const CollArgs& a = args_[k];
      const CollSpec& spec = *find_coll_spec(a.coll);
      const size_t width = dtype_size(a.dtype);
      std::vector<std::byte> send(spec.send_elements_of(a, n) * width);
      std::vector<std::byte> recv(spec.recv_elements_of(a, n) * width);
      spec.fill(a, rank, n, send.data(), recv.data());
      if (!send.empty()) write_buffer(a.send, send);
      write_buffer(a.recv, recv);
    }
    ctl_.barrier();
    for (size_t k = first; k < end; ++k) launch_message(k, 0, false);
    wait_all(false);
    for (size_t k = first; k < end; ++k) {
      const Backend* be = backend_of(k);
      if (!be) continue;
      const int n = be->size(), rank = be->rank();
      const CollArgs& a = args_[k];
      if (corrupt) corrupt_first_byte(a.recv);  // CB_TEST_FAULT=corrupt: -c must notice
      corrupt = false;
      wrong += static_cast<long long>(
          find_coll_spec(a.coll)->check(a, rank, n, read_buffer(a.recv).data()));
    }
  }
  return wrong;
}

}  // namespace cb::dl
