// Barrier: no data and no message size (osu_barrier): one latency per run. The harness
// measures it once with size 0; there are no buffers, nothing to fill and nothing to check.
#include "core/coll_spec.hpp"

namespace cb {
namespace {
size_t none(size_t, int) {
  return 0;
}
}  // namespace

const CollSpec kBarrierSpec{
    .coll = Coll::Barrier,
    .reduces = false,
    .rooted = false,
    .send_elements = none,
    .recv_elements = none,
    .algbw_elements = none,
    .bus_factor = [](int) { return 0.0; },
    .fill = [](const CollArgs&, int, int, std::byte*, std::byte*) {},
    .check = [](const CollArgs&, int, int, const std::byte*) { return size_t{0}; },
    .backends = kAllBackends,
    .sized = false,
    .in_place_defined = false,
};

}  // namespace cb
