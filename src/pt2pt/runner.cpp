// Timing of point-to-point benchmarks, following OMB (osu_latency, osu_bw, osu_bibw,
// osu_mbw_mr): warmup, then a timed loop read with two clock reads in all, so the figure
// carries no timer cost; then a second pass with one clock read per iteration for the
// distribution (p50/p90/p99/stddev), which OMB does not keep.
#include <algorithm>
#include <cstdio>
#include <numeric>
#include <set>

#include "core/errors.hpp"
#include "core/mpi_check.hpp"
#include "core/verify_values.hpp"
#include "gpu/memory.hpp"
#include "harness/fault.hpp"
#include "harness/placement.hpp"
#include "harness/rdma.hpp"
#include "harness/runner.hpp"
#include "harness/stats.hpp"
#include "harness/timer.hpp"
#include "pt2pt/fan.hpp"
#include "pt2pt/figures.hpp"
#include "pt2pt/passes.hpp"
#include "pt2pt/pt2pt.hpp"
#include "pt2pt/workers.hpp"

namespace cb {

void pt2pt_layout(const Pt2ptSpec& spec, int rank, int nranks, int pairs, Role& role, int& peer) {
  if (!spec.multi_pair) {
    if (nranks != 2)
      throw UsageError("this benchmark needs exactly 2 ranks (got " + std::to_string(nranks) +
                       "); run it with mpirun -n 2");
    pairs = 1;
  } else {
    if (pairs == 0) {
      if (nranks < 2 || nranks % 2 != 0)
        throw UsageError("this benchmark needs an even number of ranks (got " +
                         std::to_string(nranks) + "), or -p PAIRS with 2 x PAIRS <= ranks");
      pairs = nranks / 2;
    } else if (2 * pairs > nranks) {
      throw UsageError("-p " + std::to_string(pairs) + " pairs need " + std::to_string(2 * pairs) +
                       " ranks (got " + std::to_string(nranks) + ")");
    }
  }
  // OMB's block placement: rank r < pairs sends to r + pairs.
  if (rank < pairs) {
    role = Role::Sender;
    peer = rank + pairs;
  } else if (rank < 2 * pairs) {
    role = Role::Receiver;
    peer = rank - pairs;
  } else {
    role = Role::Idle;
    peer = -1;
  }
}

LineRateBound line_rate_bound(double rate_gbps, int directions, int pairs,
                              const std::vector<int>& node_of_rank) {
  LineRateBound out;
  std::set<int> sender_nodes, receiver_nodes;
  for (int s = 0; s < pairs && s + pairs < static_cast<int>(node_of_rank.size()); ++s) {
    const int a = node_of_rank[static_cast<size_t>(s)];
    const int b = node_of_rank[static_cast<size_t>(s + pairs)];
    if (a == b) continue;
    ++out.cross_node_pairs;
    sender_nodes.insert(a);
    receiver_nodes.insert(b);
  }
  out.links = static_cast<int>(std::min(sender_nodes.size(), receiver_nodes.size()));
  if (rate_gbps <= 0) {
    out.why_not = "no line rate known";
  } else if (out.cross_node_pairs == 0) {
    out.why_not = pairs == 1 ? "both ranks are on one node (shared memory, not the NIC, carries "
                               "the data)"
                             : "every pair is within a node (shared memory, not the NIC, "
                               "carries the data)";
  } else if (out.cross_node_pairs < pairs) {
    out.why_not = std::to_string(pairs - out.cross_node_pairs) + " of " + std::to_string(pairs) +
                  " pairs are within a node";
  } else {
    out.bound_gbps = rate_gbps * directions * out.links;
  }
  return out;
}

namespace {

constexpr int kDefaultPartitions = 8;  // cb_partitioned_latency without --partitions

std::string gbps_text(double gbps) {
  char text[32];
  std::snprintf(text, sizeof text, "%g Gb/s", gbps);
  return text;
}

class Pt2ptRunner final : public Runner {
 public:
  explicit Pt2ptRunner(const RunContext& rc) : rc_(rc), spec_(*rc.desc.pt2pt), ctx_{rc.be} {}
  ~Pt2ptRunner() override {
    children_.reset();  // cb_latency_mp: its forked processes end with the measurement
    free_persistent();
    if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
    for (Buf* b : {&send_, &recv_, &ack_}) rc_.free(*b);
  }

