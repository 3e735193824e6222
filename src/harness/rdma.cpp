#include "harness/rdma.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>

#include "config.hpp"

#if CB_HAVE_VERBS
#include <endian.h>
#include <infiniband/verbs.h>
#endif

namespace cb {

int link_lanes(int active_width) {
  switch (active_width) {
    case 1:
      return 1;
    case 16:
      return 2;
    case 2:
      return 4;
    case 4:
      return 8;
    case 8:
      return 12;
    default:
      return 0;
  }
}

double lane_rate_gbps(uint32_t active_speed) {
  switch (active_speed) {
    case 1:
      return 2.5;  // SDR
    case 2:
      return 5.0;  // DDR
    case 4:
      return 10.0;  // QDR
    case 8:
      return 10.0;  // FDR10
    case 16:
      return 14.0;  // FDR
    case 32:
      return 25.0;  // EDR
    case 64:
      return 50.0;  // HDR
    case 128:
      return 100.0;  // NDR
    case 256:
      return 200.0;  // XDR (active_speed_ex)
    default:
      return 0.0;
  }
}

std::string lane_speed_name(uint32_t active_speed) {
  switch (active_speed) {
    case 1:
      return "SDR";
    case 2:
      return "DDR";
    case 4:
      return "QDR";
    case 8:
      return "FDR10";
    case 16:
      return "FDR";
    case 32:
      return "EDR";
    case 64:
      return "HDR";
    case 128:
      return "NDR";
    case 256:
      return "XDR";
    default:
      return "code " + std::to_string(active_speed);
  }
}

double max_link_rate_gbps(const nlohmann::json& rdma) {
  double best = 0;
  if (!rdma.is_object() || !rdma.contains("devices") || !rdma["devices"].is_array()) return 0;
  for (const auto& dev : rdma["devices"]) {
    if (!dev.contains("ports") || !dev["ports"].is_array()) continue;
    for (const auto& port : dev["ports"]) {
      if (port.value("state", "") != "active") continue;
      const auto rate = port.find("rate_gbps");
      if (rate != port.end() && rate->is_number()) best = std::max(best, rate->get<double>());
    }
  }
  return best;
}

nlohmann::json fastest_active_port(const nlohmann::json& rdma) {
  nlohmann::json best;
  if (!rdma.is_object() || !rdma.contains("devices") || !rdma["devices"].is_array()) return best;
  for (const auto& dev : rdma["devices"]) {
    if (!dev.contains("ports") || !dev["ports"].is_array()) continue;
    for (const auto& port : dev["ports"]) {
      if (port.value("state", "") != "active") continue;
      const auto rate = port.find("rate_gbps");
      if (rate == port.end() || !rate->is_number() || rate->get<double>() <= 0) continue;
      if (!best.is_null() && best["rate_gbps"].get<double>() >= rate->get<double>()) continue;
      best = {{"device", dev.value("name", "")},  {"port", port.value("port", 0)},
              {"rate_gbps", rate->get<double>()}, {"link_layer", port.value("link_layer", "")},
              {"width", port.value("width", "")}, {"speed", port.value("speed", "")}};
    }
  }
  return best;
}

double mbps_to_gbps(double mbps) {
  return mbps * 8.0 / 1000.0;  // 10^6 B/s x 8 bit/B = 8 x 10^6 bit/s = 8 / 1000 Gb/s
}

double line_rate_percent(double mbps, double bound_gbps) {
  return bound_gbps > 0 ? 100.0 * mbps_to_gbps(mbps) / bound_gbps : 0.0;
}

#if CB_HAVE_VERBS
namespace {

// rdma-core >= 48 adds the 32-bit active_speed_ex (XDR and later); older headers lack it.
template <class Attr>
uint32_t speed_code(const Attr& a) {
  if constexpr (requires { a.active_speed_ex; }) {
    if (a.active_speed_ex) return a.active_speed_ex;
  }
  return a.active_speed;
}

int mtu_bytes(ibv_mtu mtu) {
  return mtu >= IBV_MTU_256 && mtu <= IBV_MTU_4096 ? 128 << static_cast<int>(mtu) : 0;
}

const char* link_layer_name(uint8_t layer) {
  switch (layer) {
    case IBV_LINK_LAYER_INFINIBAND:
      return "InfiniBand";
    case IBV_LINK_LAYER_ETHERNET:
      return "Ethernet";
    default:
      return "unspecified";
  }
}

// ibv_devinfo's form: 0002:c903:0010:f8b2.
std::string guid_text(__be64 guid) {
  const uint64_t g = be64toh(guid);
  char text[32];
  std::snprintf(text, sizeof text, "%04x:%04x:%04x:%04x", unsigned(g >> 48) & 0xffff,
                unsigned(g >> 32) & 0xffff, unsigned(g >> 16) & 0xffff, unsigned(g) & 0xffff);
  return text;
}

nlohmann::json describe_port(ibv_context* ctx, uint8_t port) {
  ibv_port_attr attr{};
  nlohmann::json out = {{"port", port}};
  if (const int rc = ibv_query_port(ctx, port, &attr); rc != 0) {
    out["error"] = std::string("ibv_query_port failed: ") + std::strerror(rc);
    return out;
  }
  const uint32_t speed = speed_code(attr);
  const int lanes = link_lanes(attr.active_width);
  out["state"] = ibv_port_state_str(attr.state);  // "active", "down", ...
  out["link_layer"] = link_layer_name(attr.link_layer);
  out["width"] = lanes ? std::to_string(lanes) + "x" : "code " + std::to_string(attr.active_width);
  out["speed"] = lane_speed_name(speed);
  out["rate_gbps"] = lanes * lane_rate_gbps(speed);
  out["mtu_bytes"] = mtu_bytes(attr.active_mtu);
  out["max_mtu_bytes"] = mtu_bytes(attr.max_mtu);
  out["lid"] = attr.lid;
  return out;
}

nlohmann::json describe_device(ibv_device* dev) {
  nlohmann::json out = {{"name", ibv_get_device_name(dev)},
                        {"node_guid", guid_text(ibv_get_device_guid(dev))},
                        {"node_type", ibv_node_type_str(dev->node_type)}};
  ibv_context* ctx = ibv_open_device(dev);
  if (!ctx) {
    out["error"] = std::string("ibv_open_device failed: ") + std::strerror(errno);
    out["ports"] = nlohmann::json::array();
    return out;
  }
  ibv_device_attr attr{};
  nlohmann::json ports = nlohmann::json::array();
  if (const int rc = ibv_query_device(ctx, &attr); rc != 0) {
    out["error"] = std::string("ibv_query_device failed: ") + std::strerror(rc);
  } else {
    out["firmware"] = attr.fw_ver;
    for (int p = 1; p <= attr.phys_port_cnt; ++p)
      ports.push_back(describe_port(ctx, static_cast<uint8_t>(p)));
  }
  out["ports"] = ports;
  ibv_close_device(ctx);
  return out;
}

}  // namespace

void describe_rdma(nlohmann::json& out) {
  out["devices"] = nlohmann::json::array();
  int count = 0;
  errno = 0;
  // NULL (not an empty list) where the kernel has no RDMA support: errno ENOSYS.
  ibv_device** list = ibv_get_device_list(&count);
  if (!list) {
    const int err = errno;
    out["unavailable"] = std::string("ibv_get_device_list failed: ") +
                         (err ? std::strerror(err) : "no error code") +
                         " (no RDMA devices or kernel support)";
    return;
  }
  for (int i = 0; i < count; ++i) out["devices"].push_back(describe_device(list[i]));
  ibv_free_device_list(list);
  if (count == 0) out["unavailable"] = "no RDMA devices found (ibv_get_device_list listed none)";
}

#else

void describe_rdma(nlohmann::json& out) {
  out["devices"] = nlohmann::json::array();
  out["unavailable"] =
      "collbench was built without libibverbs (COLLBENCH_VERBS=OFF or libibverbs-dev not "
      "found at configure time)";
}

#endif

}  // namespace cb
