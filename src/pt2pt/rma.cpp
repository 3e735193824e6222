// The one runner of every one-sided benchmark, following OMB's c/mpi/one-sided/*.c: rank 0
// is the origin; a window per message size (OMB's -w: MPI_Win_create, MPI_Win_allocate or
// MPI_Win_create_dynamic + MPI_Win_attach), then warmup and a timed loop read with two clock
// reads (OMB's figure), a second pass with a clock read per iteration (the distribution),
// and with -c one more iteration after which the target checks its window, every byte.
//
// One iteration per OMB's -s (W = -W for the bandwidth tests, 1 otherwise):
//   lock        MPI_Win_lock, W operations, MPI_Win_unlock (exclusive for fop and cas)
//   flush       W operations, MPI_Win_flush       (inside one lock held over the loop)
//   flush_local W operations, MPI_Win_flush_local (inside one lock held over the loop)
//   lock_all    MPI_Win_lock_all, W operations, MPI_Win_unlock_all
//   fence       latency: fence, op, fence, fence while the peer does fence, fence, op, fence;
//               bw: fence, W operations, fence (peer: fence, fence); bibw: both alike
//   pscw        latency: start, op, complete, post, wait while the peer does post, wait,
//               start, op, complete; bw: start, W operations, complete (peer: post, wait);
//               bibw: both post, start, W operations, complete, wait
// Latency = time / iterations, halved for fence and pscw (an operation each way per
// iteration), as OMB. Bandwidth = size x W x iterations (x 2 for bibw) / time.
#include "pt2pt/rma.hpp"

#include <mpi.h>

#include <algorithm>
#include <array>
#include <climits>
#include <cstring>

#include "core/errors.hpp"
#include "core/mpi_check.hpp"
#include "gpu/memory.hpp"
#include "harness/fault.hpp"
#include "harness/stats.hpp"
#include "harness/timer.hpp"
#include "pt2pt/figures.hpp"
#include "pt2pt/passes.hpp"
#include "pt2pt/workers.hpp"

