// Barrier inside one node through shared memory: every rank raises a counter in its own
// operation slot and waits for everyone else's (no messages).
#include "engine/algos/algos.hpp"
#include "engine/algos/shm_common.hpp"

namespace cb::engine {
namespace {

std::string cannot_run(const CollArgs&, const Group& g) {
  if (g.shm() && g.size() == g.shm()->local_size()) return {};
  std::string why = "shm needs every rank on one node with shared memory";
  if (g.comm())
    why += " (engine shared memory: " + g.comm()->shm_status() +
           ", nodes: " + std::to_string(g.comm()->node_count()) + ")";
  return why;
}

}  // namespace

const Algorithm kBarrierShm{
    .coll = Coll::Barrier,
    .name = "shm",
    .summary = "shared memory: one counter per rank, everyone waits for all",
    .cannot_run = cannot_run,
    .build =
        [](Schedule& s, const CollArgs&, const Group& g) {
          s.poll(shm_barrier(*g.shm(), s.op() * 4));
          s.end_round();
        },
};

}  // namespace cb::engine
