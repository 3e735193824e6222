#include "backends/backend.hpp"

#include "backends/control.hpp"
#include "core/errors.hpp"
#include "gpu/memory.hpp"

namespace cb {

Buf Backend::alloc(size_t bytes, Mem mem) {
  return alloc_buffer(bytes, mem);
}

void Backend::free(Buf& buf) {
  free_buffer(buf);
}

void Backend::iteration_barrier(const Control& ctl) {
  ctl.barrier();
}

std::string Backend::unsupported(const CollArgs& args) const {
  if (std::string why = coll_unsupported(args.coll, kind_); !why.empty()) return why;
  if (args.persistent)
    if (std::string why = persistent_refuses(args); !why.empty()) return why;
  return refuses(args);
}

std::string Backend::persistent_refuses(const CollArgs&) const {
  return "the " + name() +
         " backend has no persistent collectives (MPI 4.0's MPI_<Coll>_init): run the "
         "blocking benchmark, or --backend mpi";
}

std::unique_ptr<PersistentColl> Backend::init(const CollArgs& args) {
  throw UsageError(persistent_refuses(args));
}

gpu::Graph Backend::capture(const std::function<void()>&) {
  throw UsageError("-G (CUDA graph launch): the " + name() +
                   " backend's calls are not stream operations, so there is nothing to capture");
}

}  // namespace cb
