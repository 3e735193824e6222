#include "dl_patterns/replay_stats.hpp"

#include "core/coll_spec.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <tuple>

namespace cb::dl {

void LatencyStats::add(double us) {
  sum_us += us;
  min_us = std::min(min_us, us);
  max_us = std::max(max_us, us);
  samples += 1;
}

std::vector<SizeRow> size_table(const std::vector<ReplayMessage>& messages,
                                const std::vector<LatencyStats>& latency) {
  // Key: collective, then size descending.
  std::map<std::tuple<Coll, size_t>, SizeRow, std::less<>> rows;
  for (size_t i = 0; i < messages.size(); ++i) {
    const ReplayMessage& m = messages[i];
    SizeRow& row = rows[{m.coll, ~m.bytes()}];  // ~bytes: largest first
    row.coll = m.coll;
    row.bytes = m.bytes();
    ++row.per_step;
    if (i < latency.size() && latency[i].samples > 0) {
      const LatencyStats& l = latency[i];
      row.latency.sum_us += l.sum_us;
      row.latency.samples += l.samples;
      row.latency.min_us = std::min(row.latency.min_us, l.min_us);
      row.latency.max_us = std::max(row.latency.max_us, l.max_us);
    }
  }
  std::vector<SizeRow> out;
  for (auto& [key, row] : rows) out.push_back(row);
  return out;
}

std::vector<std::string> size_table_lines(const std::vector<SizeRow>& rows, size_t steps) {
  const bool per_step = steps > 1;
  std::vector<std::string> lines{
      "# Messages by size (latency: launch to completion observed by the replay, every rank, "
      "timed steps" +
          std::string(per_step ? "; Count: in the table's " + std::to_string(steps) + " steps"
                               : "") +
          ")",
      std::string("#   Collective        Size(B)     Count") + (per_step ? "  Per step" : "") +
          "     Avg Lat(us)     Min Lat(us)     Max Lat(us)"};
  for (const SizeRow& r : rows) {
    char buf[192], share[16] = "";
    const double min = r.latency.samples > 0 ? r.latency.min_us : 0;
    if (per_step)
      std::snprintf(share, sizeof share, " %9.2f",
                    static_cast<double>(r.per_step) / static_cast<double>(steps));
    std::snprintf(buf, sizeof buf, "#   %-14s %10zu %9zu%s %15.2f %15.2f %15.2f",
                  std::string(to_string(r.coll)).c_str(), r.bytes, r.per_step, share,
                  r.latency.avg_us(), min, r.latency.max_us);
    lines.emplace_back(buf);
  }
  return lines;
}

StepFigures step_figures(double step_us, double compute_us, double pure_us, double bus_bytes) {
  StepFigures f;
  f.step_us = step_us;
  f.compute_us = compute_us;
  f.pure_us = pure_us;
  f.exposed_us = std::max(0.0, step_us - compute_us);
  f.overlap_pct = pure_us > 0 ? std::clamp(100.0 * (1.0 - f.exposed_us / pure_us), 0.0, 100.0) : 0;
  f.busbw_GBps = pure_us > 0 ? bus_bytes / (pure_us * 1e-6) / 1e9 : 0;
  return f;
}

double bus_bytes(const std::vector<ReplayMessage>& messages, int nranks) {
  double sum = 0;
  for (const ReplayMessage& m : messages) {
    const CollSpec* spec = find_coll_spec(m.coll);
    if (!spec) continue;
    // nccl-tests' convention, from the registry: algbw bytes x the bus factor.
    const double algbw_bytes =
        static_cast<double>(spec->algbw_elements(m.count, nranks)) * dtype_size(m.dtype);
    sum += algbw_bytes * spec->bus_factor(nranks);
  }
  return sum;
}

}  // namespace cb::dl
