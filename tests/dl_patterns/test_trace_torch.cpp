// PyTorch's traces (docs/trace-format.md §6-9): the fixtures torch 2.15 wrote on CPU/Gloo
// (tests/dl_patterns/data/torch, made by scripts/make_torch_traces.py), NCCL's
// record_param_comms events (written here: Gloo has none), folders of per-rank files, and
// the errors of bad input.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <set>

#include "dl_patterns/trace.hpp"
#include "test_util.hpp"

namespace cb::dl {
namespace {

using nlohmann::json;
using testing::data_path;
using testing::TempFile;
using testing::trace_error;

std::string torch_data(const std::string& name) {
  return data_path("torch/" + name);
}

json read_json(const std::string& path) {
  std::ifstream in(path);
  return json::parse(in);
}

std::vector<const TraceOp*> step_ops(const Trace& t, int step) {
  std::vector<const TraceOp*> out;
  for (const TraceOp& op : t.ops)
    if (op.iteration == step) out.push_back(&op);
  return out;
}

// The buckets DDP reported (bytes, after rebuilding them in backward order), in launch order.
std::vector<size_t> ddp_buckets(const std::string& job) {
  return read_json(torch_data(job + "/info.json"))
      .at("rebuilt_bucket_sizes")
      .get<std::vector<size_t>>();
}

TEST(TraceTorch, KinetoDdpBucketsMatchWhatDdpReports) {
  const Trace t = load_trace(torch_data("ddp-w2/kineto/rank0.json"));
  EXPECT_EQ(t.source, "kineto:" + torch_data("ddp-w2/kineto/rank0.json"));
  EXPECT_EQ(t.world_size, 2);
  EXPECT_EQ(t.iterations(), 3);  // ProfilerStep#0..2
  const std::vector<size_t> buckets = ddp_buckets("ddp-w2");
  ASSERT_EQ(buckets.size(), 5u);  // bucket_cap_mb=0.25 on 1.08 MiB of gradients
  for (int step = 0; step < 3; ++step) {
    const auto ops = step_ops(t, step);
    ASSERT_EQ(ops.size(), buckets.size()) << "step " << step;
    for (size_t i = 0; i < ops.size(); ++i) {
      EXPECT_EQ(ops[i]->coll, Coll::Allreduce);
      EXPECT_EQ(ops[i]->dtype, Dtype::Float);  // from the gloo:all_reduce event's "Input type"
      EXPECT_EQ(ops[i]->bytes(), buckets[i]) << "step " << step << " bucket " << i;
      EXPECT_EQ(ops[i]->name, "c10d::allreduce_");
      EXPECT_TRUE(std::isfinite(ops[i]->compute_us) && ops[i]->compute_us >= 0);
    }
    EXPECT_GT(ops[0]->compute_us, 0) << "forward and backward before the first bucket";
  }
  EXPECT_TRUE(t.not_replayed.empty());
  // torch 2.6 (another version than the importers were written against): the same.
  const Trace old = load_trace(data_path("torch-2.6/ddp-w2/kineto"), 1);
  const auto old_buckets = read_json(data_path("torch-2.6/ddp-w2/info.json"))
                               .at("rebuilt_bucket_sizes")
                               .get<std::vector<size_t>>();
  ASSERT_EQ(old.ops.size(), 15u);
  for (size_t i = 0; i < old.ops.size(); ++i)
    EXPECT_EQ(old.ops[i].bytes(), old_buckets[i % 5]) << i;
  const Trace fsdp1 = load_trace(data_path("torch-2.6/fsdp-w2/kineto"), 0);
  ASSERT_EQ(fsdp1.ops.size(), 6u);  // FSDP1, one unit: allgather, reduce_scatter per step
  EXPECT_EQ(fsdp1.ops[0].coll, Coll::Allgather);
  EXPECT_EQ(fsdp1.ops[0].count * 2, 282378u);
  EXPECT_EQ(fsdp1.ops[1].coll, Coll::ReduceScatter);
  // The 4-rank job: the same buckets.
  const Trace t4 = load_trace(torch_data("ddp-w4/kineto/rank3.json"));
  EXPECT_EQ(t4.world_size, 4);
  for (size_t i = 0; i < 5; ++i) EXPECT_EQ(t4.ops[i].bytes(), ddp_buckets("ddp-w4")[i]);
}

TEST(TraceTorch, KinetoFsdpAllgathersAndReduceScattersShards) {
  const Trace t = load_trace(torch_data("fsdp-w2/kineto/rank1.json"));
  ASSERT_EQ(t.iterations(), 3);
  // One unit per Linear (6) and the root (no parameters of its own): per step each unit
  // is gathered for forward and for backward (the last one once: it stays gathered), and
  // its gradients reduce_scattered. Each rank holds half of each flat parameter.
  const std::set<size_t> unit_elements = {64 * 256 + 256, 256 * 256 + 256, 256 * 10 + 10};
  for (int step = 0; step < 3; ++step) {
    size_t gathers = 0, scatters = 0, scattered = 0;
    for (const TraceOp* op : step_ops(t, step)) {
      EXPECT_EQ(op->dtype, Dtype::Float);
      EXPECT_TRUE(unit_elements.count(op->count * 2)) << op->count;
      gathers += op->coll == Coll::Allgather;
      if (op->coll == Coll::ReduceScatter) {
        ++scatters;
        scattered += op->count * 2;
      }
    }
    EXPECT_EQ(scatters, 6u) << "step " << step;
    EXPECT_EQ(scattered, 282378u) << "every gradient reduce_scattered once";
    EXPECT_GE(gathers, 6u);
  }
}

TEST(TraceTorch, ExecutionTraceOfOneDdpStep) {
  const Trace t = load_trace(torch_data("ddp-w2/et/rank1.json"));
  EXPECT_EQ(t.source, "et:" + torch_data("ddp-w2/et/rank1.json"));
  std::vector<size_t> allreduce_bytes;
  for (const TraceOp& op : t.ops) {
    EXPECT_EQ(op.compute_us, 0);  // an execution trace has no timestamps per node
    if (op.coll == Coll::Allreduce) allreduce_bytes.push_back(op.bytes());
  }
  EXPECT_EQ(allreduce_bytes, ddp_buckets("ddp-w2"));
  // The step in which DDP rebuilt its buckets broadcasts their layout first (int tensors).
  ASSERT_EQ(t.ops.size(), 7u);
  EXPECT_EQ(t.ops[0].coll, Coll::Bcast);
  EXPECT_EQ(t.ops[0].root, 0);
}

TEST(TraceTorch, FlightRecorderDump) {
  const Trace t = load_trace(torch_data("ddp-w2/fr/rank0.json"));
  EXPECT_EQ(t.source, "flight_recorder:" + torch_data("ddp-w2/fr/rank0.json"));
  ASSERT_FALSE(t.ops.empty());
  EXPECT_EQ(t.ops[0].name, "gloo:all_gather on pg 0 (default_pg) seq 1");
  for (const TraceOp& op : t.ops) EXPECT_EQ(op.comm_size, 2);  // pg_config's ranks
  // The last 3 steps (the profiled ones) end the dump: the five buckets each.
  const std::vector<size_t> buckets = ddp_buckets("ddp-w2");
  ASSERT_GE(t.ops.size(), 15u);
  for (size_t i = 0; i < 15; ++i) {
    const TraceOp& op = t.ops[t.ops.size() - 15 + i];
    EXPECT_EQ(op.coll, Coll::Allreduce);
    EXPECT_EQ(op.bytes(), buckets[i % 5]);
  }
  // The FSDP dump: Gloo reduce_scatters by allreducing the whole gradient, and the
  // recorder says what the backend ran.
  const Trace f = load_trace(torch_data("fsdp-w2/fr/rank1.json"));
  EXPECT_EQ(f.ops.size(), 90u);
}

TEST(TraceTorch, FolderOfPerRankFiles) {
  const Trace r0 = load_trace(torch_data("ddp-w2/kineto"), 0);
  const Trace r1 = load_trace(torch_data("ddp-w2/kineto/"), 1);
  EXPECT_EQ(r0.world_size, 2);
  EXPECT_EQ(r0.name, "kineto");
  EXPECT_NE(r0.source.find("(rank 0 of 2)"), std::string::npos) << r0.source;
  EXPECT_NE(r1.source.find("(rank 1 of 2)"), std::string::npos) << r1.source;
  ASSERT_EQ(r0.ops.size(), r1.ops.size());
  for (size_t i = 0; i < r0.ops.size(); ++i) EXPECT_EQ(r0.ops[i].count, r1.ops[i].count);
  EXPECT_EQ(
      load_trace(torch_data("ddp-w4/kineto"), 5).source.find("(rank 1 of 4)") != std::string::npos,
      true);  // 6 replay ranks on a 4-rank job: rank % 4

  // Ranks that disagree would hang a replay: refused, naming the file and the collective.
  const std::string dir =
      std::filesystem::temp_directory_path() / ("cb_torch_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::filesystem::copy_file(torch_data("ddp-w2/kineto/rank0.json"), dir + "/rank0.json");
  json other = read_json(torch_data("fsdp-w2/kineto/rank1.json"));
  std::ofstream(dir + "/rank1.json") << other.dump();
  EXPECT_NE(trace_error([&] { load_trace(dir, 0); }).find(dir + "/rank1.json: has "),
            std::string::npos);
  std::filesystem::remove(dir + "/rank0.json");
  EXPECT_NE(trace_error([&] { load_trace(dir, 0); }).find("ranks 0 to 0 expected, found rank 1"),
            std::string::npos);
  std::filesystem::remove_all(dir);
}

// NCCL's record_param_comms events, as the profiler writes them (args from
// torch/csrc/profiler/util.cpp's saveNcclMeta); the c10d operator around each is ignored.
json param_comms(const std::string& coll, json extra, double ts) {
  json args = {{"Collective name", coll},
               {"dtype", "BFloat16"},
               {"In msg nelems", 4096},
               {"Out msg nelems", 4096},
               {"Group size", 4},
               {"In split size", "[]"},
               {"Out split size", "[]"},
               {"Process Group Name", "0"},
               {"Process Group Description", "default_pg"},
               {"Process Group Ranks", "[0, 1, 2, 3]"},
               {"Rank", 0},
               {"Seq", 1}};
  for (const auto& [k, v] : extra.items()) args[k] = v;
  return {{"ph", "X"}, {"cat", "cpu_op"}, {"name", "record_param_comms"},
          {"ts", ts},  {"dur", 10},       {"args", args}};
}

TEST(TraceTorch, KinetoRecordParamComms) {
  std::string long_splits = "[";
  for (int i = 0; i < 29; ++i) long_splits += "64, ";
  long_splits += "..., 64]";  // 64 peers, shortened by the profiler
  const json doc = {
      {"distributedInfo", {{"backend", "nccl"}, {"rank", 0}, {"world_size", 4}}},
      {"traceEvents",
       {{{"ph", "X"}, {"name", "ProfilerStep#7"}, {"ts", 0}, {"dur", 1000}},
        {{"ph", "X"}, {"cat", "cpu_op"}, {"name", "c10d::allreduce_"}, {"ts", 95}, {"dur", 30}},
        param_comms("allreduce", json::object(), 100),
        param_comms("_reduce_scatter_base", {{"Out msg nelems", 1024}, {"Seq", 2}}, 150),
        param_comms("allgather_into_tensor_coalesced",
                    {{"Group size", 2},
                     {"Process Group Name", "3"},
                     {"Process Group Description", "dp_shard"},
                     {"Process Group Ranks", "[0, 2]"}},
                    200),
        param_comms("all_to_allv",
                    {{"In msg nelems", 4096}, {"In split size", "[1024, 2048, 512, 512]"}}, 300),
        param_comms("all_to_allv", {{"In msg nelems", 4096}, {"In split size", long_splits}}, 400),
        param_comms("send", json::object(), 500),
        param_comms("recv", json::object(), 510),
        param_comms("wait", json::object(), 520),
        param_comms("fancy_new_collective", json::object(), 530),
        param_comms("barrier", {{"In msg nelems", 0}}, 540)}}};
  const Trace t = import_kineto(doc, "nccl.json");
  ASSERT_EQ(t.ops.size(), 6u);
  EXPECT_EQ(t.world_size, 4);
  EXPECT_EQ(t.ops[0].coll, Coll::Allreduce);
  EXPECT_EQ(t.ops[0].count, 4096u);
  EXPECT_EQ(t.ops[0].dtype, Dtype::BFloat16);
  EXPECT_EQ(t.ops[0].compute_us, 100);  // from the step's start
  EXPECT_EQ(t.ops[0].name, "allreduce on pg 0 (default_pg) seq 1");
  EXPECT_EQ(t.ops[0].comm_size, 4);
  EXPECT_EQ(t.ops[1].coll, Coll::ReduceScatter);
  EXPECT_EQ(t.ops[1].count, 1024u);    // what each rank receives
  EXPECT_EQ(t.ops[1].compute_us, 40);  // from the end of the previous one (110)
  EXPECT_EQ(t.ops[2].coll, Coll::Allgather);
  EXPECT_EQ(t.ops[2].comm_size, 2);  // a sub-group: replayed on its ranks
  EXPECT_EQ(t.ops[2].group, (std::vector<int>{0, 2}));
  EXPECT_EQ(t.ops[2].pg, "3");
  EXPECT_EQ(t.ops[0].group, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(t.ops[2].name, "allgather_into_tensor_coalesced on pg 3 (dp_shard) seq 1");
  EXPECT_EQ(t.ops[3].coll, Coll::Alltoall);
  EXPECT_EQ(t.ops[3].count, 1024u);      // uneven: the mean per-peer count
  EXPECT_EQ(t.ops[4].count, 4096u / 4);  // shortened list: the group size says the peers
  EXPECT_EQ(t.ops[5].coll, Coll::Barrier);
  for (const TraceOp& op : t.ops) EXPECT_EQ(op.iteration, 0);
  const std::map<std::string, size_t> expected = {
      {"\"fancy_new_collective\": unknown collective, not replayed", 1},
      {"alltoallv: uneven or shortened split sizes, replayed as alltoall of the mean per-peer "
       "count",
       2},
      {"recv: point-to-point, not replayed (cb_replay pairs no sends)", 1},
      {"send: point-to-point, not replayed (cb_replay pairs no sends)", 1}};
  EXPECT_EQ(t.not_replayed, expected);
}

// HSDP (FSDP2 on a 2x2 mesh, torch 2.15, 4 ranks): every collective on a group of 2 ranks.
// The dumps name each entry's group; the groups' ranks come from which files use a name.
TEST(TraceTorch, FolderWithProcessGroups) {
  std::vector<Trace> ranks;
  for (int r = 0; r < 4; ++r) ranks.push_back(load_trace(torch_data("hsdp-w4/fr"), r));
  const std::vector<std::vector<int>> groups = {{0, 1}, {2, 3}, {0, 2}, {1, 3}};
  std::map<std::vector<int>, size_t> per_group;
  for (const Trace& t : ranks) {
    EXPECT_EQ(t.world_size, 4);
    ASSERT_EQ(t.ops.size(), ranks[0].ops.size());  // one merged order on every rank
  }
  for (size_t i = 0; i < ranks[0].ops.size(); ++i) {
    const TraceOp& op = ranks[0].ops[i];
    ASSERT_EQ(op.group.size(), 2u) << i;
    EXPECT_NE(std::find(groups.begin(), groups.end(), op.group), groups.end()) << i;
    ++per_group[op.group];
    for (int r = 1; r < 4; ++r) {
      EXPECT_EQ(ranks[r].ops[i].group, op.group) << i;
      EXPECT_EQ(ranks[r].ops[i].count, op.count) << i;
      EXPECT_EQ(ranks[r].ops[i].iteration, op.iteration) << i;
    }
    for (int r = 0; r < 4; ++r) {  // a rank outside the group skips it: no compute of its own
      if (!std::binary_search(op.group.begin(), op.group.end(), r)) {
        EXPECT_EQ(ranks[r].ops[i].compute_us, 0) << i;
      }
    }
  }
  // Each rank's own ops stay in its order, and each shard group has the same collectives.
  EXPECT_EQ(per_group[groups[0]], per_group[groups[1]]);
  EXPECT_EQ(per_group[groups[2]], per_group[groups[3]]);
  EXPECT_GT(per_group[groups[2]], 0u);
  const Trace own = load_trace(torch_data("hsdp-w4/fr/rank2.json"));
  std::vector<size_t> mine;
  for (const TraceOp& op : ranks[2].ops)
    if (std::binary_search(op.group.begin(), op.group.end(), 2)) mine.push_back(op.count);
  ASSERT_EQ(mine.size(), own.ops.size());
  for (size_t i = 0; i < mine.size(); ++i) EXPECT_EQ(mine[i], own.ops[i].count) << i;
  // collbench JSON keeps the groups ("group": ranks), and rejects bad ones.
  TempFile saved("groups.json", "");
  save_trace(ranks[0], saved.path());
  const Trace back = load_trace(saved.path());
  for (size_t i = 0; i < back.ops.size(); ++i) EXPECT_EQ(back.ops[i].group, ranks[0].ops[i].group);
  json doc = read_json(saved.path());
  doc["ops"][0]["group"] = {1, 0};
  EXPECT_NE(trace_error([&] {
              parse_trace_json(doc, "g.json");
            }).find("field \"group\": ranks must increase"),
            std::string::npos);
  doc["ops"][0]["group"] = {0, 4};
  EXPECT_NE(trace_error([&] {
              parse_trace_json(doc, "g.json");
            }).find("rank 4 is not below world_size 4"),
            std::string::npos);

  // A group's ranks that disagree, and orders that cannot be merged, are refused.
  const std::string dir =
      std::filesystem::temp_directory_path() / ("cb_groups_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto entry = [](const std::string& pg, int n) {
    return json{{"profiling_name", "gloo:all_reduce"},
                {"input_sizes", {{n}}},
                {"input_dtypes", {"Float"}},
                {"process_group", {pg, ""}}};
  };
  const auto dump = [&](int rank, json entries) {
    std::ofstream(dir + "/rank" + std::to_string(rank) + ".json")
        << json{{"version", "2.10"}, {"entries", entries}}.dump();
  };
  dump(0, {entry("1", 8), entry("2", 8)});
  dump(1, {entry("1", 8)});
  dump(2, {entry("2", 8)});
  EXPECT_EQ(load_trace(dir, 1).ops.size(), 2u);  // [0, 1] then [0, 2]
  EXPECT_EQ(load_trace(dir, 1).ops[1].group, (std::vector<int>{0, 2}));
  dump(2, {entry("2", 16)});
  EXPECT_NE(
      trace_error([&] { load_trace(dir, 0); })
          .find("collective 0 on process group \"2\" (gloo:all_reduce on pg 2 (), 16 x float) "
                "differs from rank 0's"),
      std::string::npos)
      << trace_error([&] { load_trace(dir, 0); });
  dump(0, {entry("2", 8), entry("1", 8)});  // rank 0: [0, 2] first
  dump(1, {entry("1", 8), entry("3", 8)});  // rank 1: [0, 1] then [1, 2]
  dump(2, {entry("3", 8), entry("2", 8)});  // rank 2: [1, 2] then [0, 2]: a cycle
  EXPECT_NE(trace_error([&] {
              load_trace(dir, 0);
            }).find("the ranks' orders of collectives on their process groups deadlock"),
            std::string::npos);
  dump(2, {entry("3", 8), entry("2", 8), entry("2", 8)});  // rank 0 has one on [0, 2]
  EXPECT_NE(trace_error([&] {
              load_trace(dir, 0);
            }).find("process group \"2\": its ranks issue different numbers of collectives"),
            std::string::npos);
  std::filesystem::remove_all(dir);
}

// Gloo's profiler events name no group: a job with smaller groups says so per op.
TEST(TraceTorch, KinetoWithoutGroupsOfItsOps) {
  const json doc = {{"distributedInfo",
                     {{"backend", "gloo"},
                      {"world_size", 4},
                      {"pg_config",
                       {{{"pg_name", "0"}, {"pg_size", 4}, {"ranks", {0, 1, 2, 3}}},
                        {{"pg_name", "3"}, {"pg_size", 2}, {"ranks", {0, 1}}}}}}},
                    {"traceEvents",
                     {{{"ph", "X"},
                       {"name", "c10d::allreduce_"},
                       {"ts", 1},
                       {"dur", 2},
                       {"args", {{"Input Dims", {{{8}}}}, {"Input type", {"float"}}}}}}}};
  const Trace t = import_kineto(doc, "gloo.json");
  ASSERT_EQ(t.ops.size(), 1u);
  EXPECT_TRUE(t.ops[0].group.empty());
  EXPECT_EQ(t.not_replayed.begin()->first,
            "allreduce: process group not recorded (the job has 1 smaller than it; a c10d "
            "operator names none), replayed on all ranks");
}

TEST(TraceTorch, BadInputNamesTheFileAndTheField) {
  // A profiler trace without record_shapes: the c10d operators have no sizes.
  json no_shapes = read_json(torch_data("ddp-w2/kineto/rank0.json"));
  for (json& e : no_shapes["traceEvents"])
    if (e.contains("args")) e["args"].erase("Input Dims");
  TempFile k("kineto.json", no_shapes.dump());
  const std::string msg = trace_error([&] { load_trace(k.path()); });
  EXPECT_NE(msg.find(k.path() + ": traceEvents["), std::string::npos) << msg;
  EXPECT_NE(msg.find("field \"args.Input Dims\": missing"), std::string::npos) << msg;
  EXPECT_NE(msg.find("record_shapes=True"), std::string::npos) << msg;

  // A truncated file (a job killed while writing).
  std::ifstream in(torch_data("fsdp-w2/fr/rank0.json"));
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  TempFile cut("fr.json", text.substr(0, text.size() / 2));
  EXPECT_NE(trace_error([&] { load_trace(cut.path()); }).find(cut.path() + ": invalid JSON"),
            std::string::npos);

  // A pickle (the flight recorder's default) is never unpickled.
  TempFile pickle("fr_trace_0", std::string("\x80\x04\x95\x10\x00\x00\x00", 7) + "}\x94(");
  const std::string p = trace_error([&] { load_trace(pickle.path()); });
  EXPECT_NE(p.find(pickle.path() + ": looks like a Python pickle"), std::string::npos) << p;
  EXPECT_NE(p.find("_dump_fr_trace_json()"), std::string::npos) << p;

  // Other versions than the importers know.
  EXPECT_NE(trace_error([&] {
              import_flight_recorder({{"version", "3.0"}, {"entries", json::array()}}, "fr.json");
            }).find("fr.json: field \"version\": unsupported flight recorder version \"3.0\""),
            std::string::npos);
  EXPECT_NE(
      trace_error([&] {
        import_execution_trace({{"schema", "2.0.0-chakra.1"}, {"nodes", json::array()}}, "et.json");
      }).find("et.json: field \"schema\": unsupported execution trace version"),
      std::string::npos);
  // Fields of the wrong kind.
  EXPECT_NE(trace_error([&] {
              import_flight_recorder(
                  {{"entries", {{{"profiling_name", "nccl:all_reduce"}, {"input_sizes", "x"}}}}},
                  "fr.json");
            }).find("fr.json: entries[0] (nccl:all_reduce): field \"input_sizes\""),
            std::string::npos);
  EXPECT_NE(trace_error([&] {
              import_kineto({{"traceEvents", {param_comms("allreduce", {{"dtype", "Short"}}, 1)}}},
                            "k.json");
            })
                .find("k.json: traceEvents[0] (record_param_comms): field \"args.dtype\": unknown "
                      "dtype \"Short\""),
            std::string::npos);
  EXPECT_NE(trace_error([&] {
              import_kineto(
                  {{"traceEvents", {param_comms("all_to_allv", {{"In split size", "[1, x]"}}, 1)}}},
                  "k.json");
            }).find("field \"args.In split size\": must be a list of sizes"),
            std::string::npos);
  // A job of 1 rank whose group names 4 (a fuzzing finding): collbench JSON could not hold
  // it (--export-trace would write a file cb_replay refuses), so the load refuses it.
  json small_job = {{"distributedInfo", {{"world_size", 1}}},
                    {"traceEvents", {param_comms("allreduce", json::object(), 1)}}};
  TempFile w1("w1.json", small_job.dump());
  const std::string g = trace_error([&] { load_trace(w1.path()); });
  EXPECT_NE(g.find(w1.path() + ": operation 0 (allreduce on pg 0 (default_pg) seq 1): its "
                               "process group has rank 1, which is not below the trace's "
                               "world_size 1"),
            std::string::npos)
      << g;
  // A bcast rooted beyond its group.
  small_job["distributedInfo"]["world_size"] = 4;
  small_job["traceEvents"] = {param_comms("broadcast", {{"Root", 5}}, 1)};
  TempFile root("root.json", small_job.dump());
  const std::string r = trace_error([&] { load_trace(root.path()); });
  EXPECT_NE(r.find("root 5 is not below the trace's world_size 4"), std::string::npos) << r;
}

}  // namespace
}  // namespace cb::dl

namespace cb::dl {
namespace {

// Chakra ET (et_def.proto, code generated by protoc): what save_chakra writes, load_trace
// reads back; other versions and other binary files are refused.
TEST(TraceChakra, WrittenAndReadBack) {
  if (!chakra_supported()) GTEST_SKIP() << "built without protobuf";
  Trace t;
  t.name = "mix";
  t.source = "test";
  t.world_size = 4;
  const auto op = [](Coll c, size_t count, Dtype d, double compute, int root = 0) {
    TraceOp o;
    o.coll = c;
    o.count = count;
    o.dtype = d;
    o.compute_us = compute;
    o.root = root;
    return o;
  };
  t.ops = {
      op(Coll::Allreduce, 1000, Dtype::Float, 12),     op(Coll::Bcast, 7, Dtype::Char, 0, 3),
      op(Coll::ReduceScatter, 256, Dtype::Float, 3.4), op(Coll::Alltoall, 64, Dtype::Double, 0),
      op(Coll::Allgather, 33, Dtype::Char, 1),         op(Coll::Barrier, 0, Dtype::Float, 0)};
  TempFile file("mix.et", "");
  save_chakra(t, file.path());
  const Trace back = load_trace(file.path());
  EXPECT_EQ(back.source, "chakra:" + file.path());
  EXPECT_EQ(back.world_size, 4);
  ASSERT_EQ(back.ops.size(), t.ops.size());
  for (size_t i = 0; i < t.ops.size(); ++i) {
    EXPECT_EQ(back.ops[i].coll, t.ops[i].coll) << i;
    EXPECT_EQ(back.ops[i].bytes(), t.ops[i].bytes()) << i;  // comm_size is bytes: no dtype
    EXPECT_EQ(back.ops[i].root, t.ops[i].root) << i;
    EXPECT_EQ(back.ops[i].compute_us, std::round(t.ops[i].compute_us)) << i;  // whole us
  }
  EXPECT_TRUE(back.not_replayed.empty());

  // Process groups: pg_name and collbench's pg_ranks; shares of a group's size.
  t.ops[2].group = {1, 3};
  t.ops[2].pg = "7";
  t.ops[3].group = {0, 1};
  save_chakra(t, file.path());
  const Trace grouped = load_trace(file.path());
  EXPECT_EQ(grouped.ops[2].group, (std::vector<int>{1, 3}));
  EXPECT_EQ(grouped.ops[2].pg, "7");
  EXPECT_EQ(grouped.ops[3].pg, "ranks 0,1");
  EXPECT_EQ(grouped.ops[3].comm_size, 2);
  EXPECT_EQ(grouped.ops[2].bytes(), t.ops[2].bytes());
  EXPECT_EQ(grouped.ops[3].bytes(), t.ops[3].bytes());
  EXPECT_TRUE(grouped.ops[0].group.empty());
}

TEST(TraceChakra, BadFiles) {
  if (!chakra_supported()) GTEST_SKIP() << "built without protobuf";
  // GlobalMetadata{version: "2.0.0"}, length-prefixed.
  TempFile other("v2.et", std::string("\x07\x0a\x05"
                                      "2.0.0",
                                      8));
  EXPECT_NE(
      trace_error([&] { load_trace(other.path()); })
          .find(other.path() + ": GlobalMetadata: field \"version\": unsupported Chakra ET version "
                               "\"2.0.0\""),
      std::string::npos);
  TempFile blob("blob.bin", std::string("\x01\x02\x00\xff\xfe", 5));
  EXPECT_NE(trace_error([&] { load_trace(blob.path()); }).find("not a Chakra ET"),
            std::string::npos);
  // A metadata message, then a node cut short.
  TempFile cut("cut.et", std::string("\x07\x0a\x05"
                                     "0.0.4"
                                     "\x09\x08\x01",
                                     11));
  EXPECT_NE(trace_error([&] {
              load_trace(cut.path());
            }).find(cut.path() + ": node[0]: a message of 9 bytes runs past the end"),
            std::string::npos);
  // A node that does not parse (a tag of wire type 7, which protobuf has not).
  TempFile bad("bad.et", std::string("\x07\x0a\x05"
                                     "0.0.4"
                                     "\x01\x0f",
                                     10));
  EXPECT_NE(trace_error([&] {
              load_trace(bad.path());
            }).find(bad.path() + ": node[0]: not a valid ChakraProtoMsg.Node message"),
            std::string::npos);
}

}  // namespace
}  // namespace cb::dl