  void prepare() override {
    const Options& o = rc_.opt;
    const std::string exe = "cb_" + std::string(rc_.desc.name);
    if (spec_.workers == Workers::None) refuse_workers(o);
    if (spec_.fan != Fan::None) {
      if (o.pairs != 0)
        throw UsageError("-p/--pairs: " + exe +
                         " takes its parents and children from the hosts (OMB's layout)");
      fan_ = fan_layout(spec_.fan, rc_.ctl.rank(), rc_.ctl.size(), rc_.ctl.hosts());
      ctx_.role = fan_.role;
      peers_ = fan_.peers;
      pairs_ = fan_.flows;
      timers_ = fan_.parents;
      times_ = fan_.parent;  // OMB: the parents time, whichever way the data goes
    } else {
      pt2pt_layout(spec_, rc_.ctl.rank(), rc_.ctl.size(), o.pairs, ctx_.role, ctx_.peer);
      pairs_ = spec_.multi_pair ? (o.pairs ? o.pairs : rc_.ctl.size() / 2) : 1;
      timers_ = pairs_;
      times_ = ctx_.role == Role::Sender;  // senders time (OMB)
      if (ctx_.role != Role::Idle) peers_ = {ctx_.peer};
    }
    window_ = spec_.uses_window ? o.window : 1;
    if (spec_.workers != Workers::None) workers_ = worker_counts(spec_.workers, o.workers);
    if (ctx_.role == Role::Idle) return;
    ctx_.peer = peers_.front();
    // Senders use the first buffer letter (OMB: rank 0's side), receivers the second.
    const Mem mem = o.side_mem[ctx_.role == Role::Sender ? 0 : 1];
    if (const std::string why = rc_.be.unsupported_memory(mem); !why.empty()) throw UsageError(why);
    if (o.partitions != 0 && !spec_.partitioned)
      throw UsageError("--partitions applies to cb_partitioned_latency only");
    partitions_ = o.partitions ? o.partitions : kDefaultPartitions;
    if (spec_.workers == Workers::Threads) {
      check_threads(rc_.be, mem, exe);
      threads_.role = ctx_.role;
      threads_.peer = ctx_.peer;
      threads_.counts = workers_;
      threads_.wait = thread_wait_mode(rc_.ctl, o.wait, workers_, thread_note_);
    }
    if (spec_.persistent) {
      if (rc_.be.name() != "mpi")
        throw UsageError("--backend " + rc_.be.name() + ": " + exe +
                         " times MPI persistent requests (MPI_Send_init, MPI_Recv_init, "
                         "MPI_Start); only --backend mpi has them");
      if (mem == Mem::Cuda && o.staging)
        throw UsageError("--staging: " + exe +
                         " makes its requests once on the buffers, so there is no call to "
                         "stage around; give a CUDA-aware MPI");
    }
    // osu_latency_mp forks after MPI_Init and before its buffers exist, as OMB 7.4.
    if (spec_.workers == Workers::Processes)
      children_ = std::make_unique<ForkedChildren>(ctx_.role == Role::Sender ? workers_.sender
                                                                             : workers_.receiver);
    // A receive buffer per thread (latency_mt) or per peer (a fan's parent), so that no two
    // receives in flight share one and each can be checked against its sender.
    recv_slots_ =
        spec_.workers == Workers::Threads ? static_cast<size_t>(threads_.threads()) : peers_.size();
    size_t extent = o.sizes.max;  // each buffer's: the largest message, or its ring
    if (placed()) {
      check_placement(exe, mem);
      extent = 0;
      for (size_t bytes : size_sweep(o.sizes))
        extent =
            std::max(extent, ring_footprint(ring_for(bytes, off_cache_.bytes), bytes, o.misalign));
    }
    slot_bytes_ = extent;
    send_ = rc_.alloc(extent, mem);
    recv_ = rc_.alloc(extent * recv_slots_, mem);
    ack_ = rc_.alloc(peers_.size(), Mem::Host);
    ctx_.ack = ack_.slice(0, 1);
  }

