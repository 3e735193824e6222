#include "harness/report.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>

#include "core/errors.hpp"
#include "harness/interrupt.hpp"

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

namespace {
// Right-aligned in `width`, but never glued to the previous column: a text as wide as the
// column or wider (a long series name) keeps one space before it, so the columns stay
// separated by blanks for whoever splits the table.
void print_field(const std::string& text, int width) {
  if (static_cast<int>(text.size()) >= width)
    std::printf(" %s", text.c_str());
  else
    std::printf("%*s", width, text.c_str());
}
}  // namespace

void Table::row(size_t bytes, const std::vector<Cell>& cells) {
  if (!enabled_) return;
  if (!printed_header_) {
    for (size_t i = 0; i < cells.size() || i == 0; ++i) {
      if (i == 0 && show_size_)
        std::printf("%-*s", kSizeWidth, "# Size");
      else if (i == 0)
        std::printf("#");
      if (i < cells.size())
        print_field(cells[i].header, kValueWidth - (i == 0 && !show_size_ ? 1 : 0));
    }
    std::printf("\n");
    printed_header_ = true;
  }
  if (show_size_) std::printf("%-*zu", kSizeWidth, bytes);
  for (const auto& c : cells) {
    if (!c.text.empty())
      print_field(c.text, kValueWidth);
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

std::string temp_file_of(const std::string& path) {
  return path + ".tmp." + std::to_string(getpid());
}

void write_file_atomically(const std::string& path, const std::string& text) {
  const std::string tmp = temp_file_of(path);
  const auto why = [&](const std::string& step, int err) {
    const bool kept = ::access(path.c_str(), F_OK) == 0;
    return "cannot write JSON file '" + path + "': " + step + ": " + std::strerror(err) +
           (kept ? " (the previous document there is unchanged)" : "");
  };
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd < 0) {
    const int e = errno;
    throw UsageError(why("cannot create '" + tmp + "'", e));
  }
  const char* p = text.data();
  size_t left = text.size();
  std::string failed;
  int err = 0;
  while (left && failed.empty()) {
    const ssize_t w = ::write(fd, p, left);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      err = w < 0 ? errno : EIO;
      failed = "writing '" + tmp + "'";
    } else {
      p += w;
      left -= static_cast<size_t>(w);
    }
  }
  // fsync: a full disk or a failing device may only say so here (NFS, quotas). EINVAL:
  // a file that cannot be synchronised (a pipe, a special file): nothing to check.
  if (failed.empty() && ::fsync(fd) != 0 && errno != EINVAL) {
    err = errno;
    failed = "flushing '" + tmp + "' to disk";
  }
  if (::close(fd) != 0 && failed.empty()) {
    err = errno;
    failed = "closing '" + tmp + "'";
  }
  if (!failed.empty()) {
    ::unlink(tmp.c_str());
    throw RuntimeError(why(failed, err));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    err = errno;
    ::unlink(tmp.c_str());
    throw UsageError(why("renaming '" + tmp + "' over it", err));
  }
}

// The document is replaced as a whole (temporary file + rename): readers never see a torn
// file. While running, the handler of SIGINT/SIGTERM gets the same document marked
// interrupted first, so a signal during the write below still leaves every finished size.
void Report::flush_locked() {
  if (!is_root_ || path_.empty()) return;
  if (doc_["status"] == "running") {
    nlohmann::json interrupted = doc_;
    interrupted["status"] = "interrupted";
    interrupted["status_detail"] = std::string("interrupted by ") + kSignalPlaceholder +
                                   "; results holds what finished before it";
    interrupted["end_time"] = kTimePlaceholder;
    set_interrupted_document(path_, temp_file_of(path_), interrupted.dump(1) + '\n');
  } else {
    clear_interrupted_document();
  }
  try {
    write_file_atomically(path_, doc_.dump(1) + '\n');
  } catch (...) {
    clear_interrupted_document();  // the run ends with this error; the file stays as it was
    throw;
  }
}

}  // namespace cb