namespace cb {

std::string_view to_string(RmaWindow w) {
  switch (w) {
    case RmaWindow::Create:
      return "create";
    case RmaWindow::Dynamic:
      return "dynamic";
    case RmaWindow::Allocate:
      break;
  }
  return "allocate";
}

std::string_view mpi_calls(RmaWindow w) {
  switch (w) {
    case RmaWindow::Create:
      return "MPI_Win_create";
    case RmaWindow::Dynamic:
      return "MPI_Win_create_dynamic";
    case RmaWindow::Allocate:
      break;
  }
  return "MPI_Win_allocate";
}

namespace {
struct SyncName {
  RmaSync sync;
  std::string_view name;   // OMB's -s value
  std::string_view calls;  // OMB's header line
};
constexpr std::array<SyncName, 6> kSyncs{{
    {RmaSync::Lock, "lock", "MPI_Win_lock/unlock"},
    {RmaSync::Flush, "flush", "MPI_Win_flush"},
    {RmaSync::FlushLocal, "flush_local", "MPI_Win_flush_local"},
    {RmaSync::LockAll, "lock_all", "MPI_Win_lock_all/unlock_all"},
    {RmaSync::Pscw, "pscw", "MPI_Win_post/start/complete/wait"},
    {RmaSync::Fence, "fence", "MPI_Win_fence"},
}};
const SyncName& sync_name(RmaSync s) {
  for (const SyncName& n : kSyncs)
    if (n.sync == s) return n;
  return kSyncs[0];
}
}  // namespace

std::string_view to_string(RmaSync s) {
  return sync_name(s).name;
}
std::string_view mpi_calls(RmaSync s) {
  return sync_name(s).calls;
}

std::string_view mpi_call(RmaOp op) {
  switch (op) {
    case RmaOp::Put:
      return "MPI_Put";
    case RmaOp::Get:
      return "MPI_Get";
    case RmaOp::Accumulate:
      return "MPI_Accumulate";
    case RmaOp::GetAccumulate:
      return "MPI_Get_accumulate";
    case RmaOp::FetchAndOp:
      return "MPI_Fetch_and_op";
    case RmaOp::CompareAndSwap:
      break;
  }
  return "MPI_Compare_and_swap";
}

bool rma_active(RmaSync s) {
  return s == RmaSync::Pscw || s == RmaSync::Fence;
}

RmaWindow parse_rma_window(std::string_view text) {
  if (text.empty() || text == "allocate") return RmaWindow::Allocate;
  if (text == "create") return RmaWindow::Create;
  if (text == "dynamic") return RmaWindow::Dynamic;
  throw UsageError("-w/--win-options: unknown window creation '" + std::string(text) +
                   "' (create, allocate or dynamic)");
}

RmaSync parse_rma_sync(const RmaSpec& spec, std::string_view text, std::string_view bench) {
  if (text.empty()) return spec.default_sync;
  for (const SyncName& n : kSyncs) {
    if (n.name != text) continue;
    if (spec.active_only && !rma_active(n.sync))
      throw UsageError("-s/--sync-option " + std::string(text) + ": cb_" + std::string(bench) +
                       " puts from both ranks at once, which needs active target "
                       "synchronisation: pscw or fence (as OMB's osu_" +
                       std::string(bench) + ")");
    return n.sync;
  }
  throw UsageError("-s/--sync-option: unknown synchronisation '" + std::string(text) + "' (" +
                   (spec.active_only ? std::string("pscw or fence")
                                     : std::string("lock, flush, flush_local, lock_all, pscw or "
                                                   "fence")) +
                   ")");
}

namespace {

// Fetch-and-op and compare-and-swap move one MPI_LONG_LONG (OMB's "8" row).
constexpr size_t kAtomicBytes = sizeof(long long);

// Every window, and the buffers behind it, is a whole number of 64-byte lines: Debian's
// MPICH 4.0.2 (ch4, shared memory) places the target's part of an MPI_Win_allocate window
// wrongly when a rank's size is not a multiple of 16 bytes (a put to rank 1 at
// displacement 0 lands partly in rank 0's memory: -c finds (size mod 16) wrong bytes on
// each rank). The operations still move exactly the message size.
constexpr size_t kWindowLine = 64;
size_t window_bytes(size_t span) {
  return std::max<size_t>((span + kWindowLine - 1) / kWindowLine * kWindowLine, kWindowLine);
}

bool is_atomic(RmaOp op) {
  return op == RmaOp::FetchAndOp || op == RmaOp::CompareAndSwap;
}
bool fetches(RmaOp op) {  // the origin receives data into its result buffer
  return op != RmaOp::Put && op != RmaOp::Accumulate;
}

// -c values of fop and cas: small positive numbers, so that the sum cannot overflow.
long long atomic_window_value(int rank) {
  return 1000003LL * (rank + 1);
}
long long atomic_origin_value(int rank) {
  return 7919LL * (rank + 1);
}

class RmaRunner final : public Runner {
 public:
  explicit RmaRunner(const RunContext& rc) : rc_(rc), spec_(*rc.desc.rma) {}
  ~RmaRunner() override {
    // A window still open here belongs to a size that failed: freeing it is collective, so
    // it is left to MPI_Finalize; the memory is ours to free only for create and dynamic.
    for (Buf* b : {&origin_, &result_, &compare_, &target_}) rc_.free(*b);
  }

