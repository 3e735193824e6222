// Helpers for the dl_patterns tests: temporary files and error-message checks.
#pragma once

#include <gtest/gtest.h>

#include <unistd.h>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

#include "dl_patterns/trace.hpp"

namespace cb::dl::testing {

inline std::string data_path(std::string_view name) {
  return std::string(CB_DL_TEST_DATA) + "/" + std::string(name);
}

// A file with the given content under the temp directory, removed when it goes out of scope.
// The name keeps its extension so error messages can be checked against it.
class TempFile {
 public:
  TempFile(std::string_view name, std::string_view content) {
    static std::atomic<int> counter{0};
    const auto dir = std::filesystem::temp_directory_path() /
                     ("cb_dl_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    std::filesystem::create_directories(dir);
    path_ = (dir / std::string(name)).string();
    std::ofstream(path_, std::ios::binary) << content;
  }
  ~TempFile() { std::filesystem::remove_all(std::filesystem::path(path_).parent_path()); }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// The TraceError message `action` throws, or a test failure if it throws nothing.
template <typename F>
std::string trace_error(F&& action) {
  try {
    action();
  } catch (const TraceError& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected a TraceError";
  return {};
}

}  // namespace cb::dl::testing

// Checks that `statement` throws a TraceError whose message contains `text`.
#define EXPECT_TRACE_ERROR(statement, text) \
  EXPECT_THAT_MESSAGE(::cb::dl::testing::trace_error([&] { (void)(statement); }), text)
#define EXPECT_THAT_MESSAGE(message, text)                                \
  do {                                                                    \
    const std::string msg_ = (message);                                   \
    EXPECT_NE(msg_.find(text), std::string::npos) << "message: " << msg_; \
  } while (0)