  // Bandwidth benchmarks: the line rate (environment.line_rate) and whether the pairs
  // cross nodes decide the % Line column; "line_rate" in the JSON, a header line.
  void annotate(nlohmann::json& doc) override {
    annotate_placement(doc);
    if (spec_.metric == Pt2ptMetric::Latency) return;
    const nlohmann::json& line = doc["environment"]["line_rate"];
    const double rate = line["rate_gbps"].is_number() ? line["rate_gbps"].get<double>() : 0.0;
    std::vector<int> node_of_rank(static_cast<size_t>(rc_.ctl.size()), 0);
    int node = 0;
    for (const auto& host : rc_.ctl.hosts()) {
      for (int r : host.second) node_of_rank[static_cast<size_t>(r)] = node;
      ++node;
    }
    bound_ = spec_.fan != Fan::None ? fan_line_rate_bound(rate, fan_)
                                    : line_rate_bound(rate, spec_.directions, pairs_, node_of_rank);
    const bool shown = bound_.bound_gbps > 0;
    std::string rate_text;
    if (rate > 0) {
      rate_text = gbps_text(rate);
      if (line.value("source", "") == "CB_LINE_RATE_GBPS") {
        rate_text += " (CB_LINE_RATE_GBPS)";
      } else {
        rate_text += " (" + line.value("device", "") + " port " + line["port"].dump() + ", " +
                     line.value("link_layer", "") + " " + line.value("width", "") + " " +
                     line.value("speed", "") + ")";
      }
    }
    if (shown) {
      note_ = "% Line = bandwidth / " + gbps_text(bound_.bound_gbps) + " (" + gbps_text(rate) +
              " x " + std::to_string(spec_.directions) +
              (spec_.directions == 1 ? " direction x " : " directions x ") +
              std::to_string(bound_.links) + (bound_.links == 1 ? " link)" : " links)");
      header_ = "# Line rate: " + rate_text + "; " + note_;
    } else if (rate > 0) {
      note_ = bound_.why_not + ": no % Line column";
      header_ = "# Line rate: " + rate_text + "; " + note_;
    } else {
      note_ = line.value("unavailable", std::string("no line rate known")) + "; no % Line column";
      header_ = "# Line rate: " + note_;
    }
    doc["line_rate"] = {{"rate_gbps", line["rate_gbps"]},
                        {"directions", spec_.directions},
                        {"pairs", pairs_},
                        {"cross_node_pairs", bound_.cross_node_pairs},
                        {"links", bound_.links},
                        {"bound_gbps", shown ? nlohmann::json(bound_.bound_gbps) : nullptr},
                        {"percent_reported", shown},
                        {"note", note_}};
  }

  std::vector<std::string> header_lines() const override {
    const auto side = [](Mem m) { return m == Mem::Cuda ? "DEVICE (D)" : "HOST (H)"; };
    std::vector<std::string> lines = {std::string("# Send Buffer on ") + side(rc_.opt.side_mem[0]) +
                                      " and Receive Buffer on " + side(rc_.opt.side_mem[1])};
    if (spec_.fan != Fan::None)
      lines.push_back(fan_header(spec_.fan, fan_, window_));
    else if (spec_.uses_window)
      lines.push_back("# [ pairs: " + std::to_string(pairs_) +
                      " ] [ window size: " + std::to_string(window_) + " ]");
    else if (spec_.multi_pair)
      lines.push_back("# [ pairs: " + std::to_string(pairs_) + " ]");
    if (spec_.workers == Workers::Threads)
      lines.insert(lines.end(),
                   {"# Number of Sender threads: " + std::to_string(workers_.sender),
                    "# Number of Receiver threads: " + std::to_string(workers_.receiver)});
    if (!thread_note_.empty()) lines.push_back(thread_note_);
    if (spec_.workers == Workers::Processes)
      lines.insert(
          lines.end(),
          {"# Number of forked processes in sender: " + std::to_string(workers_.sender),
           "# Number of forked processes in receiver: " + std::to_string(workers_.receiver)});
    if (spec_.partitioned)
      lines.push_back("# [ partitions: up to " + std::to_string(partitions_) +
                      ", the largest count that divides the size ]");
    if (!header_.empty()) lines.push_back(header_);
    const Options& o = rc_.opt;
    if (o.off_cache)
      lines.push_back(
          "# Off-cache (--off-cache): each iteration uses the next buffer of a ring of " +
          format_bytes(off_cache_.bytes) + " per buffer (" + off_cache_.source +
          "), slots a line more than the message apart, as IMB's -off_cache; the "
          "window's operations are re-pointed inside the timed loop" +
          (o.validate ? "; -c checks the last iteration's slot" : ""));
    if (o.vary_data)
      lines.push_back(
          "# Varied data (--vary-data): each iteration stores one byte per 64-byte line of the "
          "send buffer (bytes / 64 stores), inside the timed loop (OMB's loop has no untimed "
          "gap between iterations)" +
          std::string(o.validate ? "; -c checks every byte of the last iteration's data" : ""));
    if (o.misalign > 0)
      lines.push_back("# Misaligned (-u " + std::to_string(o.misalign) +
                      "): send and receive pointers " + std::to_string(o.misalign) +
                      " B past the allocation's alignment");
    return lines;
  }

