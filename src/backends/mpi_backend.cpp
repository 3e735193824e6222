#include "backends/mpi_backend.hpp"

#include <cstdlib>

#include <nlohmann/json.hpp>

#include "core/mpi_check.hpp"
#include "core/vcounts.hpp"
#include "engine/mpi_collective.hpp"
#include "engine/mpi_half_op.hpp"
#include "engine/mpi_library_info.hpp"
#include "gpu/device.hpp"

namespace cb {
namespace {

class MpiRequest final : public Request {
 public:
  MpiRequest(MPI_Request req, WaitMode mode) : req_(req), mode_(mode) {}
  ~MpiRequest() override {
    if (req_ != MPI_REQUEST_NULL) MPI_Wait(&req_, MPI_STATUS_IGNORE);
  }
  bool test() override {
    int done = 0;
    CB_MPI(MPI_Test(&req_, &done, MPI_STATUS_IGNORE));
    return done != 0;
  }
  void wait() override { wait_request(req_, mode_); }

 private:
  MPI_Request req_;
  WaitMode mode_;
};

// --staging: the operation runs on host copies; the result goes back to the device buffer
// once it completes.
class StagedRequest final : public Request {
 public:
  StagedRequest(const Buf& device_result, WaitMode mode) : result_(device_result), mode_(mode) {}
  ~StagedRequest() override {
    if (req_ != MPI_REQUEST_NULL) MPI_Wait(&req_, MPI_STATUS_IGNORE);
  }
  void start(MPI_Request req) { req_ = req; }
  bool test() override {
    if (copied_) return true;
    int done = 0;
    CB_MPI(MPI_Test(&req_, &done, MPI_STATUS_IGNORE));
    if (done) finish();
    return done != 0;
  }
  void wait() override {
    if (copied_) return;
    wait_request(req_, mode_);
    finish();
  }
  std::vector<std::byte> in, out;

 private:
  void finish() {
    if (result_.bytes) gpu::copy(result_.ptr, out.data(), result_.bytes);
    copied_ = true;
  }
  Buf result_;
  WaitMode mode_;
  MPI_Request req_ = MPI_REQUEST_NULL;
  bool copied_ = false;
};

// MPI_<Coll>_init's request: started and waited for each time, freed at the end. It keeps
// its own count arrays, which MPI may read until the request is freed.
class MpiPersistent final : public PersistentColl {
 public:
  MpiPersistent(const CollArgs& a, MPI_Comm comm, int rank, WaitMode mode) : mode_(mode) {
    req_ = call_mpi_collective(MpiForm::Persistent, a, comm, rank, counts_);
  }
  ~MpiPersistent() override {
    if (req_ != MPI_REQUEST_NULL) MPI_Request_free(&req_);
  }
  void start() override { CB_MPI(MPI_Start(&req_)); }
  void wait() override { wait_request(req_, mode_); }

