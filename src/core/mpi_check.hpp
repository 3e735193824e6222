// CB_MPI(call): an MPI call that returned an error becomes a RuntimeError naming the call,
// MPI's error string and the source line. Header-only so that every library can use it.
#pragma once

#include <mpi.h>

#include <string>

#include "core/errors.hpp"

namespace cb {

[[noreturn]] inline void throw_mpi_error(int code, const char* call, const char* file, int line) {
  char text[MPI_MAX_ERROR_STRING] = {};
  int len = 0;
  MPI_Error_string(code, text, &len);
  throw RuntimeError(std::string(call) + " failed: " + text + " (" + file + ":" +
                     std::to_string(line) + ")");
}

}  // namespace cb

#define CB_MPI(call)                                                                             \
  do {                                                                                           \
    const int cb_mpi_rc_ = (call);                                                               \
    if (cb_mpi_rc_ != MPI_SUCCESS) ::cb::throw_mpi_error(cb_mpi_rc_, #call, __FILE__, __LINE__); \
  } while (0)
