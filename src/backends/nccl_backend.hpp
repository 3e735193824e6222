// --backend nccl: NCCL on device buffers, one GPU per rank, one non-blocking stream.
// Operations are enqueued on the stream; blocking calls (send, recv, batch) and sync()
// then wait for it, so the harness's host timer measures up to stream completion, as
// OMB's NCCL benchmarks do. Waiting polls cudaStreamQuery and ncclCommGetAsyncError, so a
// failed peer surfaces as an error rather than a hang.
#pragma once

#include <nccl.h>

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "backends/backend.hpp"
#include "backends/control.hpp"
#include "gpu/stream.hpp"

namespace cb {

class NcclBackend final : public Backend {
 public:
  // Throws UsageError for host buffers, without a usable GPU (gpu::unavailable_reason())
  // and when two ranks would share a GPU (NCCL refuses that); RuntimeError for any NCCL or
  // CUDA failure. Collective over ctl: every rank throws alike.
  NcclBackend(const BackendConfig& config, const Control& ctl);
  ~NcclBackend() override;

  BackendDescription description() const override;  // library: "NCCL 2.28.9"

  // Device buffers come from ncclMemAlloc (what NCCL's zero-copy and NVLS paths want);
  // with -R 1 registered with ncclCommRegister, with -R 2 as a symmetric window
  // (ncclCommWindowRegister, NCCL 2.27 and later; collective: every rank allocates the
  // same buffers in the same order), as nccl-tests registers its buffers.
  Buf alloc(size_t bytes, Mem mem) override;
  void free(Buf& buf) override;

  // Tags are ignored: NCCL matches messages per peer in issue order, which is what the
  // benchmarks rely on. A host buffer (the 1-byte ack of cb_bw) is staged through a
  // device bounce buffer.
  void send(const Buf& buf, int peer, int tag) override;
  void recv(const Buf& buf, int peer, int tag) override;
  void batch(std::span<const P2POp> ops) override;

  void run(const CollArgs& args) override;                    // enqueues; sync() waits
  void run_aggregated(const CollArgs& args, int n) override;  // n calls in one group
  std::unique_ptr<Request> start(const CollArgs& args) override;
  void sync() override;
  void abort() override;  // time limit: ncclCommAbort, callable from another thread

  // -G: NCCL's calls are captured from the backend's stream (NCCL 2.9 and later).
  gpu::Graph capture(const std::function<void()>& enqueue) override;
  gpu::StreamHandle stream() const override { return stream_->handle(); }

 private:
  std::string refuses(const CollArgs& args) const override;
  // Polls until `done` (a stream or event query) is true, checking NCCL's asynchronous
  // error on the way; spins, or yields in WaitMode::Yield.
  template <typename Done>
  void wait_until(Done&& done);
  void enqueue(const CollArgs& args);
  void post(const P2POp& op);  // device buffers only; call inside a group or alone
  void check_async_error();
  void* bounce(size_t bytes);  // device scratch for host-buffer point-to-point

  ncclComm_t comm_ = nullptr;
  std::atomic<bool> aborted_{false};
  bool failed_ = false;  // an error was thrown: destroy by abort, peers may be gone
  WaitMode wait_;
  int rank_ = 0, size_ = 1, device_ = 0;
  std::unique_ptr<gpu::Stream> stream_;
  void* bounce_ = nullptr;
  size_t bounce_bytes_ = 0;
  std::vector<std::unique_ptr<gpu::Event>> spare_events_;  // reused by start()
  int register_ = 0;                                       // -R
  std::map<void*, void*> registered_;  // buffer -> its registration handle or window

  friend class NcclRequest;
};

}  // namespace cb
