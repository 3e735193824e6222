// Trace importers: the file cb_replay --trace reads (collbench JSON, PARAM basic JSON,
// PyTorch's Kineto, execution trace and flight recorder JSON, or a CSV count table, told
// apart by content), through load_replay_input() as cb_replay calls it, then planned under
// every fusion policy. Expected: UsageError (bad input).
// Findings: any other exception, a plan with non-finite or negative times, a trace that
// does not survive writing and reading back, an exported plan cb_replay cannot read, a CSV
// table that --steps 3 does not split into 3 steps of the same calls.
#include <cmath>
#include <stdexcept>

#include "core/errors.hpp"
#include "dl_patterns/replay_input.hpp"
#include "fuzz_util.hpp"

namespace {

using namespace cb;
using namespace cb::dl;

void check_plan(const ReplayPlan& plan, const Trace& trace, const char* how) {
  const auto bad = [&](const std::string& what) {
    fuzz::finding(std::string("plan (") + how + "): " + what);
  };
  if (plan.messages.empty()) bad("no messages for a trace of " + std::to_string(trace.ops.size()));
  if (plan.actions.empty() || plan.actions.back().kind != ReplayAction::Kind::WaitAll)
    bad("the step does not end with a wait");
  for (const ReplayMessage& m : plan.messages) {
    if (m.count == 0 && m.coll != Coll::Barrier) bad("a message of 0 elements");  // barrier: none
    if (m.count != 0 && m.coll == Coll::Barrier) bad("a barrier with a size");
    if (m.record >= trace.ops.size()) bad("a message names a record past the trace");
    if (!std::isfinite(m.ready_us) || m.ready_us < 0)
      bad("ready time " + std::to_string(m.ready_us));
  }
  for (const ReplayAction& a : plan.actions) {
    if (!std::isfinite(a.us) || a.us < 0) bad("action of " + std::to_string(a.us) + " us");
    if (a.kind == ReplayAction::Kind::Launch && a.message >= plan.messages.size())
      bad("a launch of a message that does not exist");
  }
}

// What cb_replay writes (--export-trace, the recorder) it must read back.
Trace reread(const Trace& t, const char* what) {
  try {
    return parse_trace_json(to_json(t), "reread.json");
  } catch (const TraceError& e) {
    fuzz::finding(std::string(what) + " is not readable: " + e.what());
  }
}

// A CSV count table over 3 training steps (--steps 3): every step must replay something.
void check_steps(Options o, const ReplayInput& whole) {
  o.steps = 3;
  ReplayInput in;
  try {
    in = load_replay_input(o);
  } catch (const UsageError&) {  // fewer than 3 calls of every size, or not a CSV table
    return;
  }
  check_plan(in.plan, in.trace, "--steps 3");
  if (!in.plan.step_per_segment || replay_steps(in.plan).size() != 3)
    fuzz::finding("--steps 3 does not give 3 replay steps");
  if (in.trace.ops.size() != whole.trace.ops.size())
    fuzz::finding("--steps 3 changed the number of calls");
}

// Traces longer than this are only loaded and planned once: the checks below are linear
// in the trace and were made on shorter ones (a CSV row of 1M calls is still loaded whole).
constexpr size_t kCheckedOps = 4096;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const fuzz::ScratchFile file("trace");
  Options o;
  o.trace = file.write(data, size);
  o.fusion = "horovod:0.001:0.5";  // small threshold and cycle: fusion happens
  o.compute = "trace";
  ReplayInput in;
  try {
    in = load_replay_input(o);
  } catch (const UsageError&) {
    return 0;
  }
  check_plan(in.plan, in.trace, "horovod, compute trace");
  if (in.trace.ops.size() > kCheckedOps) return 0;
  if (in.source.rfind("csv:", 0) == 0) check_steps(o, in);
  for (const char* fusion : {"none", "ddp:0.001:0.0005"})
    for (const char* compute : {"none", "us-per-mb:200"}) {
      try {
        check_plan(plan_trace(in.trace, parse_fusion(fusion), parse_compute(compute)), in.trace,
                   fusion);
      } catch (const std::invalid_argument&) {  // load_replay_input's UsageError, unwrapped
      }
    }

  const Trace back = reread(in.trace, "the trace written as collbench JSON");
  if (back.name != in.trace.name || back.source != in.trace.source ||
      back.world_size != in.trace.world_size || back.ops != in.trace.ops)
    fuzz::finding("the trace changed when written and read back");
  Trace exported = to_trace(in.plan, in.name, in.source);
  exported.world_size = in.trace.world_size;
  reread(exported, "the exported plan (--export-trace)");
  return 0;
}
