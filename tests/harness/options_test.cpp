#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/coll_spec.hpp"
#include "core/errors.hpp"
#include "gpu/device.hpp"
#include "harness/options.hpp"
#include "harness/sizes.hpp"
#include "parse_helpers.hpp"

namespace cb {
namespace {

using test::error_of;
using test::parse;
constexpr const BenchDesc& kColl = test::kAllreduceDesc;

constexpr BenchDesc kPt2pt{.name = "bw",
                           .title = "Bandwidth Test",
                           .family = Family::Pt2pt,
                           .default_sizes = {1, 4 << 20},
                           .defaults = {100, 10, 20, 2}};
constexpr BenchDesc kNbc{.name = "iallreduce",
                         .title = "Non-blocking Allreduce Latency Test",
                         .family = Family::NonblockingCollective,
                         .default_sizes = {4, 1 << 20},
                         .defaults = {1000, 100, 100, 10}};

TEST(Options, OmbDefaultsAndLargeMessageIterations) {
  const Options o = parse(kPt2pt, {});
  EXPECT_EQ(o.sizes.min, 1u);
  EXPECT_EQ(o.sizes.max, 4u << 20);
  EXPECT_EQ(o.iterations_for(8192), 100);
  EXPECT_EQ(o.iterations_for(8193), 20);
  EXPECT_EQ(o.warmup_for(8193), 2);
  EXPECT_EQ(o.window, 64);
  EXPECT_FALSE(o.validate);
  EXPECT_EQ(o.backend, "mpi");
}

TEST(Options, DashISetsEverySizeLikeOmb) {
  const Options o = parse(kPt2pt, {"-i", "7", "-x", "3"});
  EXPECT_EQ(o.iterations_for(1), 7);
  EXPECT_EQ(o.iterations_for(1 << 20), 7);
  EXPECT_EQ(o.warmup_for(1 << 20), 3);
  const Options l = parse(kPt2pt, {"-i", "7", "--iterations-large", "2"});
  EXPECT_EQ(l.iterations_for(1), 7);
  EXPECT_EQ(l.iterations_for(1 << 20), 2);
}

TEST(Options, OmbFlags) {
  const Options o = parse(kPt2pt, {"-m", "2:64K", "-f", "-c", "-W", "16", "-J", "x.json", "-z",
                                   "--time-limit", "9", "--wait", "yield"});
  EXPECT_EQ(o.sizes.min, 2u);
  EXPECT_EQ(o.sizes.max, 65536u);
  EXPECT_TRUE(o.full);
  EXPECT_TRUE(o.validate);
  EXPECT_EQ(o.window, 16);
  EXPECT_EQ(o.json_path, "x.json");
  EXPECT_EQ(o.tail_percentiles, (std::vector<double>{50, 90, 99}));
  EXPECT_EQ(o.time_limit_s, 9);
  EXPECT_EQ(o.wait, WaitSetting::Yield);
  EXPECT_EQ(parse(kPt2pt, {"-z", "95,99.9"}).tail_percentiles, (std::vector<double>{95, 99.9}));
}

TEST(Options, BufferSidesOmbPositional) {
  const Options o = parse(kPt2pt, {"-d", "cuda", "D", "H"});
  EXPECT_EQ(o.side_mem[0], Mem::Cuda);
  EXPECT_EQ(o.side_mem[1], Mem::Host);
  EXPECT_EQ(o.mem, Mem::Cuda);
  const Options both = parse(kPt2pt, {"-d", "cuda"});
  EXPECT_EQ(both.side_mem[1], Mem::Cuda);
  EXPECT_EQ(parse(kPt2pt, {}).side_mem[0], Mem::Host);
}

TEST(Options, CollectiveOptions) {
  const Options o = parse(kColl, {"--dtype", "int32", "--op", "max", "-l", "-k", "rotate"});
  EXPECT_EQ(o.dtype, Dtype::Int32);
  EXPECT_EQ(o.op, Op::Max);
  EXPECT_TRUE(o.in_place);
  EXPECT_TRUE(o.root.rotate);
  EXPECT_EQ(parse(kColl, {"-k", "fixed:3"}).root.fixed, 3);
  EXPECT_EQ(parse(kColl, {"-T", "mpi_char"}).dtype, Dtype::Char);
  EXPECT_EQ(parse(kNbc, {"-t", "10"}).test_calls, 10);
}

TEST(Options, BadInputNamesTheProblem) {
  EXPECT_NE(error_of(kPt2pt, {"--bogus"}).find("--bogus"), std::string::npos);
  EXPECT_NE(error_of(kPt2pt, {"-i", "0"}).find("-i/--iterations"), std::string::npos);
  EXPECT_NE(error_of(kPt2pt, {"-x", "-1"}).find("-x/--warmup"), std::string::npos);
  EXPECT_NE(error_of(kPt2pt, {"-m", "8:4"}).find("MIN is larger"), std::string::npos);
  EXPECT_NE(error_of(kPt2pt, {"-W", "0"}).find("-W"), std::string::npos);
  EXPECT_NE(error_of(kPt2pt, {"-z", "0"}).find("percentile"), std::string::npos);
  EXPECT_NE(error_of(kPt2pt, {"--backend", "gloo"}).find("gloo"), std::string::npos);
  EXPECT_NE(error_of(kPt2pt, {"-d", "rocm"}).find("rocm"), std::string::npos);
  EXPECT_NE(error_of(kPt2pt, {"X", "H"}).find("'X'"), std::string::npos);
  EXPECT_NE(error_of(kPt2pt, {"D"}).find("two letters"), std::string::npos);
  EXPECT_NE(error_of(kPt2pt, {"MD", "MD"}).find("managed"), std::string::npos);
  EXPECT_NE(error_of(kPt2pt, {"--time-limit", "-3"}).find("--time-limit"), std::string::npos);
  EXPECT_NE(error_of(kPt2pt, {"--wait", "sleepy"}).find("sleepy"), std::string::npos);
  EXPECT_NE(error_of(kPt2pt, {"-i", "abc"}).find("abc"), std::string::npos);
  EXPECT_NE(error_of(kColl, {"--dtype", "complex"}).find("complex"), std::string::npos);
  EXPECT_NE(error_of(kColl, {"--op", "xor"}).find("xor"), std::string::npos);
  EXPECT_NE(error_of(kColl, {"-k", "fixed:-1"}).find("-k/--root"), std::string::npos);
  EXPECT_NE(error_of(kColl, {"-M", "1K"}).find("-M"), std::string::npos);
  EXPECT_NE(error_of(kColl, {"-W", "4"}).find("-W"), std::string::npos);  // pt2pt only
  EXPECT_NE(error_of(kNbc, {"-t", "-2"}).find("-t"), std::string::npos);
}

// OMB's -t of osu_latency_mt and osu_latency_mp: RECEIVERS or SENDERS:RECEIVERS, each 1 to
// 127; a side not given stays 0 (the benchmark's default, pt2pt/workers.hpp).
TEST(Options, DashTIsOmbsThreadsOrProcesses) {
  const Options none = parse(kPt2pt, {});
  EXPECT_EQ(none.workers[0], 0);
  EXPECT_EQ(none.workers[1], 0);
  const Options r = parse(kPt2pt, {"-t", "3"});
  EXPECT_EQ(r.workers[0], 0);
  EXPECT_EQ(r.workers[1], 3);
  const Options sr = parse(kPt2pt, {"--num-threads", "2:127"});
  EXPECT_EQ(sr.workers[0], 2);
  EXPECT_EQ(sr.workers[1], 127);
  EXPECT_EQ(nlohmann::json(sr)["workers"], nlohmann::json::array({2, 127}));
  for (const char* bad : {"0", "128", "1:", ":2", "1:2:3", "a", "0:2", "1000"})
    EXPECT_NE(error_of(kPt2pt, {"-t", bad}).find("1 to 127"), std::string::npos) << bad;
  EXPECT_NE(error_of(kColl, {"-t", "2"}).find("-t"), std::string::npos);  // pt2pt and nbc only
}

// -M bounds the replay's buffers too (fuzz_options): it was parsed for collectives only, so
// cb_replay -M 64M ran with the default 1 GiB limit and -M 1K was not refused.
TEST(Options, ReplayMemLimit) {
  constexpr BenchDesc kReplay{.name = "replay",
                              .title = "Replay Test",
                              .family = Family::Replay,
                              .default_sizes = {1, 1},
                              .defaults = {10, 2, 10, 2}};
  EXPECT_EQ(parse(kReplay, {"--model", "resnet50"}).mem_limit, size_t{1} << 30);
  EXPECT_EQ(parse(kReplay, {"--model", "resnet50", "-M", "64M"}).mem_limit, size_t{64} << 20);
  EXPECT_EQ(parse(kReplay, {"--model", "vgg16", "--mem-limit", "2G"}).mem_limit, size_t{2} << 30);
  EXPECT_NE(error_of(kReplay, {"--model", "resnet50", "-M", "1K"}).find("-M"), std::string::npos);
  EXPECT_NE(error_of(kReplay, {"--model", "resnet50", "-M", "lots"}).find("size"),
            std::string::npos);
}

TEST(Options, RepeatForEveryFamily) {
  constexpr BenchDesc kReplay{.name = "replay",
                              .title = "Replay Test",
                              .family = Family::Replay,
                              .default_sizes = {1, 1},
                              .defaults = {10, 2, 10, 2}};
  EXPECT_EQ(parse(kPt2pt, {}).repeat, 1);  // default: one pass, output as before
  EXPECT_EQ(parse(kPt2pt, {"--repeat", "5"}).repeat, 5);
  EXPECT_EQ(parse(kColl, {"--repeat", "3"}).repeat, 3);
  EXPECT_EQ(parse(kNbc, {"--repeat", "2"}).repeat, 2);
  EXPECT_EQ(parse(kReplay, {"--model", "resnet50", "--repeat", "4"}).repeat, 4);
  EXPECT_EQ(nlohmann::json(parse(kColl, {"--repeat", "3"}))["repeat"], 3);
  for (const char* bad : {"0", "-1", "1001"})
    EXPECT_NE(
        error_of(kColl, {"--repeat", bad}).find("--repeat must be a whole number from 1 to 1000"),
        std::string::npos)
        << bad;
  for (const char* bad : {"abc", "2x", "1.5", ""})
    EXPECT_NE(error_of(kPt2pt, {"--repeat", bad}).find("--repeat"), std::string::npos) << bad;
}

// Found by fuzzing (tests/fuzz): arguments that are not UTF-8 were accepted, then the run
// aborted on every rank when the options were written as JSON. They are refused up front.
TEST(Options, ArgumentsMustBeUtf8) {
  EXPECT_NE(error_of(kColl, {"-J", "out\xff.json"})
                .find("argument 2 \"out\xef\xbf\xbd.json\" is not valid UTF-8"),
            std::string::npos);
  EXPECT_NE(error_of(kPt2pt, {"-m", "4:8", "--wait", "\xc3"}).find("argument 4"),
            std::string::npos);
  EXPECT_EQ(parse(kColl, {"-J", "r\xc3\xa9sultat.json"}).json_path, "r\xc3\xa9sultat.json");
}

// Found by the fuzz harness's checks: a time limit beyond the watchdog's clock (about 292
// years of nanoseconds) overflowed its deadline, so the watchdog fired at once.
TEST(Options, TimeLimitIsBounded) {
  EXPECT_EQ(parse(kPt2pt, {"--time-limit", "1e9"}).time_limit_s, 1e9);
  for (const char* bad : {"1e10", "1e300", "inf", "nan"})
    EXPECT_NE(error_of(kPt2pt, {"--time-limit", bad}).find("--time-limit must be"),
              std::string::npos)
        << bad;
}

TEST(Options, HelpAndVersionAskForEarlyExit) {
  std::vector<const char*> help{"cb_bw", "--help"};
  const auto h = parse_options(kPt2pt, 2, help.data());
  ASSERT_TRUE(h.early_exit.has_value());
  EXPECT_NE(h.early_exit->find("--message-size"), std::string::npos);
  std::vector<const char*> version{"cb_bw", "-v"};
  const auto v = parse_options(kPt2pt, 2, version.data());
  ASSERT_TRUE(v.early_exit.has_value());
  EXPECT_NE(v.early_exit->find("collbench"), std::string::npos);
}

TEST(Options, JsonHoldsEveryEffectiveOption) {
  const nlohmann::json j = parse(kColl, {"-m", "8:1M", "--dtype", "double"});
  EXPECT_EQ(j["min_bytes"], 8);
  EXPECT_EQ(j["max_bytes"], 1 << 20);
  EXPECT_EQ(j["dtype"], "double");
  EXPECT_EQ(j["iterations_large"], 100);
  EXPECT_EQ(j["root"], "fixed:0");
}

// nccl-tests' names (reference-peers.md, nccl-tests): the same Options as OMB's.
TEST(Options, NcclTestsAliasesGiveTheSameOptions) {
  const auto same = [](const BenchDesc& d, std::vector<const char*> omb,
                       std::vector<const char*> nccl) {
    EXPECT_EQ(nlohmann::json(parse(d, omb)), nlohmann::json(parse(d, nccl)));
  };
  same(kColl, {"-m", "64:1M"}, {"-b", "64", "-e", "1M"});
  same(kColl, {"-m", "64:1M"}, {"--minbytes", "64", "--maxbytes", "1024K"});
  same(kColl, {"-m", "1K:"}, {"-b", "1K"});  // MIN alone: the default MAX
  same(kColl, {"-m", "2M"}, {"-e", "2M"});   // MAX alone: the default MIN
  same(kColl, {"-m", "2"}, {"-e", "2"});     // below the default MIN: just MAX, as -m
  same(kColl, {"-i", "7", "-x", "3"}, {"-n", "7", "-w", "3"});
  same(kColl, {"--iterations", "7", "--warmup", "3"}, {"--iters", "7", "--warmup_iters", "3"});
  same(kPt2pt, {"-m", "8:64K"}, {"--minbytes", "8", "-e", "64K"});
  same(kPt2pt, {"-i", "5", "-x", "0"}, {"-n", "5", "-w", "0"});
  same(kNbc, {"-i", "9"}, {"--iters", "9"});
  const Options o = parse(kColl, {"-b", "8", "-e", "64K", "-n", "11", "-w", "2"});
  EXPECT_EQ(o.sizes.min, 8u);
  EXPECT_EQ(o.sizes.max, 65536u);
  EXPECT_EQ(o.iterations_for(1 << 20), 11);
  EXPECT_EQ(o.warmup_for(1), 2);
}

// nccl-tests' -a, -m, -z, -R, -S, -M, -I and -K: under their names where OMB leaves the
// letter free (-a, -R, -S, -I, -K), by their long names where it does not (-m, -z, -M).
TEST(Options, NcclTestsTimingOptions) {
  const Options d = parse(kColl, {});
  EXPECT_EQ(d.average, 1);
  EXPECT_EQ(d.agg_iters, 1);
  EXPECT_EQ(d.blocking, 3);  // OMB's loop is nccl-tests' -z 3
  EXPECT_FALSE(d.per_iter);
  const Options o = parse(kColl, {"-a", "3", "--agg_iters", "4", "--blocking", "0", "-S", "1",
                                  "--memory", "1", "-R", "0"});
  EXPECT_EQ(o.average, 3);
  EXPECT_EQ(o.agg_iters, 4);
  EXPECT_EQ(o.blocking, 0);
  EXPECT_TRUE(o.timestamps);
  EXPECT_TRUE(o.memory_report);
  const Options i = parse(kColl, {"-I", "1", "-K", "5"});
  EXPECT_TRUE(i.per_iter);
  EXPECT_EQ(i.per_iter_skip, 5);
  const nlohmann::json j = i;
  EXPECT_EQ(j["per_iter_timing"], true);
  EXPECT_EQ(j["per_iter_skip"], 5);
  EXPECT_EQ(j["blocking"], 3);
  // -m, -z and -M keep OMB's meaning.
  EXPECT_EQ(parse(kColl, {"-m", "8:16"}).sizes.max, 16u);
  EXPECT_EQ(parse(kColl, {"-z"}).tail_percentiles.size(), 3u);
}

TEST(Options, NcclTestsOptionsRefuseWhatCannotApply) {
  const auto says = [](const std::string& err, const char* needle) {
    EXPECT_NE(err.find(needle), std::string::npos) << err;
  };
  says(error_of(kColl, {"-a", "4"}), "-a/--average must be a whole number from 0 to 3");
  says(error_of(kColl, {"--blocking", "7"}), "--blocking must be a whole number from 0 to 3");
  says(error_of(kColl, {"--agg_iters", "0"}), "--agg_iters must be a whole number, at least 1");
  says(error_of(kColl, {"-R", "1"}), "needs --backend nccl and -d cuda");
  says(error_of(kColl, {"-R", "2", "--backend", "engine"}), "needs --backend nccl");
  says(error_of(kColl, {"-R", "3"}), "-R/--local_register must be a whole number from 0 to 2");
  says(error_of(kPt2pt, {"-R", "1"}), "needs --backend nccl");
  says(error_of(kColl, {"-I", "1", "--blocking", "0"}), "use --blocking 3");
  says(error_of(kColl, {"-K", "2"}), "-K/--per_iter_skip applies to -I/--per_iter_timing 1");
  // Timing options of the blocking loop are not offered where that loop does not run.
  says(error_of(kNbc, {"-a", "2"}), "-a");
  says(error_of(kPt2pt, {"--agg_iters", "2"}), "--agg_iters");
  EXPECT_EQ(parse(kPt2pt, {"-R", "0"}).local_register, 0);  // nccl-tests' default runs anywhere
}

TEST(Options, SizeAliasesAreRefusedWithDashM) {
  const std::string b = error_of(kColl, {"-m", "4:64", "-b", "8"});
  EXPECT_NE(b.find("-b/--minbytes"), std::string::npos) << b;
  EXPECT_NE(b.find("-m/--message-size"), std::string::npos) << b;
  const std::string e = error_of(kColl, {"-e", "1M", "-m", "64"});
  EXPECT_NE(e.find("-e/--maxbytes"), std::string::npos) << e;
  EXPECT_NE(e.find("-m/--message-size"), std::string::npos) << e;
  EXPECT_NE(error_of(kPt2pt, {"--minbytes", "1", "-m", "64"}).find("--minbytes"),
            std::string::npos);
}

// -b is OMB's buffer count (-b single|multiple) in point-to-point: not nccl-tests' -b there.
TEST(Options, DashBIsOmbsInPointToPoint) {
  const std::string err = error_of(kPt2pt, {"-b", "multiple"});
  EXPECT_NE(err.find("-b: OMB's -b single|multiple"), std::string::npos) << err;
  EXPECT_NE(err.find("--minbytes"), std::string::npos) << err;
  EXPECT_EQ(parse(kPt2pt, {"--minbytes", "64"}).sizes.min, 64u);
}

TEST(Options, StepFactorMultipliesTheSizes) {
  const Options o = parse(kColl, {"-m", "1:1M", "--stepfactor", "4"});
  EXPECT_EQ(size_sweep(o.sizes),
            (std::vector<size_t>{1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1 << 20}));
  EXPECT_EQ(size_sweep(parse(kPt2pt, {"-m", "0:100", "--stepfactor", "10"}).sizes),
            (std::vector<size_t>{0, 1, 10, 100}));
  EXPECT_EQ(size_sweep(parse(kColl, {"-m", "4:64"}).sizes),
            (std::vector<size_t>{4, 8, 16, 32, 64}));  // default: doubling, as before
  const nlohmann::json j = o;
  EXPECT_EQ(j["step_factor"], 4);
  EXPECT_EQ(j["step_bytes"], 0);
  EXPECT_EQ(nlohmann::json(parse(kColl, {}))["step_factor"], 2);
}

TEST(Options, StepBytesMakesALinearSweep) {
  const Options o = parse(kColl, {"-b", "1M", "-e", "4M", "--stepbytes", "1M"});
  EXPECT_EQ(size_sweep(o.sizes), (std::vector<size_t>{1 << 20, 2 << 20, 3 << 20, 4 << 20}));
  EXPECT_EQ(size_sweep(parse(kPt2pt, {"-m", "0:10", "--stepbytes", "4"}).sizes),
            (std::vector<size_t>{0, 4, 8}));
  const nlohmann::json j = o;
  EXPECT_EQ(j["step_bytes"], 1 << 20);
  EXPECT_EQ(j["step_factor"], 1);  // as nccl-tests' JSON: factor 1 = linear steps
}

TEST(Options, ProgressLineSetting) {
  EXPECT_EQ(parse(kColl, {}).progress, ProgressSetting::Auto);
  EXPECT_EQ(parse(kColl, {"-q"}).progress, ProgressSetting::Off);
  EXPECT_EQ(parse(kPt2pt, {"--quiet"}).progress, ProgressSetting::Off);
  EXPECT_EQ(parse(kPt2pt, {"--progress"}).progress, ProgressSetting::On);
  EXPECT_EQ(nlohmann::json(parse(kColl, {}))["progress"], "auto");
  EXPECT_EQ(nlohmann::json(parse(kColl, {"-q"}))["progress"], "off");
  EXPECT_EQ(nlohmann::json(parse(kColl, {"--progress"}))["progress"], "on");
  const std::string both = error_of(kColl, {"-q", "--progress"});
  EXPECT_NE(both.find("-q/--quiet and --progress cannot be given together"), std::string::npos)
      << both;
}

TEST(Options, BadStepsAndAliasesNameTheOption) {
  const auto has = [](const std::string& err, const std::string& needle) {
    EXPECT_NE(err.find(needle), std::string::npos) << "expected '" << needle << "' in: " << err;
  };
  for (const char* bad : {"1", "0", "-2", "abc", "2.5", "99999999999"})
    has(error_of(kColl, {"--stepfactor", bad}),
        std::string("--stepfactor must be a whole number, at least 2 (got '") + bad + "')");
  has(error_of(kColl, {"--stepbytes", "0"}), "--stepbytes must be at least 1 byte");
  has(error_of(kColl, {"--stepbytes", "lots"}), "--stepbytes: invalid size 'lots'");
  has(error_of(kColl, {"--stepfactor", "4", "--stepbytes", "1M"}),
      "--stepfactor and --stepbytes cannot be given together");
  has(error_of(kColl, {"-b", "1", "-e", "1G", "--stepbytes", "1"}), "more than 100000");
  has(error_of(kColl, {"-b", "2x"}), "-b/--minbytes: invalid size suffix in '2x'");
  has(error_of(kColl, {"-e", "-5"}), "-e/--maxbytes: invalid size '-5'");
  has(error_of(kColl, {"-b", "8", "-e", "4"}),
      "-b/--minbytes 8 is larger than the largest size (-e/--maxbytes 4)");
  has(error_of(kPt2pt, {"--minbytes", "8M"}),
      "--minbytes 8M is larger than the largest size (the default, 4 MiB)");
  has(error_of(kColl, {"-n", "0"}),
      "-i/--iterations/-n/--iters must be a whole number, at least 1 (got '0')");
  has(error_of(kColl, {"--iters", "1.5"}), "(got '1.5')");
  has(error_of(kColl, {"-w", "-1"}),
      "-x/--warmup/-w/--warmup_iters must be a whole number, not negative (got '-1')");
  has(error_of(kColl, {"--iterations-large", "0"}),
      "--iterations-large must be a whole number, at least 1");
  has(error_of(kColl, {"--warmup-large", "-1"}),
      "--warmup-large must be a whole number, not negative");
  // every usage error ends by pointing at --help, as CLI11's own
  has(error_of(kColl, {"-n", "0"}), "(run cb_allreduce --help for the options)");
}

// CLI11 validators do the checks that were written out by hand: same refusals, messages in
// one form ("NAMES must be ... (got 'VALUE')").
TEST(Options, ValidatorsRefuseWithOneMessageForm) {
  const auto has = [](const std::string& err, const std::string& needle) {
    EXPECT_NE(err.find(needle), std::string::npos) << "expected '" << needle << "' in: " << err;
  };
  has(error_of(kPt2pt, {"--wait", "sleepy"}), "--wait must be auto, spin or yield (got 'sleepy')");
  has(error_of(kPt2pt, {"--alloc", "huge"}), "--alloc must be backend or plain (got 'huge')");
  has(error_of(kPt2pt, {"--backend", "gloo"}),
      "--backend must be mpi, nccl or engine (got 'gloo')");
  has(error_of(kPt2pt, {"-d", "rocm"}), "-d/--accelerator must be host or cuda (got 'rocm')");
  has(error_of(kPt2pt, {"-W", "0"}),
      "-W/--window-size must be a whole number, at least 1 (got '0')");
  has(error_of(kPt2pt, {"-p", "-1"}), "-p/--pairs must be a whole number, not negative");
  has(error_of(kNbc, {"-t", "-2"}), "-t/--num-test-calls must be a whole number, not negative");
  has(error_of(kColl, {"-T", "complex"}), "-T/--dtype must be one of char, int32");
  has(error_of(kColl, {"--op", "xor"}), "--op must be one of sum, prod, max, min (got 'xor')");
  has(error_of(kPt2pt, {"--time-limit", "nan"}), "--time-limit must be a number of seconds");
  has(error_of(kPt2pt, {"-M", "1G"}), "-M");  // not a point-to-point option
  // accepted spellings are unchanged: aliases and case of types, memory kinds
  EXPECT_EQ(parse(kColl, {"-T", "FP16"}).dtype, Dtype::Half);
  EXPECT_EQ(parse(kColl, {"-d", "GPU"}).mem, Mem::Cuda);
  EXPECT_EQ(parse(kPt2pt, {"--alloc", "plain"}).plain_alloc, true);
  EXPECT_EQ(parse(kPt2pt, {"--wait", "spin"}).wait, WaitSetting::Spin);
  EXPECT_EQ(parse(kPt2pt, {"--time-limit", "0"}).time_limit_s, 0);
  EXPECT_EQ(parse(kPt2pt, {"-p", "0"}).pairs, 0);
  EXPECT_EQ(parse(kPt2pt, {"-x", "0"}).warmup, 0);
}

TEST(Options, BarrierRefusesTheSizeAliases) {
  constexpr BenchDesc barrier{.name = "barrier",
                              .title = "Barrier Latency Test",
                              .family = Family::Collective,
                              .default_sizes = {0, 0},
                              .defaults = {1000, 100, 100, 10},
                              .coll = &kBarrierSpec};
  for (const char* opt : {"-b", "-e", "--stepfactor", "--stepbytes"}) {
    const std::string err = error_of(barrier, {opt, "4"});
    EXPECT_NE(err.find("barrier moves no data"), std::string::npos) << opt << ": " << err;
  }
  EXPECT_EQ(parse(barrier, {"-n", "20"}).iterations, 20);
}

TEST(Options, RootIsRefusedWhereItMeansNothing) {
  constexpr BenchDesc allreduce{.name = "allreduce",
                                .title = "Allreduce Latency Test",
                                .family = Family::Collective,
                                .default_sizes = {4, 64 << 20},
                                .defaults = {1000, 100, 100, 10},
                                .coll = &kAllreduceSpec};
  constexpr BenchDesc bcast{.name = "bcast",
                            .title = "Broadcast Latency Test",
                            .family = Family::Collective,
                            .default_sizes = {4, 64 << 20},
                            .defaults = {1000, 100, 100, 10},
                            .coll = &kBcastSpec};
  EXPECT_NE(error_of(allreduce, {"-k", "fixed:7"}).find("allreduce has no root"),
            std::string::npos);
  EXPECT_NE(error_of(allreduce, {"-k", "rotate"}).find("-k/--root"), std::string::npos);
  EXPECT_EQ(parse(allreduce, {}).root.fixed, 0);
  EXPECT_EQ(parse(bcast, {"-k", "fixed:7"}).root.fixed, 7);  // range: checked at run time
}

// nccl-tests' -G: parsed for every family, accepted only for the blocking collectives on
// the nccl backend with device buffers; every other case is refused saying why.
TEST(Options, CudaGraphLaunchOnlyForNcclDeviceCollectives) {
  const auto has = [](const std::string& err, const std::string& needle) {
    EXPECT_NE(err.find(needle), std::string::npos) << "expected '" << needle << "' in: " << err;
  };
  constexpr BenchDesc kReplay{.name = "replay",
                              .title = "Replay Test",
                              .family = Family::Replay,
                              .default_sizes = {1, 1},
                              .defaults = {10, 2, 10, 2}};
  const Options o = parse(kColl, {"--backend", "nccl", "-d", "cuda", "-G", "3"});
  EXPECT_EQ(o.cuda_graph, 3);
  EXPECT_EQ(nlohmann::json(o)["cuda_graph"], 3);
  EXPECT_EQ(nlohmann::json(parse(kColl, {}))["cuda_graph"], 0);
  for (const char* name : {"--cuda-graph", "--cudagraph"})
    EXPECT_EQ(parse(kColl, {"--backend", "nccl", "-d", "cuda", name, "3"}).cuda_graph, 3);
  EXPECT_EQ(parse(kColl, {"-G", "0"}).cuda_graph, 0);  // 0 is off: any backend
  EXPECT_EQ(parse(kPt2pt, {"-G", "0"}).cuda_graph, 0);

  const std::string mpi = error_of(kColl, {"-G", "2"});
  has(mpi,
      "-G/--cuda-graph/--cudagraph (CUDA graph launch) needs --backend nccl and -d cuda: the "
      "mpi backend's calls are not stream operations");
  has(error_of(kColl, {"--backend", "mpi", "-d", "cuda", "-G", "2"}),
      "the mpi backend's calls are not stream operations");
  has(error_of(kColl, {"--backend", "engine", "-d", "cuda", "-G", "2"}),
      "the engine backend's calls are not stream operations");
  has(error_of(kColl, {"--backend", "nccl", "-G", "2"}),
      "needs --backend nccl and -d cuda: NCCL's calls are stream operations on device buffers "
      "only (got -d host)");
  has(error_of(kPt2pt, {"--backend", "nccl", "D", "D", "-G", "2"}),
      "(CUDA graph launch) applies to the blocking collectives (cb_allreduce ...): cb_bw is "
      "point to point");
  has(error_of(kNbc, {"--backend", "nccl", "-d", "cuda", "-G", "2"}),
      "cb_iallreduce times each call's start, test calls and wait on the host");
  has(error_of(kNbc, {"--backend", "nccl", "-d", "cuda", "-G", "2"}), "cb_allreduce -G");
  has(error_of(kReplay, {"--model", "resnet50", "--backend", "nccl", "-d", "cuda", "-G", "1"}),
      "cb_replay starts each message on the host");

  for (const char* bad : {"-1", "x", "1.5", "100001"}) {
    const std::string rule =
        "-G/--cuda-graph/--cudagraph must be a whole number from 0 (off) to 100000 (got '";
    has(error_of(kColl, {"--backend", "nccl", "-d", "cuda", "-G", bad}), rule + bad + "')");
    has(error_of(kPt2pt, {"-G", bad}), rule + bad + "')");  // named where it is not offered too
  }

  std::vector<const char*> help{"cb_allreduce", "--help"};
  EXPECT_NE(parse_options(kColl, 2, help.data()).early_exit->find("--cuda-graph"),
            std::string::npos);
  help[0] = "cb_bw";  // offered there only to be refused: not in its --help
  EXPECT_EQ(parse_options(kPt2pt, 2, help.data()).early_exit->find("--cuda-graph"),
            std::string::npos);
}

TEST(Options, CudaGraphNeedsAUsableGpuAtRunTime) {
  Options o;
  EXPECT_NO_THROW(check_cuda_graph_device(o));  // no -G: nothing to check
  o.cuda_graph = 2;
  const std::string why = gpu::unavailable_reason();
  if (why.empty()) {
    EXPECT_NO_THROW(check_cuda_graph_device(o));
    return;
  }
  try {
    check_cuda_graph_device(o);
    ADD_FAILURE() << "-G accepted without a usable GPU";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()),
              "-G/--cuda-graph/--cudagraph (CUDA graph launch) cannot run here: " + why);
  }
}

}  // namespace
}  // namespace cb
