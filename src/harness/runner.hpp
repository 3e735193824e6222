// The pieces bench_main() drives: a Runner per benchmark family measures one message size
// at a time; sweep() does what is common to all (watchdog, table, JSON, validation).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "backends/backend.hpp"
#include "backends/control.hpp"
#include "gpu/memory.hpp"
#include "harness/bench.hpp"
#include "harness/options.hpp"
#include "harness/report.hpp"

namespace cb {

struct RunContext {
  const BenchDesc& desc;
  const Options& opt;
  const Control& ctl;
  Backend& be;

  // Benchmark buffers: from the backend, or plain page-aligned memory with --alloc plain.
  Buf alloc(size_t bytes, Mem mem) const {
    return opt.plain_alloc ? alloc_buffer(bytes, mem) : be.alloc(bytes, mem);
  }
  void free(Buf& buf) const {
    if (!buf.ptr) return;
    if (opt.plain_alloc)
      free_buffer(buf);
    else
      be.free(buf);
  }
};

// One measurement of a sweep: a message size, and for --algo all one algorithm.
struct Point {
  size_t bytes;
  std::string algo;      // empty: the backend's choice
  bool validate = true;  // with -c, check the data after this pass (--repeat: the last only)
};

// -c beyond the element check: whether every rank got the same result bits, where the
// collective defines one result for all (CollSpec::same_on_all_ranks). The same on every rank.
struct RankAgreement {
  bool compared = false;          // the exact fill's result bits were compared across ranks
  std::vector<int> differ;        // ranks whose bits differ from rank 0's
  bool order_ran = false;         // the order-sensitive pass ran (floating-point sum and prod)
  std::vector<int> order_differ;  // ranks whose bits differ from rank 0's in that pass
  bool failed() const { return !differ.empty() || !order_differ.empty(); }
};

struct SizeOutcome {
  std::vector<Cell> cells;               // table columns after Size (Validation is added by sweep)
  nlohmann::json record;                 // the JSON result for this size (complete on rank 0)
  long long wrong = 0;                   // wrong elements summed over ranks
  RankAgreement agreement;               // -c: result bits across ranks (collectives)
  std::vector<std::string> extra_lines;  // printed (rank 0) after the row, e.g. a breakdown
  // The time the headline figure comes from (us, lower is better; the same on every rank)
  // and that figure's place in the record: --repeat orders passes by it and reports the
  // median one. A rate such as bandwidth_MBps is a constant divided by this time.
  double pass_us = 0;
  std::string pass_figure;  // "latency_us.avg", "bandwidth_MBps", ...
};

class Runner {
 public:
  virtual ~Runner() = default;
  // Local checks and allocation only (no communication), so that a rank that throws
  // here cannot leave the others waiting; bench_main() agrees on the outcome.
  virtual void prepare() = 0;
  // After prepare(), once the JSON header is assembled (benchmark, backend, options,
  // environment): may read it and add top-level fields (pt2pt: "line_rate"). Local (no
  // communication); every rank gets the same document.
  virtual void annotate(nlohmann::json& /*doc*/) {}
  virtual std::vector<std::string> header_lines() const { return {}; }
  // Whether the runner takes --off-cache, --vary-data and -u/--misalign (harness/placement.hpp);
  // bench_main() refuses them for the others, before prepare().
  virtual bool places_buffers() const { return false; }
  // Whether the table has a Size column (not for a collective without data: barrier).
  virtual bool show_size() const { return true; }
  virtual std::vector<Point> points() const = 0;
  virtual SizeOutcome measure(const Point& point) = 0;  // collective over all ranks
};

}  // namespace cb
