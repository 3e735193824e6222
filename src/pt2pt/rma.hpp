// One-sided (MPI RMA) benchmarks: OMB's osu_put_latency, osu_put_bw, osu_put_bibw,
// osu_get_latency, osu_get_bw, osu_acc_latency, osu_get_acc_latency, osu_fop_latency and
// osu_cas_latency, each a descriptor (an RmaSpec) over one runner (pt2pt/rma.cpp).
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "harness/bench.hpp"
#include "harness/runner.hpp"

namespace cb {

enum class RmaOp : uint8_t { Put, Get, Accumulate, GetAccumulate, FetchAndOp, CompareAndSwap };
enum class RmaMetric : uint8_t {
  Latency,      // time of one operation and its synchronisation (active: per direction)
  Bandwidth,    // -W operations per epoch, rank 0 to rank 1
  BiBandwidth,  // both ranks at once (put_bibw)
};
enum class RmaWindow : uint8_t { Create, Allocate, Dynamic };                    // OMB's -w
enum class RmaSync : uint8_t { Lock, Flush, FlushLocal, LockAll, Pscw, Fence };  // OMB's -s

struct RmaSpec {
  RmaOp op;
  RmaMetric metric;
  bool active_only;  // OMB's ACTIVE_SYNC (put_bibw): pscw and fence only
  RmaSync default_sync;
};

// Names as OMB's -w and -s spell them, and the MPI calls they stand for.
std::string_view to_string(RmaWindow w);
std::string_view to_string(RmaSync s);
std::string_view mpi_calls(RmaWindow w);  // "MPI_Win_allocate"
std::string_view mpi_calls(RmaSync s);    // "MPI_Win_flush"
std::string_view mpi_call(RmaOp op);      // "MPI_Put"

// -w and -s as given ("" = OMB's default: allocate; the spec's sync). Throw UsageError naming
// the option, the value and what this benchmark allows.
RmaWindow parse_rma_window(std::string_view text);
RmaSync parse_rma_sync(const RmaSpec& spec, std::string_view text, std::string_view bench);

// Whether both ranks take part in every iteration (pscw and fence).
bool rma_active(RmaSync s);

// The one-sided benchmarks, in OMB's order; find_rma_bench("put_latency") or nullptr.
const std::vector<const BenchDesc*>& rma_benches();
const BenchDesc* find_rma_bench(std::string_view name);

std::unique_ptr<Runner> make_rma_runner(const RunContext& rc);

}  // namespace cb
