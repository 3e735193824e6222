// Allgather by recursive doubling: in round k every rank swaps the 2^k blocks it holds
// with rank ^ 2^k, so log2(p) rounds, each block contiguous in the output. Power-of-two
// rank counts only (MPICH falls back to another algorithm otherwise; here --algo all
// skips it). For small and medium messages.
#include "engine/algos/algos.hpp"
#include "engine/algos/allgather_common.hpp"
#include "engine/partition/fold.hpp"

namespace cb::engine {
namespace {

std::string cannot_run(const CollArgs&, const Group& c) {
  if (!is_power_of_two(c.size()))
    return "recursive_doubling allgather needs a power-of-two rank count (" +
           std::to_string(c.size()) + " ranks)";
  return {};
}

void build(Schedule& s, const CollArgs& a, const Group& c) {
  const int n = c.size(), r = c.rank();
  const AllgatherBuffers b(s, a, r);
  for (int m = 1; m < n; m *= 2) {
    const int partner = r ^ m;
    s.recv(b.at(partner / m * m), b.block * static_cast<size_t>(m), partner);
    s.send(b.at(r / m * m), b.block * static_cast<size_t>(m), partner);
    s.end_round();
  }
  s.end_round();
}

}  // namespace

const Algorithm kAllgatherRecursiveDoubling{
    .coll = Coll::Allgather,
    .name = "recursive_doubling",
    .summary = "log2(p) exchanges of doubling size with rank ^ 2^k; power-of-two ranks",
    .cannot_run = cannot_run,
    .build = build,
};

}  // namespace cb::engine
