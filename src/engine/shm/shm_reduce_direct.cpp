#include "engine/shm/shm_reduce_direct.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

#include "engine/partition/blocks.hpp"
#include "engine/shm/rank_order.hpp"

namespace cb::engine {
namespace {

class ReduceDirect final : public Pollable {
 public:
  ReduceDirect(NodeShm& shm, PeerSync& sync, const void* in, void* out, size_t count, Dtype dt,
               Op rop, ShmReduceMode mode, int root)
      : shm_(shm),
        sync_(sync),
        in_(static_cast<const std::byte*>(in)),
        out_(static_cast<std::byte*>(out)),
        count_(count),
        dt_(dt),
        op_(rop),
        mode_(mode),
        root_(root),
        w_(dtype_size(dt)),
        chunk_(std::max<size_t>(1, shm_chunk_bytes() / w_)) {}

  bool advance() override {
    for (;;) {
      switch (phase_) {
        case Phase::Reduce:
          reduce_my_block();
          sync_.publish(&OpSlot::reduced, 1);
          phase_ = Phase::Gather;
          break;
        case Phase::Gather:
          // Peers still read my input (in place: my output) until they have reduced.
          if (!sync_.all_reached(&OpSlot::reduced, 1)) return false;
          if (mode_ == ShmReduceMode::Scatter || sync_.me() == root_) gather_blocks();
          sync_.publish(&OpSlot::gathered, 1);
          phase_ = Phase::Finish;
          break;
        case Phase::Finish:  // my output must stay until every rank has copied from it
          if (!sync_.all_reached(&OpSlot::gathered, 1)) return false;
          phase_ = Phase::Done;
          return true;
        case Phase::Done:
          return true;
      }
    }
  }

 private:
  enum class Phase { Reduce, Gather, Finish, Done };

  Block block(int r) const {
    return block_of(count_, static_cast<size_t>(sync_.size()), static_cast<size_t>(r));
  }

  // Elements [first, first + len) of local rank r's input, as this rank can read them
  // (a private one copied into temporary `which`).
  const std::byte* peer_input(int r, size_t first, size_t len, int which) {
    const BufferRef& ref = sync_.slot(r).in;
    if (const std::byte* p = shm_.map(ref)) return p + first * w_;
    std::vector<std::byte>& tmp = tmp_[which];
    tmp.resize(len * w_);
    shm_.read(tmp.data(), ref, first * w_, len * w_);
    return tmp.data();
  }

  void reduce_my_block() {
    const int me = sync_.me(), n = sync_.size();
    const Block b = block(me);
    // Cache-sized pieces: a peer's piece is read once into tmp_ and reduced from there.
    for (size_t c = b.offset; c < b.offset + b.length; c += chunk_) {
      const size_t len = std::min(chunk_, b.offset + b.length - c);
      std::byte* dst = out_ + c * w_;
      const std::byte* own = in_ + c * w_;  // in place: dst, read before it is written
      reduce_in_rank_order(dst, own, me, n, len, dt_, op_, save_,
                           [&](int r, int which) { return peer_input(r, c, len, which); });
    }
  }

  void gather_blocks() {
    const int me = sync_.me(), n = sync_.size();
    for (int k = 1; k < n; ++k) {
      const int r = (me + k) % n;  // start at different peers: spread the reads
      const Block b = block(r);
      shm_.read(out_ + b.offset * w_, sync_.slot(r).out, b.offset * w_, b.length * w_);
    }
  }

  NodeShm& shm_;
  PeerSync& sync_;
  const std::byte* in_;
  std::byte* out_;
  size_t count_;
  Dtype dt_;
  Op op_;
  ShmReduceMode mode_;
  int root_;
  size_t w_, chunk_;
  std::vector<std::byte> tmp_[2], save_;  // peers' private pieces; mine, in place
  Phase phase_ = Phase::Reduce;
};

}  // namespace

std::unique_ptr<Pollable> reduce_direct(NodeShm& shm, PeerSync& sync, const void* in, void* out,
                                        size_t count, Dtype dt, Op rop, ShmReduceMode mode,
                                        int root) {
  return std::make_unique<ReduceDirect>(shm, sync, in, out, count, dt, rop, mode, root);
}

}  // namespace cb::engine
