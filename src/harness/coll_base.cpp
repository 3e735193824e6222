#include "harness/coll_base.hpp"

#include "harness/errors.hpp"
#include "harness/fault.hpp"
#include "harness/memory.hpp"

namespace cb {

CollectiveRunnerBase::CollectiveRunnerBase(const RunContext& rc) : rc_(rc), spec_(*rc.desc.coll) {}

CollectiveRunnerBase::~CollectiveRunnerBase() {
  for (Buf* b : {&send_, &recv_})
    if (b->ptr) rc_.be.free(*b);
}

void CollectiveRunnerBase::prepare() {
  const Options& o = rc_.opt;
  const int n = rc_.ctl.size();
  const size_t width = dtype_size(o.dtype);
  if (spec_.rooted && !o.root.rotate && o.root.fixed >= n)
    throw UsageError("-k/--root: root " + std::to_string(o.root.fixed) + " is out of range for " +
                     std::to_string(n) + " ranks");

  std::vector<size_t> odd, too_big;
  for (size_t bytes : size_sweep(o.sizes)) {
    const size_t count = bytes / width;
    const size_t need = (spec_.send_elements(count, n) + spec_.recv_elements(count, n)) * width;
    if (bytes == 0 || bytes % width != 0)
      odd.push_back(bytes);
    else if (need > o.mem_limit)
      too_big.push_back(bytes);
    else
      sizes_.push_back(bytes);
  }
  const auto list = [](const std::vector<size_t>& v) {
    std::string s;
    for (size_t x : v) s += (s.empty() ? "" : ", ") + std::to_string(x);
    return s;
  };
  if (!odd.empty())
    notes_.push_back("# skipped sizes that are not a positive multiple of the " +
                     std::string(to_string(o.dtype)) + " size (" + std::to_string(width) +
                     " B): " + list(odd));
  if (!too_big.empty())
    notes_.push_back("# skipped sizes whose buffers exceed -M " + format_bytes(o.mem_limit) +
                     " per process: " + list(too_big));
  if (sizes_.empty())
    throw UsageError("no message size in -m " + std::to_string(o.sizes.min) + ":" +
                     std::to_string(o.sizes.max) + " fits: sizes must be positive multiples of " +
                     std::to_string(width) + " B (" + std::string(to_string(o.dtype)) +
                     ") within -M");

  const size_t max_count = count_of(sizes_.back());
  CollArgs probe = args_for(sizes_.back(), 0);
  probe.send.mem = probe.recv.mem = o.mem;
  if (const std::string why = rc_.be.unsupported(probe); !why.empty()) throw UsageError(why);

  const size_t send_bytes = spec_.send_elements(max_count, n) * width;
  if (send_bytes && !o.in_place) send_ = rc_.be.alloc(send_bytes, o.mem);
  recv_ = rc_.be.alloc(spec_.recv_elements(max_count, n) * width, o.mem);
}

std::vector<std::string> CollectiveRunnerBase::header_lines() const {
  const Options& o = rc_.opt;
  std::string line = "# Datatype: " + std::string(to_string(o.dtype));
  if (spec_.reduces) line += ", op: " + std::string(to_string(o.op));
  if (spec_.rooted)
    line += ", root: " + (o.root.rotate ? std::string("rotate") : std::to_string(o.root.fixed));
  line += std::string(", ") + (o.in_place ? "in place" : "out of place");
  line += ", buffers on " + std::string(o.mem == Mem::Cuda ? "DEVICE" : "HOST");
  std::vector<std::string> lines{line};
  lines.insert(lines.end(), notes_.begin(), notes_.end());
  return lines;
}

CollArgs CollectiveRunnerBase::args_for(size_t bytes, int iteration) const {
  const Options& o = rc_.opt;
  const int n = rc_.ctl.size();
  const size_t count = count_of(bytes);
  const size_t width = dtype_size(o.dtype);
  CollArgs a;
  a.coll = spec_.coll;
  a.count = count;
  a.dtype = o.dtype;
  a.op = o.op;
  a.root = spec_.rooted ? (o.root.rotate ? iteration % n : o.root.fixed) : 0;
  a.in_place = o.in_place;
  a.algo = o.algo;
  a.recv = recv_.ptr ? recv_.slice(0, spec_.recv_elements(count, n) * width) : recv_;
  a.send = send_.ptr ? send_.slice(0, spec_.send_elements(count, n) * width) : Buf{};
  if (a.in_place) a.send = a.recv;
  return a;
}

long long CollectiveRunnerBase::validate(size_t bytes, bool nonblocking) {
  const int n = rc_.ctl.size();
  const int rank = rc_.ctl.rank();
  const int roots = spec_.rooted && rc_.opt.root.rotate ? n : 1;
  long long wrong = 0;
  for (int r = 0; r < roots; ++r) {
    const CollArgs a = args_for(bytes, r);
    const size_t width = dtype_size(a.dtype);
    std::vector<std::byte> send(spec_.send_elements(a.count, n) * width);
    std::vector<std::byte> recv(spec_.recv_elements(a.count, n) * width);
    spec_.fill(a, rank, n, send.data(), recv.data());
    if (!a.in_place && !send.empty()) write_buffer(a.send, send);
    write_buffer(a.recv, recv);
    rc_.ctl.barrier();
    if (nonblocking)
      rc_.be.start(a)->wait();
    else
      rc_.be.run(a);
    rc_.be.sync();
    if (injected_fault() == Fault::Corrupt) corrupt_first_byte(a.recv);
    wrong += static_cast<long long>(spec_.check(a, rank, n, read_buffer(a.recv).data()));
  }
  return rc_.ctl.sum(wrong);
}

nlohmann::json CollectiveRunnerBase::base_record(size_t bytes, int iterations, int warmup) const {
  const Options& o = rc_.opt;
  const CollArgs a = args_for(bytes, 0);
  nlohmann::json r = {{"bytes", bytes},
                      {"count", a.count},
                      {"dtype", to_string(o.dtype)},
                      {"in_place", o.in_place},
                      {"iterations", iterations},
                      {"warmup", warmup},
                      {"algo", rc_.be.algorithm(a)}};
  if (spec_.reduces) r["op"] = to_string(o.op);
  if (spec_.rooted)
    r["root"] = o.root.rotate ? nlohmann::json("rotate") : nlohmann::json(o.root.fixed);
  return r;
}

void CollectiveRunnerBase::add_algorithm_cell(const CollArgs& args,
                                              std::vector<Cell>& cells) const {
  const std::string algo = rc_.be.algorithm(args);
  if (!algo.empty()) cells.push_back({"Algorithm", 0, 0, algo});
}

}  // namespace cb
