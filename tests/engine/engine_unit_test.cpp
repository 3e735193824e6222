// Engine pieces without communication: schedules, the block and fold patterns, the
// tuning table (parsing errors, pruning, selection and fallback). MPI is initialised
// once (singleton) because Comm is built from it.
#include <gtest/gtest.h>
#include <mpi.h>

#include <nlohmann/json.hpp>

#include "core/errors.hpp"
#include "engine/algorithm.hpp"
#include "engine/partition/blocks.hpp"
#include "engine/partition/fold.hpp"
#include "engine/schedule.hpp"
#include "engine/select.hpp"

namespace cb::engine {
namespace {

TEST(Schedule, RoundsKeepOrderAndDropEmptyWork) {
  Schedule s;
  int a = 0, b = 0;
  s.send(&a, 4, 1);
  s.recv(&b, 0, 1);  // zero bytes: dropped on both sides alike
  s.reduce(&b, &a, 1, Dtype::Int32, Op::Sum);
  s.end_round();
  s.end_round();      // empty: no round
  s.copy(&a, &a, 4);  // copy onto itself: dropped
  s.copy(&b, &a, 4);
  s.end_round();
  ASSERT_EQ(s.rounds(), 2u);
  ASSERT_EQ(s.round(0).size(), 2u);
  EXPECT_EQ(s.round(0)[0].kind, StepKind::Send);
  EXPECT_EQ(s.round(0)[1].kind, StepKind::Reduce);
  EXPECT_EQ(s.round(1)[0].kind, StepKind::Copy);
  s.reset();
  EXPECT_EQ(s.rounds(), 0u);
  EXPECT_EQ(s.steps(), 0u);
}

TEST(Schedule, ScratchIsAlignedAndStable) {
  Schedule s;
  std::byte* first = s.scratch(10);
  std::byte* big = s.scratch(1 << 20);  // a new block: the first pointer stays valid
  std::byte* next = s.scratch(100);
  for (std::byte* p : {first, big, next}) EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u);
  first[9] = std::byte{7};
  big[(1 << 20) - 1] = std::byte{8};
  EXPECT_EQ(first[9], std::byte{7});
  s.reset();
  EXPECT_EQ(s.scratch(10), first);  // reused after reset
}

TEST(Patterns, BlocksCoverEveryElementOnce) {
  for (size_t count : {0u, 1u, 5u, 7u, 1000u})
    for (size_t parts : {1u, 2u, 3u, 8u}) {
      size_t next = 0;
      for (size_t i = 0; i < parts; ++i) {
        const Block b = block_of(count, parts, i);
        EXPECT_EQ(b.offset, next);
        EXPECT_LE(b.length, count / parts + 1);
        next += b.length;
      }
      EXPECT_EQ(next, count);
      if (parts > 1) {
        const Block r = block_range(count, parts, 1, parts - 1);
        EXPECT_EQ(r.offset + r.length, count);
      }
    }
}

TEST(Patterns, FoldMapsAnyRankCountOntoAPowerOfTwo) {
  for (int size = 1; size <= 12; ++size) {
    std::vector<int> seen;
    for (int r = 0; r < size; ++r) {
      const PowerOfTwoFold f(r, size);
      EXPECT_TRUE(is_power_of_two(f.pof2));
      EXPECT_LE(f.pof2, size);
      EXPECT_GT(f.pof2 * 2, size);
      if (!f.sits_out()) {
        EXPECT_EQ(f.real_rank(f.newrank), r);
        seen.push_back(f.newrank);
      } else {
        EXPECT_TRUE(PowerOfTwoFold(r + 1, size).takes_partner(r + 1));
      }
    }
    EXPECT_EQ(static_cast<int>(seen.size()), PowerOfTwoFold(0, size).pof2);
  }
}

std::string parse_error(const nlohmann::json& doc) {
  try {
    TuningTable::parse(doc, "t.json");
  } catch (const UsageError& e) {
    return e.what();
  }
  return "(accepted)";
}

TEST(Tuning, BuiltInTableParsesAndNamesOnlyKnownAlgorithms) {
  const TuningTable t =
      TuningTable::parse(nlohmann::json::parse(builtin_tuning_json()), "built-in");
  EXPECT_FALSE(t.rules().empty());
  for (Coll c : {Coll::Allreduce, Coll::Bcast, Coll::Alltoall})
    EXPECT_FALSE(t.prune(c, Mem::Host, 2).empty()) << to_string(c);
}

TEST(Tuning, ErrorsNameTheRuleAndField) {
  using nlohmann::json;
  EXPECT_NE(parse_error(json::array()).find("\"rules\" list"), std::string::npos);
  const auto rule = [](json r) { return json{{"rules", json::array({r})}}; };
  const json ok = {{"coll", "allreduce"}, {"mem", "host"}, {"max_bytes", 64}, {"algo", "ring"}};
  EXPECT_EQ(parse_error(rule(ok)), "(accepted)");
  auto bad = ok;
  bad["algo"] = "quantum";
  EXPECT_NE(parse_error(rule(bad)).find("rules[0]: unknown allreduce algorithm \"quantum\""),
            std::string::npos);
  bad = ok;
  bad["coll"] = "allscatter";  // no such collective
  EXPECT_NE(parse_error(rule(bad)).find("unknown collective"), std::string::npos);
  bad = ok;
  bad["mem"] = "disk";
  EXPECT_NE(parse_error(rule(bad)).find("memory kind"), std::string::npos);
  bad = ok;
  bad["ranks"] = json::array({4, 2});
  EXPECT_NE(parse_error(rule(bad)).find("\"ranks\""), std::string::npos);
  // fuzz_tuning: beyond int, [1, 4294967297] was read as [1, 1] and [1, 3e9] as an empty range.
  for (const char* ranks :
       {"[1, 4294967297]", "[1, 3000000000]", "[1, 1073741825]", "[2, 18446744073709551615]"}) {
    bad["ranks"] = json::parse(ranks);
    EXPECT_NE(parse_error(rule(bad)).find("<= max <= 1073741824"), std::string::npos) << ranks;
  }
  bad["ranks"] = json::array({1, 1 << 30});
  EXPECT_EQ(parse_error(rule(bad)), "(accepted)");
  bad = ok;
  bad["max_bytes"] = -1;
  EXPECT_NE(parse_error(rule(bad)).find("\"max_bytes\""), std::string::npos);
  bad = ok;
  bad["colour"] = "blue";
  EXPECT_NE(parse_error(rule(bad)).find("unknown field \"colour\""), std::string::npos);
}

TEST(Tuning, ParametersAreReadAndDefaultWhenAbsent) {
  using nlohmann::json;
  const json rules = json::array({{{"coll", "allreduce"}, {"mem", "host"}, {"algo", "ring"}}});
  const TuningParameters defaults;
  EXPECT_EQ(defaults.hierarchical_allreduce_small_bytes, 16384u);
  EXPECT_EQ(defaults.hierarchical_bcast_small_bytes, 16384u);
  // No "parameters": today's thresholds.
  EXPECT_EQ(TuningTable::parse({{"rules", rules}}, "t.json").parameters(), defaults);
  // An empty object, or one parameter: the others keep their defaults.
  EXPECT_EQ(
      TuningTable::parse({{"rules", rules}, {"parameters", json::object()}}, "t.json").parameters(),
      defaults);
  const TuningTable one = TuningTable::parse(
      {{"rules", rules}, {"parameters", {{"hierarchical_bcast_small_bytes", 0}}}}, "t.json");
  EXPECT_EQ(one.parameters().hierarchical_bcast_small_bytes, 0u);
  EXPECT_EQ(one.parameters().hierarchical_allreduce_small_bytes, 16384u);
  // From text (positive integers parse as unsigned), up to the largest byte count.
  const TuningTable both = TuningTable::parse(json::parse(R"({"rules": [], "parameters": {
      "hierarchical_allreduce_small_bytes": 4096,
      "hierarchical_bcast_small_bytes": 18446744073709551615}})"),
                                              "t.json");
  EXPECT_EQ(both.parameters().hierarchical_allreduce_small_bytes, 4096u);
  EXPECT_EQ(both.parameters().hierarchical_bcast_small_bytes, SIZE_MAX);
  // The shipped table sets them to the defaults.
  EXPECT_EQ(TuningTable::parse(json::parse(builtin_tuning_json()), "built-in").parameters(),
            defaults);
}

