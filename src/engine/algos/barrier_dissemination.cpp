// Barrier by dissemination (Hensgen, Finkel and Manber; MPICH's default): in round k every
// rank sends a token to rank + 2^k and waits for one from rank - 2^k. After ceil(log2(p))
// rounds every rank has heard, directly or not, from every other. Any rank count.
#include "engine/algos/algos.hpp"
#include "engine/algos/common.hpp"

namespace cb::engine {
namespace {

void build(Schedule& s, const CollArgs&, const Group& c) {
  const int n = c.size(), r = c.rank();
  // Zero-byte transfers are dropped, so the token is one byte.
  std::byte* token = s.scratch(2);
  for (int k = 1; k < n; k <<= 1) {
    s.recv(token + 1, 1, (r - k + n) % n);
    s.send(token, 1, (r + k) % n);
    s.end_round();
  }
  s.end_round();
}

}  // namespace

const Algorithm kBarrierDissemination{
    .coll = Coll::Barrier,
    .name = "dissemination",
    .summary = "ceil(log2(p)) rounds: token to rank + 2^k, from rank - 2^k",
    .cannot_run = nullptr,
    .build = build,
};

}  // namespace cb::engine
