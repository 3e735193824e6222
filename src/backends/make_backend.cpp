#include "backends/make_backend.hpp"

#include "backends/engine_backend.hpp"
#include "backends/mpi_backend.hpp"
#include "harness/errors.hpp"

namespace cb {

std::unique_ptr<Backend> make_backend(const Options& opt, const Control& ctl) {
  if (opt.progress_thread && opt.backend != "engine")
    throw UsageError("--progress-thread is an engine option (--backend engine)");
  if (opt.backend == "mpi") return std::make_unique<MpiBackend>(ctl);
  if (opt.backend == "nccl")
    throw UsageError("--backend nccl is not implemented yet in this version of collbench");
  if (opt.backend == "engine") return std::make_unique<EngineBackend>(ctl, opt.progress_thread);
  throw UsageError("--backend: unknown backend '" + opt.backend + "'");
}

}  // namespace cb
