#include "dl_patterns/record_log.hpp"

#include <algorithm>
#include <cmath>

namespace cb::dl {

std::string rank_trace_path(const std::string& base, int rank) {
  const std::string suffix = ".rank" + std::to_string(rank);
  constexpr std::string_view kJson = ".json";
  if (base.size() > kJson.size() && base.ends_with(kJson))
    return base.substr(0, base.size() - kJson.size()) + suffix + std::string(kJson);
  return base + suffix + std::string(kJson);
}

namespace {
double us_rounded(double seconds) {  // to the nanosecond: the clock's resolution
  return std::round(std::max(0.0, seconds) * 1e9) / 1e3;
}
}  // namespace

void CallLog::add(TraceOp op, double begin_s, double end_s) {
  if (ops_.size() >= kMaxTraceOps) {  // the trace format's limit: keep the first ones
    ++dropped_;
    return;
  }
  // The gap since the previous call is the application's compute between collectives
  // (and any MPI call not recorded, e.g. MPI_Wait).
  op.compute_us = us_rounded(begin_s - last_end_s_);
  op.start_us = us_rounded(begin_s - origin_s_);
  op.duration_us = us_rounded(end_s - begin_s);
  last_end_s_ = std::max(last_end_s_, end_s);
  ops_.push_back(std::move(op));
}

Trace CallLog::trace(std::string name, int world_size) const {
  Trace t;
  t.name = std::move(name);
  t.source = "recorder";
  t.world_size = world_size;
  t.ops = ops_;
  return t;
}

}  // namespace cb::dl
