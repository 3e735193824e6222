// Alltoall among the ranks of a node: each rank copies the block meant for it out of every
// other rank's input, straight from it (memcpy from shared memory, or process_vm_readv).
// In place, a rank first moves its input to a temporary in its shared heap, so that what
// it writes cannot overwrite blocks the others still have to read.
#include <cstring>
#include <memory>

#include "engine/shm/pull_exchange.hpp"

namespace cb::engine {
namespace {

class ShmAlltoall final : public PullExchange {
 public:
  ShmAlltoall(NodeShm& shm, uint64_t op, const void* in, void* out, size_t block)
      : PullExchange(shm, op), in_(in), out_(static_cast<std::byte*>(out)), block_(block) {}
  ~ShmAlltoall() override {
    if (temp_) shm_.free(temp_);
  }

 private:
  size_t all() const { return block_ * static_cast<size_t>(sync_.size()); }
  void publish() override {
    if (in_ == out_ && all()) {
      temp_ = shm_.alloc(all());
      void* copy = temp_;
      if (!copy && shm_.cma()) {  // no heap (the preload's) or full: peers read it by CMA
        private_.reset(new std::byte[all()]);
        copy = private_.get();
      }
      if (!copy) throw RuntimeError("shared heap exhausted (CB_SHM_HEAP_BYTES)");
      std::memcpy(copy, in_, all());
      in_ = copy;
    }
    sync_.publish_buffers(shm_.describe(in_, all()), shm_.describe(out_, all()));
  }
  void pull() override {
    const int n = sync_.size(), me = sync_.me();
    for (int k = 0; k < n; ++k) {  // start at different peers: spread the reads
      const int r = (me + k) % n;
      std::byte* dst = out_ + block_ * static_cast<size_t>(r);
      if (r == me)
        std::memcpy(dst, static_cast<const std::byte*>(in_) + block_ * static_cast<size_t>(me),
                    block_);
      else
        shm_.read(dst, sync_.slot(r).in, block_ * static_cast<size_t>(me), block_);
    }
  }

  const void* in_;
  std::byte* out_;
  size_t block_;
  void* temp_ = nullptr;
  std::unique_ptr<std::byte[]> private_;
};

}  // namespace

std::unique_ptr<Pollable> shm_alltoall(NodeShm& shm, uint64_t op, const void* in, void* out,
                                       size_t block_bytes) {
  return std::make_unique<ShmAlltoall>(shm, op, in, out, block_bytes);
}

}  // namespace cb::engine