  void prepare() override {
    const Options& o = rc_.opt;
    const std::string exe = "cb_" + std::string(rc_.desc.name);
    if (rc_.ctl.size() != 2)
      throw UsageError(exe + " needs exactly 2 ranks (got " + std::to_string(rc_.ctl.size()) +
                       "); run it with mpirun -n 2");
    if (rc_.be.name() != "mpi")
      throw UsageError("--backend " + rc_.be.name() + ": " + exe +
                       " times MPI one-sided communication (MPI windows); only --backend mpi "
                       "has them");
    if (o.pairs != 0)
      throw UsageError("-p/--pairs: " + exe + " runs one origin and one target (2 ranks)");
    refuse_workers(o);
    window_ = parse_rma_window(o.rma_window);
    sync_ = parse_rma_sync(spec_, o.rma_sync, rc_.desc.name);
    if (is_atomic(spec_.op) &&
        (o.sizes.min != rc_.desc.default_sizes.min || o.sizes.max != rc_.desc.default_sizes.max))
      throw UsageError("-m: " + exe + " moves one 8-byte element (MPI_LONG_LONG), as OMB's osu_" +
                       std::string(rc_.desc.name) + ", so it has no message sizes");
    slots_ = spec_.metric == RmaMetric::Latency ? 1 : o.window;
    me_ = rc_.ctl.rank();
    peer_ = 1 - me_;
    mem_ = o.side_mem[me_];
    if (mem_ == Mem::Cuda) {
      if (o.staging)
        throw UsageError(
            "--staging: one-sided operations reach the target's window directly, "
            "so there is no call to stage around; give a CUDA-aware MPI");
      if (const std::string why = rc_.be.unsupported_memory(mem_); !why.empty())
        throw UsageError(exe + " -d cuda: " + why);
      if (window_ == RmaWindow::Allocate)
        throw UsageError(
            "-w allocate: MPI_Win_allocate returns host memory, so the window "
            "cannot be on the device; use -w create or -w dynamic with -d cuda");
    }
    const size_t max_bytes = is_atomic(spec_.op) ? kAtomicBytes : o.sizes.max;
    if (max_bytes > size_t{INT_MAX})
      throw UsageError("-m: at most " + std::to_string(INT_MAX) + " bytes per operation");
    const size_t span = window_bytes(max_bytes * static_cast<size_t>(slots_));
    origin_ = rc_.alloc(span, mem_);
    if (fetches(spec_.op)) result_ = rc_.alloc(span, mem_);
    if (spec_.op == RmaOp::CompareAndSwap) compare_ = rc_.alloc(kAtomicBytes, mem_);
    if (window_ != RmaWindow::Allocate) target_ = rc_.alloc(span, mem_);
  }

  void annotate(nlohmann::json& doc) override {
    doc["one_sided"] = {
        {"window", to_string(window_)},
        {"window_call", mpi_calls(window_)},
        {"sync", to_string(sync_)},
        {"sync_calls", mpi_calls(sync_)},
        {"operation", mpi_call(spec_.op)},
        {"datatype", is_atomic(spec_.op)                                ? "MPI_LONG_LONG"
                     : spec_.op == RmaOp::Put || spec_.op == RmaOp::Get ? "MPI_BYTE"
                                                                        : "MPI_UNSIGNED_CHAR"},
        {"both_ranks_operate", both_issue()}};
  }

  std::vector<std::string> header_lines() const override {
    const auto side = [](Mem m) { return m == Mem::Cuda ? "DEVICE (D)" : "HOST (H)"; };
    std::vector<std::string> lines = {
        std::string("# Window creation: ") + std::string(mpi_calls(window_)),
        std::string("# Synchronization: ") + std::string(mpi_calls(sync_))};
    if (rc_.opt.mem == Mem::Cuda)
      lines.push_back(std::string("# Rank 0 Memory on ") + side(rc_.opt.side_mem[0]) +
                      " and Rank 1 Memory on " + side(rc_.opt.side_mem[1]));
    if (spec_.metric != RmaMetric::Latency)
      lines.push_back("# [ window size: " + std::to_string(slots_) + " ]");
    return lines;
  }