TEST(Tuning, ParameterErrorsNameTheOriginAndParameter) {
  using nlohmann::json;
  const auto with = [](json params) {
    return json{{"rules", json::array()}, {"parameters", params}};
  };
  const std::string unknown = parse_error(with(
      {{"hierarchical_allreduce_small_bytes", 64}, {"hierarchical_alltoall_small_bytes", 64}}));
  EXPECT_NE(unknown.find("tuning table t.json: parameters: unknown parameter "
                         "\"hierarchical_alltoall_small_bytes\""),
            std::string::npos)
      << unknown;
  EXPECT_NE(unknown.find("known: hierarchical_allreduce_small_bytes"), std::string::npos)
      << unknown;
  for (const json& value :
       {json(-1), json(1.5), json("16384"), json(nullptr), json(true), json::array({16384})}) {
    const std::string e = parse_error(with({{"hierarchical_bcast_small_bytes", value}}));
    EXPECT_NE(e.find("tuning table t.json: parameters: parameter "
                     "\"hierarchical_bcast_small_bytes\" must be a byte count"),
              std::string::npos)
        << value.dump() << ": " << e;
  }
  EXPECT_NE(parse_error(with(json::array({1, 2}))).find("parameters: must be an object"),
            std::string::npos);
  EXPECT_EQ(parse_error(with({{"hierarchical_bcast_small_bytes", 0}})), "(accepted)");
}

