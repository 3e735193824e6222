#include "backends/mpi_backend.hpp"

#include <cstdlib>

#include <nlohmann/json.hpp>

#include "gpu/device.hpp"
#include "backends/mpi_half_op.hpp"
#include "backends/mpi_library.hpp"
#include "core/mpi_check.hpp"
#include "core/vcounts.hpp"

namespace cb {
namespace {

int as_count(size_t n) {
  if (n > static_cast<size_t>(INT32_MAX))
    throw UsageError("message of " + std::to_string(n) + " elements exceeds MPI's int count");
  return static_cast<int>(n);
}

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

}  // namespace

MpiBackend::MpiBackend(const Control& ctl, bool staging)
    : Backend(BackendKind::Mpi),
      wait_(ctl.wait_mode()),
      cuda_aware_(mpi_is_cuda_aware()),
      staging_(staging) {
  CB_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &comm_));
  MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
  int rank = 0, size = 1;
  MPI_Comm_rank(comm_, &rank);
  MPI_Comm_size(comm_, &size);
  set_layout(rank, size);
}

MpiBackend::~MpiBackend() {
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
  const int n = as_count(buf.bytes);
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
  const int n = as_count(buf.bytes);
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
    const int n = as_count(buf.bytes);
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
  // MPICH 4.0's device-level (ch4) reduce reads MPI_IN_PLACE as a buffer at a root other
  // than 0 above 2 KiB and crashes (SIGSEGV at 0xffffffffffffffff); its MPIR algorithms
  // are right. Say so rather than crash.
  const char* device_coll = std::getenv("MPIR_CVAR_REDUCE_DEVICE_COLLECTIVE");
  if (a.coll == Coll::Reduce && a.in_place && a.root != 0 &&
      a.count * dtype_size(a.dtype) > 2048 && !(device_coll && std::string(device_coll) == "0") &&
      mpi_library_version().find("MPICH Version: 4.0") != std::string::npos)
    return "MPICH 4.0's ch4 MPI_Reduce crashes with MPI_IN_PLACE at a root other than 0 above "
           "2 KiB; set MPIR_CVAR_REDUCE_DEVICE_COLLECTIVE=0 (its MPIR algorithms are correct), "
           "use root 0, or leave out -l";
  return {};
}

std::string MpiBackend::reduction_note(Dtype dt, Op op) const {
  return "MPI_Op: " + mpi_reduction_description(dt, op);
}

namespace {
// A collective's arguments in MPI's terms (mpi_half_op.hpp: half and bfloat16 travel as a
// contiguous 2-byte type and reduce with collbench's MPI_Op).
struct MpiCall {
  const void* in;
  void* out;
  int count;
  MPI_Datatype type;
  MPI_Op op;
};
MpiCall mpi_call(const CollArgs& a, int rank) {
  const MpiReduction r = mpi_datatype_and_op(a.dtype, a.op);
  const void* in = a.in_place ? MPI_IN_PLACE : a.send.ptr;
  void* out = a.recv.ptr;
  // Reduce: MPI_IN_PLACE is the root's alone; the others send from recv, their input, and
  // pass no receive buffer (insignificant there; the same buffer twice would alias).
  if (a.coll == Coll::Reduce && a.in_place && rank != a.root) {
    in = a.recv.ptr;
    out = nullptr;
  }
  return {in, out, as_count(a.count), r.type, r.op};
}
}  // namespace

// MPI_Alltoallv's count and displacement arrays for a count matrix, built once per matrix
// and left untouched while an MPI_Ialltoallv may still read them.
const MpiBackend::VArrays& MpiBackend::varrays(const CountMatrix& m) {
  VArrays& v = varrays_[&m];
  const auto n = static_cast<size_t>(size());
  bool same = v.scounts.size() == n;
  for (size_t p = 0; same && p < n; ++p)
    same = v.scounts[p] == static_cast<int>(m.count(rank(), int(p))) &&
           v.rcounts[p] == static_cast<int>(m.count(int(p), rank())) &&
           v.sdispls[p] == static_cast<int>(m.send_offset(rank(), int(p))) &&
           v.rdispls[p] == static_cast<int>(m.recv_offset(rank(), int(p)));
  if (same) return v;
  v.scounts.resize(n);
  v.rcounts.resize(n);
  v.sdispls.resize(n);
  v.rdispls.resize(n);
  for (size_t p = 0; p < n; ++p) {
    const int peer = static_cast<int>(p);
    v.scounts[p] = as_count(m.count(rank(), peer));
    v.rcounts[p] = as_count(m.count(peer, rank()));
    v.sdispls[p] = as_count(m.send_offset(rank(), peer));
    v.rdispls[p] = as_count(m.recv_offset(rank(), peer));
  }
  return v;
}

