// Bcast among the ranks of a node through shared memory: every rank copies the root's
// buffer in chunks, straight from it when it lies in shared memory or (direct) with
// cross-memory attach; otherwise the root stages chunks through a ring of slots in its
// staging space and readers follow behind.
#include <algorithm>
#include <cstring>

#include "engine/shm/peer_sync.hpp"
#include "engine/shm/shm_collectives.hpp"

namespace cb::engine {
namespace {

constexpr size_t kPipelineUnit =
    4096;  // a page: smaller chunks cost more in syncs than they overlap

class ShmBcast final : public Pollable {
 public:
  ShmBcast(NodeShm& shm, uint64_t op, void* buf, size_t bytes, int root, bool direct)
      : shm_(shm),
        sync_(shm, op),
        buf_(static_cast<std::byte*>(buf)),
        bytes_(bytes),
        root_(root),
        direct_(direct) {}

  bool advance() override {
    for (;;) {
      switch (phase_) {
        case Phase::Publish:
          if (sync_.me() == root_) sync_.publish_buffers(shm_.describe(buf_, bytes_), {});
          phase_ = Phase::Peers;
          break;
        case Phase::Peers:
          if (!sync_.reached_published(root_)) return false;
          shared_ = sync_.slot(root_).in.segment >= 0;
          direct_ = direct_ || shared_;
          plan();
          phase_ = c_ < chunks_ ? Phase::Chunk : Phase::Finish;
          break;
        case Phase::Chunk:
          if (!(sync_.me() == root_ ? stage() : copy())) return false;
          phase_ = ++c_ < chunks_ ? Phase::Chunk : Phase::Finish;
          break;
        case Phase::Finish:  // the root's buffer and slots are free once all have copied
          sync_.publish(&OpSlot::gathered, chunks_);
          if (sync_.me() == root_ && !sync_.all_reached(&OpSlot::gathered, chunks_)) return false;
          phase_ = Phase::Done;
          return true;
        case Phase::Done:
          return true;
      }
    }
  }

 private:
  enum class Phase { Publish, Peers, Chunk, Finish, Done };

  // The chunks, the same on every rank (from `bytes` and whether readers copy straight from
  // the root's buffer, which every rank knows once the root has published it).
  void plan() {
    if (direct_) {
      // Nothing to overlap: the root stages nothing. Each chunk read with cross-memory
      // attach is a system call that pins the pages, so the fewer the better: one read up to
      // shm_chunk_bytes(), as Open MPI reads the root's buffer in one call.
      chunk_ = std::max<size_t>(1, std::min(bytes_, shm_chunk_bytes()));
    } else {
      // At least 4 chunks (of at least 4 KiB) when staging, so that readers copy chunk c
      // while the root stages chunk c + 1: one whole chunk would serialise the two copies,
      // where a pipelined bcast (the library's) overlaps them.
      const size_t quarter = (bytes_ / 4 + kPipelineUnit - 1) / kPipelineUnit * kPipelineUnit;
      chunk_ = std::max<size_t>(1, std::min({shm_chunk_bytes(), shm_.staging_bytes() / 2,
                                             std::max(quarter, kPipelineUnit)}));
    }
    slots_ = std::max<size_t>(1, shm_.staging_bytes() / chunk_);
    chunks_ = (bytes_ + chunk_ - 1) / chunk_;
  }

  size_t len(size_t c) const { return std::min(chunk_, bytes_ - c * chunk_); }
  std::byte* slot(size_t c) const {
    return shm_.staging(root_, sync_.op()) + (c % slots_) * chunk_;
  }

  bool stage() {
    if (direct_) {  // readers copy straight from my buffer: nothing to stage
      c_ = chunks_ - 1;
      sync_.publish(&OpSlot::staged, chunks_);
      sync_.publish(&OpSlot::gathered, chunks_);
      return true;
    }
    if (c_ >= slots_ && !sync_.all_reached(&OpSlot::gathered, c_ - slots_ + 1)) return false;
    std::memcpy(slot(c_), buf_ + c_ * chunk_, len(c_));
    sync_.publish(&OpSlot::staged, c_ + 1);
    sync_.publish(&OpSlot::gathered, c_ + 1);  // the root has its own data
    return true;
  }

  bool copy() {
    if (!sync_.reached(root_, &OpSlot::staged, c_ + 1)) return false;
    if (direct_)  // memcpy from shared memory, or process_vm_readv
      shm_.read(buf_ + c_ * chunk_, sync_.slot(root_).in, c_ * chunk_, len(c_));
    else
      std::memcpy(buf_ + c_ * chunk_, slot(c_), len(c_));
    sync_.publish(&OpSlot::gathered, c_ + 1);
    return true;
  }

  NodeShm& shm_;
  PeerSync sync_;
  std::byte* buf_;
  size_t bytes_;
  int root_;
  size_t chunk_ = 1, slots_ = 1, chunks_ = 0, c_ = 0;
  bool shared_ = false, direct_ = false;
  Phase phase_ = Phase::Publish;
};

}  // namespace

std::unique_ptr<Pollable> shm_bcast(NodeShm& shm, uint64_t op, void* buf, size_t bytes, int root,
                                    bool direct) {
  return std::make_unique<ShmBcast>(shm, op, buf, bytes, root, direct);
}

}  // namespace cb::engine
