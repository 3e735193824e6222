#include "pt2pt/workers.hpp"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <exception>
#include <mutex>
#include <numeric>
#include <string>
#include <thread>

#include "core/errors.hpp"
#include "core/mpi_check.hpp"

namespace cb {

WorkerCounts worker_counts(Workers kind, const int given[2]) {
  WorkerCounts c = kind == Workers::Threads ? WorkerCounts{1, 2} : WorkerCounts{0, 2};
  if (given[0] > 0) c.sender = given[0];
  if (given[1] > 0) c.receiver = given[1];
  return c;
}

void refuse_workers(const Options& o) {
  if (o.workers[0] || o.workers[1])
    throw UsageError("-t applies to cb_latency_mt (threads) and cb_latency_mp (processes) only");
}

namespace {
std::string thread_level_name(int level) {
  switch (level) {
    case MPI_THREAD_SINGLE:
      return "MPI_THREAD_SINGLE";
    case MPI_THREAD_FUNNELED:
      return "MPI_THREAD_FUNNELED";
    case MPI_THREAD_SERIALIZED:
      return "MPI_THREAD_SERIALIZED";
    default:
      return "thread level " + std::to_string(level);
  }
}
}  // namespace

void check_threads(const Backend& be, Mem mem, const std::string& exe) {
  if (be.name() != "mpi")
    throw UsageError("--backend " + be.name() + ": " + exe +
                     " runs MPI ping-pongs from several threads; only --backend mpi has them");
  if (mem != Mem::Host) throw UsageError(exe + " takes host buffers only (H H)");
  int level = MPI_THREAD_SINGLE;
  CB_MPI(MPI_Query_thread(&level));
  if (level < MPI_THREAD_MULTIPLE)
    throw UsageError(exe + " needs MPI_THREAD_MULTIPLE (threads that call MPI at once); this " +
                     "MPI library provides only " + thread_level_name(level));
}

WaitMode thread_wait_mode(const Control& ctl, WaitSetting setting, const WorkerCounts& counts,
                          std::string& note) {
  if (setting != WaitSetting::Auto || ctl.wait_mode() == WaitMode::Yield) return ctl.wait_mode();
  int polling = 0;
  for (const auto& [host, ranks] : ctl.hosts())
    if (host == ctl.hostname())
      for (int r : ranks) polling += r == 0 ? counts.sender : counts.receiver;
  const int cores = cores_on_node();
  if (polling <= cores) return WaitMode::Spin;
  note = "# Threads wait: yield (" + std::to_string(polling) + " polling threads on " +
         std::to_string(cores) + " cores; --wait spin spins)";
  return WaitMode::Yield;
}

namespace {

constexpr int kPingTag = 1;  // OMB's tags with one sender thread
constexpr int kPongTag = 2;
constexpr int kIterationTagBase = 16;  // more sender threads: 16 + iteration % period

// Iterations t, t + T, ... below `to`.
long own_below(int t, int threads, long to) {
  return to > t ? (to - t + threads - 1) / threads : 0;
}
long own_in(int t, int threads, long from, long to) {
  return own_below(t, threads, to) - own_below(t, threads, from);
}

// Blocking calls as OMB's; in yield mode a non-blocking one and a yielding wait, so that
// threads of ranks that share cores let each other run.
void transfer(bool send, const Buf& b, int tag, const ThreadedPingPong& pp) {
  const int n = static_cast<int>(b.bytes);
  if (pp.wait == WaitMode::Spin) {
    if (send)
      CB_MPI(MPI_Send(b.ptr, n, MPI_BYTE, pp.peer, tag, pp.comm));
    else
      CB_MPI(MPI_Recv(b.ptr, n, MPI_BYTE, pp.peer, tag, pp.comm, MPI_STATUS_IGNORE));
    return;
  }
  MPI_Request req = MPI_REQUEST_NULL;
  if (send)
    CB_MPI(MPI_Isend(b.ptr, n, MPI_BYTE, pp.peer, tag, pp.comm, &req));
  else
    CB_MPI(MPI_Irecv(b.ptr, n, MPI_BYTE, pp.peer, tag, pp.comm, &req));
  wait_request(req, pp.wait);
}

void round_trip(const ThreadedPingPong& pp, int t, long index, long period) {
  int ping = kPingTag, pong = kPongTag;
  if (pp.counts.sender > 1) ping = pong = kIterationTagBase + static_cast<int>(index % period);
  const Buf& in = pp.recv[static_cast<size_t>(t)];
  if (pp.role == Role::Sender) {
    transfer(true, pp.send, ping, pp);
    transfer(false, in, pong, pp);
  } else {
    transfer(false, in, ping, pp);
    transfer(true, pp.send, pong, pp);
  }
}

// Runs body(t) on `n` threads and rethrows the first exception one of them threw.
template <typename Body>
void on_threads(int n, Body&& body) {
  std::exception_ptr failed;
  std::mutex m;
  std::vector<std::thread> threads;
  for (int t = 0; t < n; ++t)
    threads.emplace_back([&, t] {
      try {
        body(t);
      } catch (...) {
        const std::lock_guard<std::mutex> lock(m);
        if (!failed) failed = std::current_exception();
      }
    });
  for (std::thread& th : threads) th.join();
  if (failed) std::rethrow_exception(failed);
}

}  // namespace

Passes threaded_passes(const Control& ctl, const ThreadedPingPong& pp, int warmup, int iters) {
  Passes p;
  p.samples.assign(static_cast<size_t>(iters), 0.0);
  const int n = pp.threads();
  const long period = std::lcm(static_cast<long>(pp.counts.sender), pp.counts.receiver);
  const long pass1 = long{warmup} + iters;  // iterations of pass 1; pass 2 numbers on
  std::vector<double> totals(static_cast<size_t>(n), 0.0);
  ctl.barrier();
  on_threads(n, [&](int t) {
    long index = t;
    totals[static_cast<size_t>(t)] = timed_loop(static_cast<int>(own_in(t, n, 0, warmup)),
                                                static_cast<int>(own_in(t, n, warmup, pass1)), [&] {
                                                  round_trip(pp, t, index, period);
                                                  index += n;
                                                });
  });
  p.total = std::accumulate(totals.begin(), totals.end(), 0.0);
  ctl.barrier();
  on_threads(n, [&](int t) {
    const long first = t + own_below(t, n, pass1) * n;  // its first index of pass 2
    long index = first;
    sampled_loop(
        static_cast<int>(own_in(t, n, pass1, pass1 + iters)),
        [&] {
          round_trip(pp, t, index, period);
          index += n;
        },
        [&](int k, double s) { p.samples[static_cast<size_t>(first + long{k} * n - pass1)] = s; });
  });
  return p;
}

bool thread_received(int t, int threads, long iterations) {
  return own_below(t, threads, iterations) > 0;
}

ForkedChildren::ForkedChildren(int count) {
  if (count <= 0) return;
  int fds[2];
  if (pipe(fds) != 0)
    throw RuntimeError(std::string("pipe() for the forked processes failed: ") +
                       std::strerror(errno));
  for (int i = 0; i < count; ++i) {
    const pid_t pid = fork();
    if (pid == 0) {
      // The child: only async-signal-safe calls (this process may have other threads),
      // no MPI, no exit handlers. It leaves signals to their default action and waits for
      // the end of the pipe.
      signal(SIGINT, SIG_DFL);
      signal(SIGTERM, SIG_DFL);
      close(fds[1]);
      char c = 0;
      while (read(fds[0], &c, 1) < 0 && errno == EINTR) {
      }
      _exit(0);
    }
    if (pid < 0) {
      const int err = errno;
      close(fds[0]);
      write_fd_ = fds[1];
      release();
      throw RuntimeError("fork() of forked process " + std::to_string(i + 1) + " of " +
                         std::to_string(count) + " failed: " + std::strerror(err));
    }
    pids_.push_back(pid);
  }
  close(fds[0]);
  write_fd_ = fds[1];
}

ForkedChildren::~ForkedChildren() {
  release();
}

void ForkedChildren::release() {
  if (write_fd_ >= 0) close(write_fd_);
  write_fd_ = -1;
  for (pid_t pid : pids_)
    while (waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
    }
  pids_.clear();
}

}  // namespace cb
