// The progress line: while a sweep runs, rank 0 keeps one line on stderr, rewritten in
// place with '\r': the size being measured, how many of the sweep's sizes are done, the time
// so far and an estimate of the time left. Only for a person watching: drawn when stderr is
// a terminal and -q/--quiet is not given, never into files, pipes or the tests' captures;
// --progress draws it into a pipe too (under mpirun a rank's stderr is the launcher's pipe,
// which the launcher copies to its own stderr, a terminal or not). It is erased before
// every table row (stdout and stderr may be the same terminal) and at the end.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

namespace cb {

struct Options;

// "0s", "42s", "3m05s", "1h02m": the durations of the progress line. Negative: "?".
std::string format_duration(double seconds);

// Seconds left at the rate so far: elapsed x (work left / work done). Negative (no
// estimate) while nothing is done.
double remaining_seconds(double elapsed_s, double work_done, double work_total);

// The work of measuring one point of the sweep, in units the estimate divides time by:
// every pass's iterations and warmup x (bytes + 8 KiB). The 8 KiB stand for a call's
// fixed cost, so that small sizes (latency-bound, and with OMB's ten times more iterations
// up to 8 KiB) do not count as free; above that the time per byte dominates.
double point_work(const Options& o, size_t bytes);

// "64 KiB", "97.5 MiB": a size as the progress line shows it (exact binary multiples as
// format_bytes, others to one decimal).
std::string progress_bytes(size_t bytes);

struct ProgressState {
  std::string what;         // the point being measured: "64 KiB", "64 KiB ring" ("" for none)
  size_t done = 0;          // points finished
  size_t total = 0;         // points in the sweep
  int pass = 0;             // --repeat: the pass under way (0-based) ...
  int passes = 1;           // ... of this many (shown when more than one)
  double elapsed_s = 0;     // since the sweep started
  double remaining_s = -1;  // < 0: no estimate yet
};

// "collbench: 64 KiB, 12/24 done, pass 2/3, 42s elapsed, about 1m10s left"
std::string progress_line(const ProgressState& s);

class Progress {
 public:
  // Whether to draw: rank 0, and --progress, or stderr a terminal and no -q/--quiet.
  static bool wanted(bool is_root, const Options& o);

  // work: point_work() of every point of the sweep, in order; passes: --repeat.
  Progress(bool enabled, std::vector<double> work, int passes);
  ~Progress();  // erases the line (also when the sweep ends with an exception)
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // Before pass `pass` (0-based) of point `index`.
  void show(size_t index, int pass, const std::string& what);
  // Erases the line: before a table row or a message, and at the end.
  void clear();

  // Through a launcher, a rank's stdout and stderr are two pipes that it copies in whatever
  // order their bytes arrive: a table row could overtake the erasing of the line written
  // before it and land on the line. So when stderr is a pipe, the line is erased (and drawn
  // again after a row) with a pause for the launcher to pass it on first.
  static constexpr int kPipePauseMs = 10;

 private:
  bool enabled_;
  std::vector<double> work_;
  double total_ = 0;
  int passes_;
  bool piped_;        // stderr is not a terminal (--progress under mpirun)
  size_t shown_ = 0;  // characters of the line on the terminal (0: none)
  std::chrono::steady_clock::time_point start_;
};

}  // namespace cb
