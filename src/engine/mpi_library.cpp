#include "engine/mpi_library.hpp"

#include <mpi.h>

#include <nlohmann/json.hpp>

#include "config.hpp"
#if CB_MPI_EXT_HAS_CUDA_QUERY
#include <mpi-ext.h>
#endif

namespace cb {

std::string mpi_library_version() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int len = 0;
  MPI_Get_library_version(text, &len);
  std::string s(text, static_cast<size_t>(len));
  const auto nl = s.find('\n');
  if (nl != std::string::npos) s.resize(nl);
  // "MPICH Version:\t4.0.2" -> "MPICH Version: 4.0.2": one space between words.
  std::string out;
  for (char c : s) {
    const bool blank = c == ' ' || c == '\t';
    if (blank && (out.empty() || out.back() == ' ')) continue;
    out += blank ? ' ' : c;
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

bool mpi_is_cuda_aware() {
#if CB_MPI_HAS_CUDA_QUERY || CB_MPI_EXT_HAS_CUDA_QUERY
  return MPIX_Query_cuda_support() != 0;
#else
  return false;
#endif
}

void describe_mpi_cuda_awareness(nlohmann::json& out) {
#if CB_MPI_HAS_CUDA_QUERY || CB_MPI_EXT_HAS_CUDA_QUERY
  const int yes = MPIX_Query_cuda_support();
  out["cuda_aware"] = yes != 0;
  out["cuda_aware_detail"] = "MPIX_Query_cuda_support() returned " + std::to_string(yes);
#else
  out["cuda_aware"] = nullptr;
  out["cuda_aware_detail"] = "unknown: the library offers no query";
#endif
}

}  // namespace cb
