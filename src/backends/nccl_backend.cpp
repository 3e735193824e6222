#include "backends/nccl_backend.hpp"

#include <cuda_runtime_api.h>
#include <mpi.h>
#include <sched.h>

#include <chrono>
#include <cstring>
#include <exception>
#include <thread>

#include <nlohmann/json.hpp>

#include "core/mpi_check.hpp"
#include "core/vcounts.hpp"
#include "gpu/cuda_check.hpp"
#include "gpu/device.hpp"
#include "gpu/pointer_cache.hpp"

namespace cb {
namespace {

constexpr const char* kNeedsDevice =
    "NCCL needs device buffers (-d cuda, or D D for point-to-point benchmarks)";

std::string nccl_error(ncclResult_t r) {
  std::string s = ncclGetErrorString(r);
  const char* last = ncclGetLastError(nullptr);  // the detail NCCL logged, if any
  if (last && *last) s += ": " + std::string(last);
  return s;
}

std::string version_string(int code) {
  // NCCL_VERSION(X, Y, Z) is X*10000 + Y*100 + Z since 2.9, X*1000 + Y*100 + Z before.
  const bool modern = code >= 20900;
  const int major = modern ? code / 10000 : code / 1000;
  const int minor = modern ? code % 10000 / 100 : code % 1000 / 100;
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(code % 100);
}

ncclDataType_t nccl_type(Dtype dt) {
  switch (dt) {
    case Dtype::Char:
      return ncclInt8;
    case Dtype::Int32:
      return ncclInt32;
    case Dtype::Int64:
      return ncclInt64;
    case Dtype::Float:
      return ncclFloat32;
    case Dtype::Double:
      return ncclFloat64;
    case Dtype::Half:
      return ncclFloat16;
    case Dtype::BFloat16:
      return ncclBfloat16;
    default:  // the engine's own types (core/types.hpp): not a benchmark's --dtype
      break;
  }
  throw RuntimeError("NCCL has no element type for " + std::string(to_string(dt)));
}

ncclRedOp_t nccl_op(Op op) {
  switch (op) {
    case Op::Sum:
      return ncclSum;
    case Op::Prod:
      return ncclProd;
    case Op::Max:
      return ncclMax;
    case Op::Min:
      return ncclMin;
    default:  // MPI_MAXLOC/MPI_MINLOC: the engine's only
      break;
  }
  throw RuntimeError("NCCL has no reduction operator " + std::string(to_string(op)));
}

// NCCL fails with "Duplicate GPU detected" when two ranks share a GPU; say so up front.
void refuse_shared_gpus(const Control& ctl, const std::string& my_bus_id) {
  MPI_Comm node = MPI_COMM_NULL;
  CB_MPI(MPI_Comm_split_type(ctl.comm(), MPI_COMM_TYPE_SHARED, ctl.rank(), MPI_INFO_NULL, &node));
  int local = 0, locals = 1;
  MPI_Comm_rank(node, &local);
  MPI_Comm_size(node, &locals);
  constexpr int kIdLen = 32;
  char mine[kIdLen] = {};
  std::strncpy(mine, my_bus_id.c_str(), kIdLen - 1);
  std::vector<char> all(static_cast<size_t>(kIdLen) * static_cast<size_t>(locals));
  const int rc = MPI_Allgather(mine, kIdLen, MPI_CHAR, all.data(), kIdLen, MPI_CHAR, node);
  MPI_Comm_free(&node);
  if (rc != MPI_SUCCESS) throw_mpi_error(rc, "MPI_Allgather", __FILE__, __LINE__);
  std::string message;
  for (int r = 0; r < local && message.empty(); ++r)
    if (std::strncmp(&all[static_cast<size_t>(r) * kIdLen], mine, kIdLen) == 0)
      message = "NCCL cannot run two ranks on one GPU: local ranks " + std::to_string(r) + " and " +
                std::to_string(local) + " on " + ctl.hostname() + " both use GPU " + my_bus_id +
                " (" + std::to_string(gpu::device_count()) +
                " visible); start at most one rank per GPU";
  agree(ctl, message.empty() ? kExitOk : kExitUsage, message);
}

}  // namespace

// ---- Errors and waiting ----

namespace {

[[noreturn]] void throw_nccl(ncclResult_t r, const char* what) {
  throw RuntimeError(std::string(what) + " failed: " + nccl_error(r));
}

// After abort() (the watchdog thread) the communicator is being freed: touch nothing and
// wait for the watchdog, which ends the process right after it.
[[noreturn]] void park_after_abort() {
  for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
}

}  // namespace

#define CB_NCCL(call)                  \
  do {                                 \
    const ncclResult_t cb_r_ = (call); \
    if (cb_r_ != ncclSuccess) {        \
      failed_ = true;                  \
      throw_nccl(cb_r_, #call);        \
    }                                  \
  } while (0)

void NcclBackend::check_async_error() {
  if (aborted_.load(std::memory_order_acquire)) park_after_abort();
  ncclResult_t async = ncclSuccess;
  CB_NCCL(ncclCommGetAsyncError(comm_, &async));
  if (async != ncclSuccess && async != ncclInProgress) {
    failed_ = true;
    throw RuntimeError("NCCL asynchronous error: " + nccl_error(async));
  }
}

template <typename Done>
void NcclBackend::wait_until(Done&& done) {
  try {
    while (!done()) {
      check_async_error();
      if (wait_ == WaitMode::Yield) sched_yield();
    }
  } catch (...) {
    failed_ = true;
    throw;
  }
}

// A collective in flight: an event recorded after it on the backend's stream.
class NcclRequest final : public Request {
 public:
  NcclRequest(NcclBackend& be, std::unique_ptr<gpu::Event> event)
      : be_(be), event_(std::move(event)) {}
  ~NcclRequest() override {
    if (!done_) {
      try {
        be_.wait_until([&] { return event_->query(); });
      } catch (...) {  // the error was or will be reported by whoever saw it first
      }
    }
    be_.spare_events_.push_back(std::move(event_));
  }
  bool test() override {
    if (!done_) done_ = event_->query();
    if (!done_) be_.check_async_error();
    return done_;
  }
  void wait() override {
    be_.wait_until([&] { return event_->query(); });
    done_ = true;
  }

 private:
  NcclBackend& be_;
  std::unique_ptr<gpu::Event> event_;
  bool done_ = false;
};

NcclBackend::NcclBackend(const BackendConfig& opt, const Control& ctl)
    : Backend(BackendKind::Nccl),
      wait_(ctl.wait_mode()),
      rank_(ctl.rank()),
      size_(ctl.size()),
      register_(opt.local_register) {
  set_layout(rank_, size_);
  // The same options on every rank (checked by the harness), so every rank refuses alike.
  if (opt.mem != Mem::Cuda) throw UsageError(kNeedsDevice);
  if (opt.side_mem[0] != opt.side_mem[1])
    throw UsageError(std::string(kNeedsDevice) + " on both sides; got " +
                     (opt.side_mem[0] == Mem::Cuda ? "D H" : "H D"));

  std::string bus_id;
  agreed(ctl, [&] {
    const std::string why = gpu::unavailable_reason();
    if (!why.empty()) throw UsageError(why);
    gpu::cuda_check(cudaGetDevice(&device_), "cudaGetDevice");
    gpu::cuda_check(cudaFree(nullptr), "creating the CUDA context (cudaFree(0))");
    char id[32] = {};
    gpu::cuda_check(cudaDeviceGetPCIBusId(id, sizeof id, device_), "cudaDeviceGetPCIBusId");
    bus_id = id;
    stream_ = std::make_unique<gpu::Stream>();
  });
  refuse_shared_gpus(ctl, bus_id);

  ncclUniqueId id{};
  agreed(ctl, [&] {
    if (ctl.is_root()) {
      const ncclResult_t r = ncclGetUniqueId(&id);
      if (r != ncclSuccess) throw RuntimeError("ncclGetUniqueId failed: " + nccl_error(r));
    }
  });
  CB_MPI(MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, ctl.comm()));

  // Collective: a rank that fails here may leave the others waiting inside NCCL's
  // bootstrap; nothing can be agreed before it returns.
  try {
    agreed(ctl, [&] {
      const ncclResult_t r = ncclCommInitRank(&comm_, size_, id, rank_);
      if (r != ncclSuccess) {
        comm_ = nullptr;
        throw RuntimeError("ncclCommInitRank failed on GPU " + bus_id + ": " + nccl_error(r));
      }
    });
  } catch (...) {  // another rank failed: no destructor runs for a throwing constructor
    if (comm_) ncclCommAbort(comm_);
    comm_ = nullptr;
    throw;
  }
}

NcclBackend::~NcclBackend() {
  // An exception on its way (a failed operation, a failed rank) means peers may never
  // finish their side: abort, which does not wait for them.
  const bool clean = !failed_ && !aborted_.load() && std::uncaught_exceptions() == 0;
  if (clean && stream_) cudaStreamSynchronize(static_cast<cudaStream_t>(stream_->handle()));
  if (bounce_) ncclMemFree(bounce_);
  spare_events_.clear();
  if (comm_ && !aborted_.exchange(true)) {
    if (clean && ncclCommFinalize(comm_) == ncclSuccess)
      ncclCommDestroy(comm_);
    else
      ncclCommAbort(comm_);
  }
}

BackendDescription NcclBackend::description() const {
  int code = 0;
  const bool known = ncclGetVersion(&code) == ncclSuccess;
  BackendDescription d{
      "NCCL", known ? "NCCL " + version_string(code) : "NCCL (version unknown)", {}};
  nlohmann::json& out = d.facts;
  out["nccl_version"] = version_string(code);
  out["nccl_version_code"] = code;
  cudaDeviceProp prop{};
  char bus[32] = {};
  if (cudaGetDeviceProperties(&prop, device_) == cudaSuccess)
    out["device"] = {{"index", device_}, {"name", prop.name}};
  if (cudaDeviceGetPCIBusId(bus, sizeof bus, device_) == cudaSuccess)
    out["device"]["pci_bus_id"] = bus;
  out["stream"] = "one non-blocking CUDA stream per rank";
  out["timing"] = "host clock after the stream has completed (as OMB's NCCL benchmarks)";
  out["buffers"] = "ncclMemAlloc";
  return d;
}

void NcclBackend::sync() {
  wait_until([&] { return stream_->query(); });
}

void NcclBackend::abort() {
  // From the watchdog thread while the main thread may be inside NCCL or polling: NCCL
  // documents ncclCommAbort as the way to release a hung communicator. The flag goes
  // first, so that the polling loop stops calling into NCCL.
  if (comm_ && !aborted_.exchange(true, std::memory_order_acq_rel)) ncclCommAbort(comm_);
}

gpu::Graph NcclBackend::capture(const std::function<void()>& enqueue) {
  // Nothing may be allocated inside a capture: the barrier's token (bounce()) is now.
  bounce(sizeof(int32_t));
  sync();  // the capture starts on an idle stream
  try {
    return gpu::Graph(stream_->handle(), enqueue);
  } catch (...) {
    failed_ = true;  // NCCL's state after a failed capture is unknown: destroy by abort
    throw;
  }
}

// ---- Memory ----

Buf NcclBackend::alloc(size_t bytes, Mem mem) {
  if (mem != Mem::Cuda) return Backend::alloc(bytes, mem);
  void* p = nullptr;
  const size_t size = bytes ? bytes : 1;
  CB_NCCL(ncclMemAlloc(&p, size));
  gpu::cuda_check(cudaMemset(p, 0, size), "cudaMemset (pre-touching an ncclMemAlloc buffer)");
  gpu::cuda_check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  gpu::pointer_cache().insert({gpu::MemoryKind::Device, device_, p, size});
  if (register_ == 1) {
    CB_NCCL(ncclCommRegister(comm_, p, size, &registered_[p]));
  } else if (register_ == 2) {
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 27, 0)
    ncclWindow_t win = nullptr;
    CB_NCCL(ncclCommWindowRegister(comm_, p, size, &win, NCCL_WIN_COLL_SYMMETRIC));
    registered_[p] = win;
#else
    throw UsageError(
        "-R 2 (symmetric registration, ncclCommWindowRegister) needs NCCL 2.27 or "
        "later; this build's nccl.h is version code " +
        std::to_string(NCCL_VERSION_CODE));
#endif
  }
  return {p, bytes, Mem::Cuda};
}

