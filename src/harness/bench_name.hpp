// The name of the benchmark an executable runs ("allreduce", "put_latency"): defined by
// the one-line source CMake generates for each cb_<name> (src/CMakeLists.txt,
// cb_named_executables), read by the family's main(), which every executable shares.
#pragma once

namespace cb {

extern const char* const kBenchName;

}  // namespace cb
