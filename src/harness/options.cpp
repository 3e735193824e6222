#include "harness/options.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "config.hpp"
#include "core/coll_spec.hpp"
#include "core/errors.hpp"
#include "gpu/device.hpp"
#include "harness/placement.hpp"
#include "harness/version.hpp"

namespace cb {
namespace {

// -T: "float", "float,int32" or OMB's "all" (MPI_CHAR, MPI_INT and MPI_FLOAT, its order).
std::vector<Dtype> parse_dtype_list(const std::string& text) {
  std::string l = text;
  for (char& c : l) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (l == "all") return {Dtype::Char, Dtype::Int32, Dtype::Float};
  std::vector<Dtype> out;
  std::stringstream ss(text);
  for (std::string item; std::getline(ss, item, ',');) {
    const std::optional<Dtype> d = parse_dtype(item);
    if (!d)
      throw UsageError("-T/--dtype must be one of " + dtype_choices() +
                       ", a comma-separated list of them, or all (got '" + item + "')");
    if (std::find(out.begin(), out.end(), *d) != out.end())
      throw UsageError("-T/--dtype: " + item + " is listed twice");
    out.push_back(*d);
  }
  if (out.empty()) throw UsageError("-T/--dtype: no type given");
  return out;
}

std::vector<std::string> dtype_names(const std::vector<Dtype>& types) {
  std::vector<std::string> names;
  for (Dtype d : types) names.emplace_back(to_string(d));
  return names;
}

// -D: where a derived type means what OMB's does. A block of a reduction, of a v or w form
// (counts per peer) or of no data has no single layout, and only MPI takes MPI datatypes.
void check_layout_allowed(const BenchDesc& desc, const Options& o) {
  const CollSpec* c = desc.coll;
  const bool fits = c && c->sized && !c->reduces && !c->varying_counts &&
                    c->coll != Coll::Alltoallw && c->coll != Coll::NeighborAlltoallw;
  if (!fits)
    throw UsageError("-D/--ddt: " + std::string(desc.name) +
                     " takes no derived datatype (-D is for bcast, gather, scatter, allgather, "
                     "alltoall and neighbor_allgather/alltoall, and their non-blocking and "
                     "persistent forms)");
  if (o.backend != "mpi")
    throw UsageError("-D/--ddt: only the mpi backend sends MPI derived datatypes (got --backend " +
                     o.backend + ")");
  if (o.mem != Mem::Host) throw UsageError("-D/--ddt: host buffers only (leave out -d)");
  if (o.dtypes.size() > 1) throw UsageError("-D/--ddt: give one -T type, not a list");
}

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

// OMB's -t: "R" (receivers; the senders keep their default) or "S:R", each 1 to 127.
void parse_workers(const std::string& text, int out[2]) {
  const auto bad = [&text] {
    return UsageError("-t " + text +
                      ": give RECEIVERS or SENDERS:RECEIVERS, each a whole number from 1 to 127 "
                      "(OMB's -t)");
  };
  const auto number = [&](const std::string& s) {
    if (s.empty() || s.size() > 3 || s.find_first_not_of("0123456789") != std::string::npos)
      throw bad();
    const int v = std::stoi(s);
    if (v < 1 || v > 127) throw bad();
    return v;
  };
  const size_t colon = text.find(':');
  if (colon == std::string::npos) {
    out[1] = number(text);
  } else {
    out[0] = number(text.substr(0, colon));
    out[1] = number(text.substr(colon + 1));
  }
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

constexpr int kIntMax = std::numeric_limits<int>::max();

// Option values are checked by CLI11 validators, with the message in collbench's words:
// "must be ... (got 'VALUE')", which reworded() puts after every name of the option. (CLI11's
// own reads "--window-size: Value 0 not in range 1 to 2147483647".)
CLI::Validator worded(const CLI::Validator& check, const std::string& rule,
                      const std::string& shown) {
  return CLI::Validator(
      [check, rule](std::string& value) {
        std::string problem;
        try {
          problem = check(value);
        } catch (const CLI::ValidationError& e) {
          problem = e.what();
        }
        return problem.empty() ? problem : rule + " (got '" + value + "')";
      },
      shown);
}

// A whole number from `min` to int's largest (CLI::Range refuses "1.5", "abc", "1e99").
CLI::Validator at_least(int min) {
  return worded(CLI::Range(min, kIntMax),
                "must be a whole number, " +
                    (min == 0 ? std::string("not negative") : "at least " + std::to_string(min)),
                ">= " + std::to_string(min));
}

// A whole number from 0 to `max` (nccl-tests' 0/1/2/3 switches).
CLI::Validator zero_to(int max) {
  return worded(CLI::Range(0, max), "must be a whole number from 0 to " + std::to_string(max),
                "0 to " + std::to_string(max));
}

// "auto, spin or yield": the words of a choice, as the refusals name them.
std::string or_list(const std::vector<std::string>& words) {
  std::string list;
  for (size_t i = 0; i < words.size(); ++i)
    list += (i == 0 ? "" : i + 1 == words.size() ? " or " : ", ") + words[i];
  return list;
}

// One of `words` (CLI::IsMember): "must be auto, spin or yield".
CLI::Validator one_of(const std::vector<std::string>& words) {
  return worded(CLI::IsMember(words), "must be " + or_list(words),
                CLI::IsMember(words).get_description());
}

std::vector<std::string> split_commas(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    const size_t comma = text.find(',', start);
    out.push_back(
        text.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) return out;
    start = comma + 1;
  }
}

// A comma-separated list of `words` (repetitions allowed): "must be mpi, nccl or engine (or
// a comma-separated list of them)".
CLI::Validator list_of(const std::vector<std::string>& words) {
  const CLI::Validator items(
      [words](std::string& value) -> std::string {
        for (const std::string& item : split_commas(value))
          if (std::find(words.begin(), words.end(), item) == words.end()) return "not one";
        return {};
      },
      "");
  return worded(items, "must be " + or_list(words),
                CLI::IsMember(words).get_description() + "[,...]");
}

// --backend, --algo and --alloc as comma lists: every combination is a series. One series
// leaves Options as it always was; several fill o.series (the first is the baseline) and
// give --repeat a default of 10 passes, the fewest for which the comparison's 95 %
// interval is more than the extremes.
void make_series(Options& o, const std::string& backends, const std::string& allocs,
                 bool repeat_given) {
  const std::vector<std::string> bs = split_commas(backends), as = split_commas(allocs);
  const std::vector<std::string> gs = split_commas(o.algo);
  for (size_t i = 0; i < gs.size(); ++i) {
    if (gs.size() > 1 && (gs[i].empty() || gs[i] == "all"))
      throw UsageError("--algo " + o.algo +
                       ": a list of series names algorithms ('all' and empty names run alone)");
  }
  o.backend = bs.front();
  o.algo = gs.front();
  o.plain_alloc = as.front() == "plain";
  if (bs.size() * gs.size() * as.size() == 1) return;
  for (const std::string& b : bs)
    for (const std::string& g : gs)
      for (const std::string& a : as) {
        std::string name = b;
        if (gs.size() > 1 || !g.empty()) name += "/" + (g.empty() ? std::string("default") : g);
        if (as.size() > 1) name += "/" + a;
        // A series listed twice (--backend mpi,mpi: a pair that must come out
        // indistinguishable) gets its repetition's number: mpi, mpi.2.
        int same = 1;
        for (const Options::Series& earlier : o.series)
          if (earlier.backend == b && earlier.algo == g && earlier.plain_alloc == (a == "plain"))
            ++same;
        if (same > 1) name += "." + std::to_string(same);
        o.series.push_back({name, b, g, a == "plain"});
      }
  if (!repeat_given) o.repeat = 10;
}

// A value one of collbench's own parsers accepts (types, reductions and memory kinds have
// aliases and ignore case, which the parser knows: CLI::IsMember would repeat its table).
template <typename Parse>
CLI::Validator parsed_by(Parse parse, const std::string& rule, const std::string& shown) {
  return CLI::Validator(
      [parse, rule](std::string& value) {
        return parse(value) ? std::string() : rule + " (got '" + value + "')";
      },
      shown);
}

// Every name of an option, each short name before its long one: "-i/--iterations/-n/--iters".
std::string names_of(const CLI::Option& opt) {
  const auto& shorts = opt.get_snames();
  const auto& longs = opt.get_lnames();
  std::string names;
  for (size_t i = 0; i < std::max(shorts.size(), longs.size()); ++i) {
    if (i < shorts.size()) names += (names.empty() ? "-" : "/-") + shorts[i];
    if (i < longs.size()) names += (names.empty() ? "--" : "/--") + longs[i];
  }
  return names.empty() ? opt.get_name(true) : names;
}

std::string names_of(const CLI::App& app, const std::string& name) {
  const CLI::Option* opt = app.get_option_no_throw(name);
  return opt ? names_of(*opt) : name;
}

// CLI11's messages that name an option by one name ("--iterations: ...", "--minbytes
// excludes --message-size") with every name of it, as collbench's own messages do.
std::string reworded(const CLI::App& app, const CLI::ParseError& e) {
  const std::string what = e.what();
  if (dynamic_cast<const CLI::ValidationError*>(&e)) {
    const size_t colon = what.find(": ");
    if (colon != std::string::npos)
      return names_of(app, what.substr(0, colon)) + " " + what.substr(colon + 2);
  }
  if (dynamic_cast<const CLI::ExcludesError*>(&e)) {
    const size_t word = what.find(" excludes ");
    if (word != std::string::npos)
      return names_of(app, what.substr(0, word)) + " and " + names_of(app, what.substr(word + 10)) +
             " cannot be given together: they set the same thing";
  }
  return what;
}

// A parser's UsageError ("invalid size '12Q' ...") with the option it came from before it.
template <typename Fn>
auto for_option(const std::string& names, Fn fn) {
  try {
    return fn();
  } catch (const UsageError& e) {
    throw UsageError(names + ": " + e.what());
  }
}

// -G by every name, and what it is (nccl-tests: -G, --cudagraph).
constexpr const char* kCudaGraph = "-G/--cuda-graph/--cudagraph (CUDA graph launch)";

// Why -G cannot apply to this benchmark with these options (empty: it can). A CUDA graph
// holds stream operations: of collbench's calls, only the blocking collectives of the
// nccl backend on device buffers are.
std::string cuda_graph_refusal(const BenchDesc& desc, const Options& o) {
  const std::string exe = "cb_" + std::string(desc.name);
  switch (desc.family) {
    case Family::Pt2pt:
      return "applies to the blocking collectives (cb_allreduce ...): " + exe +
             " is point to point, and each of its iterations waits on the host for its messages";
    case Family::NonblockingCollective:
      return "applies to the blocking collectives: " + exe +
             " times each call's start, test calls and wait on the host, which calls inside a "
             "graph do not have (cb_" +
             std::string(desc.name.substr(1)) + " -G times the same collective)";
    case Family::Replay:
      return "applies to the blocking collectives: " + exe +
             " starts each message on the host when the emulated compute has produced it";
    case Family::Collective:
      break;
  }
  const std::string needs = "needs --backend nccl and -d cuda: ";
  if (o.backend == "mpi")
    return needs +
           "the mpi backend's calls are not stream operations (an MPI call returns to the host "
           "when it is done)";
  if (o.backend == "engine")
    return needs +
           "the engine backend's calls are not stream operations (it runs its schedules from "
           "the host, on device buffers too)";
  if (o.mem != Mem::Cuda)
    return needs + "NCCL's calls are stream operations on device buffers only (got -d host)";
  return {};
}

// Why nccl-tests' options cannot apply as given (empty: they can).
std::string nccl_tests_refusal(const Options& o) {
  if (o.local_register > 0 && (o.backend != "nccl" || o.mem != Mem::Cuda))
    return "-R/--local_register " + std::to_string(o.local_register) +
           " registers device buffers with NCCL (ncclCommRegister, ncclCommWindowRegister): it "
           "needs --backend nccl and -d cuda (MPI and the engine register host memory "
           "themselves; -R 0 runs anywhere)";
  if (o.cuda_graph > 0 && (o.agg_iters > 1 || o.blocking != 3))
    return "-G/--cuda-graph/--cudagraph captures the timed iterations into one graph: "
           "--agg_iters and --blocking shape the host loop, which -G replaces";
  if (o.per_iter && o.cuda_graph > 0)
    return "-I/--per_iter_timing 1 times each call, which -G/--cuda-graph/--cudagraph does not "
           "observe (nccl-tests turns -I off with -G)";
  if (o.per_iter && o.blocking != 3)
    return "-I/--per_iter_timing 1 times each iteration, which --blocking " +
           std::to_string(o.blocking) +
           " does not (one clock read pair around the loop): "
           "use --blocking 3, the default";
  if (o.per_iter_skip > 0 && !o.per_iter)
    return "-K/--per_iter_skip applies to -I/--per_iter_timing 1";
  return {};
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

std::string_view to_string(ProgressSetting p) {
  switch (p) {
    case ProgressSetting::On:
      return "on";
    case ProgressSetting::Off:
      return "off";
    case ProgressSetting::Auto:
      break;
  }
  return "auto";
}

void to_json(nlohmann::json& j, const Options& o) {
  j = {{"backend", o.backend},
       {"min_bytes", o.sizes.min},
       {"max_bytes", o.sizes.max},
       {"step_factor", o.sizes.step_bytes > 0 ? size_t{1} : o.sizes.factor},
       {"step_bytes", o.sizes.step_bytes},
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
       {"progress", to_string(o.progress)},
       {"window", o.window},
       {"pairs", o.pairs},
       {"workers", {o.workers[0], o.workers[1]}},
       {"buffers", {to_string(o.side_mem[0]), to_string(o.side_mem[1])}},
       {"accelerator", to_string(o.mem)},
       {"alloc", o.plain_alloc ? "plain" : "backend"},
       {"seed", o.seed},
       {"target_ci_pct", o.target_ci_pct},
       {"target_ci_cap_s", o.target_ci_cap_s},
       {"staging", o.staging},
       {"dtype", to_string(o.dtype)},
       {"dtypes", dtype_names(o.dtypes)},
       {"ddt", o.layout.str()},
       {"op", to_string(o.op)},
       {"in_place", o.in_place},
       {"root", o.root.rotate ? std::string("rotate") : "fixed:" + std::to_string(o.root.fixed)},
       {"mem_limit_bytes", o.mem_limit},
       {"test_calls", o.test_calls},
       {"algo", o.algo},
       {"progress_thread", o.progress_thread},
       {"counts", o.counts.str()},
       {"cuda_graph", o.cuda_graph},
       {"average", o.average},
       {"agg_iters", o.agg_iters},
       {"blocking", o.blocking},
       {"local_register", o.local_register},
       {"report_timestamps", o.timestamps},
       {"memory_report", o.memory_report},
       {"per_iter_timing", o.per_iter},
       {"per_iter_skip", o.per_iter_skip},
       {"trace", o.trace},
       {"model", o.model},
       {"fusion", o.fusion},
       {"compute", o.compute},
       {"parallel", o.parallel},
       {"export_trace", o.export_trace},
       {"steps", o.steps},
       {"tokens", o.tokens},
       {"off_cache", o.off_cache},
       {"off_cache_bytes", o.off_cache_bytes},
       {"vary_data", o.vary_data},
       {"misalign_bytes", o.misalign}};
}

std::string placement_options_given(const Options& o) {
  std::vector<std::string> names;
  if (o.off_cache) names.emplace_back("--off-cache");
  if (o.vary_data) names.emplace_back("--vary-data");
  if (o.misalign > 0) names.emplace_back("-u/--misalign");
  std::string text;
  for (const std::string& n : names) text += (text.empty() ? "" : ", ") + n;
  return text;
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
  const bool pt2pt = desc.family == Family::Pt2pt;

  const std::string exe = "cb_" + std::string(desc.name);
  CLI::App app("collbench " + std::string(desc.title) + " (OMB-compatible options)", exe);
  app.set_version_flag("-v,--version", version_text());

  std::string sizes, min_bytes, max_bytes, step_bytes, omb_buffers, tails,
      accel = "host", wait = "auto", dtype = "float", op = "sum", root = "fixed:0",
      mem_limit = "1G", counts = "uniform", topology = "cart:1:1", ddt, workers;
  std::vector<std::string> sides;
  int iters = 0, warmup = 0, iters_large = 0, warmup_large = 0, step_factor = 2;

  auto* m_opt = app.add_option("-m,--message-size", sizes,
                               "[MIN:]MAX message size in bytes (K/M/G suffixes)");
  // nccl-tests' names where OMB's letters leave them free: -b is OMB's buffer count
  // (-b single|multiple) in point-to-point, -f OMB's --full, -i OMB's iterations.
  auto* min_opt = app.add_option(pt2pt ? "--minbytes" : "-b,--minbytes", min_bytes,
                                 "smallest message size (nccl-tests' -b; K/M/G suffixes)");
  auto* max_opt = app.add_option("-e,--maxbytes", max_bytes,
                                 "largest message size (nccl-tests' -e; K/M/G suffixes)");
  min_opt->excludes(m_opt);
  max_opt->excludes(m_opt);
  auto* factor = app.add_option("--stepfactor", step_factor,
                                "sizes grow by this factor (default 2: doubling; nccl-tests' -f)")
                     ->check(at_least(2));
  app.add_option("--stepbytes", step_bytes,
                 "sizes grow by this many bytes instead: a linear sweep (nccl-tests' -i; K/M/G)")
      ->excludes(factor);
  if (pt2pt) app.add_option("-b", omb_buffers, "OMB's buffer count (not supported)")->group("");
  app.add_option("-i,-n,--iterations,--iters", iters,
                 "timed iterations at every size (as OMB, also above 8 KiB; -n: nccl-tests)")
      ->check(at_least(1));
  // One-sided benchmarks: -w is OMB's window creation there, so the warmup is -x only.
  app.add_option(desc.rma ? "-x,--warmup,--warmup_iters" : "-x,-w,--warmup,--warmup_iters", warmup,
                 desc.rma ? "warmup iterations at every size"
                          : "warmup iterations at every size (-w: nccl-tests)")
      ->check(at_least(0));
  app.add_option("--iterations-large", iters_large, "timed iterations above 8 KiB")
      ->check(at_least(1));
  app.add_option("--warmup-large", warmup_large, "warmup iterations above 8 KiB")
      ->check(at_least(0));
  app.add_option("--repeat", o.repeat,
                 "timed passes per size (warmup + iterations each); the median pass is "
                 "reported, the spread with -f and in the JSON")
      ->check(worded(CLI::Range(1, kMaxRepeat),
                     "must be a whole number from 1 to " + std::to_string(kMaxRepeat),
                     "1 to " + std::to_string(kMaxRepeat)));
  app.add_flag("-f,--full", o.full, "full statistics: min, max, iterations");
  auto* z =
      app.add_option("-z,--tail-lat", tails, "tail percentiles (default 50,90,99)")->expected(0, 1);
  app.add_flag("-c,--validation", o.validate, "check every received element after timing");
  app.add_option("-d,--accelerator", accel, "buffer memory: host or cuda")
      ->check(parsed_by(parse_mem, "must be host or cuda", "host|cuda"));
  std::string backends = "mpi";
  app.add_option("--backend", backends,
                 "mpi, nccl or engine; a comma-separated list measures each as a series, "
                 "interleaved pass by pass (the first is the baseline)")
      ->check(list_of({"mpi", "nccl", "engine"}));
  app.add_flag("--staging", o.staging,
               "mpi backend with device buffers: copy them through host memory around each call");
  std::string alloc = "backend";
  app.add_option("--alloc", alloc,
                 "buffers from the backend (engine: shared memory) or plain (page-aligned heap); "
                 "a comma-separated list: one series each")
      ->check(list_of({"backend", "plain"}));
  app.add_option("--target-ci", o.target_ci_pct,
                 "passes continue (at least --repeat, default 6) until the median's 95 % interval "
                 "is within +-PCT % of it, or --target-ci-cap seconds at the size (ReproMPI's "
                 "method)")
      ->check(
          worded(CLI::Range(0.01, 100.0), "must be a percentage from 0.01 to 100", "0.01 to 100"));
  app.add_option("--target-ci-cap", o.target_ci_cap_s,
                 "--target-ci: the most seconds of passes at one size (default 60)")
      ->check(worded(CLI::Range(0.001, 1e6), "must be from 0.001 to 1e6 seconds", "0.001 to 1e6"));
  app.add_option("--seed", o.seed,
                 "seed of the shuffled order of interleaved series (default 1; the same on "
                 "every rank)")
      ->check(worded(CLI::Validator(
                         [](std::string& v) -> std::string {
                           // Digits only, at most 18 of them: CLI::Range lets an overflow
                           // through as the type's largest value.
                           const bool ok = !v.empty() && v.size() <= 18 &&
                                           std::all_of(v.begin(), v.end(),
                                                       [](char c) { return c >= '0' && c <= '9'; });
                           return ok ? std::string() : std::string("bad");
                         },
                         ""),
                     "must be a whole number from 0 to 999999999999999999", "0 to 10^18-1"));
  app.add_option("-J,--json", o.json_path, "write results as JSON (rewritten after every size)");
  // The watchdog counts in steady_clock nanoseconds: about 9.2e9 s at most. (CLI::Range
  // lets NaN through: every comparison with it is false.)
  const CLI::Validator not_nan(
      [](std::string& v) { return std::isnan(std::strtod(v.c_str(), nullptr)) ? "NaN" : ""; }, "");
  app.add_option("--time-limit", o.time_limit_s,
                 "abort if one message size takes longer than this many seconds (0: never)")
      ->check(worded(CLI::Range(0.0, 1e9) & not_nan,
                     "must be a number of seconds from 0 (never) to 1e9", "0 to 1e9"));
  app.add_option("--wait", wait,
                 "waiting: spin, yield (sched_yield between polls) or auto (yield when a "
                 "node has more ranks than cores)")
      ->check(one_of({"auto", "spin", "yield"}));
  // nccl-tests' -G: offered to every family so that the others can say why it does not
  // apply (below); listed in --help of the blocking collectives only (hidden there, not
  // here: CLI11 names a hidden option by "" in its errors).
  auto* graph_opt =
      app.add_option("-G,--cuda-graph,--cudagraph", o.cuda_graph,
                     "CUDA graph launch (nccl-tests' -G): each size's timed iterations captured "
                     "into one CUDA graph, launched N times (0: off; --backend nccl -d cuda)")
          ->check(
              worded(CLI::Range(0, kMaxGraphLaunches),
                     "must be a whole number from 0 (off) to " + std::to_string(kMaxGraphLaunches),
                     "0 to " + std::to_string(kMaxGraphLaunches)));
  // nccl-tests' -R: buffer registration is the nccl backend's; offered to every family so
  // that -R 0 (nccl-tests' default) runs anywhere and 1 or 2 elsewhere say why not.
  app.add_option("-R,--local_register", o.local_register,
                 "nccl-tests' buffer registration: 0 none, 1 ncclCommRegister, 2 symmetric "
                 "(ncclCommWindowRegister); --backend nccl -d cuda")
      ->check(zero_to(2));
  std::string off_cache, misalign;
  auto* off_cache_opt =
      app.add_option("--off-cache", off_cache,
                     "IMB's -off_cache: every iteration uses the next buffer of a ring of BYTES "
                     "per buffer (default: 2 x the last-level cache from sysfs; device buffers "
                     "256 MiB), so its data is not cache-warm")
          ->expected(0, 1);
  app.add_flag("--vary-data", o.vary_data,
               "the send data changes every iteration: one element per 64-byte line stored "
               "before each iteration (collectives: untimed; point to point: inside the timed "
               "loop)");
  app.add_option("-u,--misalign", misalign,
                 "send and receive pointers BYTES (0 to 4095) past the allocation's alignment "
                 "(page; nccl-tests has no such option)");
  bool quiet = false, progress = false;
  app.add_flag("-q,--quiet", quiet, "no progress line on stderr")
      ->excludes(app.add_flag("--progress", progress,
                              "draw the progress line on stderr even when it is not a terminal "
                              "(under mpirun: the launcher's pipe); by default only on a "
                              "terminal"));

  const auto dtype_check = parsed_by(parse_dtype, "must be one of " + dtype_choices(), "");
  const auto op_check = parsed_by(parse_op, "must be one of " + op_choices(), "");
  if (pt2pt) {
    app.add_option("-W,--window-size", o.window, "messages in flight per iteration (bw tests)")
        ->check(at_least(1));
    app.add_option("-p,--pairs", o.pairs, "sender/receiver pairs (mbw_mr; default nranks/2)")
        ->check(at_least(0));
    app.add_option("buffers", sides, "H or D for rank 0's and rank 1's buffers (OMB form)")
        ->expected(0, 2);
    app.add_option("--partitions", o.partitions,
                   "partitions per message (partitioned_latency: MPI_Psend_init; default 8)")
        ->check(at_least(1));
    app.add_option("-t,--num-threads,--num-processes", workers,
                   "latency_mt: threads, latency_mp: forked processes, as OMB's -t RECEIVERS or "
                   "SENDERS:RECEIVERS (each 1 to 127; defaults 1:2 threads, 0:2 processes)");
    if (desc.rma) {
      app.add_option("-w,--win-options", o.rma_window,
                     "one-sided window: create, allocate or dynamic (OMB's -w)");
      app.add_option("-s,--sync-option", o.rma_sync,
                     "one-sided synchronisation: lock, flush, flush_local, lock_all, pscw or "
                     "fence, as the benchmark allows (OMB's -s)");
    }
  } else if (desc.family == Family::Replay) {
    app.add_option("--trace", o.trace, "gradient trace: collbench JSON, PARAM basic JSON or CSV");
    app.add_option("--model", o.model,
                   "built-in model: resnet50, vgg16, bert-base, gpt2, or the MoE layers of "
                   "mixtral-8x7b or switch-base-8");
    app.add_option("--fusion", o.fusion, "grouping: none, horovod[:MB], ddp[:MB]");
    app.add_option("--compute", o.compute, "emulated backward compute: none, trace, us-per-mb:X");
    app.add_option("--parallel", o.parallel,
                   "data parallelism of --model: ddp, zero1[:ELEMENTS], zero2[:ELEMENTS], fsdp");
    app.add_option("--export-trace", o.export_trace,
                   "write the plan as a collbench JSON trace (FILE.et: Chakra ET)");
    app.add_option("--steps", o.steps,
                   "training steps a CSV count table covers: each replay step replays one")
        ->check(at_least(1));
    app.add_option("--counts", counts,
                   "MoE models: router expert popularity: uniform, zipf:S[,SEED] or "
                   "random[:SEED]");
    app.add_option("--tokens", o.tokens, "MoE models: tokens per rank per step")
        ->check(worded(CLI::Range(1LL, 1LL << 24),
                       "must be from 1 to 16777216 tokens per rank per step", "1 to 16777216"));
    app.add_option("-T,--dtype", dtype,
                   "element type of --model's gradients or tokens: " + dtype_choices())
        ->check(dtype_check);
    app.add_option("-M,--mem-limit", mem_limit, "memory limit per process for buffers");
    app.add_option("--algo", o.algo,
                   "engine algorithm by name; a comma-separated list: one series each");
    app.add_flag("--progress-thread", o.progress_thread,
                 "engine: advance non-blocking operations in a background thread");
  } else {
    app.add_option("-T,--dtype", dtype,
                   "element type: " + dtype_choices() +
                       "; a comma-separated list or 'all' (OMB's: char, int, float) runs the "
                       "sweep once per type");
    app.add_option("-D,--ddt", ddt,
                   "derived datatype of each block (mpi backend; OMB's -D): cont, "
                   "vect:STRIDE:BLOCKLEN or indx:FILE (lines DISPLACEMENT,BLOCKLEN)");
    app.add_option("--op", op, "reduction: " + op_choices())->check(op_check);
    app.add_flag("-l,--in-place", o.in_place, "in-place collective (MPI_IN_PLACE)");
    app.add_option("-k,--root", root, "root of rooted collectives: fixed:R or rotate");
    app.add_option("-M,--mem-limit", mem_limit, "memory limit per process for buffers");
    app.add_option("--algo", o.algo,
                   "engine algorithm by name, or 'all'; a comma-separated list: one series each");
    app.add_flag("--progress-thread", o.progress_thread,
                 "engine: advance non-blocking operations in a background thread");
    app.add_option("--counts", counts,
                   "alltoallv, alltoallw: per-peer counts; gatherv, scatterv, allgatherv, "
                   "reduce_scatterv: per-rank blocks: uniform, zipf:S[,SEED] (MoE routing "
                   "skew) or random[:SEED]; -m is the average bytes per peer or block");
    app.add_option("-N,--topology", topology,
                   "neighborhood collectives: cart:DIMS:RADIUS, a periodic DIMS-dimensional grid "
                   "(MPI_Dims_create), neighbors up to RADIUS steps away in every dimension, "
                   "or graph:FILE, lines SOURCE,DESTINATION (OMB's -N)");
    app.add_option("--memory,--memory_report", o.memory_report,
                   "nccl-tests' -M (-M is OMB's --mem-limit here): 1 reports the buffers' memory, "
                   "the process's peak resident memory and, on a GPU, device memory in use")
        ->check(zero_to(1));
    if (desc.family == Family::Collective) {  // nccl-tests' timing options (docs/usage.md)
      app.add_option("-S,--report_timestamps", o.timestamps,
                     "nccl-tests' -S: 1 adds each row's wall-clock time (Timestamp column)")
          ->check(zero_to(1));
      app.add_option("-a,--average", o.average,
                     "per-rank time the table, algbw and busbw use (nccl-tests): 0 rank 0's, 1 "
                     "average (OMB's), 2 minimum, 3 maximum")
          ->check(zero_to(3));
      app.add_option("--agg_iters", o.agg_iters,
                     "nccl-tests' -m (-m is OMB's sizes here): operations per timed iteration "
                     "(NCCL: one group); the time per operation is divided by it")
          ->check(at_least(1));
      app.add_option("--blocking", o.blocking,
                     "nccl-tests' -z (-z is OMB's tails here): 0 wait once after the loop, 1 wait "
                     "and barrier after each operation, 2 wait after each, 3 (default, OMB's "
                     "loop) wait after each iteration, untimed barrier")
          ->check(zero_to(3));
      app.add_option("-I,--per_iter_timing", o.per_iter,
                     "nccl-tests' -I: 1 writes every iteration's time to the JSON")
          ->check(zero_to(1));
      app.add_option("-K,--per_iter_skip", o.per_iter_skip,
                     "nccl-tests' -K: leading iterations left out of the per-iteration summary")
          ->check(at_least(0));
    }
    if (desc.family == Family::NonblockingCollective)
      app.add_option("-t,--num-test-calls", o.test_calls,
                     "test calls spread through the dummy compute")
          ->check(at_least(0));
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    if (desc.family != Family::Collective) graph_opt->group("");
    out.early_exit = app.help();
    return out;
  } catch (const CLI::CallForVersion& e) {
    out.early_exit = std::string(e.what()) + "\n";
    return out;
  } catch (const CLI::ParseError& e) {
    throw UsageError(reworded(app, e) + " (run " + exe + " --help for the options)");
  }

  const auto given = [&](const char* name) { return app.count(name) > 0; };
  if (pt2pt && given("-b"))
    throw UsageError(
        "-b: OMB's -b single|multiple (a buffer per window slot) is not supported; "
        "nccl-tests' -b (the smallest size) is --minbytes here");
  if (desc.coll && !desc.coll->sized) {  // barrier: no data, so no size, type or place
    for (const char* opt : {"-m", "--minbytes", "--maxbytes", "--stepfactor", "--stepbytes", "-T",
                            "--op", "-l", "-M", "--off-cache", "--vary-data", "-u"})
      if (given(opt))
        throw UsageError(names_of(app, opt) + ": " + std::string(desc.name) +
                         " moves no data, so it has no message size, type, reduction or "
                         "buffers (it is measured once, as osu_barrier)");
  }
  if (!sizes.empty())
    o.sizes =
        for_option(names_of(*m_opt), [&] { return parse_size_range(sizes, desc.default_sizes); });
  const bool has_min = min_opt->count() > 0, has_max = max_opt->count() > 0;
  if (has_min) o.sizes.min = for_option(names_of(*min_opt), [&] { return parse_bytes(min_bytes); });
  if (has_max) {
    o.sizes.max = for_option(names_of(*max_opt), [&] { return parse_bytes(max_bytes); });
    if (!has_min && o.sizes.min > o.sizes.max) o.sizes.min = o.sizes.max;  // as -m MAX
  }
  if (has_min && o.sizes.min > o.sizes.max)
    throw UsageError(names_of(*min_opt) + " " + min_bytes + " is larger than the largest size (" +
                     (has_max ? names_of(*max_opt) + " " + max_bytes
                              : "the default, " + format_bytes(o.sizes.max)) +
                     ")");
  o.sizes.factor = static_cast<size_t>(step_factor);
  if (given("--stepbytes")) {
    o.sizes.step_bytes = for_option("--stepbytes", [&] { return parse_bytes(step_bytes); });
    if (o.sizes.step_bytes == 0) throw UsageError("--stepbytes must be at least 1 byte");
    const size_t count = size_sweep_count(o.sizes);
    if (count > kMaxSweepSizes)
      throw UsageError("--stepbytes " + step_bytes + ": " + std::to_string(count) + " sizes from " +
                       std::to_string(o.sizes.min) + " to " + std::to_string(o.sizes.max) +
                       " B, more than " + std::to_string(kMaxSweepSizes) +
                       " (take a larger step or a narrower range)");
  }
  if (given("-i")) o.iterations = o.iterations_large = iters;
  if (given("--iterations-large")) o.iterations_large = iters_large;
  if (given("-x")) o.warmup = o.warmup_large = warmup;
  if (given("--warmup-large")) o.warmup_large = warmup_large;
  if (z->count() > 0) o.tail_percentiles = parse_percentiles(tails.empty() ? "50,90,99" : tails);

  o.wait = wait == "spin"    ? WaitSetting::Spin
           : wait == "yield" ? WaitSetting::Yield
                             : WaitSetting::Auto;
  make_series(o, backends, alloc, given("--repeat"));
  if (given("--target-ci-cap") && !given("--target-ci"))
    throw UsageError("--target-ci-cap: only with --target-ci PCT");
  if (o.target_ci_pct > 0 && !given("--repeat")) o.repeat = 6;  // the fewest for a 95 % interval
  o.progress = quiet      ? ProgressSetting::Off
               : progress ? ProgressSetting::On
                          : ProgressSetting::Auto;
  o.mem = *parse_mem(accel);
  if (off_cache_opt->count() > 0) {
    o.off_cache = true;
    if (!off_cache.empty()) o.off_cache_bytes = parse_off_cache(off_cache, physical_memory_bytes());
  }
  if (given("-u")) o.misalign = parse_misalign(misalign);
  if ((o.off_cache || o.vary_data) && o.cuda_graph > 0)
    throw UsageError(
        "--off-cache and --vary-data change buffers or data between iterations, which "
        "-G/--cuda-graph/--cudagraph captures once into a graph: leave out one or the other");
  if (o.vary_data && o.blocking != 3)
    throw UsageError(
        "--vary-data stores into the send buffer between iterations, untimed; --blocking " +
        std::to_string(o.blocking) +
        " times the loop as a whole, which would time the stores: use --blocking 3, "
        "the default");
  if (o.off_cache && desc.persistent)
    throw UsageError("--off-cache: cb_" + std::string(desc.name) +
                     " makes its persistent operations once on one pair of buffers; the ring "
                     "needs a new buffer every iteration (use the blocking benchmark)");

  if (pt2pt) {
    if (sides.size() == 1) throw UsageError("buffers: give two letters, one per rank (e.g. H D)");
    if (sides.size() == 2) {
      o.side_mem[0] = parse_side(sides[0]);
      o.side_mem[1] = parse_side(sides[1]);
    } else if (o.mem == Mem::Cuda) {
      o.side_mem[0] = o.side_mem[1] = Mem::Cuda;
    }
    if (o.side_mem[0] == Mem::Cuda || o.side_mem[1] == Mem::Cuda) o.mem = Mem::Cuda;
    if (given("-t")) parse_workers(workers, o.workers);
  } else {
    o.dtypes = desc.family == Family::Replay ? std::vector<Dtype>{*parse_dtype(dtype)}
                                             : parse_dtype_list(dtype);
    o.dtype = o.dtypes.front();
    o.op = *parse_op(op);
    o.root = parse_root(root);
    // A root means nothing to a collective without one: refuse rather than ignore it.
    // (Its range is checked against the rank count when the run starts.)
    if (desc.coll && !desc.coll->rooted && given("-k"))
      throw UsageError("-k/--root: " + std::string(desc.name) +
                       " has no root (only rooted collectives such as bcast take one)");
    o.counts = parse_counts_pattern(counts);
    o.topology = parse_topology(topology);
    if (desc.coll && !desc.coll->neighbor_elements && given("-N"))
      throw UsageError("-N/--topology: " + std::string(desc.name) +
                       " is no neighborhood collective (only neighbor_* take a topology)");
    if (desc.coll && !desc.coll->varying_counts && given("--counts"))
      throw UsageError("--counts: " + std::string(desc.name) +
                       " has equal counts for every peer (--counts is for alltoallv, alltoallw "
                       "and the v forms)");
    if (!ddt.empty()) {
      o.layout = parse_layout(ddt);
      check_layout_allowed(desc, o);
    }
    if (desc.coll && !desc.coll->in_place_defined && o.in_place)
      throw UsageError("-l/--in-place: " + std::string(desc.name) +
                       " has no in-place form (MPI defines none for blocks of different sizes)");
  }
  if (!pt2pt) {  // -M: the collectives' and the replay's buffers
    o.mem_limit = for_option("-M/--mem-limit", [&] { return parse_bytes(mem_limit); });
    if (o.mem_limit < (size_t{1} << 20)) throw UsageError("-M/--mem-limit must be at least 1M");
  }
  if (o.cuda_graph > 0)
    if (const std::string why = cuda_graph_refusal(desc, o); !why.empty())
      throw UsageError(std::string(kCudaGraph) + " " + why);
  if (const std::string why = nccl_tests_refusal(o); !why.empty()) throw UsageError(why);
  if (desc.family == Family::Replay && o.trace.empty() == o.model.empty())
    throw UsageError("give exactly one of --trace FILE or --model NAME");
  if (!o.series.empty()) {
    if (o.algo == "all")
      throw UsageError("--algo all runs alone: name the algorithms to interleave (--algo A,B)");
    if (o.dtypes.size() > 1)
      throw UsageError("-T with several types runs alone: interleaved series take one type");
    if (o.repeat < 2)
      throw UsageError("--repeat " + std::to_string(o.repeat) +
                       ": interleaved series compare passes: give at least 2 (10 by default; 6 "
                       "or more for 95 % intervals)");
    // What the checks above said of the first series, for every other one.
    for (const Options::Series& series : o.series) {
      Options one = o;
      one.backend = series.backend;
      one.algo = series.algo;
      one.plain_alloc = series.plain_alloc;
      one.series.clear();
      if (!one.layout.str().empty()) check_layout_allowed(desc, one);
      if (one.cuda_graph > 0)
        if (const std::string why = cuda_graph_refusal(desc, one); !why.empty())
          throw UsageError(std::string(kCudaGraph) + " " + why + " (series " + series.name + ")");
      if (const std::string why = nccl_tests_refusal(one); !why.empty())
        throw UsageError(why + " (series " + series.name + ")");
    }
  }
  return out;
}

void check_cuda_graph_device(const Options& o) {
  if (o.cuda_graph <= 0) return;
  if (const std::string why = gpu::unavailable_reason(); !why.empty())
    throw UsageError(std::string(kCudaGraph) + " cannot run here: " + why);
}

BackendConfig backend_config(const Options& o) {
  return {o.backend,         o.mem,           {o.side_mem[0], o.side_mem[1]}, o.staging,
          o.progress_thread, o.local_register};
}

}  // namespace cb
