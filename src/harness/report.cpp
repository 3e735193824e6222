#include "harness/report.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>

#include "core/errors.hpp"

namespace cb {
namespace {
constexpr int kSizeWidth = 10;   // OMB: "%-*d", 10
constexpr int kValueWidth = 20;  // OMB: "%*.*f", 20, 2
}  // namespace

void Table::line(const std::string& text) const {
  if (!enabled_) return;
  std::printf("%s\n", text.c_str());
  std::fflush(stdout);
}

void Table::row(size_t bytes, const std::vector<Cell>& cells) {
  if (!enabled_) return;
  if (!printed_header_) {
    std::printf("%-*s", kSizeWidth, "# Size");
    for (const auto& c : cells) std::printf("%*s", kValueWidth, c.header.c_str());
    std::printf("\n");
    printed_header_ = true;
  }
  std::printf("%-*zu", kSizeWidth, bytes);
  for (const auto& c : cells) {
    if (!c.text.empty())
      std::printf("%*s", kValueWidth, c.text.c_str());
    else
      std::printf("%*.*f", kValueWidth, c.decimals, c.value);
  }
  std::printf("\n");
  std::fflush(stdout);
}

std::string utc_now_iso() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

Report::Report(bool is_root, std::string path, nlohmann::json doc)
    : is_root_(is_root), path_(std::move(path)), doc_(std::move(doc)) {
  doc_["schema"] = kSchema;
  doc_["start_time"] = utc_now_iso();
  doc_["results"] = nlohmann::json::array();
  doc_["status"] = "running";
  doc_["complete"] = false;
  std::lock_guard lock(mu_);
  flush_locked();
}

void Report::add_result(nlohmann::json record) {
  std::lock_guard lock(mu_);
  doc_["results"].push_back(std::move(record));
  flush_locked();
}

void Report::set(const std::string& key, nlohmann::json value) {
  std::lock_guard lock(mu_);
  doc_[key] = std::move(value);
  flush_locked();
}

void Report::finish(const std::string& status, const std::string& detail) {
  std::lock_guard lock(mu_);
  doc_["status"] = status;
  if (!detail.empty()) doc_["status_detail"] = detail;
  doc_["complete"] = status == "complete" || status == "validation_failed";
  doc_["end_time"] = utc_now_iso();
  flush_locked();
}

// Write a temporary file beside the target, then rename: readers never see a torn file.
void Report::flush_locked() {
  if (!is_root_ || path_.empty()) return;
  const std::string tmp = path_ + ".tmp." + std::to_string(getpid());
  {
    std::ofstream out(tmp, std::ios::trunc);
    if (!out) throw UsageError("cannot write JSON file '" + path_ + "': " + std::strerror(errno));
    out << doc_.dump(1) << '\n';
    if (!out.flush()) throw RuntimeError("writing '" + tmp + "' failed");
  }
  if (std::rename(tmp.c_str(), path_.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    std::remove(tmp.c_str());
    throw UsageError("cannot write JSON file '" + path_ + "': " + why);
  }
}

}  // namespace cb