TEST(Tuning, ToJsonWritesParametersAndRoundTrips) {
  using nlohmann::json;
  const json doc = {
      {"rules",
       {{{"coll", "allreduce"}, {"mem", "host"}, {"max_bytes", 1024}, {"algo", "ring"}},
        {{"coll", "bcast"}, {"mem", "cuda"}, {"ranks", {2, 4}}, {"algo", "binomial"}}}},
      {"parameters", {{"hierarchical_allreduce_small_bytes", 100}}}};
  const TuningTable t = TuningTable::parse(doc, "t.json");
  json out;
  t.to_json(out);
  EXPECT_EQ(out["origin"], "t.json");
  // Every parameter is written, as in force (the one left out with its default).
  EXPECT_EQ(out["parameters"], json({{"hierarchical_allreduce_small_bytes", 100},
                                     {"hierarchical_bcast_small_bytes", 16384}}));
  const TuningTable back = TuningTable::parse(out, "written");
  EXPECT_EQ(back.parameters(), t.parameters());
  ASSERT_EQ(back.rules().size(), t.rules().size());
  for (size_t i = 0; i < t.rules().size(); ++i) {
    const Rule &a = t.rules()[i], &b = back.rules()[i];
    EXPECT_EQ(a.coll, b.coll);
    EXPECT_EQ(a.mem, b.mem);
    EXPECT_EQ(a.min_ranks, b.min_ranks);
    EXPECT_EQ(a.max_ranks, b.max_ranks);
    EXPECT_EQ(a.min_bytes, b.min_bytes);
    EXPECT_EQ(a.max_bytes, b.max_bytes);
    EXPECT_EQ(a.algo, b.algo);
  }
  json again;
  back.to_json(again);
  again["origin"] = "t.json";
  EXPECT_EQ(again, out);
}

class Selection : public ::testing::Test {
 protected:
  Group comm{0, 1};  // one rank
};

TEST_F(Selection, PicksByRankRangeAndSizeAndFallsBack) {
  using nlohmann::json;
  const json doc = {
      {"rules",
       {{{"coll", "allreduce"}, {"mem", "host"}, {"max_bytes", 1024}, {"algo", "ring"}},
        {{"coll", "allreduce"},
         {"mem", "host"},
         {"ranks", {2, 4}},
         {"max_bytes", 1024},
         {"algo", "rabenseifner"}},
        {{"coll", "allreduce"},
         {"mem", "host"},
         {"max_bytes", nullptr},
         {"algo", "recursive_doubling"}}}}};
  const TuningTable t = TuningTable::parse(doc, "t.json");
  EXPECT_EQ(t.prune(Coll::Allreduce, Mem::Host, 1).size(), 2u);  // the [2, 4] rule is pruned
  EXPECT_EQ(t.prune(Coll::Allreduce, Mem::Host, 3).size(), 3u);
  EXPECT_TRUE(t.prune(Coll::Bcast, Mem::Host, 1).empty());
  const auto rules = t.prune(Coll::Allreduce, Mem::Host, 1);
  CollArgs a{.coll = Coll::Allreduce, .count = 16, .dtype = Dtype::Float};
  EXPECT_EQ(select_algorithm(rules, a, comm)->name, "ring");  // 64 B <= 1024
  a.count = 1024;
  EXPECT_EQ(select_algorithm(rules, a, comm)->name, "recursive_doubling");  // 4 KiB
  // No rule at all: the collective's first algorithm that can run.
  EXPECT_EQ(select_algorithm({}, a, comm)->coll, Coll::Allreduce);
}

