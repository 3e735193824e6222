// Every option of every benchmark, parsed with CLI11. Names follow OMB where OMB has
// the option; the set offered depends on the benchmark family.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "backends/backend.hpp"
#include "core/layout.hpp"
#include "core/topology.hpp"
#include "core/types.hpp"
#include "core/vcounts.hpp"
#include "harness/bench.hpp"
#include "harness/sizes.hpp"

namespace cb {

enum class WaitSetting : uint8_t { Auto, Spin, Yield };
// The progress line on stderr (harness/progress.hpp): Auto draws it when stderr is a
// terminal; -q/--quiet: Off; --progress: On, also into a pipe (under mpirun, ranks write
// to the launcher through one and cannot tell whether it ends at a terminal).
enum class ProgressSetting : uint8_t { Auto, On, Off };

inline constexpr int kMaxRepeat = 1000;           // --repeat upper bound
inline constexpr size_t kMaxSweepSizes = 100000;  // --stepbytes: sizes in one sweep at most
inline constexpr int kMaxGraphLaunches = 100000;  // -G: a timing event per launch, at most

struct RootSetting {
  bool rotate = false;  // -k rotate: root = iteration % nranks
  int fixed = 0;        // -k fixed:R
};

struct Options {
  std::vector<std::string> argv;
  std::string backend = "mpi";
  SizeRange sizes;  // -m, or -b/-e; --stepfactor, --stepbytes
  int iterations = 0, warmup = 0, iterations_large = 0, warmup_large = 0;
  size_t large_threshold = 8192;
  int repeat = 1;  // --repeat: timed passes per size, the median one reported
  bool full = false;
  std::vector<double> tail_percentiles;
  bool validate = false;
  std::string json_path;
  double time_limit_s = 600;
  WaitSetting wait = WaitSetting::Auto;
  ProgressSetting progress = ProgressSetting::Auto;  // -q/--quiet, --progress

  // point to point
  int window = 64;
  int pairs = 0;                             // mbw_mr: 0 = nranks / 2
  Mem side_mem[2] = {Mem::Host, Mem::Host};  // rank 0's and rank 1's buffers (OMB "H D")
  int partitions = 0;                        // --partitions (partitioned_latency; 0: its default)
  int workers[2] = {0, 0};  // -t SENDERS:RECEIVERS (latency_mt, latency_mp; 0: the default)
  // one-sided (BenchDesc::rma): OMB's -w and -s as given; "" = the benchmark's default
  std::string rma_window;
  std::string rma_sync;

  // collectives
  Mem mem = Mem::Host;         // -d
  bool plain_alloc = false;    // --alloc plain: buffers from the harness, not the backend
  bool staging = false;        // mpi backend: copy device buffers through host memory
  Dtype dtype = Dtype::Float;  // the run's element type: the first of `dtypes`
  // -T: one sweep per type, in order (a list, or OMB's `all`: char, int, float)
  std::vector<Dtype> dtypes{Dtype::Float};
  LayoutSpec layout;  // -D: the derived datatype of each block (mpi backend)
  Op op = Op::Sum;
  bool in_place = false;
  RootSetting root;
  size_t mem_limit = size_t{1} << 30;  // -M, per process
  int test_calls = 0;                  // -t, non-blocking: MPI_Test-like calls during compute
  std::string algo;                    // engine: force an algorithm ("all": every one)
  bool progress_thread = false;        // engine: advance non-blocking operations in a thread
  CountsPattern counts;                // alltoallv: --counts uniform|zipf:S[,SEED]|random[:SEED]
  TopologySpec topology;               // neighborhood collectives: -N cart:D:R or graph:FILE
  int cuda_graph = 0;  // -G: CUDA graph launches per size (0: off); blocking, nccl, -d cuda
  // nccl-tests' options under their names (blocking collectives; -R everywhere): the
  // per-rank time the table and algbw use (-a: 0 rank 0's, 1 average, 2 min, 3 max),
  // operations per timed iteration (--agg_iters), when to wait and synchronise (--blocking:
  // 3 is OMB's loop, collbench's default), buffer registration (-R, nccl), a time stamp per
  // row (-S), the buffers' memory (--memory), per-iteration times in the JSON (-I, -K).
  int average = 1;
  int agg_iters = 1;
  int blocking = 3;
  int local_register = 0;
  bool timestamps = false;
  bool memory_report = false;
  bool per_iter = false;
  int per_iter_skip = 0;

