// The pure part of the recorder (libcb_record.so, record.cpp): the calls of one rank
// turned into a collbench trace (compute_us = the gap since the previous recorded call
// ended), and the per-rank file name. No MPI here, so it is unit-tested.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "dl_patterns/trace.hpp"

namespace cb::dl {

// CB_RECORD=out.json -> "out.rank3.json"; a base without ".json" gets ".rank3.json" appended.
std::string rank_trace_path(const std::string& base, int rank);

class CallLog {
 public:
  // `origin_s`: when MPI_Init returned (steady clock, seconds); timestamps count from it.
  explicit CallLog(double origin_s) : origin_s_(origin_s), last_end_s_(origin_s) {}

  // A call that ran from begin_s to end_s. Beyond kMaxTraceOps calls, only counts.
  void add(TraceOp op, double begin_s, double end_s);

  size_t dropped() const { return dropped_; }
  Trace trace(std::string name, int world_size) const;

 private:
  double origin_s_;
  double last_end_s_;
  std::vector<TraceOp> ops_;
  size_t dropped_ = 0;
};

}  // namespace cb::dl
