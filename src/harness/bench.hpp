// What a benchmark executable supplies (cf. nccl-tests' struct testColl): a descriptor.
// bench_main() does the rest: options, backend, sweep, timing, statistics, validation,
// table and JSON. No executable has a timing loop of its own.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>

#include "harness/sizes.hpp"

namespace cb {

enum class Family : uint8_t { Pt2pt, Collective, NonblockingCollective, Replay };

struct IterationDefaults {
  int iterations;  // at or below the large-message threshold (8 KiB, as OMB)
  int warmup;
  int iterations_large;  // above it
  int warmup_large;
};

struct Pt2ptSpec;  // pt2pt/pt2pt.hpp
struct RmaSpec;    // pt2pt/rma.hpp
struct CollSpec;   // core/coll_spec.hpp
class Runner;
struct RunContext;

struct BenchDesc {
  std::string_view name;   // "latency": cb_<name>, JSON "benchmark"
  std::string_view title;  // "Latency Test": "# collbench MPI Latency Test v0.1.0"
  Family family;
  SizeRange default_sizes;
  IterationDefaults defaults;
  const Pt2ptSpec* pt2pt = nullptr;
  const CollSpec* coll = nullptr;
  // One-sided (MPI RMA) benchmarks, family Pt2pt: -w is OMB's window creation and -s its
  // synchronisation (the runner checks both), so the warmup is -x only.
  const RmaSpec* rma = nullptr;
  // The family's timing loop: make_pt2pt_runner (pt2pt/pt2pt.hpp), make_collective_runner
  // (collective/runners.hpp), make_replay_runner ...
  std::unique_ptr<Runner> (*make_runner)(const RunContext&) = nullptr;
  // A blocking collective in MPI 4.0's persistent form (osu_<coll>_persistent): made once
  // per size (MPI_<Coll>_init, untimed), each iteration MPI_Start + MPI_Wait.
  bool persistent = false;
  // MPI_Init_thread asks for MPI_THREAD_MULTIPLE (cb_latency_mt's threads call MPI at once);
  // others ask for FUNNELED, whose calls take no locks.
  bool thread_multiple = false;
};

int bench_main(const BenchDesc& desc, int argc, char** argv);

}  // namespace cb
