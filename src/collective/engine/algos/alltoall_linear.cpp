// Alltoall by linear exchange with a window: messages to and from up to W peers are in
// flight at once (all of them when W >= p-1), in rounds of W. Fewer rounds than pairwise,
// at the cost of congestion. W: CB_ALLTOALL_WINDOW (default 8).
#include <cstdlib>

#include "collective/engine/algos/algos.hpp"
#include "collective/engine/algos/alltoall_common.hpp"

namespace cb::engine {
namespace {

int window() {
  static const int w = [] {
    const char* env = std::getenv("CB_ALLTOALL_WINDOW");
    const int v = env ? std::atoi(env) : 0;
    return v > 0 ? v : 8;
  }();
  return w;
}

void build(Schedule& s, const CollArgs& a, const Group& c) {
  const int n = c.size(), r = c.rank();
  const AlltoallBuffers b(s, a, n);
  s.copy(b.out_block(r), b.in_block(r), b.block);
  for (int k = 1; k < n; ++k) {
    const int to = (r + k) % n, from = (r - k + n) % n;
    s.recv(b.out_block(from), b.block, from);
    s.send(b.in_block(to), b.block, to);
    if (k % window() == 0) s.end_round();
  }
  s.end_round();
}

}  // namespace

const Algorithm kAlltoallLinear{
    .coll = Coll::Alltoall,
    .name = "linear",
    .summary = "all peers at once, in windows of CB_ALLTOALL_WINDOW (8) peers",
    .cannot_run = nullptr,
    .build = build,
};

}  // namespace cb::engine
