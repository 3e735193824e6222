#include "backends/make_backend.hpp"

#include "backends/engine_backend.hpp"
#include "backends/mpi_backend.hpp"
#include "config.hpp"
#include "core/errors.hpp"
#if CB_HAVE_NCCL
#include "backends/nccl_backend.hpp"
#endif

namespace cb {

std::unique_ptr<Backend> make_backend(const BackendConfig& opt, const Control& ctl) {
  if (opt.staging && opt.name != "mpi")
    throw UsageError(
        "--staging applies to the mpi backend (the engine stages device buffers itself)");
  if (opt.progress_thread && opt.name != "engine")
    throw UsageError("--progress-thread is an engine option (--backend engine)");
  if (opt.name == "mpi") return std::make_unique<MpiBackend>(ctl, opt.staging);
  if (opt.name == "nccl") {
#if CB_HAVE_NCCL
    return std::make_unique<NcclBackend>(opt, ctl);
#else
    throw UsageError(
        "--backend nccl: collbench was built without NCCL (COLLBENCH_NCCL=OFF, no CUDA, or "
        "nccl.h / libnccl not found at configure time: set NCCL_ROOT)");
#endif
  }
  if (opt.name == "engine") return std::make_unique<EngineBackend>(ctl, opt.progress_thread);
  throw UsageError("--backend: unknown backend '" + opt.name + "'");
}

}  // namespace cb
