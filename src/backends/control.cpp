#include "backends/control.hpp"

#include <sched.h>
#include <unistd.h>

#include <cstdio>
#include <map>

#include "core/mpi_check.hpp"

namespace cb {

int cores_on_node() {
  const long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? static_cast<int>(n) : 1;
}

Control::Control() : Control(MPI_COMM_WORLD) {}

Control::Control(MPI_Comm group) : base_(group) {
  CB_MPI(MPI_Comm_dup(group, &comm_));
  MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);

  MPI_Comm local;
  CB_MPI(MPI_Comm_split_type(comm_, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &local));
  MPI_Comm_rank(local, &local_rank_);
  MPI_Comm_size(local, &local_size_);
  MPI_Comm_free(&local);
  CB_MPI(MPI_Allreduce(&local_size_, &max_local_size_, 1, MPI_INT, MPI_MAX, comm_));

  char name[MPI_MAX_PROCESSOR_NAME] = {};
  int len = 0;
  MPI_Get_processor_name(name, &len);
  hostname_.assign(name, static_cast<size_t>(len));
  std::vector<char> all(static_cast<size_t>(size_) * MPI_MAX_PROCESSOR_NAME);
  CB_MPI(MPI_Allgather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all.data(), MPI_MAX_PROCESSOR_NAME,
                       MPI_CHAR, comm_));
  std::map<std::string, size_t> index;
  for (int r = 0; r < size_; ++r) {
    std::string host(&all[static_cast<size_t>(r) * MPI_MAX_PROCESSOR_NAME]);
    auto [it, fresh] = index.emplace(host, hosts_.size());
    if (fresh) hosts_.push_back({host, {}});
    hosts_[it->second].second.push_back(r);
  }
  node_count_ = static_cast<int>(hosts_.size());
}

Control::~Control() {
  if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
}

void wait_request(MPI_Request& req, WaitMode mode) {
  if (mode == WaitMode::Spin) {
    CB_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
    return;
  }
  int done = 0;
  for (;;) {
    CB_MPI(MPI_Test(&req, &done, MPI_STATUS_IGNORE));
    if (done) return;
    sched_yield();
  }
}

void wait_all(std::span<MPI_Request> reqs, WaitMode mode) {
  const int n = static_cast<int>(reqs.size());
  if (mode == WaitMode::Spin) {
    CB_MPI(MPI_Waitall(n, reqs.data(), MPI_STATUSES_IGNORE));
    return;
  }
  int done = 0;
  for (;;) {
    CB_MPI(MPI_Testall(n, reqs.data(), &done, MPI_STATUSES_IGNORE));
    if (done) return;
    sched_yield();
  }
}

void Control::wait(MPI_Request& req) const {
  wait_request(req, wait_mode_);
}

void Control::barrier() const {
  if (wait_mode_ == WaitMode::Spin) {
    CB_MPI(MPI_Barrier(comm_));
    return;
  }
  MPI_Request req;
  CB_MPI(MPI_Ibarrier(comm_, &req));
  wait(req);
}

namespace {
// Reductions of results honour the wait mode too: a blocking MPI_Allreduce busy-polls.
void allreduce(const Control& ctl, const void* in, void* out, int n, MPI_Datatype type, MPI_Op op) {
  if (ctl.wait_mode() == WaitMode::Spin) {
    CB_MPI(MPI_Allreduce(in, out, n, type, op, ctl.comm()));
    return;
  }
  MPI_Request req;
  CB_MPI(MPI_Iallreduce(in, out, n, type, op, ctl.comm(), &req));
  ctl.wait(req);
}
template <typename T>
T reduce_scalar(const Control& ctl, T v, MPI_Datatype type, MPI_Op op) {
  T out{};
  allreduce(ctl, &v, &out, 1, type, op);
  return out;
}
std::vector<double> reduce_vector(const Control& ctl, const std::vector<double>& v, MPI_Op op) {
  std::vector<double> out(v.size());
  allreduce(ctl, v.data(), out.data(), static_cast<int>(v.size()), MPI_DOUBLE, op);
  return out;
}
}  // namespace

double Control::max(double v) const {
  return reduce_scalar(*this, v, MPI_DOUBLE, MPI_MAX);
}
double Control::min(double v) const {
  return reduce_scalar(*this, v, MPI_DOUBLE, MPI_MIN);
}
double Control::sum(double v) const {
  return reduce_scalar(*this, v, MPI_DOUBLE, MPI_SUM);
}
long long Control::sum(long long v) const {
  return reduce_scalar(*this, v, MPI_LONG_LONG, MPI_SUM);
}
std::vector<double> Control::max(const std::vector<double>& v) const {
  return reduce_vector(*this, v, MPI_MAX);
}
std::vector<double> Control::sum(const std::vector<double>& v) const {
  return reduce_vector(*this, v, MPI_SUM);
}

void agree(const Control& ctl, int status, const std::string& message) {
  const int worst = static_cast<int>(ctl.max(static_cast<double>(status)));
  if (worst == 0) return;
  const int mine = status != 0 ? ctl.rank() : ctl.size();
  const int reporter = static_cast<int>(ctl.min(static_cast<double>(mine)));
  if (ctl.rank() == reporter) {
    if (ctl.size() > 1 && ctl.rank() != 0)
      std::fprintf(stderr, "collbench: error (rank %d): %s\n", ctl.rank(), message.c_str());
    else
      std::fprintf(stderr, "collbench: error: %s\n", message.c_str());
    std::fflush(stderr);
  }
  throw ExitRequest{worst};
}

void agreed(const Control& ctl, const std::function<void()>& step) {
  int status = kExitOk;
  std::string message;
  try {
    step();
  } catch (const UsageError& e) {
    status = kExitUsage;
    message = e.what();
  } catch (const std::exception& e) {
    status = kExitRuntime;
    message = e.what();
  }
  agree(ctl, status, message);
}

}  // namespace cb