  std::vector<Point> points() const override {
    if (is_atomic(spec_.op)) return {{kAtomicBytes, {}}};
    std::vector<Point> out;
    for (size_t bytes : size_sweep(rc_.opt.sizes)) out.push_back({bytes, {}});
    return out;
  }

  SizeOutcome measure(const Point& point) override {
    const Options& o = rc_.opt;
    bytes_ = point.bytes;
    const int iters = o.iterations_for(bytes_);
    const int warmup = o.warmup_for(bytes_);
    open_window(bytes_ * static_cast<size_t>(slots_));
    const bool loops = me_ == 0 || rma_active(sync_);  // passive target: rank 1 waits
    if (injected_fault() == Fault::Hang && sizes_done_++ == 1 && me_ == 1) hang_forever();

    Passes passes = timed_passes(
        rc_.ctl, loops, warmup, iters, [this] { iteration(); }, [this] { begin(); },
        [this] { end(); });
    const double total = passes.total;
    std::vector<double>& samples = passes.samples;
    rc_.ctl.barrier();
    const long long wrong = o.validate && point.validate ? validate() : 0;
    close_window();

    // Rank 0 times (OMB prints rank 0's figure).
    const double origin_total = rc_.ctl.sum(me_ == 0 ? total : 0.0);
    if (me_ != 0) std::fill(samples.begin(), samples.end(), 0.0);
    const std::vector<double> per_iter = rc_.ctl.max(samples);
    SizeOutcome out;
    out.wrong = rc_.ctl.sum(wrong);
    out.record = {{"bytes", bytes_}, {"iterations", iters}, {"warmup", warmup}};
    fill_figures(iters, origin_total, per_iter, out);
    return out;
  }

 private:
  // Both ranks issue operations in an iteration: latency with fence or pscw, and bibw.
  bool both_issue() const {
    return spec_.metric == RmaMetric::BiBandwidth ||
           (spec_.metric == RmaMetric::Latency && rma_active(sync_));
  }
  bool issues() const { return me_ == 0 || both_issue(); }
  bool targeted() const { return me_ == 1 || both_issue(); }

  void open_window(size_t span) {
    span_ = span;
    MPI_Comm comm = rc_.ctl.comm();
    const auto win_bytes = static_cast<MPI_Aint>(window_bytes(span));
    switch (window_) {
      case RmaWindow::Create:
        CB_MPI(MPI_Win_create(target_.ptr, win_bytes, 1, MPI_INFO_NULL, comm, &win_));
        window_mem_ = target_.slice(0, span);
        break;
      case RmaWindow::Allocate: {
        void* base = nullptr;
        CB_MPI(MPI_Win_allocate(win_bytes, 1, MPI_INFO_NULL, comm, &base, &win_));
        window_mem_ = Buf{base, span, Mem::Host};
        break;
      }
      case RmaWindow::Dynamic: {
        CB_MPI(MPI_Win_create_dynamic(MPI_INFO_NULL, comm, &win_));
        CB_MPI(MPI_Win_attach(win_, target_.ptr, win_bytes));
        window_mem_ = target_.slice(0, span);
        MPI_Aint mine = 0;
        CB_MPI(MPI_Get_address(target_.ptr, &mine));
        std::array<MPI_Aint, 2> all{};
        CB_MPI(MPI_Allgather(&mine, 1, MPI_AINT, all.data(), 1, MPI_AINT, comm));
        disp_ = all[static_cast<size_t>(peer_)];
        break;
      }
    }
    if (window_ != RmaWindow::Dynamic) disp_ = 0;
    if (sync_ == RmaSync::Pscw) {
      MPI_Group world;
      CB_MPI(MPI_Comm_group(comm, &world));
      CB_MPI(MPI_Group_incl(world, 1, &peer_, &peer_group_));
      CB_MPI(MPI_Group_free(&world));
    }
  }

  void close_window() {
    if (window_ == RmaWindow::Dynamic) CB_MPI(MPI_Win_detach(win_, target_.ptr));
    CB_MPI(MPI_Win_free(&win_));
    if (peer_group_ != MPI_GROUP_NULL) CB_MPI(MPI_Group_free(&peer_group_));
  }

