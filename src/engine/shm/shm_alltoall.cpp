// Alltoall among the ranks of a node: each rank copies the block meant for it out of every
// other rank's input, straight from it (memcpy from shared memory, or process_vm_readv).
// In place, a rank first moves its input to a temporary in its shared heap, so that what
// it writes cannot overwrite blocks the others still have to read.
#include <cstring>

#include "engine/shm/peer_sync.hpp"
#include "engine/shm/shm_collectives.hpp"

namespace cb::engine {
namespace {

class ShmAlltoall final : public Pollable {
 public:
  ShmAlltoall(NodeShm& shm, uint64_t op, const void* in, void* out, size_t block)
      : shm_(shm), sync_(shm, op), in_(in), out_(static_cast<std::byte*>(out)), block_(block) {}
  ~ShmAlltoall() override {
    if (temp_) shm_.free(temp_);
  }

  bool advance() override {
    const int n = sync_.size(), me = sync_.me();
    const size_t all = block_ * static_cast<size_t>(n);
    for (;;) {
      switch (phase_) {
        case Phase::Publish:
          if (in_ == out_ && all) {
            temp_ = shm_.alloc(all);
            if (!temp_) throw RuntimeError("shared heap exhausted (CB_SHM_HEAP_BYTES)");
            std::memcpy(temp_, in_, all);
            in_ = temp_;
          }
          sync_.publish_buffers(shm_.describe(in_, all), shm_.describe(out_, all));
          phase_ = Phase::Peers;
          break;
        case Phase::Peers:
          if (!sync_.peers_published()) return false;
          for (int k = 0; k < n; ++k) {  // start at different peers: spread the reads
            const int r = (me + k) % n;
            std::byte* dst = out_ + block_ * static_cast<size_t>(r);
            if (r == me)
              std::memcpy(dst,
                          static_cast<const std::byte*>(in_) + block_ * static_cast<size_t>(me),
                          block_);
            else
              shm_.read(dst, sync_.slot(r).in, block_ * static_cast<size_t>(me), block_);
          }
          sync_.publish(&OpSlot::gathered, 1);
          phase_ = Phase::Finish;
          break;
        case Phase::Finish:  // my input must stay until everyone has read it
          if (!sync_.all_reached(&OpSlot::gathered, 1)) return false;
          phase_ = Phase::Done;
          return true;
        case Phase::Done:
          return true;
      }
    }
  }

 private:
  enum class Phase { Publish, Peers, Finish, Done };

  NodeShm& shm_;
  PeerSync sync_;
  const void* in_;
  std::byte* out_;
  size_t block_;
  void* temp_ = nullptr;
  Phase phase_ = Phase::Publish;
};

}  // namespace

std::unique_ptr<Pollable> shm_alltoall(NodeShm& shm, uint64_t op, const void* in, void* out,
                                       size_t block_bytes) {
  return std::make_unique<ShmAlltoall>(shm, op, in, out, block_bytes);
}

}  // namespace cb::engine