  bool places_buffers() const override { return true; }

  void annotate_placement(nlohmann::json& doc) const {
    const Options& o = rc_.opt;
    if (!placed()) return;
    doc["buffer_placement"] = placement_json({.misalign = o.misalign,
                                              .vary_data = o.vary_data,
                                              .vary_timed = true,
                                              .vary_device_copy = false,
                                              .off_cache = o.off_cache ? &off_cache_ : nullptr,
                                              .send_ring_bytes = send_.bytes,
                                              .recv_ring_bytes = recv_.bytes});
  }

  std::vector<Point> points() const override {
    std::vector<Point> out;
    for (size_t bytes : size_sweep(rc_.opt.sizes)) out.push_back({bytes, {}});
    return out;
  }

  SizeOutcome measure(const Point& point) override {
    const size_t bytes = point.bytes;
    const Options& o = rc_.opt;
    const int iters = o.iterations_for(bytes);
    const int warmup = o.warmup_for(bytes);
    const bool active = ctx_.role != Role::Idle;
    const bool receives = ctx_.role == Role::Receiver || (active && spec_.both_receive);
    const bool threads = spec_.workers == Workers::Threads;
    if ((spec_.persistent || threads) && comm_ == MPI_COMM_NULL) {  // every rank, every size
      CB_MPI(MPI_Comm_dup(rc_.ctl.comm(), &comm_));
      ctx_.wait = rc_.ctl.wait_mode();
      threads_.comm = comm_;
    }
    if (active) set_size(bytes);
    const bool validate = o.validate && point.validate;
    // Placed buffers: every rank runs warmup + 2 x iters iterations (two passes); -c checks
    // the last one's slot and data.
    const uint64_t last = static_cast<uint64_t>(warmup) + 2 * static_cast<uint64_t>(iters) - 1;
    if (active && placed()) {
      ring_ = ring_for(bytes, off_cache_.bytes);
      moved_ = 0;
      move_to(last);  // -c: fill and poison the slot the last iteration uses
    }
    if (active && validate) {
      fill_pattern(ctx_.send, static_cast<uint32_t>(rc_.ctl.rank()));
      if (receives)
        for (const auto& [buf, from] : inbound_) poison_pattern(buf, static_cast<uint32_t>(from));
    }
    if (active && placed()) move_to(0);

    if (injected_fault() == Fault::Hang && sizes_done_++ == 1 &&
        rc_.ctl.rank() == rc_.ctl.size() - 1)
      hang_forever();
    Passes passes = threads    ? threaded_passes(rc_.ctl, threads_, warmup, iters)
                    : placed() ? timed_passes(rc_.ctl, active, warmup, iters,
                                              [this] {
                                                before_iteration();
                                                spec_.iteration(ctx_);
                                              })
                               : timed_passes(rc_.ctl, active, warmup, iters,
                                              [this] { spec_.iteration(ctx_); });
    if (active && placed()) move_to(last);  // where the last iteration's data lies
    const double total = passes.total;
    std::vector<double>& samples = passes.samples;
    if (receives && injected_fault() == Fault::Corrupt) corrupt_first_byte(inbound_.front().first);
    long long wrong = 0;
    for (size_t i = 0; receives && validate && i < inbound_.size(); ++i) {
      const int t = static_cast<int>(i), n = static_cast<int>(inbound_.size());
      if (threads && !thread_received(t, n, long{warmup} + 2L * iters)) continue;
      const auto& [buf, from] = inbound_[i];
      if (o.vary_data)  // the sender's last iteration stored generation last + 1
        wrong += static_cast<long long>(count_varied_errors(
            read_buffer(buf), static_cast<uint32_t>(from), static_cast<uint32_t>(last + 1)));
      else
        wrong += static_cast<long long>(count_pattern_errors(buf, static_cast<uint32_t>(from)));
    }

    // The timing ranks' (senders', a fan's parents') total / their number = the mean time;
    // per iteration the slowest of them.
    const double mean_total = rc_.ctl.sum(times_ ? total : 0.0) / timers_;
    if (!times_) std::fill(samples.begin(), samples.end(), 0.0);
    const std::vector<double> slowest = rc_.ctl.max(samples);
    SizeOutcome out;
    out.wrong = rc_.ctl.sum(wrong);
    out.record = {{"bytes", bytes}, {"iterations", iters}, {"warmup", warmup}};
    if (o.off_cache) out.record["off_cache_slots"] = {{"send", ring_.slots}, {"recv", ring_.slots}};
    // Also the --repeat figure: the one-way latency, or the time of one iteration (a
    // window) that the bandwidth divides.
    fill_figures(bytes, iters, mean_total, slowest, out);
    return out;
  }

