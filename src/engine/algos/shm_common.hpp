// What the shared-memory algorithms share: whether they can run, and the input pointer.
#pragma once

#include <string>

#include "engine/comm.hpp"
#include "engine/group.hpp"
#include "engine/shm/shm_collectives.hpp"
#include "core/args.hpp"

namespace cb::engine {

inline std::string needs_node_shm(const CollArgs& a, const Group& g, std::string_view algo) {
  if (a.recv.mem == Mem::Cuda)
    return std::string(algo) +
           " reads peers' host memory; device buffers on a node would need CUDA IPC (not "
           "implemented)";
  if (g.shm() && g.size() == g.shm()->local_size()) return {};
  std::string why = std::string(algo) + " needs every rank on one node with shared memory";
  if (g.comm())
    why += " (engine shared memory: " + g.comm()->shm_status() +
           ", nodes: " + std::to_string(g.comm()->node_count()) + ")";
  return why;
}

inline const void* input_of(const CollArgs& a) {
  return a.in_place ? a.recv.ptr : a.send.ptr;
}

}  // namespace cb::engine