MPI_Request MpiBackend::post(const CollArgs& a) {
  const MpiCall c = mpi_call(a, rank());
  MPI_Request req = MPI_REQUEST_NULL;
  switch (a.coll) {
    case Coll::Allreduce:
      CB_MPI(MPI_Iallreduce(c.in, c.out, c.count, c.type, c.op, comm_, &req));
      break;
    case Coll::Bcast:
      CB_MPI(MPI_Ibcast(c.out, c.count, c.type, a.root, comm_, &req));
      break;
    case Coll::Alltoall:
      CB_MPI(MPI_Ialltoall(c.in, c.count, c.type, c.out, c.count, c.type, comm_, &req));
      break;
    case Coll::Reduce:
      CB_MPI(MPI_Ireduce(c.in, c.out, c.count, c.type, c.op, a.root, comm_, &req));
      break;
    case Coll::Barrier:
      CB_MPI(MPI_Ibarrier(comm_, &req));
      break;
    case Coll::Alltoallv: {
      const VArrays& v = varrays(*a.counts);
      CB_MPI(MPI_Ialltoallv(c.in, v.scounts.data(), v.sdispls.data(), c.type, c.out,
                            v.rcounts.data(), v.rdispls.data(), c.type, comm_, &req));
      break;
    }
    case Coll::Allgather:  // in place: block `rank` of recv is the input
      CB_MPI(MPI_Iallgather(c.in, c.count, c.type, c.out, c.count, c.type, comm_, &req));
      break;
    case Coll::ReduceScatter:  // in place: recv holds all n blocks, the result is its first
      CB_MPI(MPI_Ireduce_scatter_block(c.in, c.out, c.count, c.type, c.op, comm_, &req));
      break;
    default:
      throw UsageError(unsupported(a));
  }
  return req;
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

void MpiBackend::run_host(const CollArgs& a) {
  if (wait_ == WaitMode::Yield) {  // blocking MPI calls busy-poll; post and yield instead
    MPI_Request req = post(a);
    wait_request(req, wait_);
    return;
  }
  const MpiCall c = mpi_call(a, rank());
  switch (a.coll) {
    case Coll::Allreduce:
      CB_MPI(MPI_Allreduce(c.in, c.out, c.count, c.type, c.op, comm_));
      break;
    case Coll::Bcast:
      CB_MPI(MPI_Bcast(c.out, c.count, c.type, a.root, comm_));
      break;
    case Coll::Alltoall:
      CB_MPI(MPI_Alltoall(c.in, c.count, c.type, c.out, c.count, c.type, comm_));
      break;
    case Coll::Reduce:
      CB_MPI(MPI_Reduce(c.in, c.out, c.count, c.type, c.op, a.root, comm_));
      break;
    case Coll::Barrier:
      CB_MPI(MPI_Barrier(comm_));
      break;
    case Coll::Alltoallv: {
      const VArrays& v = varrays(*a.counts);
      CB_MPI(MPI_Alltoallv(c.in, v.scounts.data(), v.sdispls.data(), c.type, c.out,
                           v.rcounts.data(), v.rdispls.data(), c.type, comm_));
      break;
    }
    case Coll::Allgather:
      CB_MPI(MPI_Allgather(c.in, c.count, c.type, c.out, c.count, c.type, comm_));
      break;
    case Coll::ReduceScatter:
      CB_MPI(MPI_Reduce_scatter_block(c.in, c.out, c.count, c.type, c.op, comm_));
      break;
    default:
      throw UsageError(unsupported(a));
  }
}

std::unique_ptr<Request> MpiBackend::start(const CollArgs& a) {
  if (!staged(a.recv.mem)) return std::make_unique<MpiRequest>(post(a), wait_);
  auto req = std::make_unique<StagedRequest>(a.recv, wait_);
  req->start(post(staged_args(a, req->in, req->out)));
  return req;
}

}  // namespace cb
