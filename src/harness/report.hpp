// Output: the OMB-style table on stdout and the JSON document (-J), both written by rank 0
// and flushed after every message size so that an abort keeps what was measured.
#pragma once

#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace cb {

struct Cell {
  std::string header;  // "Avg Latency(us)"
  double value = 0;
  int decimals = 2;  // 0 for counts
  std::string text;  // printed instead of value when set ("Pass")
};

class Table {
 public:
  explicit Table(bool enabled) : enabled_(enabled) {}
  void line(const std::string& text) const;  // "# ..." header lines
  // Prints the column headers before the first row, then the row.
  void row(size_t bytes, const std::vector<Cell>& cells);

 private:
  bool enabled_;
  bool printed_header_ = false;
};

// The collbench.result/1 document. Thread-safe: the watchdog may mark it aborted.
class Report {
 public:
  static constexpr const char* kSchema = "collbench.result/1";

  // `doc` holds the header fields (benchmark, backend, options, environment ...).
  // Only the root writes; an empty path disables the file. Throws UsageError if the
  // file cannot be written.
  Report(bool is_root, std::string path, nlohmann::json doc);

  void add_result(nlohmann::json record);
  void set(const std::string& key, nlohmann::json value);
  // status: "running", "complete", "validation_failed", "aborted", "error"
  void finish(const std::string& status, const std::string& detail = {});

 private:
  void flush_locked();

  bool is_root_;
  std::string path_;
  nlohmann::json doc_;
  std::mutex mu_;
};

// UTC time as ISO 8601 ("2026-11-21T10:00:00Z").
std::string utc_now_iso();

}  // namespace cb