 private:
  bool placed() const {
    const Options& o = rc_.opt;
    return o.off_cache || o.vary_data || o.misalign > 0;
  }

  // What the buffer options need of this benchmark; the ring's target (prepare()).
  void check_placement(const std::string& exe, Mem mem) {
    const Options& o = rc_.opt;
    const std::string given = placement_options_given(o);
    if (spec_.fan != Fan::None || spec_.workers != Workers::None || spec_.persistent ||
        spec_.partitioned)
      throw UsageError(given + ": " + exe +
                       " does not take them (its operations are made once per size, or run in "
                       "threads, processes or fans); cb_latency, cb_bw, cb_bibw, cb_mbw_mr and "
                       "cb_multi_lat do");
    if (o.vary_data && mem == Mem::Cuda)
      throw UsageError("--vary-data: " + exe +
                       " would store into device buffers inside the timed loop (a copy per "
                       "iteration); point to point takes it with host buffers only");
    if (!o.off_cache) return;
    off_cache_ = off_cache_target(o.off_cache_bytes, mem == Mem::Cuda, last_level_cache());
    const size_t physical = physical_memory_bytes();
    const size_t need =
        ring_footprint(ring_for(o.sizes.max, off_cache_.bytes), o.sizes.max, o.misalign);
    if (physical > 0 && 2 * need > physical / 2)
      throw UsageError("--off-cache: rings of " + format_bytes(need) + " per buffer (" +
                       off_cache_.source + ") cannot fit this machine's memory (" +
                       format_bytes(physical) + "; at most half of it for both)");
  }

  // Points this size's operations at iteration k's ring slot (misaligned by -u).
  void move_to(uint64_t k) {
    const size_t at = ring_offset(ring_, k, rc_.opt.misalign);
    const size_t bytes = ctx_.send.bytes;
    const Buf s = send_.slice(at, bytes), r = recv_.slice(at, bytes);
    ctx_.send = s;
    ctx_.recv = r;
    for (P2POp& op : ctx_.sends) op.buf = s;
    for (P2POp& op : ctx_.recvs) op.buf = r;
    for (P2POp& op : ctx_.exchange) op.buf = op.kind == P2POp::Kind::Send ? s : r;
    if (!inbound_.empty()) inbound_.front().first = r;
  }

  // Inside the timed loop (OMB's loop has no gap): the next slot, and the next generation's
  // bytes, one per line.
  void before_iteration() {
    const uint64_t k = moved_++;
    if (rc_.opt.off_cache) move_to(k);
    if (rc_.opt.vary_data)
      stamp_pattern(static_cast<std::byte*>(ctx_.send.ptr), ctx_.send.bytes,
                    static_cast<uint32_t>(rc_.ctl.rank()), static_cast<uint32_t>(k + 1));
  }

