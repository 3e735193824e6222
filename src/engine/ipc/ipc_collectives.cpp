#include "engine/ipc/ipc_collectives.hpp"

#include <algorithm>
#include <functional>
#include <utility>
#include <vector>

#include "engine/shm/peer_sync.hpp"
#include "gpu/device.hpp"
#include "gpu/ipc.hpp"
#include "gpu/stream.hpp"

namespace cb::engine {
namespace {

// One step of a chunk: the GPU work this rank enqueues (maybe none), then the counter it
// publishes once that work has completed, then whom it waits for (-1: every rank).
struct Phase {
  std::function<void(size_t chunk)> enqueue;
  Counter OpSlot::*counter;
  int wait_for = -1;
};

// Runs the phases for every chunk in turn. The last phase's counter must be waited on by
// every rank: a chunk's scratch is reused only once every peer has finished reading it.
class IpcSteps final : public Pollable {
 public:
  IpcSteps(NodeShm& shm, IpcNode& ipc, uint64_t op, size_t chunks, std::vector<Phase> phases)
      : ipc_(ipc), sync_(shm, op), chunks_(chunks), phases_(std::move(phases)) {}

  bool advance() override {
    while (chunk_ < chunks_) {
      const Phase& p = phases_[phase_];
      const uint64_t mark = chunk_ + 1;
      switch (state_) {
        case State::Enqueue:
          p.enqueue(chunk_);
          event_.record(ipc_.stream());
          state_ = State::WaitGpu;
          [[fallthrough]];
        case State::WaitGpu:
          if (!event_.query()) return false;
          sync_.publish(p.counter, mark);
          state_ = State::WaitPeers;
          [[fallthrough]];
        case State::WaitPeers:
          if (p.wait_for < 0 ? !sync_.all_reached(p.counter, mark)
                             : !sync_.reached(p.wait_for, p.counter, mark))
            return false;
          state_ = State::Enqueue;
          if (++phase_ == phases_.size()) {
            phase_ = 0;
            ++chunk_;
          }
      }
    }
    return true;
  }

