// Reduce_scatter (block) among the ranks of a node: rank i reduces block i of every rank's
// input, read in place (memcpy-free when the inputs lie in shared memory; a private input
// is read with process_vm_readv a chunk at a time), straight into its output. Each input
// element is read once and each result element written once in all: no message copies.
// In place, the result is first built in the rank's own block of its input (which only it
// reads) and moved to the front once every rank has finished reading the others.
#include <algorithm>
#include <cstring>
#include <vector>

#include "engine/shm/peer_sync.hpp"
#include "engine/shm/rank_order.hpp"
#include "engine/shm/shm_collectives.hpp"

namespace cb::engine {
namespace {

class ShmReduceScatter final : public Pollable {
 public:
  ShmReduceScatter(NodeShm& shm, uint64_t op, const void* in, void* out, size_t count, Dtype dt,
                   Op rop)
      : shm_(shm),
        sync_(shm, op),
        in_(static_cast<const std::byte*>(in)),
        out_(static_cast<std::byte*>(out)),
        count_(count),
        dt_(dt),
        op_(rop),
        w_(dtype_size(dt)) {
    chunk_ = std::max<size_t>(1, shm_chunk_bytes() / w_);
  }

  bool advance() override {
    const int n = sync_.size(), me = sync_.me();
    const size_t block = count_ * w_;
    const bool in_place = in_ == out_;
    for (;;) {
      switch (phase_) {
        case Phase::Publish:
          sync_.publish_buffers(shm_.describe(in_, block * static_cast<size_t>(n)), {});
          phase_ = Phase::Peers;
          break;
        case Phase::Peers: {
          if (!sync_.peers_published()) return false;
          const size_t first = count_ * static_cast<size_t>(me);  // my block, in elements
          std::byte* dst = in_place ? out_ + first * w_ : out_;
          for (size_t c = 0; c < count_; c += chunk_) {
            const size_t len = std::min(chunk_, count_ - c);
            const std::byte* own = in_ + (first + c) * w_;
            reduce_in_rank_order(
                dst + c * w_, own, me, n, len, dt_, op_, save_,
                [&](int r, int which) { return peer_input(r, first + c, len, which); });
          }
          sync_.publish(&OpSlot::reduced, 1);
          phase_ = Phase::Finish;
          break;
        }
        case Phase::Finish:  // nobody reads my input any more
          if (!sync_.all_reached(&OpSlot::reduced, 1)) return false;
          if (in_place && me != 0 && block)
            std::memcpy(out_, out_ + block * static_cast<size_t>(me), block);
          phase_ = Phase::Done;
          return true;
        case Phase::Done:
          return true;
      }
    }
  }

 private:
  enum class Phase { Publish, Peers, Finish, Done };

  // Elements [first, first + len) of local rank r's input (a private one copied into
  // temporary `which`).
  const std::byte* peer_input(int r, size_t first, size_t len, int which) {
    const BufferRef& ref = sync_.slot(r).in;
    if (const std::byte* p = shm_.map(ref)) return p + first * w_;
    std::vector<std::byte>& tmp = tmp_[which];
    tmp.resize(chunk_ * w_);
    shm_.read(tmp.data(), ref, first * w_, len * w_);
    return tmp.data();
  }

  NodeShm& shm_;
  PeerSync sync_;
  const std::byte* in_;
  std::byte* out_;
  size_t count_;
  Dtype dt_;
  Op op_;
  size_t w_, chunk_ = 1;
  std::vector<std::byte> tmp_[2], save_;  // peers' private pieces; mine, in place
  Phase phase_ = Phase::Publish;
};

}  // namespace

std::unique_ptr<Pollable> shm_reduce_scatter(NodeShm& shm, uint64_t op, const void* in, void* out,
                                             size_t count, Dtype dt, Op rop) {
  return std::make_unique<ShmReduceScatter>(shm, op, in, out, count, dt, rop);
}

}  // namespace cb::engine
