#pragma once

#include <memory>

#include "backends/backend.hpp"
#include "backends/control.hpp"

namespace cb {

// The backend named by --backend. Throws UsageError when it is unknown, not built, or
// cannot run on this machine, with the reason.
std::unique_ptr<Backend> make_backend(const BackendConfig& config, const Control& ctl);

}  // namespace cb