  // Slot j: bytes at j x size in the origin's buffers and the target's window.
  void operate(int slot) {
    const size_t offset = static_cast<size_t>(slot) * bytes_;
    const int n = static_cast<int>(bytes_);
    void* src = origin_.bytes_at(offset);
    const MPI_Aint disp = disp_ + static_cast<MPI_Aint>(offset);
    switch (spec_.op) {
      case RmaOp::Put:
        CB_MPI(MPI_Put(src, n, MPI_BYTE, peer_, disp, n, MPI_BYTE, win_));
        break;
      case RmaOp::Get:
        CB_MPI(MPI_Get(result_.bytes_at(offset), n, MPI_BYTE, peer_, disp, n, MPI_BYTE, win_));
        break;
      case RmaOp::Accumulate:
        CB_MPI(MPI_Accumulate(src, n, MPI_UNSIGNED_CHAR, peer_, disp, n, MPI_UNSIGNED_CHAR, MPI_SUM,
                              win_));
        break;
      case RmaOp::GetAccumulate:
        CB_MPI(MPI_Get_accumulate(src, n, MPI_UNSIGNED_CHAR, result_.bytes_at(offset), n,
                                  MPI_UNSIGNED_CHAR, peer_, disp, n, MPI_UNSIGNED_CHAR, MPI_SUM,
                                  win_));
        break;
      case RmaOp::FetchAndOp:
        CB_MPI(MPI_Fetch_and_op(src, result_.ptr, MPI_LONG_LONG, peer_, disp, MPI_SUM, win_));
        break;
      case RmaOp::CompareAndSwap:
        CB_MPI(
            MPI_Compare_and_swap(src, compare_.ptr, result_.ptr, MPI_LONG_LONG, peer_, disp, win_));
        break;
    }
  }
  void operate_all() {
    for (int j = 0; j < slots_; ++j) operate(j);
  }

  // Outside the timed loop: the lock that flush and flush_local hold over it; after it,
  // its release, and for fence a closing fence so that no epoch stays open.
  void begin() {
    if (sync_ == RmaSync::Flush || sync_ == RmaSync::FlushLocal)
      CB_MPI(MPI_Win_lock(MPI_LOCK_SHARED, peer_, 0, win_));
  }
  void end() {
    if (sync_ == RmaSync::Flush || sync_ == RmaSync::FlushLocal)
      CB_MPI(MPI_Win_unlock(peer_, win_));
    if (sync_ == RmaSync::Fence) CB_MPI(MPI_Win_fence(MPI_MODE_NOSUCCEED, win_));
  }

  void iteration() {
    switch (sync_) {
      case RmaSync::Lock:
        CB_MPI(MPI_Win_lock(is_atomic(spec_.op) ? MPI_LOCK_EXCLUSIVE : MPI_LOCK_SHARED, peer_, 0,
                            win_));
        operate_all();
        CB_MPI(MPI_Win_unlock(peer_, win_));
        return;
      case RmaSync::Flush:
        operate_all();
        CB_MPI(MPI_Win_flush(peer_, win_));
        return;
      case RmaSync::FlushLocal:
        operate_all();
        CB_MPI(MPI_Win_flush_local(peer_, win_));
        return;
      case RmaSync::LockAll:
        CB_MPI(MPI_Win_lock_all(0, win_));
        operate_all();
        CB_MPI(MPI_Win_unlock_all(win_));
        return;
      case RmaSync::Fence:
        fence_iteration();
        return;
      case RmaSync::Pscw:
        pscw_iteration();
        return;
    }
  }

