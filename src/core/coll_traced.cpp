// Collectives a trace or the recorder may name that no backend benchmarks yet: what they
// are (buffers and the nccl-tests bandwidth convention), so that the replay can size and
// account for them, but no validation data and no backend (backends = 0).
#include "core/coll_spec.hpp"

namespace cb {
namespace {
size_t times_n(size_t count, int n) {
  return count * static_cast<size_t>(n);
}
size_t same(size_t count, int) {
  return count;
}
double all_but_own(int n) {
  return (n - 1.0) / n;
}
}  // namespace

// Each rank contributes `count` elements and receives all n blocks.
const CollSpec kAllgatherSpec{.coll = Coll::Allgather,
                              .reduces = false,
                              .rooted = false,
                              .send_elements = same,
                              .recv_elements = times_n,
                              .algbw_elements = times_n,
                              .bus_factor = all_but_own,
                              .fill = nullptr,
                              .check = nullptr,
                              .backends = 0};

// Each rank contributes n blocks of `count` elements and receives its reduced block.
const CollSpec kReduceScatterSpec{.coll = Coll::ReduceScatter,
                                  .reduces = true,
                                  .rooted = false,
                                  .send_elements = times_n,
                                  .recv_elements = same,
                                  .algbw_elements = times_n,
                                  .bus_factor = all_but_own,
                                  .fill = nullptr,
                                  .check = nullptr,
                                  .backends = 0};

// Every rank's `count` elements are reduced into the root's.
const CollSpec kReduceSpec{.coll = Coll::Reduce,
                           .reduces = true,
                           .rooted = true,
                           .send_elements = same,
                           .recv_elements = same,
                           .algbw_elements = same,
                           .bus_factor = [](int) { return 1.0; },
                           .fill = nullptr,
                           .check = nullptr,
                           .backends = 0};

}  // namespace cb