  void set_size(size_t bytes) {
    const size_t at = placed() ? rc_.opt.misalign : 0;
    ctx_.send = send_.slice(at, bytes);
    ctx_.recv = recv_.slice(at, bytes);
    const size_t max = slot_bytes_;
    inbound_.clear();
    threads_.recv.clear();
    for (size_t i = 0; i < recv_slots_; ++i) {
      const Buf slot = recv_.slice(i * max, bytes);
      inbound_.emplace_back(slot, ctx_.peer);
      threads_.recv.push_back(slot);
    }
    if (spec_.workers == Workers::Threads) {
      threads_.send = ctx_.send;
      return;
    }
    if (spec_.fan != Fan::None) return set_fan(bytes);
    const P2POp send{P2POp::Kind::Send, ctx_.send, ctx_.peer, kDataTag};
    const P2POp recv{P2POp::Kind::Recv, ctx_.recv, ctx_.peer, kDataTag};
    ctx_.sends.assign(static_cast<size_t>(window_), send);
    ctx_.recvs.assign(static_cast<size_t>(window_), recv);
    ctx_.exchange = ctx_.recvs;
    ctx_.exchange.insert(ctx_.exchange.end(), ctx_.sends.begin(), ctx_.sends.end());
    if (spec_.persistent) make_persistent();
  }

  // A window to or from each peer, into the peer's own receive buffer; an ack each way back.
  void set_fan(size_t bytes) {
    const bool sender = ctx_.role == Role::Sender;
    ctx_.sends.clear();
    ctx_.recvs.clear();
    ctx_.acks.clear();
    for (size_t i = 0; i < peers_.size(); ++i) {
      const int peer = peers_[i];
      inbound_[i].second = peer;
      const Buf in = recv_.slice(i * slot_bytes_, bytes);
      for (int w = 0; w < window_; ++w) {
        ctx_.sends.push_back({P2POp::Kind::Send, ctx_.send, peer, kDataTag});
        ctx_.recvs.push_back({P2POp::Kind::Recv, in, peer, kDataTag});
      }
      ctx_.acks.push_back(
          {sender ? P2POp::Kind::Recv : P2POp::Kind::Send, ack_.slice(i, 1), peer, kAckTag});
    }
  }

  // One request per operation of the iteration, on a duplicate of the control plane's
  // communicator (no control message can match them).
  void make_persistent() {
    free_persistent();
    // Partitioned: as many partitions as divide the size, up to --partitions (gcd).
    ctx_.partitions =
        ctx_.send.bytes == 0
            ? 1
            : static_cast<int>(std::gcd(ctx_.send.bytes, static_cast<size_t>(partitions_)));
    const auto init = [this](const P2POp& op) {
      MPI_Request r = MPI_REQUEST_NULL;
      const int n = static_cast<int>(op.buf.bytes);
      const auto part = static_cast<MPI_Count>(op.buf.bytes / static_cast<size_t>(ctx_.partitions));
      if (spec_.partitioned && op.tag == kDataTag) {
        if (op.kind == P2POp::Kind::Send)
          CB_MPI(MPI_Psend_init(op.buf.ptr, ctx_.partitions, part, MPI_BYTE, op.peer, op.tag, comm_,
                                MPI_INFO_NULL, &r));
        else
          CB_MPI(MPI_Precv_init(op.buf.ptr, ctx_.partitions, part, MPI_BYTE, op.peer, op.tag, comm_,
                                MPI_INFO_NULL, &r));
      } else if (op.kind == P2POp::Kind::Send)
        CB_MPI(MPI_Send_init(op.buf.ptr, n, MPI_BYTE, op.peer, op.tag, comm_, &r));
      else
        CB_MPI(MPI_Recv_init(op.buf.ptr, n, MPI_BYTE, op.peer, op.tag, comm_, &r));
      return r;
    };
    for (const P2POp& op : ctx_.sends) ctx_.p_sends.push_back(init(op));
    for (const P2POp& op : ctx_.recvs) ctx_.p_recvs.push_back(init(op));
    for (const P2POp& op : ctx_.exchange) ctx_.p_exchange.push_back(init(op));
    const bool sender = ctx_.role == Role::Sender;
    ctx_.p_ack =
        init({sender ? P2POp::Kind::Recv : P2POp::Kind::Send, ctx_.ack, ctx_.peer, kAckTag});
  }

  void free_persistent() {
    for (auto* v : {&ctx_.p_sends, &ctx_.p_recvs, &ctx_.p_exchange}) {
      for (MPI_Request& r : *v)
        if (r != MPI_REQUEST_NULL) MPI_Request_free(&r);
      v->clear();
    }
    if (ctx_.p_ack != MPI_REQUEST_NULL) MPI_Request_free(&ctx_.p_ack);
  }

