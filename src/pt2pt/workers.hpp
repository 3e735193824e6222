// cb_latency_mt and cb_latency_mp: OMB's -t [SENDERS:]RECEIVERS on the two ranks of a
// ping-pong. Threads each ping-pong on their own (osu_latency_mt, MPI_THREAD_MULTIPLE);
// processes are fork()ed children that only sleep while the ranks ping-pong, as OMB's
// osu_latency_mp (what it measures is the latency of ranks that have forked).
#pragma once

#include <mpi.h>
#include <sys/types.h>

#include <string>
#include <vector>

#include "harness/options.hpp"
#include "pt2pt/passes.hpp"
#include "pt2pt/pt2pt.hpp"

namespace cb {

struct WorkerCounts {
  int sender = 0;
  int receiver = 0;
};
// OMB's defaults (threads 1:2, processes 0:2) where -t did not set a side (`given` 0).
WorkerCounts worker_counts(Workers kind, const int given[2]);
// Every other point-to-point benchmark: throws UsageError when -t was given.
void refuse_workers(const Options& o);
// cb_latency_mt's threads call MPI themselves, on host buffers: throws UsageError unless the
// backend is mpi, `mem` host and the library gave MPI_THREAD_MULTIPLE.
void check_threads(const Backend& be, Mem mem, const std::string& exe);

// One rank's side of osu_latency_mt. Thread t of T takes iterations t, t + T, ... (OMB's
// split of the iterations), numbered on through warmup and both passes. With one sender
// thread the tags are fixed, so any receiver thread takes the next ping (OMB); with more,
// each iteration has its own tag, repeating every lcm(senders, receivers) iterations, so
// that two iterations with one tag always belong to the same two threads, in order.
struct ThreadedPingPong {
  Role role = Role::Idle;
  int peer = -1;
  MPI_Comm comm = MPI_COMM_NULL;
  WaitMode wait = WaitMode::Spin;
  WorkerCounts counts;
  Buf send;               // shared by this rank's threads (sends only read it)
  std::vector<Buf> recv;  // one per thread of this rank
  int threads() const { return role == Role::Sender ? counts.sender : counts.receiver; }
};

// How cb_latency_mt's threads wait: the run's mode, except that --wait auto also yields when
// this node has more polling threads (rank 0: the sender threads, rank 1: the receiver
// threads) than cores, as it does for ranks; `note` then says so for the header.
WaitMode thread_wait_mode(const Control& ctl, WaitSetting setting, const WorkerCounts& counts,
                          std::string& note);

// timed_passes() with threads: pass 1 total = the sum over this rank's threads of their
// timed loops (the round trips' time, as each thread sees it); pass 2 sample i = the time of
// iteration warmup + iters + i in the thread that ran it.
Passes threaded_passes(const Control& ctl, const ThreadedPingPong& pp, int warmup, int iters);
// Whether thread t received anything in `iterations` (warmup + both passes).
bool thread_received(int t, int threads, long iterations);

// osu_latency_mp's children: fork()ed at construction (RuntimeError if fork fails); each
// blocks on a pipe until this process closes it, in the destructor (which reaps them) or by
// exiting, so a rank that is killed leaves none behind.
class ForkedChildren {
 public:
  explicit ForkedChildren(int count);
  ~ForkedChildren();
  ForkedChildren(const ForkedChildren&) = delete;
  ForkedChildren& operator=(const ForkedChildren&) = delete;

 private:
  void release();  // closes the pipe, reaps the children
  int write_fd_ = -1;
  std::vector<pid_t> pids_;
};

}  // namespace cb
