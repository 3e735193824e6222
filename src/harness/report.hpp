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
  // A new table follows (-T's next type): its rows get the column headers again.
  void new_section() { printed_header_ = false; }
  // Without a Size column (OMB's show_size = 0, osu_barrier).
  void set_show_size(bool on) { show_size_ = on; }

 private:
  bool enabled_;
  bool show_size_ = true;
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
  // status: "running", "complete", "validation_failed", "aborted", "error" (and
  // "interrupted", written by the signal handler: see interrupt.hpp)
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

// Replaces the JSON file at `path` with `text` atomically: a temporary file beside it
// (temp_file_of), written, flushed to disk (fsync), closed and renamed over `path`. Every
// step is checked (ENOSPC, EIO, EDQUOT ...); on failure the temporary file is removed,
// whatever was at `path` is left as it was, and the error names the file and the reason:
// UsageError when the file cannot be created or renamed (a bad path), RuntimeError when
// writing fails.
void write_file_atomically(const std::string& path, const std::string& text);
std::string temp_file_of(const std::string& path);  // "<path>.tmp.<pid>"

}  // namespace cb
