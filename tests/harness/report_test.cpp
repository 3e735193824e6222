#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/errors.hpp"
#include "harness/interrupt.hpp"
#include "harness/report.hpp"

namespace cb {
namespace {

nlohmann::json read(const std::string& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

std::string temp_path(const char* name) {
  return (std::filesystem::temp_directory_path() /
          (std::string(name) + "." + std::to_string(getpid()) + ".json"))
      .string();
}

TEST(Report, WritesAfterEveryResultAndLeavesNoTemporaryFile) {
  const std::string path = temp_path("cb_report");
  {
    Report r(true, path, {{"benchmark", {{"name", "latency"}}}});
    auto doc = read(path);
    EXPECT_EQ(doc["schema"], "collbench.result/1");
    EXPECT_EQ(doc["status"], "running");
    EXPECT_EQ(doc["complete"], false);
    EXPECT_TRUE(doc["results"].empty());

    r.add_result({{"bytes", 8}});
    r.add_result({{"bytes", 16}});
    doc = read(path);  // a crash now would keep both sizes
    ASSERT_EQ(doc["results"].size(), 2u);
    EXPECT_EQ(doc["results"][1]["bytes"], 16);

    r.finish("complete");
  }
  const auto doc = read(path);
  EXPECT_EQ(doc["status"], "complete");
  EXPECT_EQ(doc["complete"], true);
  EXPECT_TRUE(doc.contains("end_time"));
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp." + std::to_string(getpid())));
  std::filesystem::remove(path);
}

TEST(Report, AbortKeepsResultsAndSaysWhy) {
  const std::string path = temp_path("cb_report_abort");
  Report r(true, path, {});
  r.add_result({{"bytes", 1}});
  r.finish("aborted", "time limit exceeded at message size 1 B");
  const auto doc = read(path);
  EXPECT_EQ(doc["status"], "aborted");
  EXPECT_EQ(doc["complete"], false);
  EXPECT_EQ(doc["results"].size(), 1u);
  EXPECT_NE(doc["status_detail"].get<std::string>().find("time limit"), std::string::npos);
  std::filesystem::remove(path);
}

TEST(Report, NonRootAndEmptyPathWriteNothing) {
  const std::string path = temp_path("cb_report_none");
  Report r(false, path, {});
  r.add_result({{"bytes", 1}});
  EXPECT_FALSE(std::filesystem::exists(path));
  Report silent(true, "", {});
  silent.add_result({{"bytes", 1}});
}

TEST(Report, UnwritablePathIsAUsageError) {
  EXPECT_THROW(Report(true, "/nonexistent-dir/x.json", {}), UsageError);
}

// SIGTERM in the middle of a run (in a child process: the handler ends it): the document
// keeps the finished results, says it was interrupted and by what, and no temporary file
// is left; the status is 128 + SIGTERM.
TEST(Report, SignalLeavesTheDocumentMarkedInterrupted) {
  const std::string path = temp_path("cb_report_signal");
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    install_interrupt_handlers(0);
    Report r(true, path, {});
    r.add_result({{"bytes", 8}});
    r.add_result({{"bytes", 16}});
    raise(SIGTERM);
    _exit(0);  // not reached
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 128 + SIGTERM);
  const auto doc = read(path);
  EXPECT_EQ(doc["status"], "interrupted");
  EXPECT_EQ(doc["complete"], false);
  ASSERT_EQ(doc["results"].size(), 2u);
  EXPECT_EQ(doc["results"][1]["bytes"], 16);
  EXPECT_EQ(doc["status_detail"].get<std::string>().rfind("interrupted by SIGTERM", 0), 0u);
  EXPECT_EQ(doc["end_time"].get<std::string>().size(), 20u);
  const auto dir = std::filesystem::path(path).parent_path();
  for (const auto& e : std::filesystem::directory_iterator(dir))
    EXPECT_EQ(e.path().string().find(path + ".tmp"), std::string::npos) << e.path();
  std::filesystem::remove(path);
}

TEST(Report, UtcTimestampFormat) {
  const std::string t = utc_now_iso();
  ASSERT_EQ(t.size(), 20u);
  EXPECT_EQ(t[10], 'T');
  EXPECT_EQ(t.back(), 'Z');
}

}  // namespace
}  // namespace cb
