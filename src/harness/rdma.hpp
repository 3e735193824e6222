// RDMA discovery through libibverbs: which devices and ports a machine has, and how fast
// their links are. Every build has this interface; without libibverbs it says so.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json_fwd.hpp>

namespace cb {

// out = {"devices": [{"name", "node_guid", "node_type", "firmware", "ports": [{"port",
// "state", "link_layer", "width", "speed", "rate_gbps", "mtu_bytes", "max_mtu_bytes",
// "lid"}]}]}, or {"devices": [], "unavailable": "<why>"} when there are none.
// Local to this process (no communication).
void describe_rdma(nlohmann::json& out);

// Highest rate_gbps of any ACTIVE port in a describe_rdma() block; 0 when there is none.
double max_link_rate_gbps(const nlohmann::json& rdma);

// That port: {"device", "port", "rate_gbps", "link_layer", "width", "speed"} (the first of
// equally fast ones), or null when no port is active.
nlohmann::json fastest_active_port(const nlohmann::json& rdma);

// A bandwidth in MB/s (collbench's MB: 10^6 bytes per second) as Gb/s (10^9 bits per
// second, as link rates are quoted): x 8 / 1000.
double mbps_to_gbps(double mbps);

// That bandwidth as a percentage of `bound_gbps` (a line rate, or several links' sum):
// 100 x mbps_to_gbps(mbps) / bound_gbps. 12500 MB/s on a 100 Gb/s link is 100%.
// 0 when bound_gbps is not positive.
double line_rate_percent(double mbps, double bound_gbps);

// The link rate of an InfiniBand port from ibv_port_attr's codes, as ibstat/ibv_devinfo
// quote it: lanes x per-lane rate, in Gb/s. 0 when a code is unknown.
//   active_width: 1 = 1x, 16 = 2x, 2 = 4x, 4 = 8x, 8 = 12x (lanes)
//   active_speed: 1 = SDR 2.5, 2 = DDR 5, 4 = QDR 10, 8 = FDR10 10, 16 = FDR 14,
//                 32 = EDR 25, 64 = HDR 50, 128 = NDR 100, 256 = XDR 200 Gb/s per lane
//                 (XDR only fits rdma-core's 32-bit active_speed_ex, rdma-core >= 48).
// SDR, DDR and QDR rates are signalling rates (8b/10b: 80% of it carries data); from FDR10
// on, 64b/66b or better, the figure is close to the data rate. RoCE devices report the
// Ethernet speed in the same codes.
int link_lanes(int active_width);
double lane_rate_gbps(uint32_t active_speed);
std::string lane_speed_name(uint32_t active_speed);  // "EDR", or "code N" when unknown

}  // namespace cb