  void fence_iteration() {
    const auto fence = [this] { CB_MPI(MPI_Win_fence(0, win_)); };
    if (spec_.metric == RmaMetric::Latency) {  // rank 0's operation, then rank 1's
      fence();
      if (me_ == 0) operate_all();
      fence();
      fence();
      if (me_ == 1) operate_all();
      fence();
      return;
    }
    fence();
    if (issues()) operate_all();
    fence();
  }

  void pscw_iteration() {
    const auto start = [this] { CB_MPI(MPI_Win_start(peer_group_, 0, win_)); };
    const auto complete = [this] { CB_MPI(MPI_Win_complete(win_)); };
    const auto post = [this] { CB_MPI(MPI_Win_post(peer_group_, 0, win_)); };
    const auto wait = [this] { CB_MPI(MPI_Win_wait(win_)); };
    switch (spec_.metric) {
      case RmaMetric::Latency:
        if (me_ == 0) {
          start();
          operate_all();
          complete();
          post();
          wait();
        } else {
          post();
          wait();
          start();
          operate_all();
          complete();
        }
        return;
      case RmaMetric::Bandwidth:
        if (me_ == 0) {
          start();
          operate_all();
          complete();
        } else {
          post();
          wait();
        }
        return;
      case RmaMetric::BiBandwidth:
        post();
        start();
        operate_all();
        complete();
        wait();
        return;
    }
  }

  // -c: one more iteration from known contents, then every byte of the targets' windows
  // (and of the origins' result buffers) against what the operation must have left.
  long long validate() {
    const auto ume = static_cast<uint32_t>(me_);
    const auto upeer = static_cast<uint32_t>(peer_);
    // The window's own contents, written under an exclusive lock on this rank (any window
    // kind, any memory model).
    CB_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, me_, 0, win_));
    if (is_atomic(spec_.op)) {
      write_value(window_mem_, atomic_window_value(me_));
    } else if (spec_.op == RmaOp::Put) {
      poison_pattern(window_mem_, upeer);  // every byte differs from what the put brings
    } else {
      fill_pattern(window_mem_, ume);
    }
    CB_MPI(MPI_Win_unlock(me_, win_));
    const Buf src = origin_.slice(0, span_);
    const Buf res = result_.ptr ? result_.slice(0, span_) : Buf{};
    if (is_atomic(spec_.op)) {
      write_value(src, atomic_origin_value(me_));
      write_value(res, -1);
      if (compare_.ptr) write_value(compare_, atomic_window_value(peer_));
    } else {
      fill_pattern(src, ume);
      if (res.ptr) poison_pattern(res, upeer);
    }
    rc_.ctl.barrier();
    if (me_ == 0 || rma_active(sync_)) {
      begin();
      iteration();
      end();
    }
    rc_.ctl.barrier();