TEST_F(Selection, BuffersFieldLimitsARuleToPrivateOrSharedBuffers) {
  using nlohmann::json;
  // This group has no shared memory: every buffer is private to its rank.
  const json doc = {
      {"rules",
       {{{"coll", "allreduce"}, {"mem", "host"}, {"buffers", "shared"}, {"algo", "ring"}},
        {{"coll", "allreduce"}, {"mem", "host"}, {"buffers", "private"}, {"algo", "rabenseifner"}},
        {{"coll", "allreduce"}, {"mem", "host"}, {"algo", "recursive_doubling"}}}}};
  const TuningTable t = TuningTable::parse(doc, "t.json");
  const auto rules = t.prune(Coll::Allreduce, Mem::Host, 1);
  std::vector<float> buf(64);
  CollArgs a{.coll = Coll::Allreduce, .count = 64, .dtype = Dtype::Float};
  a.recv = {buf.data(), buf.size() * sizeof(float), Mem::Host};
  EXPECT_EQ(select_algorithm(rules, a, comm)->name, "rabenseifner");
  EXPECT_EQ(select_algorithm({rules[0], rules[2]}, a, comm)->name, "recursive_doubling");
  nlohmann::json out;
  t.to_json(out);
  EXPECT_EQ(out["rules"][0]["buffers"], "shared");
  EXPECT_EQ(out["rules"][2]["buffers"], "any");
  EXPECT_EQ(TuningTable::parse(out, "round trip").rules()[1].buffers, Buffers::Private);
  json bad = doc;
  bad["rules"][0]["buffers"] = "pinned";
  EXPECT_NE(parse_error(bad).find("rules[0]: field \"buffers\" must be"), std::string::npos);
}

TEST_F(Selection, FirstRuleInTableOrderWhoseRangeHoldsTheSizeAndWhichCanRun) {
  using nlohmann::json;
  const json doc = {
      {"rules",
       {{{"coll", "allreduce"}, {"mem", "host"}, {"algo", "hierarchical"}},  // cannot run
        {{"coll", "allreduce"},
         {"mem", "host"},
         {"min_bytes", 100},
         {"max_bytes", 200},
         {"algo", "ring"}},
        {{"coll", "allreduce"}, {"mem", "host"}, {"max_bytes", 1000}, {"algo", "rabenseifner"}},
        {{"coll", "allreduce"}, {"mem", "host"}, {"algo", "recursive_doubling"}}}}};
  const auto rules = TuningTable::parse(doc, "t.json").prune(Coll::Allreduce, Mem::Host, 1);
  ASSERT_EQ(rules.size(), 4u);
  EXPECT_EQ(rules[0].algo->name, "hierarchical");                           // table order is kept
  CollArgs a{.coll = Coll::Allreduce, .count = 10, .dtype = Dtype::Float};  // 40 B
  EXPECT_EQ(select_algorithm(rules, a, comm)->name, "rabenseifner");
  a.count = 40;  // 160 B: inside [100, 200]
  EXPECT_EQ(select_algorithm(rules, a, comm)->name, "ring");
  a.count = 1000;  // 4000 B
  EXPECT_EQ(select_algorithm(rules, a, comm)->name, "recursive_doubling");
  const json bad = {{"rules",
                     {{{"coll", "allreduce"},
                       {"mem", "host"},
                       {"min_bytes", 9},
                       {"max_bytes", 8},
                       {"algo", "ring"}}}}};
  EXPECT_NE(parse_error(bad).find("\"min_bytes\" is larger"), std::string::npos);
}

TEST_F(Selection, EveryAlgorithmIsRegisteredOnceByName) {
  for (const Algorithm* a : all_algorithms()) {
    EXPECT_EQ(find_algorithm(a->coll, a->name), a);
    EXPECT_FALSE(a->summary.empty());
  }
  EXPECT_EQ(find_algorithm(Coll::Allreduce, "binomial"), nullptr);
  EXPECT_NE(algorithm_names(Coll::Alltoall).find("bruck"), std::string::npos);
}

}  // namespace
}  // namespace cb::engine

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  ::testing::InitGoogleTest(&argc, argv);
  const int rc = RUN_ALL_TESTS();
  MPI_Finalize();
  return rc;
}