  void fill_figures(size_t bytes, int iters, double total, const std::vector<double>& per_iter,
                    SizeOutcome& out) const {
    const Options& o = rc_.opt;
    if (spec_.metric == Pt2ptMetric::Latency) {
      latency_figures(o, iters, total, per_iter, 2.0, out);  // a round trip per iteration
      if (spec_.multi_pair) out.record["pairs"] = pairs_;    // multi_lat: the mean over them
      if (spec_.workers != Workers::None)
        out.record[spec_.workers == Workers::Threads ? "threads" : "forked_processes"] = {
            {"sender", workers_.sender}, {"receiver", workers_.receiver}};
      if (spec_.workers == Workers::Threads)
        out.record["threads"]["wait"] = threads_.wait == WaitMode::Yield ? "yield" : "spin";
      if (spec_.partitioned) out.record["partitions"] = ctx_.partitions;
      return;
    }
    // Bytes per iteration: window x size per direction, per pair.
    const double per_iter_mb = double(bytes) * window_ * spec_.directions * pairs_ / 1e6;
    const BandwidthFigures f = bandwidth_figures(o, iters, total, per_iter, per_iter_mb, out);
    out.record["window"] = window_;
    out.record["pairs"] = pairs_;
    if (spec_.fan != Fan::None)
      out.record["fan"] = {{"parents", fan_.parents},
                           {"children_per_parent", fan_.flows / fan_.parents},
                           {"one_host", fan_.per_rank}};
    if (spec_.metric == Pt2ptMetric::MessageRate) {
      const double rate = total > 0 ? double(window_) * pairs_ * iters / total : 0.0;
      out.record["messages_per_s"] = rate;
      out.cells.push_back({"MB/s", f.mbps});
      out.cells.push_back({"Messages/s", rate});
    } else {
      out.cells.push_back({"Bandwidth (MB/s)", f.mbps});
    }
    if (bound_.bound_gbps > 0) {  // only when every pair crosses nodes (annotate())
      const double pct = line_rate_percent(f.mbps, bound_.bound_gbps);
      out.record["line_rate_percent"] = pct;
      out.cells.push_back({"% Line", pct});
    }
    bandwidth_detail_cells(o, iters, f, out);
  }

  const RunContext& rc_;
  const Pt2ptSpec& spec_;
  Pt2ptContext ctx_;
  Buf send_, recv_, ack_;
  int pairs_ = 1;
  int window_ = 1;
  int sizes_done_ = 0;
  MPI_Comm comm_ = MPI_COMM_NULL;             // persistent benchmarks: their own communicator
  int partitions_ = 1;                        // partitioned: --partitions, or kDefaultPartitions
  std::vector<int> peers_;                    // whom this rank sends to or receives from
  int timers_ = 1;                            // ranks whose time makes the figure: senders, parents
  bool times_ = false;                        // whether this rank is one of them
  std::vector<std::pair<Buf, int>> inbound_;  // -c: each receive buffer and its sender
  size_t recv_slots_ = 1;                     // receive buffers (of sizes.max bytes each)
  FanLayout fan_;                             // bw_fan_in, bw_fan_out
  WorkerCounts workers_;                      // latency_mt, latency_mp: -t
  ThreadedPingPong threads_;                  // latency_mt
  std::string thread_note_;                   // latency_mt: why its threads yield
  std::unique_ptr<ForkedChildren> children_;  // latency_mp: this rank's
  OffCacheTarget off_cache_;                  // --off-cache: what each ring covers and why
  Ring ring_;                                 // this size's ring (one slot without --off-cache)
  uint64_t moved_ = 0;                        // placed buffers: iterations begun at this size
  size_t slot_bytes_ = 0;  // each buffer's extent (a receive slot per thread or peer)
  LineRateBound bound_;    // annotate(): the % Line column's bound, 0 when not shown
  std::string note_;       // annotate(): what the header line says after the rate
  std::string header_;     // "# Line rate: ..." (bandwidth benchmarks)
};

}  // namespace

std::unique_ptr<Runner> make_pt2pt_runner(const RunContext& rc) {
  return std::make_unique<Pt2ptRunner>(rc);
}

}  // namespace cb
