#include "backends/mpi_backend.hpp"

#include <nlohmann/json.hpp>

#include "harness/environment.hpp"
#include "harness/mpi_check.hpp"

namespace cb {
namespace {

int as_count(size_t n) {
  if (n > static_cast<size_t>(INT32_MAX))
    throw UsageError("message of " + std::to_string(n) + " elements exceeds MPI's int count");
  return static_cast<int>(n);
}

MPI_Op mpi_op(Op op) {
  switch (op) {
    case Op::Sum:
      return MPI_SUM;
    case Op::Prod:
      return MPI_PROD;
    case Op::Max:
      return MPI_MAX;
    case Op::Min:
      return MPI_MIN;
  }
  return MPI_OP_NULL;
}

bool reduces(Coll c) {
  return c == Coll::Allreduce || c == Coll::Reduce || c == Coll::ReduceScatter;
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

}  // namespace

MPI_Datatype mpi_datatype(Dtype dt) {
  switch (dt) {
    case Dtype::Char:
      return MPI_SIGNED_CHAR;  // MPI_CHAR is not valid in reductions
    case Dtype::Int32:
      return MPI_INT32_T;
    case Dtype::Int64:
      return MPI_INT64_T;
    case Dtype::Float:
      return MPI_FLOAT;
    case Dtype::Double:
      return MPI_DOUBLE;
    case Dtype::Half:
    case Dtype::BFloat16:
      return MPI_DATATYPE_NULL;
  }
  return MPI_DATATYPE_NULL;
}

MpiBackend::MpiBackend(const Control& ctl) : wait_(ctl.wait_mode()) {
  CB_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &comm_));
  MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
}

MpiBackend::~MpiBackend() {
  if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
}

std::string MpiBackend::library_version() const {
  return mpi_library_version();
}

void MpiBackend::describe(nlohmann::json& out) const {
  out["cuda_aware"] = false;  // MPIX_Query_cuda_support is checked by the GPU path
}

void MpiBackend::send(const Buf& buf, int peer, int tag) {
  const int n = as_count(buf.bytes);
  if (wait_ == WaitMode::Spin) {
    CB_MPI(MPI_Send(buf.ptr, n, MPI_BYTE, peer, tag, comm_));
    return;
  }
  MPI_Request req;
  CB_MPI(MPI_Isend(buf.ptr, n, MPI_BYTE, peer, tag, comm_, &req));
  wait_request(req, wait_);
}

void MpiBackend::recv(const Buf& buf, int peer, int tag) {
  const int n = as_count(buf.bytes);
  if (wait_ == WaitMode::Spin) {
    CB_MPI(MPI_Recv(buf.ptr, n, MPI_BYTE, peer, tag, comm_, MPI_STATUS_IGNORE));
    return;
  }
  MPI_Request req;
  CB_MPI(MPI_Irecv(buf.ptr, n, MPI_BYTE, peer, tag, comm_, &req));
  wait_request(req, wait_);
}

void MpiBackend::batch(std::span<const P2POp> ops) {
  reqs_.resize(ops.size());
  for (size_t i = 0; i < ops.size(); ++i) {
    const P2POp& op = ops[i];
    const int n = as_count(op.buf.bytes);
    if (op.kind == P2POp::Kind::Send)
      CB_MPI(MPI_Isend(op.buf.ptr, n, MPI_BYTE, op.peer, op.tag, comm_, &reqs_[i]));
    else
      CB_MPI(MPI_Irecv(op.buf.ptr, n, MPI_BYTE, op.peer, op.tag, comm_, &reqs_[i]));
  }
  wait_all(reqs_, wait_);
}

std::string MpiBackend::unsupported(const CollArgs& a) const {
  if (a.send.mem == Mem::Cuda || a.recv.mem == Mem::Cuda)
    return "the MPI backend cannot use device buffers: this MPI library is not CUDA-aware";
  if (!a.algo.empty())
    return "--algo selects engine algorithms; the mpi backend calls the MPI library, which "
           "chooses its own (for MPICH see MPIR_CVAR_<COLL>_INTRA_ALGORITHM)";
  if (a.coll != Coll::Allreduce && a.coll != Coll::Bcast && a.coll != Coll::Alltoall)
    return "the MPI backend does not implement " + std::string(to_string(a.coll));
  if (reduces(a.coll) && mpi_datatype(a.dtype) == MPI_DATATYPE_NULL)
    return "MPI has no " + std::string(to_string(a.dtype)) +
           " reductions (MPI defines no 16-bit float type); use the engine backend";
  return {};
}

namespace {
// A collective's arguments in MPI's terms. Non-reducing collectives only move bytes, so a
// 16-bit type without an MPI equivalent travels as MPI_UINT16_T.
struct MpiCall {
  const void* in;
  void* out;
  int count;
  MPI_Datatype type;
  MPI_Op op;
};
MpiCall mpi_call(const CollArgs& a) {
  MPI_Datatype type = mpi_datatype(a.dtype);
  if (type == MPI_DATATYPE_NULL) type = MPI_UINT16_T;
  return {a.in_place ? MPI_IN_PLACE : a.send.ptr, a.recv.ptr, as_count(a.count), type,
          mpi_op(a.op)};
}
}  // namespace

MPI_Request MpiBackend::post(const CollArgs& a) {
  const MpiCall c = mpi_call(a);
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
    default:
      throw UsageError(unsupported(a));
  }
  return req;
}

void MpiBackend::run(const CollArgs& a) {
  if (wait_ == WaitMode::Yield) {  // blocking MPI calls busy-poll; post and yield instead
    MPI_Request req = post(a);
    wait_request(req, wait_);
    return;
  }
  const MpiCall c = mpi_call(a);
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
    default:
      throw UsageError(unsupported(a));
  }
}

std::unique_ptr<Request> MpiBackend::start(const CollArgs& a) {
  return std::make_unique<MpiRequest>(post(a), wait_);
}

}  // namespace cb