 private:
  enum class State { Enqueue, WaitGpu, WaitPeers };
  IpcNode& ipc_;
  PeerSync sync_;
  gpu::Event event_;
  size_t chunks_, chunk_ = 0, phase_ = 0;
  State state_ = State::Enqueue;
  std::vector<Phase> phases_;
};

size_t chunks_of(size_t total, size_t per_chunk) {
  return (total + per_chunk - 1) / per_chunk;
}

}  // namespace

std::unique_ptr<Pollable> ipc_allreduce(NodeShm& shm, IpcNode& ipc, uint64_t op, const void* in,
                                        void* out, size_t count, Dtype dt, Op rop, bool two_shot) {
  const size_t width = dtype_size(dt);
  const size_t per_chunk = IpcNode::kChunkBytes / width;  // elements
  const int n = ipc.size(), me = shm.local_rank();
  const auto* src = static_cast<const std::byte*>(in);
  auto* dst = static_cast<std::byte*>(out);
  auto elements = [=](size_t c) { return std::min(per_chunk, count - c * per_chunk); };
  // Two-shot blocks: whole 16-byte vectors, so that every block reduces at full width.
  const size_t lanes = std::max<size_t>(1, 16 / width);
  auto block = [=](size_t c, int r) {
    const size_t total = elements(c);
    const size_t share = (total + static_cast<size_t>(n) - 1) / static_cast<size_t>(n);
    const size_t each = (share + lanes - 1) / lanes * lanes;  // never 0 while total > 0
    const size_t lo = std::min(total, each * static_cast<size_t>(r));
    return std::make_pair(lo, std::min(total, lo + each));
  };
  auto inputs = [&ipc, n](size_t offset_bytes) {
    std::vector<const void*> p(static_cast<size_t>(n));
    for (int r = 0; r < n; ++r) p[static_cast<size_t>(r)] = ipc.input(r) + offset_bytes;
    return p;
  };

  std::vector<Phase> phases;
  phases.push_back({[=, &ipc](size_t c) {
                      gpu::copy_async(ipc.input(me), src + c * per_chunk * width,
                                      elements(c) * width, ipc.stream());
                    },
                    &OpSlot::staged});
  if (!two_shot) {
    phases.push_back({[=, &ipc](size_t c) {
                        const auto p = inputs(0);
                        gpu::reduce_many(dst + c * per_chunk * width, p.data(), n, elements(c), dt,
                                         rop, ipc.stream());
                      },
                      &OpSlot::done});
  } else {
    phases.push_back({[=, &ipc](size_t c) {
                        const auto [lo, hi] = block(c, me);
                        const auto p = inputs(lo * width);
                        gpu::reduce_many(ipc.result(me) + lo * width, p.data(), n, hi - lo, dt, rop,
                                         ipc.stream());
                      },
                      &OpSlot::reduced});
    phases.push_back({[=, &ipc](size_t c) {
                        for (int r = 0; r < n; ++r) {
                          const auto [lo, hi] = block(c, r);
                          gpu::copy_async(dst + (c * per_chunk + lo) * width,
                                          ipc.result(r) + lo * width, (hi - lo) * width,
                                          ipc.stream());
                        }
                      },
                      &OpSlot::done});
  }
  return std::make_unique<IpcSteps>(shm, ipc, op, chunks_of(count, per_chunk), std::move(phases));
}

std::unique_ptr<Pollable> ipc_bcast(NodeShm& shm, IpcNode& ipc, uint64_t op, void* buf,
                                    size_t bytes, int root) {
  constexpr size_t kChunk = IpcNode::kChunkBytes;
  const int me = shm.local_rank();
  auto* data = static_cast<std::byte*>(buf);
  auto length = [=](size_t c) { return std::min(kChunk, bytes - c * kChunk); };
  std::vector<Phase> phases;
  phases.push_back({[=, &ipc](size_t c) {
                      if (me == root)
                        gpu::copy_async(ipc.input(root), data + c * kChunk, length(c),
                                        ipc.stream());
                    },
                    &OpSlot::staged, root});
  phases.push_back({[=, &ipc](size_t c) {
                      if (me != root)
                        gpu::copy_async(data + c * kChunk, ipc.input(root), length(c),
                                        ipc.stream());
                    },
                    &OpSlot::done});
  return std::make_unique<IpcSteps>(shm, ipc, op, chunks_of(bytes, kChunk), std::move(phases));
}

std::unique_ptr<Pollable> ipc_alltoall(NodeShm& shm, IpcNode& ipc, uint64_t op, const void* in,
                                       void* out, size_t block_bytes) {
  const int n = ipc.size(), me = shm.local_rank();
  // Each chunk moves the same slice of every block; slices start 16-byte aligned.
  const size_t slice = IpcNode::kChunkBytes / static_cast<size_t>(n) / 16 * 16;
  const auto* src = static_cast<const std::byte*>(in);
  auto* dst = static_cast<std::byte*>(out);
  auto length = [=](size_t c) { return std::min(slice, block_bytes - c * slice); };
  std::vector<Phase> phases;
  phases.push_back({[=, &ipc](size_t c) {
                      for (int j = 0; j < n; ++j)
                        gpu::copy_async(ipc.input(me) + static_cast<size_t>(j) * slice,
                                        src + static_cast<size_t>(j) * block_bytes + c * slice,
                                        length(c), ipc.stream());
                    },
                    &OpSlot::staged});
  phases.push_back({[=, &ipc](size_t c) {
                      for (int i = 0; i < n; ++i)
                        gpu::copy_async(dst + static_cast<size_t>(i) * block_bytes + c * slice,
                                        ipc.input(i) + static_cast<size_t>(me) * slice, length(c),
                                        ipc.stream());
                    },
                    &OpSlot::done});
  return std::make_unique<IpcSteps>(shm, ipc, op, chunks_of(block_bytes, slice), std::move(phases));
}

}  // namespace cb::engine