    long long wrong = 0;
    if (injected_fault() == Fault::Corrupt && targeted()) {
      CB_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, me_, 0, win_));
      corrupt_first_byte(window_mem_);
      CB_MPI(MPI_Win_unlock(me_, win_));
    }
    CB_MPI(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, me_, 0, win_));
    const std::vector<std::byte> window = read_buffer(window_mem_);
    CB_MPI(MPI_Win_unlock(me_, win_));
    // What this rank's window holds: its own contents when nobody operated on it.
    if (targeted()) {
      wrong += check_window(window, ume, upeer);
    } else {
      wrong += check_untouched(window, ume);
    }
    if (issues() && res.ptr) wrong += check_result(read_buffer(res), upeer);
    return wrong;
  }

  long long check_window(const std::vector<std::byte>& w, uint32_t me, uint32_t peer) const {
    long long wrong = 0;
    switch (spec_.op) {
      case RmaOp::Put:
        for (size_t k = 0; k < w.size(); ++k)
          wrong += static_cast<uint8_t>(w[k]) != pattern_byte(peer, k);
        return wrong;
      case RmaOp::Get:
        return check_untouched(w, me);
      case RmaOp::Accumulate:
      case RmaOp::GetAccumulate:
        for (size_t k = 0; k < w.size(); ++k)
          wrong += static_cast<uint8_t>(w[k]) !=
                   static_cast<uint8_t>(pattern_byte(me, k) + pattern_byte(peer, k));
        return wrong;
      case RmaOp::FetchAndOp:
        return read_value(w) != atomic_window_value(me_) + atomic_origin_value(peer_);
      case RmaOp::CompareAndSwap:
        return read_value(w) != atomic_origin_value(peer_);
    }
    return 0;
  }

  // A window nobody wrote: its own pattern (get's target, every byte) or value.
  long long check_untouched(const std::vector<std::byte>& w, uint32_t me) const {
    if (is_atomic(spec_.op)) return read_value(w) != atomic_window_value(me_);
    if (spec_.op == RmaOp::Put) {  // poisoned with the peer's pattern, complemented
      long long wrong = 0;
      for (size_t k = 0; k < w.size(); ++k)
        wrong += static_cast<uint8_t>(w[k]) != static_cast<uint8_t>(~pattern_byte(1 - me, k));
      return wrong;
    }
    long long wrong = 0;
    for (size_t k = 0; k < w.size(); ++k)
      wrong += static_cast<uint8_t>(w[k]) != pattern_byte(me, k);
    return wrong;
  }

  // The origin's result buffer: the target's contents before the operation.
  long long check_result(const std::vector<std::byte>& r, uint32_t peer) const {
    if (is_atomic(spec_.op)) return read_value(r) != atomic_window_value(peer_);
    long long wrong = 0;
    for (size_t k = 0; k < r.size(); ++k)
      wrong += static_cast<uint8_t>(r[k]) != pattern_byte(peer, k);
    return wrong;
  }

  static void write_value(const Buf& buf, long long v) {
    std::vector<std::byte> data(kAtomicBytes);
    std::memcpy(data.data(), &v, kAtomicBytes);
    write_buffer(buf.slice(0, kAtomicBytes), data);
  }
  static long long read_value(const std::vector<std::byte>& data) {
    long long v = 0;
    std::memcpy(&v, data.data(), std::min(data.size(), kAtomicBytes));
    return v;
  }

  void fill_figures(int iters, double total, const std::vector<double>& per_iter,
                    SizeOutcome& out) const {
    const Options& o = rc_.opt;
    if (spec_.metric == RmaMetric::Latency) {
      // An operation each way per iteration under fence and pscw (OMB: time / 2).
      latency_figures(o, iters, total, per_iter, rma_active(sync_) ? 2.0 : 1.0, out);
      return;
    }
    const int directions = spec_.metric == RmaMetric::BiBandwidth ? 2 : 1;
    const double per_iter_mb = double(bytes_) * slots_ * directions / 1e6;
    const BandwidthFigures f = bandwidth_figures(o, iters, total, per_iter, per_iter_mb, out);
    out.record["window"] = slots_;
    out.record["pairs"] = 1;
    out.cells.push_back({"Bandwidth (MB/s)", f.mbps});
    bandwidth_detail_cells(o, iters, f, out);
  }

  const RunContext& rc_;
  const RmaSpec& spec_;
  RmaWindow window_ = RmaWindow::Allocate;
  RmaSync sync_ = RmaSync::Flush;
  int me_ = 0, peer_ = 1;
  int slots_ = 1;  // operations per epoch: -W for the bandwidth tests
  Mem mem_ = Mem::Host;
  Buf origin_, result_, compare_;  // the origin's operands and results
  Buf target_;                     // window memory of -w create and dynamic
  Buf window_mem_;                 // this size's window (allocate: MPI's memory)
  MPI_Win win_ = MPI_WIN_NULL;
  MPI_Group peer_group_ = MPI_GROUP_NULL;  // pscw: the other rank
  MPI_Aint disp_ = 0;                      // dynamic: the peer's window address
  size_t bytes_ = 0, span_ = 0;
  int sizes_done_ = 0;
};