void NcclBackend::free(Buf& buf) {
  if (buf.mem != Mem::Cuda) return Backend::free(buf);
  if (buf.ptr) {
    if (const auto it = registered_.find(buf.ptr); it != registered_.end()) {
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 27, 0)
      if (register_ == 2)
        ncclCommWindowDeregister(comm_, static_cast<ncclWindow_t>(it->second));
      else
#endif
        ncclCommDeregister(comm_, it->second);
      registered_.erase(it);
    }
    gpu::pointer_cache().erase(buf.ptr);
    ncclMemFree(buf.ptr);
  }
  buf = Buf{};
}

void* NcclBackend::bounce(size_t bytes) {
  if (bytes > bounce_bytes_) {
    if (bounce_) ncclMemFree(bounce_);
    bounce_ = nullptr;
    bounce_bytes_ = 0;
    CB_NCCL(ncclMemAlloc(&bounce_, bytes));
    bounce_bytes_ = bytes;
  }
  return bounce_;
}

// ---- Point to point ----

void NcclBackend::post(const P2POp& op) {
  if (op.buf.mem != Mem::Cuda) throw UsageError(kNeedsDevice);
  const auto s = static_cast<cudaStream_t>(stream_->handle());
  if (op.kind == P2POp::Kind::Send)
    CB_NCCL(ncclSend(op.buf.ptr, op.buf.bytes, ncclInt8, op.peer, comm_, s));
  else
    CB_NCCL(ncclRecv(op.buf.ptr, op.buf.bytes, ncclInt8, op.peer, comm_, s));
}

