#include "pt2pt/fan.hpp"

#include "core/errors.hpp"

namespace cb {

FanLayout fan_layout(Fan fan, int rank, int nranks,
                     const std::vector<std::pair<std::string, std::vector<int>>>& hosts) {
  if (nranks < 2)
    throw UsageError("this benchmark needs at least 2 ranks (a parent and a child; got " +
                     std::to_string(nranks) + ")");
  FanLayout out;
  // nodes[n][l]: local rank l of node n; node 0 holds the parents.
  std::vector<std::vector<int>> nodes;
  if (hosts.size() < 2) {
    out.per_rank = true;
    for (int r = 0; r < nranks; ++r) nodes.push_back({r});
  } else {
    for (const auto& [name, ranks] : hosts) {
      if (ranks.size() != hosts.front().second.size()) {
        std::string counts;
        for (const auto& [n, rs] : hosts)
          counts += (counts.empty() ? "" : ", ") + n + ":" + std::to_string(rs.size());
        throw UsageError(
            "this benchmark needs the same number of ranks on every host, as OMB ("
            "got " +
            counts + ")");
      }
      nodes.push_back(ranks);
    }
  }
  const size_t ppn = nodes.front().size();
  out.parents = static_cast<int>(ppn);
  out.flows = static_cast<int>(ppn * (nodes.size() - 1));
  for (size_t n = 0; n < nodes.size(); ++n)
    for (size_t l = 0; l < ppn; ++l) {
      if (nodes[n][l] != rank) continue;
      out.parent = n == 0;
      if (out.parent)
        for (size_t c = 1; c < nodes.size(); ++c) out.peers.push_back(nodes[c][l]);
      else
        out.peers.push_back(nodes[0][l]);
    }
  out.role = out.parent == (fan == Fan::Out) ? Role::Sender : Role::Receiver;
  return out;
}

LineRateBound fan_line_rate_bound(double rate_gbps, const FanLayout& layout) {
  LineRateBound out;
  if (rate_gbps <= 0) {
    out.why_not = "no line rate known";
  } else if (layout.per_rank) {
    out.why_not = "every rank is on one host (shared memory, not the NIC, carries the data)";
  } else {
    out.cross_node_pairs = layout.flows;
    out.links = 1;
    out.bound_gbps = rate_gbps;
  }
  return out;
}

std::string fan_header(Fan fan, const FanLayout& layout, int window) {
  const int children = layout.flows / layout.parents;
  return std::string("# [ fan ") + (fan == Fan::In ? "in" : "out") + ": " +
         std::to_string(layout.parents) + (layout.parents == 1 ? " parent" : " parents") + " x " +
         std::to_string(children) + (children == 1 ? " child" : " children") +
         " ] [ window size: " + std::to_string(window) + " ] [ " +
         (layout.per_rank ? "one host: each rank stands for a node, rank 0 the parent"
                          : "nodes by host, local rank l of rank 0's host the parent of local "
                            "rank l elsewhere") +
         " ]";
}

}  // namespace cb