  // replay (cb_replay)
  std::string trace;             // --trace FILE (collbench JSON, PARAM basic JSON or CSV)
  std::string model;             // --model NAME (resnet50, vgg16, bert-base, gpt2)
  std::string fusion = "none";   // --fusion none|horovod[:MB]|ddp[:MB]
  std::string compute = "none";  // --compute none|trace|us-per-mb:X
  std::string parallel = "ddp";  // --parallel ddp|zero1[:E]|zero2[:E]|fsdp (with --model)
  std::string export_trace;      // --export-trace FILE
  int steps = 1;                 // --steps N: training steps a CSV count table covers
  long long tokens = 0;          // --tokens N: MoE models, tokens per rank (0: the model's)

  // Interleaved series (docs/statistics.md): comma lists in --backend, --algo and --alloc
  // give every combination as a series, measured pass by pass in a shuffled order in one
  // process; the first is the baseline. Empty with one series (backend, algo and
  // plain_alloc above are then the run's; with several they are the first series').
  struct Series {
    std::string name;  // "mpi", "engine", "engine/ring", "engine/plain" ...
    std::string backend, algo;
    bool plain_alloc = false;
  };
  std::vector<Series> series;
  long long seed = 1;  // --seed: the shuffles of the series order (>= 0)
  // --target-ci PCT: passes go on (at least --repeat, default 6) until the median's 95 %
  // interval is within +-PCT % of it, for every series, or --target-ci-cap seconds have
  // passed at this size (0: off, a fixed --repeat).
  double target_ci_pct = 0;
  double target_ci_cap_s = 60;

  // Buffers that do not flatter (harness/placement.hpp; collectives and cb_latency, cb_bw,
  // cb_bibw, cb_mbw_mr, cb_multi_lat): --off-cache [BYTES] rotates every iteration through a
  // ring of buffers larger than the last-level cache, --vary-data changes the send data
  // every iteration, -u/--misalign offsets the send and receive pointers.
  bool off_cache = false;
  size_t off_cache_bytes = 0;  // --off-cache BYTES; 0: the default (2 x LLC; device: 256 MiB)
  bool vary_data = false;
  size_t misalign = 0;  // -u/--misalign BYTES, 0 to kMaxMisalign

  int iterations_for(size_t bytes) const {
    return bytes > large_threshold ? iterations_large : iterations;
  }
  int warmup_for(size_t bytes) const { return bytes > large_threshold ? warmup_large : warmup; }
};

void to_json(nlohmann::json& j, const Options& o);
BackendConfig backend_config(const Options& o);  // the options that are the backend's
std::string_view to_string(WaitSetting w);
std::string_view to_string(ProgressSetting p);
// The buffer options given (--off-cache, --vary-data, -u/--misalign), as a runner that does
// not take them names them in its refusal; empty when none is.
std::string placement_options_given(const Options& o);

struct ParseOutcome {
  Options options;
  std::optional<std::string> early_exit;  // --help / --version text: print it and exit 0
};

// Parses argv for the benchmark `desc`. Throws UsageError naming the bad option or value.
ParseOutcome parse_options(const BenchDesc& desc, int argc, const char* const* argv);

// -G at run time: throws UsageError naming the option when no GPU is usable here (no CUDA
// in this build, no driver, no device). Does nothing without -G.
void check_cuda_graph_device(const Options& o);

}  // namespace cb
