#include "pt2pt/figures.hpp"

#include <algorithm>
#include <string>

#include <nlohmann/json.hpp>

namespace cb {

namespace {
std::vector<double> scaled(const std::vector<double>& v, double factor) {
  std::vector<double> out(v.size());
  std::transform(v.begin(), v.end(), out.begin(), [&](double x) { return x * factor; });
  return out;
}
double mbps_at(double mb_per_iteration, double us) {
  return us > 0 ? mb_per_iteration / (us / 1e6) : 0.0;
}
}  // namespace

void latency_figures(const Options& o, int iters, double total_s,
                     const std::vector<double>& per_iter_s, double ops_per_iteration,
                     SizeOutcome& out) {
  out.record["iteration_us"] = summarize(scaled(per_iter_s, 1e6), o.tail_percentiles);
  Summary lat = summarize(scaled(per_iter_s, 1e6 / ops_per_iteration), o.tail_percentiles);
  lat.avg = total_s * 1e6 / (ops_per_iteration * iters);  // OMB's figure, the untouched loop
  out.record["latency_us"] = lat;
  out.cells.push_back({"Latency (us)", lat.avg});
  if (o.full) {
    out.cells.push_back({"Min Latency(us)", lat.min});
    out.cells.push_back({"Max Latency(us)", lat.max});
    out.cells.push_back({"Iterations", double(iters), 0});
  }
  for (const auto& [p, v] : lat.tails)
    out.cells.push_back({"P" + percentile_key(p).substr(1) + " Tail Lat(us)", v});
  out.pass_us = lat.avg;
  out.pass_figure = "latency_us.avg";
}

BandwidthFigures bandwidth_figures(const Options& o, int iters, double total_s,
                                   const std::vector<double>& per_iter_s, double mb_per_iteration,
                                   SizeOutcome& out) {
  BandwidthFigures f;
  f.mb_per_iteration = mb_per_iteration;
  f.iteration_us = summarize(scaled(per_iter_s, 1e6), o.tail_percentiles);
  f.mbps = total_s > 0 ? mb_per_iteration * iters / total_s : 0.0;
  out.record["iteration_us"] = f.iteration_us;
  out.record["bandwidth_MBps"] = f.mbps;
  out.record["bandwidth_GBps"] = f.mbps / 1e3;
  const Summary& it = f.iteration_us;
  nlohmann::json at = {{"p50", mbps_at(mb_per_iteration, it.p50)},
                       {"p90", mbps_at(mb_per_iteration, it.p90)},
                       {"p99", mbps_at(mb_per_iteration, it.p99)}};
  for (const auto& [p, v] : it.tails) at[percentile_key(p)] = mbps_at(mb_per_iteration, v);
  out.record["bandwidth_MBps_at_iteration_percentile"] = at;
  // --repeat orders passes by the time of one iteration, which the bandwidth divides.
  out.pass_us = total_s * 1e6 / iters;
  out.pass_figure = "bandwidth_MBps";
  return f;
}

void bandwidth_detail_cells(const Options& o, int iters, const BandwidthFigures& f,
                            SizeOutcome& out) {
  if (o.full) {
    out.cells.push_back({"Min BW(MB/s)", mbps_at(f.mb_per_iteration, f.iteration_us.max)});
    out.cells.push_back({"Max BW(MB/s)", mbps_at(f.mb_per_iteration, f.iteration_us.min)});
    out.cells.push_back({"Iterations", double(iters), 0});
  }
  for (const auto& [p, v] : f.iteration_us.tails)
    out.cells.push_back(
        {"P" + percentile_key(p).substr(1) + " Tail BW(MB/s)", mbps_at(f.mb_per_iteration, v)});
}

}  // namespace cb
