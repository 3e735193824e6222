// OMB 7.5's congestion layout (osu_bw_fan_in, osu_bw_fan_out). Ranks are grouped by host
// into nodes, which must hold equally many ranks (OMB's rule); local rank l of the first
// host (rank 0's) is the parent of local rank l on every other host. On one host each rank
// stands for a node: rank 0 is the parent of all the others. (OMB refuses one host; here the
// pattern runs, and validates, anywhere, and the header says which layout it took.)
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "pt2pt/pt2pt.hpp"

namespace cb {

struct FanLayout {
  Role role = Role::Idle;  // Sender: sends the data (fan_out: the parent; fan_in: a child)
  bool parent = false;     // parents time the iterations (OMB)
  std::vector<int> peers;  // a parent's children, or a child's parent
  int parents = 1;         // one per rank on a node
  int flows = 1;           // parent-child pairs in all
  bool per_rank = false;   // one host: every rank is a node of its own
};

// Throws UsageError for fewer than 2 ranks or hosts with different rank counts.
FanLayout fan_layout(Fan fan, int rank, int nranks,
                     const std::vector<std::pair<std::string, std::vector<int>>>& hosts);

// The % Line bound: every flow enters or leaves the parents' node, so its one link bounds
// the sum (rate x 1), when the children are on other hosts.
LineRateBound fan_line_rate_bound(double rate_gbps, const FanLayout& layout);

// "# [ fan in: 1 parent x 3 children, window size: 64 ] ..." for the table header.
std::string fan_header(Fan fan, const FanLayout& layout, int window);

}  // namespace cb