// OMB's defaults: sizes 1 B-4 MiB; latency 10000 (100 warmup) iterations, 1000 (10) above
// 8 KiB; bandwidth 100 (10), 20 (2) above 8 KiB, window 64; passive flush, bibw pscw.
constexpr SizeRange kSizes{1, 4 << 20};
constexpr SizeRange kAtomic{kAtomicBytes, kAtomicBytes};
constexpr IterationDefaults kLat{10000, 100, 1000, 10};
constexpr IterationDefaults kBw{100, 10, 20, 2};

constexpr RmaSpec kPutLatency{RmaOp::Put, RmaMetric::Latency, false, RmaSync::Flush};
constexpr RmaSpec kPutBw{RmaOp::Put, RmaMetric::Bandwidth, false, RmaSync::Flush};
constexpr RmaSpec kPutBibw{RmaOp::Put, RmaMetric::BiBandwidth, true, RmaSync::Pscw};
constexpr RmaSpec kGetLatency{RmaOp::Get, RmaMetric::Latency, false, RmaSync::Flush};
constexpr RmaSpec kGetBw{RmaOp::Get, RmaMetric::Bandwidth, false, RmaSync::Flush};
constexpr RmaSpec kAccLatency{RmaOp::Accumulate, RmaMetric::Latency, false, RmaSync::Flush};
constexpr RmaSpec kGetAccLatency{RmaOp::GetAccumulate, RmaMetric::Latency, false, RmaSync::Flush};
constexpr RmaSpec kFopLatency{RmaOp::FetchAndOp, RmaMetric::Latency, false, RmaSync::Flush};
constexpr RmaSpec kCasLatency{RmaOp::CompareAndSwap, RmaMetric::Latency, false, RmaSync::Flush};

constexpr BenchDesc rma_desc(std::string_view name, std::string_view title, SizeRange sizes,
                             IterationDefaults defaults, const RmaSpec& spec) {
  return {.name = name,
          .title = title,
          .family = Family::Pt2pt,
          .default_sizes = sizes,
          .defaults = defaults,
          .rma = &spec,
          .make_runner = make_rma_runner};
}

constexpr std::array<BenchDesc, 9> kRmaBenches{
    rma_desc("put_latency", "MPI_Put Latency Test", kSizes, kLat, kPutLatency),
    rma_desc("put_bw", "MPI_Put Bandwidth Test", kSizes, kBw, kPutBw),
    rma_desc("put_bibw", "MPI_Put Bi-directional Bandwidth Test", kSizes, kBw, kPutBibw),
    rma_desc("get_latency", "MPI_Get Latency Test", kSizes, kLat, kGetLatency),
    rma_desc("get_bw", "MPI_Get Bandwidth Test", kSizes, kBw, kGetBw),
    rma_desc("acc_latency", "MPI_Accumulate Latency Test", kSizes, kLat, kAccLatency),
    rma_desc("get_acc_latency", "MPI_Get_accumulate Latency Test", kSizes, kLat, kGetAccLatency),
    rma_desc("fop_latency", "MPI_Fetch_and_op Latency Test", kAtomic, kLat, kFopLatency),
    rma_desc("cas_latency", "MPI_Compare_and_swap Latency Test", kAtomic, kLat, kCasLatency),
};

}  // namespace

const std::vector<const BenchDesc*>& rma_benches() {
  static const std::vector<const BenchDesc*> all = [] {
    std::vector<const BenchDesc*> v;
    for (const BenchDesc& d : kRmaBenches) v.push_back(&d);
    return v;
  }();
  return all;
}

const BenchDesc* find_rma_bench(std::string_view name) {
  for (const BenchDesc& d : kRmaBenches)
    if (d.name == name) return &d;
  return nullptr;
}

std::unique_ptr<Runner> make_rma_runner(const RunContext& rc) {
  return std::make_unique<RmaRunner>(rc);
}

}  // namespace cb