void NcclBackend::send(const Buf& buf, int peer, int) {
  if (buf.mem == Mem::Cuda) {
    post({P2POp::Kind::Send, buf, peer, 0});
  } else {  // stage: host -> bounce on the stream, then send from the bounce buffer
    const Buf staged{bounce(buf.bytes), buf.bytes, Mem::Cuda};
    gpu::cuda_check(cudaMemcpyAsync(staged.ptr, buf.ptr, buf.bytes, cudaMemcpyHostToDevice,
                                    static_cast<cudaStream_t>(stream_->handle())),
                    "cudaMemcpyAsync");
    post({P2POp::Kind::Send, staged, peer, 0});
  }
  sync();
}

void NcclBackend::recv(const Buf& buf, int peer, int) {
  if (buf.mem == Mem::Cuda) {
    post({P2POp::Kind::Recv, buf, peer, 0});
  } else {
    const Buf staged{bounce(buf.bytes), buf.bytes, Mem::Cuda};
    post({P2POp::Kind::Recv, staged, peer, 0});
    gpu::cuda_check(cudaMemcpyAsync(buf.ptr, staged.ptr, buf.bytes, cudaMemcpyDeviceToHost,
                                    static_cast<cudaStream_t>(stream_->handle())),
                    "cudaMemcpyAsync");
  }
  sync();
}

