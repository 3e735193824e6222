#include "harness/options.hpp"

#include <CLI/CLI.hpp>
#include <cmath>
#include <nlohmann/json.hpp>
#include <sstream>

#include "config.hpp"
#include "core/coll_spec.hpp"
#include "core/errors.hpp"
#include "harness/version.hpp"

namespace cb {
namespace {

std::vector<double> parse_percentiles(const std::string& text) {
  std::vector<double> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    size_t used = 0;
    double p = 0;
    try {
      p = std::stod(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != item.size() || item.empty() || !(p > 0 && p <= 100))
      throw UsageError("-z/--tail-lat: invalid percentile '" + item +
                       "' (expected numbers in (0, 100], e.g. 50,90,99)");
    out.push_back(p);
  }
  if (out.empty()) throw UsageError("-z/--tail-lat: empty percentile list");
  return out;
}

Mem parse_side(const std::string& s) {
  if (s == "H" || s == "h") return Mem::Host;
  if (s == "D" || s == "d") return Mem::Cuda;
  if (s == "MH" || s == "MD" || s == "M")
    throw UsageError("buffer '" + s + "': managed memory is not supported (use H or D)");
  throw UsageError("buffer '" + s + "': expected H (host) or D (device) for each side");
}

RootSetting parse_root(const std::string& s) {
  RootSetting r;
  if (s == "rotate") {
    r.rotate = true;
    return r;
  }
  std::string num = s.rfind("fixed:", 0) == 0 ? s.substr(6) : s;
  size_t used = 0;
  long v = -1;
  try {
    v = std::stol(num, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != num.size() || num.empty() || v < 0 || v > (1L << 30))
    throw UsageError("-k/--root: invalid value '" + s + "' (expected fixed:R, R or rotate)");
  r.fixed = static_cast<int>(v);
  return r;
}

std::string version_text() {
  return std::string("collbench ") + CB_VERSION + " (git " + git_revision() + ")";
}

// Every argument is recorded in the run's JSON (and compared across ranks as JSON text),
// which holds only UTF-8: refuse other bytes here instead of failing mid-run.
void require_utf8(int argc, const char* const* argv) {
  for (int i = 0; i < argc; ++i) {
    const nlohmann::json arg = std::string(argv[i]);
    try {
      (void)arg.dump();
    } catch (const nlohmann::json::type_error&) {
      throw UsageError("argument " + std::to_string(i) + " " +
                       arg.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) +
                       " is not valid UTF-8");
    }
  }
}

}  // namespace

std::string_view to_string(WaitSetting w) {
  switch (w) {
    case WaitSetting::Spin:
      return "spin";
    case WaitSetting::Yield:
      return "yield";
    case WaitSetting::Auto:
      break;
  }
  return "auto";
}

void to_json(nlohmann::json& j, const Options& o) {
  j = {{"backend", o.backend},
       {"min_bytes", o.sizes.min},
       {"max_bytes", o.sizes.max},
       {"iterations", o.iterations},
       {"warmup", o.warmup},
       {"iterations_large", o.iterations_large},
       {"warmup_large", o.warmup_large},
       {"large_threshold_bytes", o.large_threshold},
       {"repeat", o.repeat},
       {"full", o.full},
       {"tail_percentiles", o.tail_percentiles},
       {"validation", o.validate},
       {"json", o.json_path},
       {"time_limit_s", o.time_limit_s},
       {"wait", to_string(o.wait)},
       {"window", o.window},
       {"pairs", o.pairs},
       {"buffers", {to_string(o.side_mem[0]), to_string(o.side_mem[1])}},
       {"accelerator", to_string(o.mem)},
       {"alloc", o.plain_alloc ? "plain" : "backend"},
       {"staging", o.staging},
       {"dtype", to_string(o.dtype)},
       {"op", to_string(o.op)},
       {"in_place", o.in_place},
       {"root", o.root.rotate ? std::string("rotate") : "fixed:" + std::to_string(o.root.fixed)},
       {"mem_limit_bytes", o.mem_limit},
       {"test_calls", o.test_calls},
       {"algo", o.algo},
       {"progress_thread", o.progress_thread},
       {"counts", o.counts.str()},
       {"trace", o.trace},
       {"model", o.model},
       {"fusion", o.fusion},
       {"compute", o.compute},
       {"parallel", o.parallel},
       {"export_trace", o.export_trace},
       {"steps", o.steps},
       {"tokens", o.tokens}};
}

ParseOutcome parse_options(const BenchDesc& desc, int argc, const char* const* argv) {
  ParseOutcome out;
  Options& o = out.options;
  require_utf8(argc, argv);
  for (int i = 0; i < argc; ++i) o.argv.emplace_back(argv[i]);
  o.sizes = desc.default_sizes;
  o.iterations = desc.defaults.iterations;
  o.warmup = desc.defaults.warmup;
  o.iterations_large = desc.defaults.iterations_large;
  o.warmup_large = desc.defaults.warmup_large;

  const std::string exe = "cb_" + std::string(desc.name);
  CLI::App app("collbench " + std::string(desc.title) + " (OMB-compatible options)", exe);
  app.set_version_flag("-v,--version", version_text());

  std::string sizes, tails, accel = "host", wait = "auto", dtype = "float", op = "sum",
                            root = "fixed:0", mem_limit = "1G", counts = "uniform";
  std::vector<std::string> sides;
  int iters = 0, warmup = 0, iters_large = 0, warmup_large = 0;

  app.add_option("-m,--message-size", sizes, "[MIN:]MAX message size in bytes (K/M/G suffixes)");
  app.add_option("-i,--iterations", iters,
                 "timed iterations at every size (as OMB, also above 8 KiB)");
  app.add_option("-x,--warmup", warmup, "warmup iterations at every size");
  app.add_option("--iterations-large", iters_large, "timed iterations above 8 KiB");
  app.add_option("--warmup-large", warmup_large, "warmup iterations above 8 KiB");
  app.add_option("--repeat", o.repeat,
                 "timed passes per size (warmup + iterations each); the median pass is "
                 "reported, the spread with -f and in the JSON");
  app.add_flag("-f,--full", o.full, "full statistics: min, max, iterations");
  auto* z =
      app.add_option("-z,--tail-lat", tails, "tail percentiles (default 50,90,99)")->expected(0, 1);
  app.add_flag("-c,--validation", o.validate, "check every received element after timing");
  app.add_option("-d,--accelerator", accel, "buffer memory: host or cuda");
  app.add_option("--backend", o.backend, "mpi, nccl or engine");
  app.add_flag("--staging", o.staging,
               "mpi backend with device buffers: copy them through host memory around each call");
  std::string alloc = "backend";
  app.add_option("--alloc", alloc,
                 "buffers from the backend (engine: shared memory) or plain (page-aligned heap)");
  app.add_option("-J,--json", o.json_path, "write results as JSON (rewritten after every size)");
  app.add_option("--time-limit", o.time_limit_s,
                 "abort if one message size takes longer than this many seconds (0: never)");
  app.add_option("--wait", wait,
                 "waiting: spin, yield (sched_yield between polls) or auto (yield when a "
                 "node has more ranks than cores)");

  if (desc.family == Family::Pt2pt) {
    app.add_option("-W,--window-size", o.window, "messages in flight per iteration (bw tests)");
    app.add_option("-p,--pairs", o.pairs, "sender/receiver pairs (mbw_mr; default nranks/2)");
    app.add_option("buffers", sides, "H or D for rank 0's and rank 1's buffers (OMB form)")
        ->expected(0, 2);
  } else if (desc.family == Family::Replay) {
    app.add_option("--trace", o.trace, "gradient trace: collbench JSON, PARAM basic JSON or CSV");
    app.add_option("--model", o.model,
                   "built-in model: resnet50, vgg16, bert-base, gpt2, or the MoE layers of "
                   "mixtral-8x7b or switch-base-8");
    app.add_option("--fusion", o.fusion, "grouping: none, horovod[:MB], ddp[:MB]");
    app.add_option("--compute", o.compute, "emulated backward compute: none, trace, us-per-mb:X");
    app.add_option("--parallel", o.parallel,
                   "data parallelism of --model: ddp, zero1[:ELEMENTS], zero2[:ELEMENTS], fsdp");
    app.add_option("--export-trace", o.export_trace, "write the (model) trace as collbench JSON");
    app.add_option("--steps", o.steps,
                   "training steps a CSV count table covers: each replay step replays one");
    app.add_option("--counts", counts,
                   "MoE models: router expert popularity: uniform, zipf:S[,SEED] or "
                   "random[:SEED]");
    app.add_option("--tokens", o.tokens, "MoE models: tokens per rank per step");
    app.add_option("-T,--dtype", dtype,
                   "element type of --model's gradients or tokens: " + dtype_choices());
    app.add_option("-M,--mem-limit", mem_limit, "memory limit per process for buffers");
    app.add_option("--algo", o.algo, "engine algorithm by name");
    app.add_flag("--progress-thread", o.progress_thread,
                 "engine: advance non-blocking operations in a background thread");
  } else {
    app.add_option("-T,--dtype", dtype, "element type: " + dtype_choices());
    app.add_option("--op", op, "reduction: " + op_choices());
    app.add_flag("-l,--in-place", o.in_place, "in-place collective (MPI_IN_PLACE)");
    app.add_option("-k,--root", root, "root of rooted collectives: fixed:R or rotate");
    app.add_option("-M,--mem-limit", mem_limit, "memory limit per process for buffers");
    app.add_option("--algo", o.algo, "engine algorithm by name, or 'all'");
    app.add_flag("--progress-thread", o.progress_thread,
                 "engine: advance non-blocking operations in a background thread");
    app.add_option("--counts", counts,
                   "alltoallv: per-peer counts: uniform, zipf:S[,SEED] (MoE routing skew) or "
                   "random[:SEED]; -m is the average bytes per peer");
    if (desc.family == Family::NonblockingCollective)
      app.add_option("-t,--num-test-calls", o.test_calls,
                     "test calls spread through the dummy compute");
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    out.early_exit = app.help();
    return out;
  } catch (const CLI::CallForVersion& e) {
    out.early_exit = std::string(e.what()) + "\n";
    return out;
  } catch (const CLI::ParseError& e) {
    throw UsageError(std::string(e.what()) + " (run " + exe + " --help for the options)");
  }

  if (!sizes.empty()) o.sizes = parse_size_range(sizes, desc.default_sizes);
  const auto given = [&](const char* name) { return app.count(name) > 0; };
  if (given("-i")) {
    if (iters < 1) throw UsageError("-i/--iterations must be at least 1");
    o.iterations = o.iterations_large = iters;
  }
  if (given("--iterations-large")) {
    if (iters_large < 1) throw UsageError("--iterations-large must be at least 1");
    o.iterations_large = iters_large;
  }
  if (given("-x")) {
    if (warmup < 0) throw UsageError("-x/--warmup must not be negative");
    o.warmup = o.warmup_large = warmup;
  }
  if (given("--warmup-large")) {
    if (warmup_large < 0) throw UsageError("--warmup-large must not be negative");
    o.warmup_large = warmup_large;
  }
  if (o.repeat < 1 || o.repeat > kMaxRepeat)
    throw UsageError("--repeat must be between 1 and " + std::to_string(kMaxRepeat) + " (got " +
                     std::to_string(o.repeat) + ")");
  if (z->count() > 0) o.tail_percentiles = parse_percentiles(tails.empty() ? "50,90,99" : tails);
  // The watchdog counts in steady_clock nanoseconds: about 9.2e9 s at most.
  if (!(o.time_limit_s >= 0 && o.time_limit_s <= 1e9))
    throw UsageError("--time-limit must be a number of seconds from 0 to 1e9 (0: never)");

  if (wait == "auto")
    o.wait = WaitSetting::Auto;
  else if (wait == "spin")
    o.wait = WaitSetting::Spin;
  else if (wait == "yield")
    o.wait = WaitSetting::Yield;
  else
    throw UsageError("--wait: unknown mode '" + wait + "' (expected auto, spin or yield)");

  if (alloc != "backend" && alloc != "plain")
    throw UsageError("--alloc: unknown kind '" + alloc + "' (expected backend or plain)");
  o.plain_alloc = alloc == "plain";
  if (o.backend != "mpi" && o.backend != "nccl" && o.backend != "engine")
    throw UsageError("--backend: unknown backend '" + o.backend +
                     "' (expected mpi, nccl or engine)");

  const auto mem = parse_mem(accel);
  if (!mem)
    throw UsageError("-d/--accelerator: unknown kind '" + accel + "' (expected host or cuda)");
  o.mem = *mem;

  if (desc.family == Family::Pt2pt) {
    if (o.window < 1) throw UsageError("-W/--window-size must be at least 1");
    if (o.pairs < 0) throw UsageError("-p/--pairs must not be negative");
    if (sides.size() == 1) throw UsageError("buffers: give two letters, one per rank (e.g. H D)");
    if (sides.size() == 2) {
      o.side_mem[0] = parse_side(sides[0]);
      o.side_mem[1] = parse_side(sides[1]);
    } else if (o.mem == Mem::Cuda) {
      o.side_mem[0] = o.side_mem[1] = Mem::Cuda;
    }
    if (o.side_mem[0] == Mem::Cuda || o.side_mem[1] == Mem::Cuda) o.mem = Mem::Cuda;
  } else {
    const auto dt = parse_dtype(dtype);
    if (!dt)
      throw UsageError("--dtype: unknown type '" + dtype + "' (expected " + dtype_choices() + ")");
    o.dtype = *dt;
    const auto reduction = parse_op(op);
    if (!reduction)
      throw UsageError("--op: unknown reduction '" + op + "' (expected " + op_choices() + ")");
    o.op = *reduction;
    o.root = parse_root(root);
    // A root means nothing to a collective without one: refuse rather than ignore it.
    // (Its range is checked against the rank count when the run starts.)
    if (desc.coll && !desc.coll->rooted && given("-k"))
      throw UsageError("-k/--root: " + std::string(desc.name) +
                       " has no root (only rooted collectives such as bcast take one)");
    o.counts = parse_counts_pattern(counts);
    if (desc.coll && !desc.coll->varying_counts && given("--counts"))
      throw UsageError("--counts: " + std::string(desc.name) +
                       " has equal counts for every peer (--counts is for alltoallv)");
    if (desc.coll && !desc.coll->sized) {  // barrier: no data, so no size, type or place
      for (const char* opt : {"-m", "-T", "--op", "-l", "-M"})
        if (given(opt))
          throw UsageError(std::string(opt) + ": " + std::string(desc.name) +
                           " moves no data, so it has no message size, type, reduction or "
                           "buffers (it is measured once, as osu_barrier)");
    }
    if (desc.coll && !desc.coll->in_place_defined && o.in_place)
      throw UsageError("-l/--in-place: " + std::string(desc.name) +
                       " has no in-place form (MPI defines none for blocks of different sizes)");
    if (o.test_calls < 0) throw UsageError("-t/--num-test-calls must not be negative");
  }
  if (desc.family != Family::Pt2pt) {  // -M: the collectives' and the replay's buffers
    o.mem_limit = parse_bytes(mem_limit);
    if (o.mem_limit < (size_t{1} << 20)) throw UsageError("-M/--mem-limit must be at least 1M");
  }
  if (desc.family == Family::Replay && o.trace.empty() == o.model.empty())
    throw UsageError("give exactly one of --trace FILE or --model NAME");
  if (o.steps < 1) throw UsageError("--steps must be at least 1");
  if (desc.family == Family::Replay && given("--tokens") && (o.tokens < 1 || o.tokens > (1 << 24)))
    throw UsageError("--tokens must be from 1 to 16777216 (tokens per rank per step)");
  return out;
}

BackendConfig backend_config(const Options& o) {
  return {o.backend, o.mem, {o.side_mem[0], o.side_mem[1]}, o.staging, o.progress_thread};
}

}  // namespace cb