 private:
  MpiCountArrays counts_;
  WaitMode mode_;
  MPI_Request req_ = MPI_REQUEST_NULL;
};

}  // namespace

MpiBackend::MpiBackend(const Control& ctl, bool staging)
    : Backend(BackendKind::Mpi),
      wait_(ctl.wait_mode()),
      cuda_aware_(mpi_is_cuda_aware()),
      staging_(staging) {
  CB_MPI(MPI_Comm_dup(ctl.base(), &comm_));
  MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
  int rank = 0, size = 1;
  MPI_Comm_rank(comm_, &rank);
  MPI_Comm_size(comm_, &size);
  set_layout(rank, size);
}

MpiBackend::~MpiBackend() {
  for (auto& [topology, graph] : graphs_) MPI_Comm_free(&graph);
  if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
}

BackendDescription MpiBackend::description() const {
  BackendDescription d{staging_ ? "MPI (host staging)" : "MPI", mpi_library_version(), {}};
  describe_mpi_cuda_awareness(d.facts);
  d.facts["staging"] = staging_;
  return d;
}

std::string MpiBackend::unsupported_memory(Mem mem) const {
  if (mem == Mem::Cuda && !cuda_aware_ && !staging_)
    return "this MPI library is not CUDA-aware (MPIX_Query_cuda_support() says so): add "
           "--staging to copy device buffers through host memory around each call, or use "
           "--backend engine or nccl";
  return {};
}

namespace {

// --staging: a host copy of a device buffer (`copy_in`: with its current contents).
Buf to_host(const Buf& b, std::vector<std::byte>& store, bool copy_in) {
  store.resize(b.bytes);
  if (copy_in && b.bytes) gpu::copy(store.data(), b.ptr, b.bytes);
  return {store.data(), b.bytes, Mem::Host};
}

void to_device(const Buf& b, const std::vector<std::byte>& store) {
  if (b.bytes) gpu::copy(b.ptr, store.data(), b.bytes);
}

}  // namespace

void MpiBackend::send(const Buf& dev, int peer, int tag) {
  if (stage_.empty()) stage_.resize(1);
  const Buf buf = staged(dev.mem) ? to_host(dev, stage_[0], true) : dev;
  const int n = as_mpi_count(buf.bytes);
  if (wait_ == WaitMode::Spin) {
    CB_MPI(MPI_Send(buf.ptr, n, MPI_BYTE, peer, tag, comm_));
    return;
  }
  MPI_Request req;
  CB_MPI(MPI_Isend(buf.ptr, n, MPI_BYTE, peer, tag, comm_, &req));
  wait_request(req, wait_);
}

void MpiBackend::recv(const Buf& dev, int peer, int tag) {
  if (stage_.empty()) stage_.resize(1);
  const Buf buf = staged(dev.mem) ? to_host(dev, stage_[0], false) : dev;
  const int n = as_mpi_count(buf.bytes);
  if (wait_ == WaitMode::Spin) {
    CB_MPI(MPI_Recv(buf.ptr, n, MPI_BYTE, peer, tag, comm_, MPI_STATUS_IGNORE));
  } else {
    MPI_Request req;
    CB_MPI(MPI_Irecv(buf.ptr, n, MPI_BYTE, peer, tag, comm_, &req));
    wait_request(req, wait_);
  }
  if (staged(dev.mem)) to_device(dev, stage_[0]);
}

void MpiBackend::batch(std::span<const P2POp> ops) {
  reqs_.resize(ops.size());
  if (stage_.size() < ops.size()) stage_.resize(ops.size());
  for (size_t i = 0; i < ops.size(); ++i) {
    const P2POp& op = ops[i];
    const bool sending = op.kind == P2POp::Kind::Send;
    const Buf buf = staged(op.buf.mem) ? to_host(op.buf, stage_[i], sending) : op.buf;
    const int n = as_mpi_count(buf.bytes);
    if (sending)
      CB_MPI(MPI_Isend(buf.ptr, n, MPI_BYTE, op.peer, op.tag, comm_, &reqs_[i]));
    else
      CB_MPI(MPI_Irecv(buf.ptr, n, MPI_BYTE, op.peer, op.tag, comm_, &reqs_[i]));
  }
  wait_all(reqs_, wait_);
  for (size_t i = 0; i < ops.size(); ++i)
    if (ops[i].kind == P2POp::Kind::Recv && staged(ops[i].buf.mem))
      to_device(ops[i].buf, stage_[i]);
}

std::string MpiBackend::refuses(const CollArgs& a) const {
  if (const std::string why = unsupported_memory(a.recv.mem); !why.empty()) return why;
  if (!a.algo.empty())
    return "--algo selects engine algorithms; the mpi backend calls the MPI library, which "
           "chooses its own (for MPICH see MPIR_CVAR_<COLL>_INTRA_ALGORITHM)";
  return mpi_collective_refuses(a);
}

std::string MpiBackend::persistent_refuses(const CollArgs& a) const {
  if (staged(a.recv.mem))
    return "--staging copies device buffers around each call, which a persistent operation "
           "(made once) cannot: run the blocking benchmark with --staging";
  return mpi_persistent_refuses(a);
}

std::unique_ptr<PersistentColl> MpiBackend::init(const CollArgs& a) {
  return std::make_unique<MpiPersistent>(a, comm_for(a), rank(), wait_);
}

void MpiBackend::use_topology(const Topology& t) {
  if (!graphs_.count(&t)) graphs_[&t] = make_graph_comm(comm_, t, rank());
}

// On the collective's own communicator, as OMB's MPI_Barrier(MPI_COMM_WORLD) after each
// MPI_Bcast: a barrier on a second communicator touches a second set of the library's
// shared-memory collective state in every iteration, which OMB's loop does not.
void MpiBackend::iteration_barrier(const Control& ctl) {
  if (wait_ == WaitMode::Spin) {
    CB_MPI(MPI_Barrier(comm_));
    return;
  }
  MPI_Request req;
  CB_MPI(MPI_Ibarrier(comm_, &req));
  ctl.wait(req);
}

MPI_Comm MpiBackend::comm_for(const CollArgs& a) const {
  if (!a.topology) return comm_;
  const auto it = graphs_.find(a.topology);
  if (it == graphs_.end()) throw RuntimeError("a neighborhood collective before use_topology()");
  return it->second;
}

std::string MpiBackend::reduction_note(Dtype dt, Op op) const {
  return "MPI_Op: " + mpi_reduction_description(dt, op);
}

MPI_Request MpiBackend::post(const CollArgs& a) {
  return post_mpi_collective(a, comm_for(a), rank(), a.counts ? varrays_[a.counts] : no_counts_);
}

namespace {
// The same collective on host copies of device buffers (--staging). The result buffer is
// copied in too when it holds input (in place, bcast).
CollArgs staged_args(const CollArgs& a, std::vector<std::byte>& in, std::vector<std::byte>& out) {
  CollArgs h = a;
  h.recv = to_host(a.recv, out, a.in_place || a.coll == Coll::Bcast);
  h.send = a.in_place ? h.recv : to_host(a.send, in, true);
  return h;
}
}  // namespace

void MpiBackend::run(const CollArgs& a) {
  if (!staged(a.recv.mem)) return run_host(a);
  if (stage_.size() < 2) stage_.resize(2);
  run_host(staged_args(a, stage_[0], stage_[1]));
  to_device(a.recv, stage_[1]);
}

std::function<void()> MpiBackend::bind(const CollArgs& a) {
  if (staged(a.recv.mem) || wait_ == WaitMode::Yield) return Backend::bind(a);
  return bind_mpi_collective(a, comm_for(a), rank(), a.counts ? varrays_[a.counts] : no_counts_);
}

void MpiBackend::run_host(const CollArgs& a) {
  if (wait_ == WaitMode::Yield) {  // blocking MPI calls busy-poll; post and yield instead
    MPI_Request req = post(a);
    wait_request(req, wait_);
    return;
  }
  run_mpi_collective(a, comm_for(a), rank(), a.counts ? varrays_[a.counts] : no_counts_);
}

std::unique_ptr<Request> MpiBackend::start(const CollArgs& a) {
  if (!staged(a.recv.mem)) return std::make_unique<MpiRequest>(post(a), wait_);
  auto req = std::make_unique<StagedRequest>(a.recv, wait_);
  req->start(post(staged_args(a, req->in, req->out)));
  return req;
}

}  // namespace cb
