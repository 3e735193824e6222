// The one place where collbench knows which MPI implementation it is built against.
// Everything else is written against the MPI standard; what differs between MPICH, Open MPI
// and the MPI 5.0 standard ABI (mpi_abi.h, every handle a pointer) is decided here, by
// feature checks (macros of mpi.h, CB_MPI_HAS_* from CMake's check_cxx_symbol_exists in
// cmake/Dependencies.cmake), never by a version string, with one exception: a known bug of
// one library release, which has no feature to test (mpi_reduce_in_place_root_bug).
//
//   CB_MPI_ABI_STANDARD  built against mpi_abi.h (-DCOLLBENCH_MPI_ABI=ON, MPICH's mpicxx_abi)
//   CB_MPI_OPEN_MPI      built against Open MPI's mpi.h (OPEN_MPI)
//   CB_MPI_MPICH         built against MPICH's mpi.h (MPICH, MPICH_NUMVERSION)
#pragma once

#include <mpi.h>

#include <cstdlib>
#include <string>

#include "config.hpp"
#if CB_MPI_EXT_HAS_CUDA_QUERY
#include <mpi-ext.h>  // Open MPI declares MPIX_Query_cuda_support here
#endif

#if defined(MPI_ABI_VERSION)
#define CB_MPI_ABI_STANDARD 1
#define CB_MPI_OPEN_MPI 0
#define CB_MPI_MPICH 0
#elif defined(OPEN_MPI) && OPEN_MPI
#define CB_MPI_ABI_STANDARD 0
#define CB_MPI_OPEN_MPI 1
#define CB_MPI_MPICH 0
#elif defined(MPICH) || defined(MPICH_NUMVERSION)
#define CB_MPI_ABI_STANDARD 0
#define CB_MPI_OPEN_MPI 0
#define CB_MPI_MPICH 1
#else
#define CB_MPI_ABI_STANDARD 0
#define CB_MPI_OPEN_MPI 0
#define CB_MPI_MPICH 0
#endif

namespace cb::mpi_compat {

// The ABI the program was compiled for: "standard" (MPI 5.0 ABI), "MPICH", "Open MPI", or
// "unknown" (another implementation's mpi.h).
inline const char* compiled_abi() {
  if (CB_MPI_ABI_STANDARD) return "standard";
  if (CB_MPI_OPEN_MPI) return "Open MPI";
  if (CB_MPI_MPICH) return "MPICH";
  return "unknown";
}

// Whether the library can say if it takes device pointers (MPICH >= 4.0 in mpi.h, Open MPI
// in mpi-ext.h; the standard ABI has no such query).
inline constexpr bool kHasCudaQuery = CB_MPI_HAS_CUDA_QUERY || CB_MPI_EXT_HAS_CUDA_QUERY;
inline int query_cuda_support() {
#if CB_MPI_HAS_CUDA_QUERY || CB_MPI_EXT_HAS_CUDA_QUERY
  return MPIX_Query_cuda_support();
#else
  return 0;
#endif
}

// Extended generalized requests (MPICH's MPIX_Grequest_start: a poll function MPI_Test and
// MPI_Wait call, and a wait function for MPI_Wait*): the engine preload's non-blocking
// operations advance inside the library's own waits. Without them (Open MPI, the standard
// ABI) the preload starts standard generalized requests (MPI_Grequest_start) and advances
// its operations in its own MPI_Wait*/MPI_Test* wrappers (docs/preload.md, "Progress").
inline constexpr bool kHasGrequestExtensions = CB_MPI_HAS_GREQUESTX;
using GrequestPoll = int (*)(void*, MPI_Status*);
using GrequestWait = int (*)(int, void**, double, MPI_Status*);
inline int pmpi_grequest_start(MPI_Grequest_query_function* query, MPI_Grequest_free_function* free,
                               MPI_Grequest_cancel_function* cancel,
                               [[maybe_unused]] GrequestPoll poll,
                               [[maybe_unused]] GrequestWait wait, void* state,
                               MPI_Request* request) {
#if CB_MPI_HAS_GREQUESTX
  return PMPIX_Grequest_start(query, free, cancel, poll, wait, state, request);
#else
  return PMPI_Grequest_start(query, free, cancel, state, request);
#endif
}

// MPICH 4.0's device-level (ch4) MPI_Reduce reads MPI_IN_PLACE as a buffer at a root other
// than 0 above 2 KiB and crashes; MPIR_CVAR_REDUCE_DEVICE_COLLECTIVE=0 avoids it. A bug of
// one release has no feature to test: `library_version` is MPI_Get_library_version's first
// line, which names the library that runs (with the standard ABI, not the one compiled for).
inline bool mpi_reduce_in_place_root_bug(const std::string& library_version) {
  const char* device_coll = std::getenv("MPIR_CVAR_REDUCE_DEVICE_COLLECTIVE");
  if (device_coll && std::string(device_coll) == "0") return false;
  return library_version.find("MPICH Version: 4.0") != std::string::npos;
}

// MPICH 4.0's MPI_Allgather_init, MPI_Gather_init and MPI_Scatter_init deliver the first
// start's data again at later starts, and its MPI_Scatter_init hangs at its second start on
// 3 ranks (a one-element C program shows both; MPICH 5.0.2 has neither). A hang cannot be
// probed for safely, so the release decides, as above.
inline bool mpi_persistent_gather_scatter_bug(const std::string& library_version) {
  return library_version.find("MPICH Version: 4.0") != std::string::npos;
}

}  // namespace cb::mpi_compat
