// Allgather among the ranks of a node: each rank copies every other rank's block straight
// out of that rank's input into its own output (one copy per block: memcpy from shared
// memory, or process_vm_readv when the input is private memory). In place, a rank's input
// is its own block of its output, which no other rank writes: nothing needs staging.
#include <cstring>

#include "engine/shm/pull_exchange.hpp"

namespace cb::engine {
namespace {

class ShmAllgather final : public PullExchange {
 public:
  ShmAllgather(NodeShm& shm, uint64_t op, const void* in, void* out, size_t block)
      : PullExchange(shm, op), in_(in), out_(static_cast<std::byte*>(out)), block_(block) {}

 private:
  void publish() override { sync_.publish_buffers(shm_.describe(in_, block_), {}); }
  void pull() override {
    const int n = sync_.size(), me = sync_.me();
    std::byte* mine = out_ + block_ * static_cast<size_t>(me);
    if (block_ && in_ != mine) std::memcpy(mine, in_, block_);
    for (int k = 1; k < n; ++k) {  // start at different peers: spread the reads
      const int r = (me + k) % n;
      shm_.read(out_ + block_ * static_cast<size_t>(r), sync_.slot(r).in, 0, block_);
    }
  }

  const void* in_;
  std::byte* out_;
  size_t block_;
};

}  // namespace

std::unique_ptr<Pollable> shm_allgather(NodeShm& shm, uint64_t op, const void* in, void* out,
                                        size_t block_bytes) {
  return std::make_unique<ShmAllgather>(shm, op, in, out, block_bytes);
}

}  // namespace cb::engine
