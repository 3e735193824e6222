#include "collective/coll_base.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <cstdio>

#include "core/errors.hpp"
#include "core/layout.hpp"
#include "core/mpi_check.hpp"
#include "core/verify.hpp"
#include "core/verify_values.hpp"
#include "gpu/device.hpp"
#include "gpu/graph.hpp"
#include "gpu/memory.hpp"
#include "gpu/validate.hpp"
#include "harness/fault.hpp"
#include "harness/timer.hpp"

namespace cb {

CollectiveRunnerBase::CollectiveRunnerBase(const RunContext& rc) : rc_(rc), spec_(*rc.desc.coll) {}

CollectiveRunnerBase::~CollectiveRunnerBase() {
  persistent_.clear();  // before the buffers they name
  for (Buf* b : {&send_, &recv_}) rc_.free(*b);
}

void CollectiveRunnerBase::prepare() {
  const Options& o = rc_.opt;
  const int n = rc_.ctl.size();
  const size_t width = dtype_size(o.dtype);
  if (spec_.rooted && !o.root.rotate && o.root.fixed >= n)
    throw UsageError("-k/--root: root " + std::to_string(o.root.fixed) + " is out of range for " +
                     std::to_string(n) + " ranks");
  if (!spec_.sized) return prepare_sizeless();
  if (spec_.neighbor_elements) {  // -N's topology; the backend makes its graph of it
    if (o.topology.kind == TopologySpec::Kind::Graph) {
      // Every rank reads the file (as OMB's ranks do); agreed(): a rank that cannot must
      // not leave the others in use_topology()'s collective call.
      agreed(rc_.ctl, [&] {
        topology_ = std::make_unique<Topology>(
            Topology::graph(o.topology, n, read_graph_edges(o.topology.file)));
      });
    } else {  // the grid MPI would choose
      std::vector<int> extents(static_cast<size_t>(o.topology.dims), 0);
      CB_MPI(MPI_Dims_create(n, o.topology.dims, extents.data()));
      topology_ = std::make_unique<Topology>(Topology::cartesian(o.topology, extents));
    }
    rc_.be.use_topology(*topology_);
  }

  std::vector<size_t> odd, too_big, short_of_layout, sizes;
  for (size_t bytes : size_sweep(o.sizes)) {
    const size_t count = bytes / width;
    if (spec_.varying_counts && count && bytes % width == 0)
      counts_[count] = std::make_unique<CountMatrix>(o.counts, count, n);
    const size_t need = (elements(count, true) + elements(count, false)) * width;
    if (bytes == 0 || bytes % width != 0)
      odd.push_back(bytes);
    else if (need > o.mem_limit)
      too_big.push_back(bytes);
    else if (o.layout.on() && count < layout_min_count(o.layout))
      short_of_layout.push_back(bytes);
    else
      sizes.push_back(bytes);
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
  if (!short_of_layout.empty())
    notes_.push_back("# skipped sizes whose blocks are shorter than -D " + o.layout.str() +
                     " reaches (" + std::to_string(layout_min_count(o.layout)) +
                     " elements): " + list(short_of_layout));
  if (!too_big.empty())
    notes_.push_back("# skipped sizes whose buffers exceed -M " + format_bytes(o.mem_limit) +
                     " per process: " + list(too_big));
  if (sizes.empty())
    throw UsageError("no message size in -m " + std::to_string(o.sizes.min) + ":" +
                     std::to_string(o.sizes.max) + " fits: sizes must be positive multiples of " +
                     std::to_string(width) + " B (" + std::string(to_string(o.dtype)) +
                     ") within -M");

  // Buffers first: whether an algorithm can run may depend on where they lie (the
  // engine's single-copy algorithms take private memory only).
  const size_t max_count = count_of(sizes.back());

  size_t send_max = elements(max_count, true), recv_max = elements(max_count, false);
  for (size_t bytes : sizes) {  // count matrices need not grow with the count everywhere
    send_max = std::max(send_max, elements(count_of(bytes), true));
    recv_max = std::max(recv_max, elements(count_of(bytes), false));
  }
  size_t send_bytes = send_max * width, recv_bytes = recv_max * width;
  if (o.off_cache || o.misalign > 0) {  // the rings' (or one misaligned buffer's) extent
    if (o.off_cache)
      off_cache_ = off_cache_target(o.off_cache_bytes, o.mem == Mem::Cuda, last_level_cache());
    send_bytes = recv_bytes = 0;
    for (size_t bytes : sizes) {
      const size_t s = elements(count_of(bytes), true) * width;
      const size_t r = elements(count_of(bytes), false) * width;
      if (s)
        send_bytes =
            std::max(send_bytes, ring_footprint(ring_for(s, off_cache_.bytes), s, o.misalign));
      recv_bytes =
          std::max(recv_bytes, ring_footprint(ring_for(r, off_cache_.bytes), r, o.misalign));
    }
    const size_t total = (o.in_place ? 0 : send_bytes) + recv_bytes;
    if (total > o.mem_limit)
      throw UsageError(
          std::string(o.off_cache ? "--off-cache" : "-u/--misalign") + ": the " +
          (o.off_cache ? "rings of send and receive buffers (" + off_cache_.source + " each)"
                       : std::string("misaligned buffers")) +
          " need " + format_bytes(total) + " per process, more than -M " +
          format_bytes(o.mem_limit) + " (raise -M, or give --off-cache a smaller BYTES)");
  }
  size_t device_free = 0, device_total = 0;
  const bool on_device = o.memory_report && gpu::device_memory(device_free, device_total);
  if (send_bytes && !o.in_place) send_ = rc_.alloc(send_bytes, o.mem);
  recv_ = rc_.alloc(recv_bytes, o.mem);
  if (o.memory_report) report_memory(on_device ? device_free : 0);

  // Points: each size with the forced algorithm, every algorithm (--algo all) or the
  // backend's choice. A combination the backend cannot run is skipped and listed.
  const std::vector<std::string> algos = algorithms_to_run();
  std::string first_reason;
  for (const std::string& algo : algos) {
    std::string reason;
    std::vector<size_t> skipped;
    for (size_t bytes : sizes) {
      // -k rotate: probe a root other than 0 (iteration n-1), where refusals can differ
      CollArgs probe = args_for({bytes, algo}, o.root.rotate ? n - 1 : 0);
      probe.send.mem = probe.recv.mem = o.mem;
      const std::string why = rc_.be.unsupported(probe);
      if (why.empty()) {
        points_.push_back({bytes, algo});
      } else {
        skipped.push_back(bytes);
        if (reason.empty()) reason = why;
      }
    }
    if (first_reason.empty()) first_reason = reason;
    if (!skipped.empty() && skipped.size() < sizes.size())
      notes_.push_back("# skipped" + (algo.empty() ? std::string() : " " + algo) + " at sizes " +
                       list(skipped) + ": " + reason);
  }
  if (points_.empty()) throw UsageError(first_reason);
  std::stable_sort(points_.begin(), points_.end(),
                   [](const Point& a, const Point& b) { return a.bytes < b.bytes; });
}

size_t CollectiveRunnerBase::elements(size_t count, bool send) const {
  const int n = rc_.ctl.size();
  const bool in_place = rc_.opt.in_place;
  const auto it = counts_.find(count);
  if (spec_.neighbor_elements) {  // this rank's own, from its neighbors and their blocks
    CollArgs a;
    a.coll = spec_.coll;
    a.count = count;
    a.counts = it != counts_.end() ? it->second.get() : nullptr;
    a.topology = topology_.get();
    return spec_.neighbor_elements(a, rc_.ctl.rank(), send);
  }
  if (it != counts_.end())
    return send ? spec_.counted_send(*it->second, in_place)
                : spec_.counted_recv(*it->second, in_place);
  return send ? spec_.send_elements(count, n) : spec_.recv_elements_for(count, n, in_place);
}

std::vector<std::string> CollectiveRunnerBase::algorithms_to_run() const {
  const std::string& algo = rc_.opt.algo;
  if (algo != "all") return {algo};
  std::vector<std::string> algos = rc_.be.algorithms(spec_.coll);
  if (algos.empty())
    throw UsageError("--algo all: the " + rc_.be.name() +
                     " backend has no algorithms to choose from");
  return algos;
}

void CollectiveRunnerBase::prepare_sizeless() {
  const Options& o = rc_.opt;
  const std::vector<std::string> algos = algorithms_to_run();
  std::string reason;
  for (const std::string& algo : algos) {
    CollArgs probe = args_for({0, algo}, 0);
    probe.send.mem = probe.recv.mem = o.mem;
    const std::string why = rc_.be.unsupported(probe);
    if (why.empty())
      points_.push_back({0, algo});
    else if (reason.empty())
      reason = why;
    if (!why.empty() && algos.size() > 1) notes_.push_back("# skipped " + algo + ": " + why);
  }
  if (points_.empty()) throw UsageError(reason);
  notes_.push_back("# " + std::string(spec_.name()) +
                   ": no message size; one measurement (size 0 in the JSON)");
}

std::vector<std::string> CollectiveRunnerBase::header_lines() const {
  const Options& o = rc_.opt;
  std::string line = "# Datatype: " + std::string(to_string(o.dtype));
  if (spec_.reduces) line += ", op: " + std::string(to_string(o.op));
  if (spec_.rooted)
    line += ", root: " + (o.root.rotate ? std::string("rotate") : std::to_string(o.root.fixed));
  line += std::string(", ") + (o.in_place ? "in place" : "out of place");
  line += ", buffers on " + std::string(o.mem == Mem::Cuda ? "DEVICE" : "HOST");
  std::vector<std::string> lines;
  if (spec_.sized) lines.push_back(line);  // barrier: no data, its note says so
  if (const std::string note = reduction_note(); !note.empty()) lines.push_back("# " + note);
  if (spec_.varying_counts && !counts_.empty()) {
    char imbalance[32];
    std::snprintf(imbalance, sizeof imbalance, "%.2f",
                  spec_.counts_imbalance(*counts_.rbegin()->second));
    lines.push_back("# Counts: " + o.counts.str() +
                    " (message size = " + std::string(spec_.counts_meaning) +
                    "; the busiest rank gets " + imbalance + "x the average)");
  }
  if (topology_) {
    char degree[32];
    std::snprintf(degree, sizeof degree, "%.2f", topology_->mean_degree());
    lines.push_back("# Topology: " + topology_->spec().str() + " (" + topology_->describe() +
                    ", neighbors per rank: mean " + degree + ", max " +
                    std::to_string(topology_->max_degree()) +
                    "; message size = bytes per neighbor block)");
  }
  if (o.layout.on())
    lines.push_back("# Derived datatype: " + o.layout.str() +
                    " (one element per block, resized to the block; Transmit Size: the bytes "
                    "of a block it moves)");
  if (o.off_cache)
    lines.push_back("# Off-cache (--off-cache): each iteration uses the next buffer of a ring of " +
                    format_bytes(off_cache_.bytes) + " per buffer (" + off_cache_.source +
                    "), slots a line more than the message apart, as IMB's -off_cache" +
                    (o.validate && spec_.sized ? "; -c checks the ring's last slot" : ""));
  if (o.vary_data && spec_.sized)
    lines.push_back(
        "# Varied data (--vary-data): before each iteration, untimed (before its barrier), one "
        "element per 64-byte line of the send buffer is stored with that iteration's values" +
        std::string(o.mem == Mem::Cuda ? " (device: the whole buffer copied from a host image)"
                                       : "") +
        (o.validate ? "; -c checks a varied generation, every element" : ""));
  if (o.misalign > 0)
    lines.push_back("# Misaligned (-u " + std::to_string(o.misalign) +
                    "): send and receive pointers " + std::to_string(o.misalign) +
                    " B past the allocation's alignment");
  if (o.validate && spec_.sized) lines.push_back(validation_line());
  lines.insert(lines.end(), notes_.begin(), notes_.end());
  return lines;
}

std::string CollectiveRunnerBase::validation_line() const {
  std::string line =
      "# Validation (-c): every element checked against exact inputs' result (any order)";
  if (spec_.same_on_all_ranks && rc_.ctl.size() > 1)
    line += "; the result bits compared across ranks (a hash per rank)";
  if (order_pass())
    line += "; then one more untimed " + std::string(spec_.name()) + " with inputs whose " +
            std::string(to_string(rc_.opt.op)) +
            " depends on the order of the contributions, its bits compared across ranks only";
  else if (spec_.reduces && spec_.same_on_all_ranks && rc_.ctl.size() > 1)
    line += "; no order-sensitive pass (" + std::string(to_string(rc_.opt.dtype)) + " " +
            std::string(to_string(rc_.opt.op)) + " is exact in any order)";
  return line;
}

int CollectiveRunnerBase::root_for(int iteration) const {
  const RootSetting& r = rc_.opt.root;
  return spec_.rooted ? (r.rotate ? iteration % rc_.ctl.size() : r.fixed) : 0;
}

void CollectiveRunnerBase::report_memory(size_t device_free_before) {
  const Control& ctl = rc_.ctl;
  const auto largest = [&](double v) { return static_cast<long long>(ctl.max(v)); };
  rusage use{};
  getrusage(RUSAGE_SELF, &use);  // ru_maxrss: KiB on Linux
  const long long buffers = largest(double(send_.bytes + recv_.bytes));
  const long long peak = largest(double(use.ru_maxrss) * 1024.0);
  memory_ = {{"buffer_bytes", buffers}, {"peak_resident_bytes", peak}};
  std::string line = "# Memory (--memory): buffers " + format_bytes(size_t(buffers)) +
                     " per rank (send + receive), peak resident " + format_bytes(size_t(peak)) +
                     " (largest rank)";
  size_t free_now = 0, total = 0;
  if (device_free_before > 0 && gpu::device_memory(free_now, total)) {
    const long long used = largest(double(total - free_now));
    const long long by_buffers = largest(double(device_free_before) - double(free_now));
    memory_["device_used_bytes"] = used;
    memory_["device_buffer_bytes"] = by_buffers;
    line += "; GPU: " + format_bytes(size_t(used)) + " in use, " +
            format_bytes(size_t(std::max(0LL, by_buffers))) + " of it taken by the buffers";
  }
  notes_.push_back(line);
}

void CollectiveRunnerBase::annotate(nlohmann::json& doc) {
  if (!memory_.is_null()) doc["memory"] = memory_;
  const Options& o = rc_.opt;
  if (!o.off_cache && !o.vary_data && o.misalign == 0) return;
  doc["buffer_placement"] = placement_json({.misalign = o.misalign,
                                            .vary_data = o.vary_data,
                                            .vary_timed = false,
                                            .vary_device_copy = o.mem == Mem::Cuda,
                                            .off_cache = o.off_cache ? &off_cache_ : nullptr,
                                            .send_ring_bytes = send_.bytes,
                                            .recv_ring_bytes = recv_.bytes});
}

void CollectiveRunnerBase::place(CollArgs& a, uint64_t iteration) const {
  const Options& o = rc_.opt;
  const size_t width = dtype_size(o.dtype);
  const size_t r = elements(a.count, false) * width;
  a.recv = recv_.ptr
               ? recv_.slice(ring_offset(ring_for(r, off_cache_.bytes), iteration, o.misalign), r)
               : recv_;
  const size_t s = elements(a.count, true) * width;
  a.send = send_.ptr
               ? send_.slice(ring_offset(ring_for(s, off_cache_.bytes), iteration, o.misalign), s)
               : Buf{};
  if (a.in_place) a.send = a.recv;
}

void CollectiveRunnerBase::stamp_data(const CollArgs& a, uint32_t generation) {
  const Buf& into = a.in_place || !a.send.ptr || a.send.bytes == 0 ? a.recv : a.send;
  const Dtype dt = a.dtype;
  const size_t width = dtype_size(dt);
  const size_t count = into.bytes / width;
  const size_t step = values::kVaryLineBytes / width;
  const Op range = spec_.reduces ? a.op : Op::Max;  // the range the collective's inputs use
  const int rank = rc_.ctl.rank(), n = rc_.ctl.size();
  if (into.mem == Mem::Host) {
    for (size_t i = 0; i < count; i += step)
      store_element(static_cast<std::byte*>(into.ptr), i, dt,
                    input_value(dt, range, rank, n, i, generation));
    return;
  }
  stamp_image_.resize(into.bytes);
  for (size_t i = 0; i < count; i += step)
    store_element(stamp_image_.data(), i, dt, input_value(dt, range, rank, n, i, generation));
  write_buffer(into, stamp_image_);
}

CollArgs CollectiveRunnerBase::args_for(const Point& point, int iteration) const {
  const Options& o = rc_.opt;
  const size_t count = count_of(point.bytes);
  const size_t width = dtype_size(o.dtype);
  CollArgs a;
  a.coll = spec_.coll;
  a.count = count;
  a.dtype = o.dtype;
  a.op = o.op;
  a.root = root_for(iteration);
  a.in_place = o.in_place;
  a.persistent = rc_.desc.persistent;
  a.algo = point.algo;
  if (const auto it = counts_.find(count); it != counts_.end()) a.counts = it->second.get();
  a.topology = topology_.get();
  if (o.layout.on()) a.layout = &o.layout;
  if (o.off_cache || o.misalign > 0) {
    place(a, static_cast<uint64_t>(iteration));
    return a;
  }
  a.recv = recv_.ptr ? recv_.slice(0, elements(count, false) * width) : recv_;
  a.send = send_.ptr ? send_.slice(0, elements(count, true) * width) : Buf{};
  if (a.in_place) a.send = a.recv;
  return a;
}

double CollectiveRunnerBase::init_persistent(const Point& point) {
  persistent_.clear();  // the previous size's operations
  if (!rc_.desc.persistent) return 0;
  const int n = rc_.ctl.size();
  const int roots = spec_.rooted && rc_.opt.root.rotate ? n : 1;
  double total = 0;
  for (int i = 0; i < roots; ++i) {
    const CollArgs a = args_for(point, i);
    const double t0 = now_s();
    persistent_[a.root] = rc_.be.init(a);
    total += now_s() - t0;
  }
  return total / roots * 1e6;
}

void CollectiveRunnerBase::call(const CollArgs& a) {
  if (!a.persistent) return rc_.be.run(a);
  const auto it = persistent_.find(a.root);
  if (it == persistent_.end())
    throw RuntimeError("persistent " + std::string(spec_.name()) + ": no operation made for root " +
                       std::to_string(a.root));
  it->second->start();
  it->second->wait();
}

void CollectiveRunnerBase::run_once(const CollArgs& a, bool nonblocking) {
  if (nonblocking) {
    rc_.be.start(a)->wait();
  } else if (rc_.opt.cuda_graph > 0) {  // -G: the call as the timed ones ran, in a graph
    const gpu::Graph graph = rc_.be.capture([&] { rc_.be.run(a); });
    graph.launch(rc_.be.stream());
    rc_.be.sync();  // before the graph goes
  } else {
    call(a);
  }
  rc_.be.sync();
}

void CollectiveRunnerBase::validate(const Point& point, bool nonblocking, SizeOutcome& out) {
  const int n = rc_.ctl.size();
  const int rank = rc_.ctl.rank();
  const int roots = spec_.rooted && rc_.opt.root.rotate ? n : 1;
  if (!spec_.sized) return;  // barrier: no data to check
  long long wrong = 0;
  std::vector<int> differ;  // over every root checked
  const auto compare = [&](const std::vector<std::byte>& result) {
    for (int r : ranks_differing(result))
      if (std::find(differ.begin(), differ.end(), r) == differ.end()) differ.push_back(r);
  };
  const Options& o = rc_.opt;
  for (int r = 0; r < roots; ++r) {
    CollArgs a = args_for(point, r);
    // --off-cache: the ring's last slot (the farthest from the first); --vary-data: a
    // generation the timed iterations (1 ... iterations) did not use, so the checked
    // operation's inputs are varied ones, filled and checked exactly.
    if (o.off_cache) place(a, ring_for(a.recv.bytes, off_cache_.bytes).slots - 1);
    if (o.vary_data) a.generation = static_cast<uint32_t>(o.iterations_for(point.bytes)) + 1;
    // Fill and check on the device, no host round trip, where the kernels know the
    // collective (not those of count matrices or rooted blocks: through the host; nor varied
    // data, whose generation the kernels do not take). Only the bits
    // comparison copies the result to the host (read_buffer: one device-to-host copy of the
    // result, untimed) to hash it.
    if (a.recv.mem == Mem::Cuda && spec_.device_validation && a.generation == 0) {
      const CollData d{a.coll, a.dtype, a.op, a.count, a.root, a.in_place, rank, n};
      gpu::fill_collective(d, a.in_place ? nullptr : a.send.ptr, a.recv.ptr, nullptr);
      gpu::synchronize();
      rc_.ctl.barrier();
      run_once(a, nonblocking);
      if (injected_fault() == Fault::Corrupt) corrupt_first_byte(a.recv);
      wrong += static_cast<long long>(gpu::check_collective(d, a.recv.ptr, nullptr));
      if (spec_.same_on_all_ranks) compare(read_buffer(a.recv));
      continue;
    }
    const size_t width = dtype_size(a.dtype);
    std::vector<std::byte> send(elements(a.count, true) * width);
    std::vector<std::byte> recv(elements(a.count, false) * width);
    spec_.fill(a, rank, n, send.data(), recv.data());
    // -D: the plain collective's result (checked as always) is the reference for the
    // derived type's run below.
    CollArgs plain = a;
    plain.layout = nullptr;
    plain.persistent = false;
    const auto run_from_fill = [&](const CollArgs& args) {
      if (!args.in_place && !send.empty()) write_buffer(args.send, send);
      write_buffer(args.recv, recv);
      rc_.ctl.barrier();
      run_once(args, nonblocking);
      if (injected_fault() == Fault::Corrupt) corrupt_first_byte(args.recv);
      return read_buffer(args.recv);
    };
    const std::vector<std::byte> result = run_from_fill(a.layout ? plain : a);
    wrong += static_cast<long long>(spec_.check(a, rank, n, result.data()));
    if (a.layout)
      wrong += static_cast<long long>(
          layout_mismatches(*a.layout, a.count, width, result, recv, run_from_fill(a)));
    if (spec_.same_on_all_ranks) compare(result);
  }
  out.wrong = rc_.ctl.sum(wrong);
  RankAgreement& agree = out.agreement;
  agree.compared = spec_.same_on_all_ranks && n > 1;
  std::sort(differ.begin(), differ.end());
  agree.differ = std::move(differ);
  if (!order_pass()) return;

  // Inputs whose sum (product) depends on the order of the contributions: no expected
  // value, but every rank must still get rank 0's bits.
  const CollArgs a = args_for(point, 0);
  std::vector<std::byte> in(a.count * dtype_size(a.dtype));
  fill_order_sensitive(a.dtype, a.op, rank, n, in.data(), a.count);
  write_buffer(a.in_place ? a.recv : a.send, in);
  rc_.ctl.barrier();
  run_once(a, nonblocking);
  if (injected_fault() == Fault::Diverge && rank == n - 1) corrupt_first_byte(a.recv);
  agree.order_ran = true;
  agree.order_differ = ranks_differing(read_buffer(a.recv));
}

std::vector<int> CollectiveRunnerBase::ranks_differing(const std::vector<std::byte>& bits) const {
  const uint64_t mine = bits_hash(bits.data(), bits.size());
  std::vector<uint64_t> all(static_cast<size_t>(rc_.ctl.size()));
  MPI_Request req;
  CB_MPI(MPI_Iallgather(&mine, 1, MPI_UINT64_T, all.data(), 1, MPI_UINT64_T, rc_.ctl.comm(), &req));
  rc_.ctl.wait(req);  // as the wait mode says (yield on a crowded node)
  return differing_ranks(all);
}

bool CollectiveRunnerBase::order_pass() const {
  return spec_.reduces && spec_.same_on_all_ranks && rc_.ctl.size() > 1 &&
         order_sensitive(rc_.opt.dtype, rc_.opt.op);
}

nlohmann::json CollectiveRunnerBase::base_record(const Point& point, int iterations,
                                                 int warmup) const {
  const Options& o = rc_.opt;
  const CollArgs a = args_for(point, 0);
  const size_t bytes = point.bytes;
  nlohmann::json r = {{"bytes", bytes},
                      {"count", a.count},
                      {"dtype", to_string(o.dtype)},
                      {"in_place", o.in_place},
                      {"iterations", iterations},
                      {"warmup", warmup},
                      {"algo", rc_.be.algorithm(a)}};
  if (spec_.reduces) r["op"] = to_string(o.op);
  if (const std::string note = reduction_note(); !note.empty()) r["reduction"] = note;
  if (a.counts)
    r["counts"] = {{"pattern", o.counts.str()},
                   {"mean_per_peer", a.counts->mean()},
                   {"max_recv_elements", elements(a.count, false)},
                   {"imbalance", spec_.counts_imbalance(*a.counts)}};
  if (topology_) {
    r["topology"] = {{"spec", topology_->spec().str()},
                     {"extents", topology_->extents()},
                     {"mean_degree", topology_->mean_degree()},
                     {"max_degree", topology_->max_degree()}};
  }
  if (a.layout)
    r["ddt"] = {{"spec", a.layout->str()},
                {"transmit_bytes", layout_moved(*a.layout, a.count) * dtype_size(a.dtype)}};
  if (spec_.rooted)
    r["root"] = o.root.rotate ? nlohmann::json("rotate") : nlohmann::json(o.root.fixed);
  if (o.off_cache)  // --off-cache: the buffers each ring holds at this size
    r["off_cache_slots"] = {
        {"send", a.send.ptr && !a.in_place ? ring_for(a.send.bytes, off_cache_.bytes).slots : 0},
        {"recv", ring_for(a.recv.bytes, off_cache_.bytes).slots}};
  return r;
}

double CollectiveRunnerBase::algbw_elements(const CollArgs& a) const {
  // -D: only the elements its type picks move
  const double moved = a.layout && a.count ? static_cast<double>(layout_moved(*a.layout, a.count)) /
                                                 static_cast<double>(a.count)
                                           : 1.0;
  if (topology_) return moved * static_cast<double>(a.count) * topology_->mean_degree();
  return moved * static_cast<double>(spec_.algbw_elements(a.count, rc_.ctl.size()));
}

std::string CollectiveRunnerBase::reduction_note() const {
  return spec_.reduces ? rc_.be.reduction_note(rc_.opt.dtype, rc_.opt.op) : std::string();
}

void CollectiveRunnerBase::add_algorithm_cell(const CollArgs& args,
                                              std::vector<Cell>& cells) const {
  const std::string algo = rc_.be.algorithm(args);
  if (!algo.empty()) cells.push_back({"Algorithm", 0, 0, algo});
}

}  // namespace cb