void NcclBackend::batch(std::span<const P2POp> ops) {
  CB_NCCL(ncclGroupStart());
  for (const P2POp& op : ops) post(op);
  CB_NCCL(ncclGroupEnd());
  sync();
}

// ---- Collectives ----

std::string NcclBackend::refuses(const CollArgs& a) const {
  const bool reads_send = !a.in_place && a.coll != Coll::Bcast;
  const bool has_buffers = a.coll != Coll::Barrier;
  if (has_buffers && (a.recv.mem != Mem::Cuda || (reads_send && a.send.mem != Mem::Cuda)))
    return kNeedsDevice;
  if (!a.algo.empty())
    return "--algo selects engine algorithms; NCCL chooses its own (see the NCCL_ALGO and "
           "NCCL_PROTO environment variables)";
  if (a.coll == Coll::Alltoall && a.in_place)
    return "NCCL has no in-place alltoall (it is grouped ncclSend/ncclRecv, which need "
           "separate buffers)";
  return {};
}

void NcclBackend::enqueue(const CollArgs& a) {
  const auto s = static_cast<cudaStream_t>(stream_->handle());
  const ncclDataType_t type = nccl_type(a.dtype);
  switch (a.coll) {
    case Coll::Allreduce:
      CB_NCCL(ncclAllReduce(a.in_place ? a.recv.ptr : a.send.ptr, a.recv.ptr, a.count, type,
                            nccl_op(a.op), comm_, s));
      return;
    case Coll::Bcast:  // in place in recv, as the harness lays bcast out
      CB_NCCL(ncclBroadcast(a.recv.ptr, a.recv.ptr, a.count, type, a.root, comm_, s));
      return;
    case Coll::Alltoall: {  // as nccl-tests and OMB: one send and one receive per peer
      const size_t block = a.count * dtype_size(a.dtype);
      CB_NCCL(ncclGroupStart());
      for (int peer = 0; peer < size_; ++peer) {
        const size_t at = static_cast<size_t>(peer) * block;
        CB_NCCL(ncclSend(a.send.bytes_at(at), a.count, type, peer, comm_, s));
        CB_NCCL(ncclRecv(a.recv.bytes_at(at), a.count, type, peer, comm_, s));
      }
      CB_NCCL(ncclGroupEnd());
      return;
    }
    case Coll::Allgather:  // in place: NCCL's in place is recv + rank x count, as MPI's
      CB_NCCL(ncclAllGather(
          a.in_place ? a.recv.bytes_at(static_cast<size_t>(rank_) * a.count * dtype_size(a.dtype))
                     : a.send.ptr,
          a.recv.ptr, a.count, type, comm_, s));
      return;
    case Coll::ReduceScatter: {
      if (!a.in_place) {
        CB_NCCL(ncclReduceScatter(a.send.ptr, a.recv.ptr, a.count, type, nccl_op(a.op), comm_, s));
        return;
      }
      // In place as MPI defines it: recv holds the n blocks and the result is its first.
      // NCCL's in place leaves it in block `rank`; one device copy moves it to the front.
      const size_t block = a.count * dtype_size(a.dtype);
      void* mine = a.recv.bytes_at(static_cast<size_t>(rank_) * block);
      CB_NCCL(ncclReduceScatter(a.recv.ptr, mine, a.count, type, nccl_op(a.op), comm_, s));
      if (rank_ != 0 && block)
        gpu::cuda_check(cudaMemcpyAsync(a.recv.ptr, mine, block, cudaMemcpyDeviceToDevice, s),
                        "cudaMemcpyAsync");
      return;
    }
    case Coll::Reduce:  // in place: sendbuff == recvbuff (non-roots only read it)
      CB_NCCL(ncclReduce(a.in_place ? a.recv.ptr : a.send.ptr, a.recv.ptr, a.count, type,
                         nccl_op(a.op), a.root, comm_, s));
      return;
    case Coll::Barrier: {  // NCCL has none: a 1-element allreduce, as nccl-tests' barrier
      void* token = bounce(sizeof(int32_t));
      CB_NCCL(ncclAllReduce(token, token, 1, ncclInt32, ncclSum, comm_, s));
      return;
    }
    case Coll::Alltoallv: {  // grouped ncclSend/ncclRecv with the matrix's counts
      const CountMatrix& m = *a.counts;
      const size_t w = dtype_size(a.dtype);
      CB_NCCL(ncclGroupStart());
      for (int peer = 0; peer < size_; ++peer) {
        if (const size_t n = m.count(rank_, peer))
          CB_NCCL(
              ncclSend(a.send.bytes_at(m.send_offset(rank_, peer) * w), n, type, peer, comm_, s));
        if (const size_t n = m.count(peer, rank_))
          CB_NCCL(
              ncclRecv(a.recv.bytes_at(m.recv_offset(rank_, peer) * w), n, type, peer, comm_, s));
      }
      CB_NCCL(ncclGroupEnd());
      return;
    }
    // One block per rank (gather, scatter, allgatherv and the v forms) as nccl-tests'
    // gather_perf and scatter_perf: grouped ncclSend/ncclRecv, a rank's own block included
    // (NCCL copies it) except in place, where it already lies in recv.
    case Coll::Gather:
    case Coll::Gatherv:
    case Coll::Scatter:
    case Coll::Scatterv:
    case Coll::Allgatherv: {
      const size_t w = dtype_size(a.dtype);
      const auto block = [&](const Buf& b, int r) {
        return b.bytes_at(rank_block_offset(a, r) * w);
      };
      const bool gathers = a.coll != Coll::Scatter && a.coll != Coll::Scatterv;
      const bool to_all = a.coll == Coll::Allgatherv;
      // Gathers: my block goes from `mine` to the root (everyone, allgatherv); scatters: the
      // root's block r goes from `all` to rank r's result.
      const void* mine = a.in_place ? block(a.recv, rank_) : a.send.ptr;
      const Buf& all = a.in_place ? a.recv : a.send;
      void* result = a.in_place ? block(a.recv, rank_) : a.recv.ptr;
      CB_NCCL(ncclGroupStart());
      for (int peer = 0; peer < size_; ++peer) {
        const bool self = peer == rank_;
        if (self && a.in_place) continue;
        if (gathers) {
          if (to_all || rank_ == a.root)  // receive every rank's block
            if (const size_t n = rank_block_elements(a, peer))
              CB_NCCL(ncclRecv(block(a.recv, peer), n, type, peer, comm_, s));
          if (to_all || peer == a.root)  // send mine
            if (const size_t n = rank_block_elements(a, rank_))
              CB_NCCL(ncclSend(mine, n, type, peer, comm_, s));
        } else {
          if (rank_ == a.root)
            if (const size_t n = rank_block_elements(a, peer))
              CB_NCCL(ncclSend(block(all, peer), n, type, peer, comm_, s));
          if (peer == a.root)
            if (const size_t n = rank_block_elements(a, rank_))
              CB_NCCL(ncclRecv(result, n, type, peer, comm_, s));
        }
      }
      CB_NCCL(ncclGroupEnd());
      return;
    }
    default:
      throw UsageError(unsupported(a));
  }
}

void NcclBackend::run(const CollArgs& a) {
  enqueue(a);
}

void NcclBackend::run_aggregated(const CollArgs& a, int n) {
  CB_NCCL(ncclGroupStart());
  for (int i = 0; i < n; ++i) enqueue(a);
  CB_NCCL(ncclGroupEnd());
}

std::unique_ptr<Request> NcclBackend::start(const CollArgs& a) {
  std::unique_ptr<gpu::Event> event;
  if (spare_events_.empty()) {
    event = std::make_unique<gpu::Event>();
  } else {
    event = std::move(spare_events_.back());
    spare_events_.pop_back();
  }
  enqueue(a);
  event->record(stream_->handle());
  return std::make_unique<NcclRequest>(*this, std::move(event));
}

}  // namespace cb
