// collbench's communication trace: an ordered list of collectives, as one rank of a
// training job issues them. Format "collbench.trace/1" is specified in docs/trace-format.md;
// importers read CSV allreduce tables and PARAM "basic" traces into the same structure.
#pragma once

#include <cstddef>
#include <iosfwd>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/types.hpp"

namespace cb::dl {

inline constexpr const char* kTraceSchema = "collbench.trace/1";
// Guards against garbage input (and memory exhaustion), far above any real workload.
inline constexpr size_t kMaxOpBytes = size_t{1} << 40;   // 1 TiB per collective
inline constexpr size_t kMaxTraceOps = size_t{1} << 22;  // ~4 M operations per trace

// Any problem with a trace; the message names the file, the line or record, and the field.
class TraceError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct TraceOp {
  Coll coll = Coll::Allreduce;
  size_t count =
      0;  // elements per rank: alltoall per peer, allgather sent, reduce_scatter received
  Dtype dtype = Dtype::Float;
  Op op = Op::Sum;  // allreduce, reduce, reduce_scatter only
  int root = 0;     // bcast, reduce only
  std::string name;
  double compute_us = 0;  // compute before this op becomes ready (e.g. that layer's backward)
  int iteration = 0;      // training step; non-decreasing along the trace
  // Written by the recorder (libcb_record.so); informational, replay does not use them.
  std::optional<double> start_us;     // when the call began, us since MPI_Init on that rank
  std::optional<double> duration_us;  // time inside the call (non-blocking: initiation only)
  int comm_size = 0;                  // ranks of the communicator it ran on; 0 = not recorded

  size_t bytes() const { return count * dtype_size(dtype); }
  bool operator==(const TraceOp&) const = default;
};

struct Trace {
  std::string name;
  std::string source;  // "model:resnet50", "csv:FILE", "param:FILE", "recorder" ...
  int world_size = 0;  // 0 = not recorded
  std::vector<TraceOp> ops;

  // Number of distinct training steps (0 for an empty trace).
  int iterations() const;
};

// Reads a file, choosing the format by its content: a JSON object is a collbench trace,
// a JSON list a PARAM basic trace, anything else CSV.
Trace load_trace(const std::string& path);

// `origin` (usually the file name) prefixes every error message.
Trace parse_trace_json(const nlohmann::json& doc, const std::string& origin);
Trace import_csv(std::istream& in, const std::string& origin);
Trace import_param_basic(const nlohmann::json& records, const std::string& origin);

nlohmann::json to_json(const Trace& trace);
// PARAM basic records (sizes in elements), for replay with PARAM's commsTraceReplay.py.
// alltoall, allgather and reduce_scatter need trace.world_size to compute their sizes.
nlohmann::json to_param_basic(const Trace& trace);
// Writes the collbench JSON, one op per line; throws TraceError if the file cannot be written,
// or if the trace has no op (the format needs one; nothing is written then).
void save_trace(const Trace& trace, const std::string& path);

}  // namespace cb::dl
