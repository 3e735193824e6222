// What the shared-memory algorithms share: whether they can run, and the input pointer.
#pragma once

#include <string>

#include "core/args.hpp"
#include "engine/comm.hpp"
#include "engine/group.hpp"
#include "engine/shm/shm_collectives.hpp"

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

// For the single-copy algorithms on private buffers ("cma"): buffers in the engine's
// shared heap are read in place by "shm" already.
inline std::string needs_cma(const CollArgs& a, const Group& g, std::string_view algo,
                             const void* buffer) {
  if (std::string why = needs_node_shm(a, g, algo); !why.empty()) return why;
  const NodeShm& shm = *g.shm();
  if (!shm.cma())
    return std::string(algo) + " needs cross-memory attach (" + shm.cma_status() + ")";
  if (shm.is_shared(buffer))
    return std::string(algo) +
           " is for private buffers (a program's own, --alloc plain); these are in the engine's "
           "shared memory, which shm reads in place";
  return {};
}

inline const void* input_of(const CollArgs& a) {
  return a.in_place ? a.recv.ptr : a.send.ptr;
}

// For the algorithms that copy straight out of peers' inputs: a private input (not in
// the engine's shared heap) can be read only with cross-memory attach. Ranks pass buffers
// of one kind (the benchmarks' --alloc; a program's own are all private), so they agree.
inline std::string needs_peer_reads(const CollArgs& a, const Group& g, std::string_view algo) {
  if (std::string why = needs_node_shm(a, g, algo); !why.empty()) return why;
  const NodeShm& shm = *g.shm();
  if (shm.cma() || shm.is_shared(input_of(a))) return {};
  return std::string(algo) + " reads peers' private buffers, which needs cross-memory attach (" +
         shm.cma_status() + ")";
}

}  // namespace cb::engine
