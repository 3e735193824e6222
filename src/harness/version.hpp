#pragma once

namespace cb {
// The source revision this binary was built from (`git describe --always --dirty`),
// regenerated at every build; "unknown" outside a git checkout.
const char* git_revision();
}  // namespace cb
