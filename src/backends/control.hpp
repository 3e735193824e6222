// The harness's own MPI control plane: rank layout, barriers, agreement and reductions of
// results. Separate from any backend's communicator so that control traffic never
// matches a benchmark's messages.
#pragma once

#include <mpi.h>

#include <functional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "backends/backend.hpp"

namespace cb {

class Control {
 public:
  Control();  // duplicates MPI_COMM_WORLD
  // The control plane of a sub-communicator's ranks (cb_replay's process groups): duplicates
  // `group`, and the backends made with it run on `group`'s ranks (base()). `group` must
  // outlive it. Collective over `group`.
  explicit Control(MPI_Comm group);
  ~Control();
  Control(const Control&) = delete;
  Control& operator=(const Control&) = delete;

  MPI_Comm comm() const { return comm_; }
  // What the backends made with this control duplicate for their own communicator:
  // MPI_COMM_WORLD, or the group of Control(MPI_Comm).
  MPI_Comm base() const { return base_; }
  int rank() const { return rank_; }
  int size() const { return size_; }
  bool is_root() const { return rank_ == 0; }
  int local_rank() const { return local_rank_; }  // from MPI's shared-memory split
  int local_size() const { return local_size_; }
  int node_count() const { return node_count_; }
  int max_ranks_per_node() const { return max_local_size_; }
  const std::string& hostname() const { return hostname_; }
  // Hosts in order of first rank, with the ranks on each.
  const std::vector<std::pair<std::string, std::vector<int>>>& hosts() const { return hosts_; }

  WaitMode wait_mode() const { return wait_mode_; }
  void set_wait_mode(WaitMode m) { wait_mode_ = m; }
  // Completes a request honouring the wait mode.
  void wait(MPI_Request& req) const;
  void barrier() const;

  double max(double v) const;
  double min(double v) const;
  double sum(double v) const;
  long long sum(long long v) const;
  // Element-wise over ranks, result on every rank.
  std::vector<double> max(const std::vector<double>& v) const;
  std::vector<double> sum(const std::vector<double>& v) const;

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
  MPI_Comm base_ = MPI_COMM_WORLD;
  int rank_ = 0, size_ = 1, local_rank_ = 0, local_size_ = 1, node_count_ = 1, max_local_size_ = 1;
  std::string hostname_;
  std::vector<std::pair<std::string, std::vector<int>>> hosts_;
  WaitMode wait_mode_ = WaitMode::Spin;
};

// Spin on MPI_Test, or MPI_Test + sched_yield() in yield mode.
void wait_request(MPI_Request& req, WaitMode mode);
void wait_all(std::span<MPI_Request> reqs, WaitMode mode);

// Every rank calls this at the same point. If any rank failed, the lowest failing rank
// prints its message (one line) and every rank throws ExitRequest with the worst status.
// `status` is 0 on success; `message` is printed only when status != 0.
void agree(const Control& ctl, int status, const std::string& message);

// Runs a local step on every rank and agrees on its outcome: a UsageError is status 2,
// any other exception status 3 (see agree()). No rank goes on into a collective call
// that a failed rank will never make.
void agreed(const Control& ctl, const std::function<void()>& step);

// Logical processors on this node (the limit for busy-polling ranks).
int cores_on_node();

}  // namespace cb
