#include "engine/mpi_library_info.hpp"

#include <mpi.h>

#include <nlohmann/json.hpp>

#include "core/mpi_compat.hpp"

namespace cb {

namespace {

// MPI_Get_library_version, every line.
std::string full_library_version() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int len = 0;
  MPI_Get_library_version(text, &len);
  std::string s(text, static_cast<size_t>(len > 0 ? len : 0));
  const auto nul = s.find('\0');  // Open MPI counts its terminating NUL in len
  if (nul != std::string::npos) s.resize(nul);
  return s;
}

// Runs of blanks become one space; none at the ends.
std::string squeeze(const std::string& s) {
  std::string out;
  for (char c : s) {
    const bool blank = c == ' ' || c == '\t' || c == '\r';
    if (blank && (out.empty() || out.back() == ' ')) continue;
    out += blank ? ' ' : c;
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

// The value of "KEY: value" among MPICH's lines ("MPICH Device: ch4:ucx"), or empty.
std::string line_value(const std::string& text, const std::string& key) {
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    const std::string line = squeeze(text.substr(at, end - at));
    if (line.rfind(key + ":", 0) == 0) return squeeze(line.substr(key.size() + 1));
    at = end + 1;
  }
  return {};
}

}  // namespace

std::string mpi_library_version() {
  std::string s = full_library_version();
  const auto nl = s.find('\n');
  if (nl != std::string::npos) s.resize(nl);
  // "MPICH Version:\t4.0.2" -> "MPICH Version: 4.0.2": one space between words.
  return squeeze(s);
}

void describe_mpi_library(nlohmann::json& out) {
  const std::string text = full_library_version();
  const std::string first = mpi_library_version();
  std::string impl, version, device;
  if (first.rfind("MPICH Version:", 0) == 0) {
    impl = "MPICH";
    version = line_value(text, "MPICH Version");
    device = line_value(text, "MPICH Device");
  } else if (first.rfind("Open MPI v", 0) == 0) {
    // "Open MPI v5.0.11, package: Open MPI ..., ident: 5.0.11, ..."
    impl = "Open MPI";
    version = first.substr(
        10, first.find(',') == std::string::npos ? std::string::npos : first.find(',') - 10);
  } else {
    // Another implementation: its first line as it is ("Intel(R) MPI Library 2021.13 ...").
    impl = first;
  }
  out["implementation"] = impl;
  out["version"] = version.empty() ? nlohmann::json(nullptr) : nlohmann::json(version);
  // The ABI this program was compiled for: with the standard ABI, `implementation` is the
  // library it runs on, which may differ from the one it was built with.
  out["abi"] = mpi_compat::compiled_abi();
  if (!device.empty()) {
    out["device"] = device;
    out["device_detail"] = "MPI_Get_library_version: MPICH Device";
  } else {
    out["device"] = nullptr;
    out["device_detail"] =
        impl == "Open MPI"
            ? "Open MPI's version string does not name its transport (ompi_info does)"
            : "the library's version string names no device";
  }
}

bool mpi_is_cuda_aware() {
  return mpi_compat::kHasCudaQuery && mpi_compat::query_cuda_support() != 0;
}

void describe_mpi_cuda_awareness(nlohmann::json& out) {
  if (mpi_compat::kHasCudaQuery) {
    const int yes = mpi_compat::query_cuda_support();
    out["cuda_aware"] = yes != 0;
    out["cuda_aware_detail"] = "MPIX_Query_cuda_support() returned " + std::to_string(yes);
  } else {
    out["cuda_aware"] = nullptr;
    out["cuda_aware_detail"] = "unknown: the library offers no query";
  }
}

}  // namespace cb
