// collbench's communication trace: an ordered list of collectives, as one rank of a
// training job issues them. Format "collbench.trace/1" is specified in docs/trace-format.md;
// importers read CSV allreduce tables and PARAM "basic" traces into the same structure.
#pragma once

#include <cstddef>
#include <iosfwd>
#include <map>
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
  // The process group it ran on: its ranks of the job (increasing; empty = every rank, or
  // not known) and the name the source gave it ("3", "mesh_shard"; empty = none). The
  // replay runs an op with a group on a sub-communicator of those ranks; ranks outside skip.
  std::vector<int> group;
  std::string pg;

  size_t bytes() const { return count * dtype_size(dtype); }
  bool operator==(const TraceOp&) const = default;
};

struct Trace {
  std::string name;
  std::string source;  // "model:resnet50", "csv:FILE", "param:FILE", "recorder" ...
  int world_size = 0;  // 0 = not recorded
  std::vector<TraceOp> ops;
  // What the source held that `ops` does not (point-to-point calls, unknown collectives)
  // or replays otherwise than recorded (a missing dtype, uneven all-to-all splits): the
  // reason -> how many calls. Filled by the importers of PyTorch's traces; not written.
  std::map<std::string, size_t> not_replayed;

  // Number of distinct training steps (0 for an empty trace).
  int iterations() const;
};

// Reads a file, choosing the format by its content: a JSON object is a collbench trace,
// a profiler trace ("traceEvents"), an execution trace ("nodes") or a flight recorder dump
// ("entries"); a JSON list a PARAM basic trace; a pickle is refused; anything else CSV.
Trace load_trace(const std::string& path);

// The trace of `rank` from a file (every rank reads the same one) or from a folder of
// per-rank files (names holding "rank<R>", ranks 0..n-1, all read and checked to issue
// the same collectives; rank % n's is returned, with world_size n).
Trace load_trace(const std::string& path, int rank);

// `origin` (usually the file name) prefixes every error message.
Trace parse_trace_json(const nlohmann::json& doc, const std::string& origin);
Trace import_csv(std::istream& in, const std::string& origin);
Trace import_param_basic(const nlohmann::json& records, const std::string& origin);
// PyTorch's traces (docs/trace-format.md §6-8): the profiler's Kineto/Chrome JSON
// (export_chrome_trace), an execution trace (ExecutionTraceObserver) and a flight
// recorder JSON dump (_dump_fr_trace_json / _dump_nccl_trace_json).
Trace import_kineto(const nlohmann::json& doc, const std::string& origin);
Trace import_execution_trace(const nlohmann::json& doc, const std::string& origin);
Trace import_flight_recorder(const nlohmann::json& doc, const std::string& origin);
// MLCommons Chakra ET (et_def.proto; docs/trace-format.md §10), in builds with protobuf
// (chakra_supported()); otherwise they throw TraceError saying so. `world_size` sizes
// reduce_scatter and all-to-all shares when the file does not say (0: unknown).
bool chakra_supported();
Trace import_chakra(const std::string& bytes, const std::string& origin, int world_size = 0);
// Writes the ops as COMP_NODEs (compute_us) and COMM_COLL_NODEs in a chain of control
// dependencies, for ASTRA-sim or PARAM's et_replay.
void save_chakra(const Trace& trace, const std::string& path);

nlohmann::json to_json(const Trace& trace);
// PARAM basic records (sizes in elements), for replay with PARAM's commsTraceReplay.py.
// alltoall, allgather and reduce_scatter need trace.world_size to compute their sizes.
nlohmann::json to_param_basic(const Trace& trace);
// Writes the collbench JSON, one op per line; throws TraceError if the file cannot be written,
// or if the trace has no op (the format needs one; nothing is written then).
void save_trace(const Trace& trace, const std::string& path);

}  // namespace cb::dl
