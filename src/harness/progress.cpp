#include "harness/progress.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <numeric>
#include <thread>

#include "harness/options.hpp"
#include "harness/sizes.hpp"

namespace cb {

std::string format_duration(double seconds) {
  if (!(seconds >= 0)) return "?";
  const long long s = std::llround(seconds);
  char buf[48];
  if (s < 60)
    std::snprintf(buf, sizeof buf, "%llds", s);
  else if (s < 3600)
    std::snprintf(buf, sizeof buf, "%lldm%02llds", s / 60, s % 60);
  else
    std::snprintf(buf, sizeof buf, "%lldh%02lldm", s / 3600, s % 3600 / 60);
  return buf;
}

double remaining_seconds(double elapsed_s, double work_done, double work_total) {
  if (!(work_done > 0) || !(elapsed_s >= 0)) return -1;
  return elapsed_s * std::max(0.0, work_total - work_done) / work_done;
}

double point_work(const Options& o, size_t bytes) {
  constexpr double kFixedBytes = 8192;
  const double calls = static_cast<double>(o.iterations_for(bytes)) + o.warmup_for(bytes);
  return std::max(1.0, calls) * o.repeat * (static_cast<double>(bytes) + kFixedBytes);
}

std::string progress_bytes(size_t bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  if (bytes < 1024 || bytes % 1024 == 0) return format_bytes(bytes);
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (unit < 4 && value >= 1024) {
    value /= 1024;
    ++unit;
  }
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.1f %s", value, kUnits[unit]);
  return buf;
}

std::string progress_line(const ProgressState& s) {
  std::string line = "collbench: ";
  if (!s.what.empty()) line += s.what + ", ";
  line += std::to_string(s.done) + "/" + std::to_string(s.total) + " done";
  if (s.passes > 1) line += ", pass " + std::to_string(s.pass + 1) + "/" + std::to_string(s.passes);
  line += ", " + format_duration(s.elapsed_s) + " elapsed";
  if (s.remaining_s >= 0) line += ", about " + format_duration(s.remaining_s) + " left";
  return line;
}

bool Progress::wanted(bool is_root, const Options& o) {
  if (!is_root || o.progress == ProgressSetting::Off) return false;
  return o.progress == ProgressSetting::On || ::isatty(STDERR_FILENO) == 1;
}

Progress::Progress(bool enabled, std::vector<double> work, int passes)
    : enabled_(enabled),
      work_(std::move(work)),
      total_(std::accumulate(work_.begin(), work_.end(), 0.0)),
      passes_(std::max(1, passes)),
      piped_(::isatty(STDERR_FILENO) != 1),
      start_(std::chrono::steady_clock::now()) {}

Progress::~Progress() {
  clear();
}

void Progress::show(size_t index, int pass, const std::string& what) {
  if (!enabled_) return;
  double done = std::accumulate(
      work_.begin(), work_.begin() + static_cast<std::ptrdiff_t>(std::min(index, work_.size())),
      0.0);
  if (index < work_.size()) done += work_[index] * pass / passes_;
  ProgressState s;
  s.what = what;
  s.done = index;
  s.total = work_.size();
  s.pass = pass;
  s.passes = passes_;
  s.elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  // The first point's time holds the run's start-up (connections, first touches of the
  // buffers): no estimate from it alone.
  if (index > 0) s.remaining_s = remaining_seconds(s.elapsed_s, done, total_);
  const std::string line = progress_line(s);
  if (piped_ && shown_ == 0) std::this_thread::sleep_for(std::chrono::milliseconds(kPipePauseMs));
  // '\r', the line, and blanks over whatever is left of a longer previous one.
  const size_t pad = shown_ > line.size() ? shown_ - line.size() : 0;
  std::fprintf(stderr, "\r%s%*s", line.c_str(), static_cast<int>(pad), "");
  if (pad) std::fprintf(stderr, "\r%s", line.c_str());
  std::fflush(stderr);
  shown_ = line.size();
}

void Progress::clear() {
  if (!enabled_ || shown_ == 0) return;
  std::fprintf(stderr, "\r%*s\r", static_cast<int>(shown_), "");
  std::fflush(stderr);
  shown_ = 0;
  if (piped_) std::this_thread::sleep_for(std::chrono::milliseconds(kPipePauseMs));
}

}  // namespace cb
