#pragma once

#include <memory>

#include "harness/backend.hpp"
#include "harness/control.hpp"
#include "harness/options.hpp"

namespace cb {

// The backend named by --backend. Throws UsageError when it is unknown, not built, or
// cannot run on this machine, with the reason.
std::unique_ptr<Backend> make_backend(const Options& opt, const Control& ctl);

}  // namespace cb
