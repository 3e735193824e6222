// Gather(v), scatter(v) and allgatherv among the ranks of a node: every block is copied
// once, straight between the owner's buffer and its destination (memcpy when the other
// side is in shared memory, process_vm_readv otherwise). Gather pushes: each rank writes
// its block into the root's buffer when that is shared, so the copies run in parallel;
// a private root buffer cannot be written by peers, so the root then reads every block
// itself. Scatter and allgatherv pull: each rank reads the blocks it needs.
#include <cstring>

#include "engine/shm/pull_exchange.hpp"

namespace cb::engine {
namespace {

class ShmBlocks final : public PullExchange {
 public:
  ShmBlocks(NodeShm& shm, uint64_t op, ShmBlocksMode mode, const void* in, void* out,
            std::vector<size_t> bytes, std::vector<size_t> offsets, int root)
      : PullExchange(shm, op),
        mode_(mode),
        in_(static_cast<const std::byte*>(in)),
        out_(static_cast<std::byte*>(out)),
        bytes_(std::move(bytes)),
        offsets_(std::move(offsets)),
        root_(root) {}

  // A run keeps nothing but the buffers and the blocks' layout: persistent forms re-run it.
  bool renumber(uint64_t from, uint64_t to) override {
    restart(from, to);
    return true;
  }

 private:
  size_t bytes(int r) const { return bytes_[static_cast<size_t>(r)]; }
  size_t offset(int r) const { return offsets_[static_cast<size_t>(r)]; }
  size_t total() const {
    return bytes_.empty() ? 0 : offset(sync_.size() - 1) + bytes(sync_.size() - 1);
  }
  bool root() const { return sync_.me() == root_; }

  void publish() override {
    const BufferRef none{};
    switch (mode_) {
      case ShmBlocksMode::Gather:
        sync_.publish_buffers(shm_.describe(in_, bytes(sync_.me())),
                              root() ? shm_.describe(out_, total()) : none);
        break;
      case ShmBlocksMode::Scatter:
        sync_.publish_buffers(root() ? shm_.describe(in_, total()) : none, none);
        break;
      case ShmBlocksMode::Allgather:
        sync_.publish_buffers(shm_.describe(in_, bytes(sync_.me())), none);
        break;
    }
  }

  // Block `r` of every rank's input into `out_` at its offset; my own by memcpy unless it
  // is already there (in place).
  void read_all() {
    const int n = sync_.size(), me = sync_.me();
    for (int k = 0; k < n; ++k) {  // start at different peers: spread the reads
      const int r = (me + k) % n;
      std::byte* dst = out_ + offset(r);
      if (r != me)
        shm_.read(dst, sync_.slot(r).in, 0, bytes(r));
      else if (bytes(r) && dst != in_)
        std::memcpy(dst, in_, bytes(r));
    }
  }

  void pull() override {
    const int me = sync_.me();
    switch (mode_) {
      case ShmBlocksMode::Gather:
        if (sync_.slot(root_).out.segment >= 0) {  // push into the root's shared buffer
          std::byte* dst = (root() ? out_ : shm_.map(sync_.slot(root_).out)) + offset(me);
          if (bytes(me) && dst != in_) std::memcpy(dst, in_, bytes(me));
        } else if (root()) {
          read_all();
        }
        break;
      case ShmBlocksMode::Scatter:
        if (root()) {
          if (bytes(me) && out_ != in_ + offset(me)) std::memcpy(out_, in_ + offset(me), bytes(me));
        } else {
          shm_.read(out_, sync_.slot(root_).in, offset(me), bytes(me));
        }
        break;
      case ShmBlocksMode::Allgather:
        read_all();
        break;
    }
  }

  ShmBlocksMode mode_;
  const std::byte* in_;
  std::byte* out_;
  std::vector<size_t> bytes_, offsets_;
  int root_;
};

}  // namespace

std::unique_ptr<Pollable> shm_blocks(NodeShm& shm, uint64_t op, ShmBlocksMode mode, const void* in,
                                     void* out, std::vector<size_t> bytes,
                                     std::vector<size_t> offsets, int root) {
  return std::make_unique<ShmBlocks>(shm, op, mode, in, out, std::move(bytes), std::move(offsets),
                                     root);
}

}  // namespace cb::engine
