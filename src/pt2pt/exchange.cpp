// nccl-tests' sendrecv_perf and hypercube_perf on any backend's point-to-point (batch():
// MPI non-blocking sends and receives and a wait, NCCL a ncclGroupStart/End group and a
// stream synchronisation, the engine its transports), every rank taking part:
//   sendrecv   each rank sends the message to rank + 1 and receives it from rank - 1;
//              algbw = size / time
//   hypercube  an allgather by recursive doubling (a power-of-two rank count): in step
//              mask = 1, 2, 4 ... each rank exchanges the mask blocks it holds with rank ^
//              mask; size = the gathered bytes, a block size / ranks; algbw = block x
//              (ranks - 1) / time (nccl-tests' HyperCubeGetBw)
// busbw = algbw (nccl-tests' factor 1 for both). Time: the mean over ranks of pass 1 (the
// collectives' convention); the distribution is of the slowest rank per iteration. The own
// block of hypercube is copied into place once per size, untimed (nccl-tests' in-place
// form). -c: every received byte against its sender's pattern.
#include <algorithm>
#include <string>

#include "core/errors.hpp"
#include "gpu/memory.hpp"
#include "harness/fault.hpp"
#include "pt2pt/figures.hpp"
#include "pt2pt/passes.hpp"
#include "pt2pt/registry.hpp"
#include "pt2pt/workers.hpp"

namespace cb {

namespace {

class ExchangeRunner final : public Runner {
 public:
  explicit ExchangeRunner(const RunContext& rc)
      : rc_(rc), hypercube_(rc.desc.name == "hypercube") {}
  ~ExchangeRunner() override {
    for (Buf* b : {&send_, &recv_}) rc_.free(*b);
  }

  void prepare() override {
    const Options& o = rc_.opt;
    n_ = rc_.ctl.size();
    me_ = rc_.ctl.rank();
    const std::string exe = "cb_" + std::string(rc_.desc.name);
    if (hypercube_ && (n_ & (n_ - 1)) != 0)
      throw UsageError(exe + " needs a power-of-two number of ranks (got " + std::to_string(n_) +
                       "), as nccl-tests' hypercube_perf");
    if (o.pairs != 0) throw UsageError("-p/--pairs: " + exe + " runs on every rank");
    refuse_workers(o);
    const Mem mem = o.mem;
    if (const std::string why = rc_.be.unsupported_memory(mem); !why.empty()) throw UsageError(why);
    send_ = rc_.alloc(std::max<size_t>(o.sizes.max, 1), mem);
    recv_ = rc_.alloc(std::max<size_t>(o.sizes.max, 1), mem);
  }

  std::vector<std::string> header_lines() const override {
    return {std::string("# ") + (hypercube_ ? "allgather by recursive doubling, " : "") +
            "buffers on " + (rc_.opt.mem == Mem::Cuda ? "DEVICE (D)" : "HOST (H)") +
            "; algbw = busbw (nccl-tests' factor 1)"};
  }

  std::vector<Point> points() const override {
    std::vector<Point> out;
    for (size_t bytes : size_sweep(rc_.opt.sizes)) out.push_back({bytes, {}});
    return out;
  }

  SizeOutcome measure(const Point& point) override {
    const Options& o = rc_.opt;
    const size_t bytes = point.bytes;
    const int iters = o.iterations_for(bytes);
    const int warmup = o.warmup_for(bytes);
    const bool validate = o.validate && point.validate;
    const size_t block = hypercube_ ? bytes / static_cast<size_t>(n_) : bytes;
    const int prev = (me_ - 1 + n_) % n_, next = (me_ + 1) % n_;
    const Buf send = send_.slice(0, block);
    if (validate) {
      fill_pattern(send, static_cast<uint32_t>(me_));
      for (int r = 0; r < (hypercube_ ? n_ : 1); ++r)  // each block against its sender
        poison_pattern(recv_.slice(static_cast<size_t>(r) * block, block),
                       static_cast<uint32_t>(hypercube_ ? r : prev));
    }
    steps_.clear();
    if (!hypercube_) {
      steps_.push_back({{P2POp::Kind::Recv, recv_.slice(0, block), prev, kTag},
                        {P2POp::Kind::Send, send, next, kTag}});
    } else {
      const auto at = [&](int b, int count) {
        return recv_.slice(static_cast<size_t>(b) * block, static_cast<size_t>(count) * block);
      };
      write_buffer(at(me_, 1), read_buffer(send));  // the own block, in place, untimed
      for (int mask = 1; mask < n_; mask <<= 1) {
        const int held = me_ & ~(mask - 1), wanted = held ^ mask;
        steps_.push_back({{P2POp::Kind::Recv, at(wanted, mask), me_ ^ mask, kTag},
                          {P2POp::Kind::Send, at(held, mask), me_ ^ mask, kTag}});
      }
    }
    if (injected_fault() == Fault::Hang && sizes_done_++ == 1 && me_ == n_ - 1) hang_forever();
    Passes passes = timed_passes(rc_.ctl, true, warmup, iters, [this] {
      for (const auto& step : steps_) rc_.be.batch(step);
    });

    long long wrong = 0;
    if (validate) {
      if (injected_fault() == Fault::Corrupt) corrupt_first_byte(recv_.slice(0, 1));
      if (!hypercube_) {
        wrong = static_cast<long long>(
            count_pattern_errors(recv_.slice(0, block), static_cast<uint32_t>(prev)));
      } else {
        for (int r = 0; r < n_; ++r)
          wrong += static_cast<long long>(count_pattern_errors(
              recv_.slice(static_cast<size_t>(r) * block, block), static_cast<uint32_t>(r)));
      }
    }
    const double mean_total = rc_.ctl.sum(passes.total) / n_;
    const std::vector<double> slowest = rc_.ctl.max(passes.samples);
    SizeOutcome out;
    out.wrong = rc_.ctl.sum(wrong);
    out.record = {{"bytes", bytes}, {"iterations", iters}, {"warmup", warmup}};
    latency_figures(o, iters, mean_total, slowest, 1.0, out);
    // nccl-tests: sendrecv moves the size, hypercube a block from each other rank.
    const double moved = hypercube_ ? double(block) * (n_ - 1) : double(bytes);
    const double seconds = mean_total / iters;
    const double algbw = seconds > 0 ? moved / 1e9 / seconds : 0.0;
    out.record["algbw_GBps"] = algbw;
    out.record["busbw_GBps"] = algbw;
    out.record["bus_factor"] = 1.0;
    const auto latency_cells = out.cells.begin() + 1;  // after "Latency (us)", as nccl-tests
    out.cells.insert(latency_cells, {{"Algbw (GB/s)", algbw}, {"Busbw (GB/s)", algbw}});
    return out;
  }

 private:
  static constexpr int kTag = 1;
  const RunContext& rc_;
  const bool hypercube_;
  int n_ = 1, me_ = 0;
  Buf send_, recv_;
  std::vector<std::vector<P2POp>> steps_;  // one batch() each
  int sizes_done_ = 0;
};

}  // namespace

std::unique_ptr<Runner> make_exchange_runner(const RunContext& rc) {
  return std::make_unique<ExchangeRunner>(rc);
}

}  // namespace cb
