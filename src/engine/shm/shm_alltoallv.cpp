// Alltoallv among the ranks of a node: each rank copies the blocks meant for it out of
// every other rank's input, straight from it (memcpy from shared memory, or
// process_vm_readv), at the offsets of the count matrix. Not in place (alltoallv has none).
#include <cstring>

#include "engine/shm/pull_exchange.hpp"

namespace cb::engine {
namespace {

class ShmAlltoallv final : public PullExchange {
 public:
  ShmAlltoallv(NodeShm& shm, uint64_t op, const void* in, void* out, const CountMatrix& m,
               size_t width)
      : PullExchange(shm, op),
        in_(static_cast<const std::byte*>(in)),
        out_(static_cast<std::byte*>(out)),
        m_(m),
        w_(width) {}

 private:
  int self() const { return shm_.members()[static_cast<size_t>(sync_.me())]; }
  void publish() override {
    sync_.publish_buffers(shm_.describe(in_, m_.send_total(self()) * w_),
                          shm_.describe(out_, m_.recv_total(self()) * w_));
  }
  void pull() override {
    const int n = sync_.size(), me = sync_.me(), self = this->self();
    for (int k = 0; k < n; ++k) {  // start at different peers: spread the reads
      const int r = (me + k) % n;
      const int from = shm_.members()[static_cast<size_t>(r)];
      const size_t bytes = m_.count(from, self) * w_;
      std::byte* dst = out_ + m_.recv_offset(self, from) * w_;
      const size_t src = m_.send_offset(from, self) * w_;
      if (bytes == 0) continue;
      if (r == me)
        std::memcpy(dst, in_ + src, bytes);
      else
        shm_.read(dst, sync_.slot(r).in, src, bytes);
    }
  }

  const std::byte* in_;
  std::byte* out_;
  const CountMatrix& m_;
  size_t w_;
};

}  // namespace

std::unique_ptr<Pollable> shm_alltoallv(NodeShm& shm, uint64_t op, const void* in, void* out,
                                        const CountMatrix& counts, size_t width) {
  return std::make_unique<ShmAlltoallv>(shm, op, in, out, counts, width);
}

}  // namespace cb::engine
