// The registry of the point-to-point benchmarks (pt2pt/registry.hpp): this file's table of
// the two-sided ones, as descriptors over the point-to-point runner (pt2pt/runner.cpp):
// osu_latency, osu_bw, osu_bibw, osu_mbw_mr, osu_multi_lat, osu_latency_mt, osu_latency_mp,
// the persistent osu_latency_persistent, osu_bw_persistent and osu_bibw_persistent, OMB
// 7.5's osu_partitioned_latency, osu_bw_fan_in and osu_bw_fan_out, and nccl-tests' sendrecv
// and hypercube (pt2pt/exchange.cpp); and the lookup by name over it and the one-sided table
// (pt2pt/rma.cpp). Every executable's main is pt2pt/bench_main.cpp.
#include <array>

#include "pt2pt/iterations.hpp"
#include "pt2pt/registry.hpp"
#include "pt2pt/rma.hpp"

namespace cb {

namespace {

// OMB's defaults (osu_util.h): latency 10000 / 100 iterations, 1000 / 10 above 8 KiB,
// sizes 0-4 MiB; bandwidth 100 / 10, 20 / 2, 1 B-4 MiB, window 64.
constexpr SizeRange kLatencySizes{0, 4 << 20};
constexpr SizeRange kBandwidthSizes{1, 4 << 20};
constexpr IterationDefaults kLatency{10000, 100, 1000, 10};
constexpr IterationDefaults kBandwidth{100, 10, 20, 2};

// osu_latency: one-way latency = ping-pong round trip / 2.
constexpr Pt2ptSpec kPingPong{.metric = Pt2ptMetric::Latency,
                              .directions = 1,
                              .uses_window = false,
                              .both_receive = true,
                              .multi_pair = false,
                              .iteration = ping_pong};
// osu_bw: a window of non-blocking sends and a 1-byte ack per iteration;
// MB/s = size x window x iterations / 1e6 / time.
constexpr Pt2ptSpec kWindow{.metric = Pt2ptMetric::Bandwidth,
                            .directions = 1,
                            .uses_window = true,
                            .both_receive = false,
                            .multi_pair = false,
                            .iteration = window_with_ack};
// osu_bibw: both ranks send a window to each other at once; bytes of both directions
// count: MB/s = 2 x size x window x iterations / 1e6 / time.
constexpr Pt2ptSpec kExchangeWindow{.metric = Pt2ptMetric::Bandwidth,
                                    .directions = 2,
                                    .uses_window = true,
                                    .both_receive = true,
                                    .multi_pair = false,
                                    .iteration = exchange_window};
// osu_mbw_mr: pairs r <-> r + pairs stream windows at the same time; aggregate MB/s and
// messages/s over the pairs (sender times averaged, as OMB).
constexpr Pt2ptSpec kPairsWindow{.metric = Pt2ptMetric::MessageRate,
                                 .directions = 1,
                                 .uses_window = true,
                                 .both_receive = false,
                                 .multi_pair = true,
                                 .iteration = window_with_ack};
// osu_multi_lat: every pair r <-> r + N/2 ping-pongs at once; latency = mean over senders.
constexpr Pt2ptSpec kMultiLat{.metric = Pt2ptMetric::Latency,
                              .directions = 1,
                              .uses_window = false,
                              .both_receive = true,
                              .multi_pair = true,
                              .iteration = ping_pong};
// osu_latency_mt and osu_latency_mp: the ping-pong with -t SENDERS:RECEIVERS threads
// (pt2pt/workers.hpp) or fork()ed processes beside each rank.
constexpr Pt2ptSpec kLatencyMt{.metric = Pt2ptMetric::Latency,
                               .directions = 1,
                               .uses_window = false,
                               .both_receive = true,
                               .multi_pair = false,
                               .iteration = ping_pong,
                               .workers = Workers::Threads};
constexpr Pt2ptSpec kLatencyMp{.metric = Pt2ptMetric::Latency,
                               .directions = 1,
                               .uses_window = false,
                               .both_receive = true,
                               .multi_pair = false,
                               .iteration = ping_pong,
                               .workers = Workers::Processes};
// osu_bw_fan_in / osu_bw_fan_out (OMB 7.5): a parent and its children (pt2pt/fan.hpp).
constexpr Pt2ptSpec kFanIn{.metric = Pt2ptMetric::Bandwidth,
                           .directions = 1,
                           .uses_window = true,
                           .both_receive = false,
                           .multi_pair = false,
                           .iteration = fan_window,
                           .fan = Fan::In};
constexpr Pt2ptSpec kFanOut{.metric = Pt2ptMetric::Bandwidth,
                            .directions = 1,
                            .uses_window = true,
                            .both_receive = false,
                            .multi_pair = false,
                            .iteration = fan_window,
                            .fan = Fan::Out};
constexpr Pt2ptSpec kLatencyPersistent{.metric = Pt2ptMetric::Latency,
                                       .directions = 1,
                                       .uses_window = false,
                                       .both_receive = true,
                                       .multi_pair = false,
                                       .iteration = persistent_ping_pong,
                                       .persistent = true};
constexpr Pt2ptSpec kBwPersistent{.metric = Pt2ptMetric::Bandwidth,
                                  .directions = 1,
                                  .uses_window = true,
                                  .both_receive = false,
                                  .multi_pair = false,
                                  .iteration = persistent_window_with_ack,
                                  .persistent = true};
constexpr Pt2ptSpec kBibwPersistent{.metric = Pt2ptMetric::Bandwidth,
                                    .directions = 2,
                                    .uses_window = true,
                                    .both_receive = true,
                                    .multi_pair = false,
                                    .iteration = persistent_exchange_window,
                                    .persistent = true};

// osu_partitioned_latency (OMB 7.5, MPI 4.0): the ping-pong as partitioned requests.
constexpr Pt2ptSpec kPartitionedLatency{.metric = Pt2ptMetric::Latency,
                                        .directions = 1,
                                        .uses_window = false,
                                        .both_receive = true,
                                        .multi_pair = false,
                                        .iteration = partitioned_ping_pong,
                                        .persistent = true,
                                        .partitioned = true};

constexpr BenchDesc two_sided(std::string_view name, std::string_view title, SizeRange sizes,
                              IterationDefaults defaults, const Pt2ptSpec& spec,
                              bool thread_multiple = false) {
  return {.name = name,
          .title = title,
          .family = Family::Pt2pt,
          .default_sizes = sizes,
          .defaults = defaults,
          .pt2pt = &spec,
          .make_runner = make_pt2pt_runner,
          .thread_multiple = thread_multiple};
}

// nccl-tests' sendrecv_perf and hypercube_perf: every rank, any backend; the collectives'
// sizes (4 B-64 MiB) and iterations.
constexpr SizeRange kExchangeSizes{4, 64 << 20};
constexpr IterationDefaults kExchange{1000, 100, 100, 10};
constexpr BenchDesc exchange(std::string_view name, std::string_view title) {
  return {.name = name,
          .title = title,
          .family = Family::Pt2pt,
          .default_sizes = kExchangeSizes,
          .defaults = kExchange,
          .make_runner = make_exchange_runner};
}

constexpr std::array<BenchDesc, 15> kTwoSided{
    two_sided("latency", "Latency Test", kLatencySizes, kLatency, kPingPong),
    two_sided("bw", "Bandwidth Test", kBandwidthSizes, kBandwidth, kWindow),
    two_sided("bibw", "Bi-Directional Bandwidth Test", kBandwidthSizes, kBandwidth,
              kExchangeWindow),
    two_sided("mbw_mr", "Multiple Bandwidth / Message Rate Test", kBandwidthSizes, kBandwidth,
              kPairsWindow),
    two_sided("multi_lat", "Multi Latency Test", kLatencySizes, kLatency, kMultiLat),
    two_sided("latency_mt", "Multi-threaded Latency Test", kLatencySizes, kLatency, kLatencyMt,
              true),
    two_sided("latency_mp", "Multi-process Latency Test", kLatencySizes, kLatency, kLatencyMp),
    two_sided("bw_fan_in", "Bandwidth Congestion In Test", kBandwidthSizes, kBandwidth, kFanIn),
    two_sided("bw_fan_out", "Bandwidth Congestion Out Test", kBandwidthSizes, kBandwidth, kFanOut),
    two_sided("latency_persistent", "Latency Persistent Test", kLatencySizes, kLatency,
              kLatencyPersistent),
    two_sided("bw_persistent", "Bandwidth Persistent Test", kBandwidthSizes, kBandwidth,
              kBwPersistent),
    two_sided("bibw_persistent", "Bi-Directional Bandwidth Persistent Test", kBandwidthSizes,
              kBandwidth, kBibwPersistent),
    two_sided("partitioned_latency", "Partitioned Latency Test", kLatencySizes, kLatency,
              kPartitionedLatency),
    exchange("sendrecv", "SendRecv Test"),
    exchange("hypercube", "HyperCube Test"),
};

}  // namespace

const std::vector<const BenchDesc*>& two_sided_benches() {
  static const std::vector<const BenchDesc*> all = [] {
    std::vector<const BenchDesc*> v;
    for (const BenchDesc& d : kTwoSided) v.push_back(&d);
    return v;
  }();
  return all;
}

const BenchDesc* find_pt2pt_bench(std::string_view name) {
  for (const BenchDesc* d : two_sided_benches())
    if (d->name == name) return d;
  return find_rma_bench(name);
}

int pt2pt_main(std::string_view name, int argc, char** argv) {
  const BenchDesc* desc = find_pt2pt_bench(name);
  if (!desc) return 3;  // a build error: kBenchName names no descriptor
  return bench_main(*desc, argc, argv);
}

}  // namespace cb
