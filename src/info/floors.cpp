#include "info/floors.hpp"

#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <optional>
#include <set>
#include <thread>

#include "core/errors.hpp"
#include "core/types.hpp"
#include "engine/reduce_host.hpp"
#include "harness/stats.hpp"
#include "harness/timer.hpp"

namespace cb::info {

using nlohmann::json;

namespace {

constexpr size_t kKiB = 1024, kMiB = kKiB * 1024, kGiB = kMiB * 1024;
constexpr size_t kPiece = 256 * kKiB;  // the engine's shm chunk (as cb_copybw)

// One source and one destination, in memory before timing (zeros: neither memcpy nor a
// float sum of zeros depends on the values). Mapped with transparent huge pages where the
// kernel offers them (madvise mode) and faulted in by the kernel in one call
// (MADV_POPULATE_WRITE, Linux 5.14; else by writing every page): touching a buffer page by
// page, a fault per page, can cost more than the copies measured on it.
class Buffers {
 public:
  explicit Buffers(size_t bytes) : bytes_(std::max<size_t>(bytes, sizeof(float))) {
    src_ = map(bytes_);
    dst_ = map(bytes_);
  }
  ~Buffers() {
    munmap(src_, bytes_);
    munmap(dst_, bytes_);
  }
  Buffers(Buffers&& o) noexcept : bytes_(o.bytes_), src_(o.src_), dst_(o.dst_) {
    o.src_ = o.dst_ = nullptr;
    o.bytes_ = 0;
  }
  Buffers(const Buffers&) = delete;
  Buffers& operator=(const Buffers&) = delete;
  Buffers& operator=(Buffers&&) = delete;
  float* src() { return static_cast<float*>(src_); }
  float* dst() { return static_cast<float*>(dst_); }
  char* s() { return static_cast<char*>(src_); }
  char* d() { return static_cast<char*>(dst_); }

 private:
  static void* map(size_t bytes) {
    void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
      throw RuntimeError("cannot map " + std::to_string(bytes) + " bytes: " + std::strerror(errno));
    madvise(p, bytes, MADV_HUGEPAGE);  // advice only: 4 KiB pages where refused
#ifdef MADV_POPULATE_WRITE
    if (madvise(p, bytes, MADV_POPULATE_WRITE) == 0) return p;
#endif
    std::memset(p, 0, bytes);  // an older kernel: fault every page in here
    return p;
  }
  size_t bytes_;
  void* src_;
  void* dst_;
};

size_t batch_reps(size_t bytes, size_t batch_bytes) {
  return std::max<size_t>(1, batch_bytes / std::max<size_t>(bytes, 1));
}

bool pin_self(int cpu, std::string& why);

// GB/s of `traffic_per_rep` bytes per repetition, per batch, running `body(thread, rep)`;
// thread t pinned to pins[t] where `pins` names CPUs (a CPU it cannot have: it runs where
// the scheduler puts it; the rows say which CPUs were asked for).
template <class Body>
std::vector<double> timed_batches(int threads, int trials, size_t reps, double traffic_per_rep,
                                  Body body, const std::vector<int>& pins = {}) {
  std::vector<double> out;
  for (int trial = 0; trial < trials; ++trial) {
    std::vector<std::thread> pool;
    const double t0 = cb::now_s();
    for (int t = 0; t < threads; ++t)
      pool.emplace_back([&, t] {
        std::string ignored;
        if (size_t(t) < pins.size()) pin_self(pins[size_t(t)], ignored);
        for (size_t r = 0; r < reps; ++r) body(t);
      });
    for (auto& th : pool) th.join();
    const double dt = cb::now_s() - t0;
    out.push_back(traffic_per_rep * double(reps) * threads / dt / 1e9);
  }
  return out;
}

void copy_in_pieces(char* dst, const char* src, size_t bytes, size_t piece) {
  for (size_t off = 0; off < bytes; off += piece)
    std::memcpy(dst + off, src + off, std::min(piece, bytes - off));
}

double median_of(std::vector<double> xs) {
  std::sort(xs.begin(), xs.end());
  const size_t n = xs.size();
  return n == 0 ? 0 : n % 2 ? xs[n / 2] : (xs[n / 2 - 1] + xs[n / 2]) / 2;
}

double best_of(const std::vector<double>& xs) {
  return xs.empty() ? 0 : *std::max_element(xs.begin(), xs.end());
}

// --- the machine: caches, memory, CPUs -----------------------------------------------------

std::string read_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

// "48K", "2048K", "300M" -> bytes; 0 when unreadable.
size_t cache_bytes(const std::string& text) {
  if (text.empty()) return 0;
  char* end = nullptr;
  const unsigned long long v = std::strtoull(text.c_str(), &end, 10);
  const size_t unit = *end == 'K' ? kKiB : *end == 'M' ? kMiB : *end == 'G' ? kGiB : 1;
  return static_cast<size_t>(v) * unit;
}

// Data (or unified) cache sizes of `cpu` by level (index 1..3; 0 where absent).
struct Caches {
  size_t level[4] = {0, 0, 0, 0};
  size_t last() const { return level[3] ? level[3] : level[2] ? level[2] : level[1]; }
};

Caches caches_of(int cpu) {
  Caches c;
  const std::string base = "/sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/cache/index";
  for (int i = 0; i < 8; ++i) {
    const std::string type = read_line(base + std::to_string(i) + "/type");
    if (type.empty()) break;
    if (type == "Instruction") continue;
    const int lvl = std::atoi(read_line(base + std::to_string(i) + "/level").c_str());
    if (lvl >= 1 && lvl <= 3)
      c.level[lvl] =
          std::max(c.level[lvl], cache_bytes(read_line(base + std::to_string(i) + "/size")));
  }
  return c;
}

// Where a copy of `bytes` (source and destination: twice that) lives.
std::string where(size_t bytes, const Caches& c) {
  const size_t set = 2 * bytes;
  if (c.level[1] && set <= c.level[1]) return "L1";
  if (c.level[2] && set <= c.level[2]) return "L2";
  if (c.level[3] && set <= c.level[3]) return "L3";
  if (c.last() && bytes >= c.last()) return "beyond LLC";
  return c.last() ? "LLC edge" : "unknown";
}

std::string size_text(size_t bytes) {
  if (bytes >= kGiB && bytes % kGiB == 0) return std::to_string(bytes / kGiB) + " GiB";
  if (bytes >= kMiB && bytes % kMiB == 0) return std::to_string(bytes / kMiB) + " MiB";
  if (bytes >= kKiB && bytes % kKiB == 0) return std::to_string(bytes / kKiB) + " KiB";
  return std::to_string(bytes) + " B";
}

// --- the hand-off ---------------------------------------------------------------------------

struct alignas(64) Line {
  std::atomic<uint64_t> v{0};
};

struct PingPong {
  Line ping, pong;         // each written by one side only, polled by the other
  Line ready, stop;        // start and give-up signals
  std::string why;         // set before stop, read after join
  std::vector<double> ns;  // one-way ns per sample (the ping thread's)
};

bool pin_self(int cpu, std::string& why) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  const int rc = pthread_setaffinity_np(pthread_self(), sizeof set, &set);
  if (rc == 0) return true;
  why = "cannot pin a thread to CPU " + std::to_string(cpu) + ": " + std::strerror(rc);
  return false;
}

// One-way ns per sample between CPUs a (ping) and b (pong): each sample times
// `round_trips` round trips (ping writes its line, pong sees it and writes its own, ping
// sees that) and halves the time per round trip. One warm-up sample is left out. Gives up
// (ns empty, why set) when a thread cannot be pinned or the pair runs past `budget_s`
// (the other CPU busy with something else).
void ping_pong(int a, int b, int samples, int round_trips, double budget_s, PingPong& pp) {
  const double deadline = cb::now_s() + budget_s;
  const uint64_t total = uint64_t(samples + 1) * uint64_t(round_trips);
  std::string pong_why;
  std::thread pong([&] {
    if (!pin_self(b, pong_why)) {
      pp.stop.v.store(1, std::memory_order_release);
      return;
    }
    pp.ready.v.store(1, std::memory_order_release);
    for (uint64_t i = 1; i <= total; ++i) {
      while (pp.ping.v.load(std::memory_order_acquire) != i)
        if (pp.stop.v.load(std::memory_order_relaxed)) return;
      pp.pong.v.store(i, std::memory_order_release);
    }
  });
  std::thread ping([&] {
    if (!pin_self(a, pp.why)) {
      pp.stop.v.store(1, std::memory_order_release);
      return;
    }
    while (!pp.ready.v.load(std::memory_order_acquire))
      if (pp.stop.v.load(std::memory_order_acquire)) return;
    uint64_t seq = 0;
    for (int s = 0; s <= samples; ++s) {
      const double t0 = cb::now_s();
      for (int r = 0; r < round_trips; ++r) {
        pp.ping.v.store(++seq, std::memory_order_release);
        unsigned spins = 0;
        while (pp.pong.v.load(std::memory_order_acquire) != seq)
          if ((++spins & 0xffffu) == 0 && cb::now_s() > deadline) {
            pp.why = "gave up after " + std::to_string(budget_s) +
                     " s (is the other CPU busy?): " + std::to_string(pp.ns.size()) +
                     " samples taken";
            pp.stop.v.store(1, std::memory_order_release);
            pp.ns.clear();
            return;
          }
      }
      const double dt = cb::now_s() - t0;
      if (s > 0) pp.ns.push_back(dt * 1e9 / (2.0 * round_trips));
    }
  });
  ping.join();
  pong.join();
  if (pp.why.empty() && !pong_why.empty()) pp.why = pong_why;
  if (!pp.why.empty()) pp.ns.clear();
}

json interval_json(const std::vector<double>& ns) {
  const cb::MedianInterval m = cb::median_interval(ns);
  json out = {{"median", median_of(ns)},
              {"min", *std::min_element(ns.begin(), ns.end())},
              {"max", *std::max_element(ns.begin(), ns.end())},
              {"ci95_lo", nullptr},
              {"ci95_hi", nullptr},
              {"ci_confidence", nullptr}};
  if (m.defined) {
    out["ci95_lo"] = m.lo;
    out["ci95_hi"] = m.hi;
    out["ci_confidence"] = m.confidence;
  }
  return out;
}

// Pairs among the candidates: the ranks' pair first; then every other pair on up to 8
// CPUs, else the first CPU with each other one (16 pairs at most).
std::vector<std::pair<int, int>> pairs_of(const FloorsCpus& cpus) {
  std::vector<std::pair<int, int>> out = {{cpus.first, cpus.second}};
  const auto& c = cpus.candidates;
  const auto add = [&](int x, int y) {
    const std::pair<int, int> p{std::min(x, y), std::max(x, y)};
    const std::pair<int, int> r{std::min(cpus.first, cpus.second),
                                std::max(cpus.first, cpus.second)};
    if (p != r && out.size() < 16) out.push_back(p);
  };
  if (c.size() <= 8) {
    for (size_t i = 0; i < c.size(); ++i)
      for (size_t j = i + 1; j < c.size(); ++j) add(c[i], c[j]);
  } else {
    for (size_t j = 1; j < c.size(); ++j) add(c[0], c[j]);
  }
  return out;
}

json measure_handoff(const FloorsCpus& cpus, bool long_run) {
  const int samples = long_run ? 101 : 21;
  const int round_trips = long_run ? 5000 : 500;
  const double budget = long_run ? 20.0 : 1.0;
  json out = {{"method",
               "two threads pinned to the two CPUs ping-pong on two cache lines (each written "
               "by one thread, polled by the other); one-way = time per round trip / 2"},
              {"samples", samples},
              {"round_trips_per_sample", round_trips},
              {"ranks_cpus", json::array({cpus.first, cpus.second})},
              {"ranks_cpus_from", cpus.from},
              {"pairs", json::array()}};
  if (cpus.second < 0) {
    out["unavailable"] = "one CPU only: no pair to measure (" + cpus.from + ")";
    out["one_way_ns"] = nullptr;
    return out;
  }
  for (const auto& [a, b] : pairs_of(cpus)) {
    PingPong pp;
    ping_pong(a, b, samples, round_trips, budget, pp);
    json pair = {{"cpus", json::array({a, b})}};
    if (pp.ns.empty())
      pair["unavailable"] = pp.why;
    else
      pair["one_way_ns"] = interval_json(pp.ns);
    out["pairs"].push_back(pair);
  }
  const json& ranks = out["pairs"][0];
  if (ranks.contains("one_way_ns")) {
    out["one_way_ns"] = ranks["one_way_ns"]["median"];
  } else {
    out["one_way_ns"] = nullptr;
    out["unavailable"] = "CPUs " + std::to_string(cpus.first) + " and " +
                         std::to_string(cpus.second) + ": " +
                         ranks["unavailable"].get<std::string>();
  }
  return out;
}

// --- bandwidth --------------------------------------------------------------------------------

// Both CPUs at once, per thread: each of two threads pinned to `pair` copies (and sums) its
// own `bytes` (a prefix of bufs[t]) while the other does, as both ranks of a collective do;
// where they share the memory bandwidth a thread gets less than it does alone (the floors'
// second bound). The copy is the better of one call and 256 KiB pieces, as memcpy_GBps.
void measure_both_cpus(json& row, size_t bytes, size_t reps, int trials,
                       const std::vector<int>& pair, Buffers* const bufs[2]) {
  const size_t count = bytes / sizeof(float);
  const auto whole = timed_batches(
      2, trials, reps, double(bytes),
      [&](int t) { std::memcpy(bufs[t]->d(), bufs[t]->s(), bytes); }, pair);
  const auto pieces = timed_batches(
      2, trials, reps, double(bytes),
      [&](int t) { copy_in_pieces(bufs[t]->d(), bufs[t]->s(), bytes, kPiece); }, pair);
  const auto sum = timed_batches(
      2, trials, reps, 3.0 * double(count * sizeof(float)),
      [&](int t) {
        cb::engine::reduce_host(bufs[t]->dst(), bufs[t]->src(), count, Dtype::Float, Op::Sum);
      },
      pair);
  // timed_batches sums the threads: per thread, half
  row["both_cpus_memcpy_GBps"] = std::max(best_of(whole), best_of(pieces)) / 2;
  row["both_cpus_read_write_GBps"] = best_of(sum) / 2;
}

json measure_bandwidth(bool long_run, const Caches& caches, const std::vector<int>& pair) {
  // Quick: 5 batches of 32 MiB per size (2 beyond the LLC, where one copy is a batch).
  const int max_trials = long_run ? 11 : 5;
  const size_t batch = long_run ? 256 * kMiB : 32 * kMiB;
  std::vector<size_t> sizes = {4 * kKiB, 64 * kKiB, kMiB, 16 * kMiB, 64 * kMiB};
  // Beyond the last-level cache: a copy whose source alone is as large as it (source and
  // destination: twice the cache), held to an eighth of the memory and 1 GiB.
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  const size_t memory = pages > 0 && page > 0 ? size_t(pages) * size_t(page) : 0;
  const size_t cap = std::min<size_t>(kGiB, memory ? memory / 8 : kGiB);
  std::string note;
  if (caches.last()) {
    size_t beyond = (caches.last() + kMiB - 1) / kMiB * kMiB;
    if (beyond > cap) {
      note = "the size beyond the last-level cache (" + size_text(caches.last()) + ") is held to " +
             size_text(cap) + " (an eighth of the memory, 2 GiB at most)";
      beyond = cap;
    }
    if (beyond > sizes.back()) sizes.push_back(beyond);
  } else {
    note = "cache sizes unknown (no /sys/devices/system/cpu/cpu*/cache)";
  }
  json rows = json::array();
  Buffers buf(sizes.back());  // every size copies a prefix: one allocation
  // The second CPU's buffers, where four copies of the largest size fit in a quarter of the
  // memory (on this VM every size, the last-level cache's 300 MiB included).
  std::optional<Buffers> second;
  if (pair.size() == 2 && memory != 0 && 4 * sizes.back() <= memory / 4)
    second.emplace(sizes.back());
  Buffers* const both[2] = {&buf, second ? &*second : nullptr};
  for (size_t bytes : sizes) {
    const size_t reps = batch_reps(bytes, batch);
    const int trials = long_run || bytes < caches.last() ? max_trials : 2;
    const auto whole = timed_batches(1, trials, reps, double(bytes),
                                     [&](int) { std::memcpy(buf.d(), buf.s(), bytes); });
    const auto pieces = timed_batches(1, trials, reps, double(bytes), [&](int) {
      copy_in_pieces(buf.d(), buf.s(), bytes, kPiece);
    });
    const size_t count = bytes / sizeof(float);
    const auto reduce = timed_batches(
        1, trials, reps, 3.0 * double(count * sizeof(float)),
        [&](int) { cb::engine::reduce_host(buf.dst(), buf.src(), count, Dtype::Float, Op::Sum); });
    // memcpy: the better of one call and 256 KiB pieces (cb_copybw's "1 thread"), per trial.
    std::vector<double> copy(whole.size());
    for (size_t i = 0; i < copy.size(); ++i) copy[i] = std::max(whole[i], pieces[i]);
    json row = {{"bytes", bytes},
                {"where", where(bytes, caches)},
                {"trials", trials},
                {"memcpy_GBps", best_of(copy)},
                {"memcpy_GBps_median", median_of(copy)},
                {"memcpy_whole_GBps", best_of(whole)},
                {"memcpy_pieces_GBps", best_of(pieces)},
                {"read_write_GBps", best_of(reduce)},
                {"read_write_GBps_median", median_of(reduce)}};
    // Quick: 2 batches each (the default's second stays about 1 s here).
    if (second) measure_both_cpus(row, bytes, reps, long_run ? trials : 2, pair, both);
    rows.push_back(std::move(row));
  }
  json out = {{"threads", 1},
              {"both_cpus", pair.size() == 2 ? json(pair) : json(nullptr)},
              {"batch_bytes", batch},
              {"piece_bytes", kPiece},
              {"caches",
               {{"l1d_bytes", caches.level[1]},
                {"l2_bytes", caches.level[2]},
                {"l3_bytes", caches.level[3]},
                {"last_level_bytes", caches.last()}}},
              {"memory_bytes", memory},
              {"rows", rows}};
  if (!note.empty()) out["note"] = note;
  return out;
}

// --- the 2-rank collectives ---------------------------------------------------------------------

struct CollFloor {
  const char* coll;
  int handoffs;
  int read_per_byte, write_per_byte;  // per rank, in units of the message size N
  const char* why;
};

// The minimum per rank of 2 ranks on shared memory (docs/plots.md, "cb_info's floors").
constexpr CollFloor kColls[] = {
    {"allreduce", 2, 1, 1,
     "both ranks need the other's data (a hand-off each way); each reduces half and writes "
     "it into both results: reads N (its half and the peer's), writes N"},
    {"bcast", 1, 1, 1, "data flows one way; the receiver reads the root's N and writes its own N"},
    {"alltoall", 2, 2, 2,
     "a hand-off each way; each rank's receive buffer (2N) gets the peer's block and its own: "
     "two copies of N"},
    {"barrier", 2, 0, 0, "each rank must learn that the other arrived: a hand-off each way"},
    {"latency", 1, 1, 1,
     "cb_latency's one-way time: one hand-off; the receiver reads N and writes N"},
};

// The memcpy rate a copy of `bytes` can reach: the best of the row at the largest measured
// size up to `bytes` (else the smallest) and every larger row. A larger copy that runs
// faster shows a method a copy of `bytes` can use too (glibc's non-temporal stores above
// about 3/4 of the LLC, which skip reading the destination), so the floor takes it.
// `key` names the rate (memcpy_GBps, or both_cpus_memcpy_GBps, which the largest rows lack):
// rows without it are left out; nullptr when none has it.
const json* rate_row(const json& rows, size_t bytes, const char* key) {
  const json* best = nullptr;
  for (size_t i = 0; i < rows.size(); ++i) {
    if (!rows[i].contains(key)) continue;
    const bool start = rows[i]["bytes"].get<size_t>() <= bytes;  // the largest size up to N
    if (start || !best || rows[i][key].get<double>() > (*best)[key].get<double>()) best = &rows[i];
  }
  return best;
}

json collective_floors(const json& handoff, const json& bandwidth) {
  json out = json::array();
  const bool have_lat = handoff["one_way_ns"].is_number();
  const double one_way_us = have_lat ? handoff["one_way_ns"].get<double>() / 1e3 : 0;
  std::vector<size_t> sizes = {8};
  for (const auto& r : bandwidth["rows"]) sizes.push_back(r["bytes"].get<size_t>());
  for (const auto& c : kColls) {
    json e = {{"coll", c.coll},
              {"ranks", 2},
              {"handoffs", c.handoffs},
              {"read_bytes_per_byte", c.read_per_byte},
              {"write_bytes_per_byte", c.write_per_byte},
              {"why", c.why},
              {"latency_floor_us", have_lat ? json(c.handoffs * one_way_us) : json(nullptr)},
              {"points", json::array()}};
    if (c.read_per_byte + c.write_per_byte > 0) {
      for (size_t n : sizes) {
        const json& row = *rate_row(bandwidth["rows"], n, "memcpy_GBps");
        const double rate = row["memcpy_GBps"].get<double>();  // bytes copied: read + write = 2x
        const double moved = double(c.read_per_byte + c.write_per_byte) * double(n);
        const auto at_rate = [&](double gbps) {
          return gbps > 0 ? moved / (2.0 * gbps * 1e9) * 1e6 : 0;
        };
        const double bw_us = at_rate(rate);
        const double lat_us = have_lat ? c.handoffs * one_way_us : 0;
        json point = {{"bytes", n},
                      {"read_bytes", uint64_t(c.read_per_byte) * n},
                      {"write_bytes", uint64_t(c.write_per_byte) * n},
                      {"memcpy_GBps", rate},
                      {"memcpy_bytes", row["bytes"]},
                      {"bandwidth_floor_us", bw_us},
                      {"floor_us", std::max(bw_us, lat_us)}};
        // Both ranks copy at once: each at the rate a thread gets while the other copies.
        if (const json* both = rate_row(bandwidth["rows"], n, "both_cpus_memcpy_GBps")) {
          const double r2 = (*both)["both_cpus_memcpy_GBps"].get<double>();
          point["both_cpus_memcpy_GBps"] = r2;
          point["both_cpus_memcpy_bytes"] = (*both)["bytes"];
          point["both_cpus_floor_us"] = std::max(at_rate(r2), lat_us);
        }
        e["points"].push_back(point);
      }
    }
    out.push_back(e);
  }
  return out;
}

std::string fixed(double v, int digits) {
  char text[48];
  std::snprintf(text, sizeof text, "%.*f", digits, v);
  return text;
}

void row(const std::string& key, const std::string& value) {
  std::printf("  %-20s %s\n", key.c_str(), value.c_str());
}

}  // namespace

std::vector<double> copy_rates(size_t bytes, int threads, size_t piece, int trials,
                               size_t batch_bytes) {
  std::vector<Buffers> bufs;
  bufs.reserve(static_cast<size_t>(threads));
  for (int t = 0; t < threads; ++t) bufs.emplace_back(bytes);
  return timed_batches(threads, trials, batch_reps(bytes, batch_bytes), double(bytes),
                       [&](int t) { copy_in_pieces(bufs[t].d(), bufs[t].s(), bytes, piece); });
}

std::vector<int> parse_cpu_list(const std::string& text) {
  std::vector<int> out;
  size_t pos = 0;
  const auto bad = [&] { throw RuntimeError("not a CPU list: '" + text + "'"); };
  if (text.empty()) bad();
  while (pos < text.size()) {
    const size_t end = std::min(text.find(',', pos), text.size());
    const std::string part = text.substr(pos, end - pos);
    const size_t dash = part.find('-');
    const auto num = [&](const std::string& s) {
      if (s.empty() || s.size() > 6 || s.find_first_not_of("0123456789") != std::string::npos)
        bad();
      return std::stoi(s);
    };
    const int lo = num(part.substr(0, dash));
    const int hi = dash == std::string::npos ? lo : num(part.substr(dash + 1));
    if (hi < lo) bad();
    for (int c = lo; c <= hi; ++c) out.push_back(c);
    pos = end + 1;
  }
  return out;
}

FloorsMode parse_floors_mode(const std::string& text) {
  if (text == "off") return FloorsMode::Off;
  if (text == "quick") return FloorsMode::Quick;
  if (text == "long") return FloorsMode::Long;
  throw UsageError("--floors must be off, quick or long (got '" + text + "')");
}

FloorsCpus floors_cpus(const json& binding, const std::vector<int>& host_ranks) {
  FloorsCpus out;
  std::set<int> all;
  std::vector<int> firsts;  // each rank's first CPU, ranks of this host in order
  const json& per_rank = binding["cpus_per_rank"];
  for (int r : host_ranks) {
    if (r < 0 || size_t(r) >= per_rank.size()) continue;
    std::vector<int> cpus;
    try {
      cpus = parse_cpu_list(per_rank[size_t(r)].get<std::string>());
    } catch (const std::exception&) {
      continue;  // "unknown": sched_getaffinity failed on that rank
    }
    all.insert(cpus.begin(), cpus.end());
    if (cpus.size() == 1) firsts.push_back(cpus[0]);
  }
  if (firsts.size() >= 2 && firsts[0] != firsts[1] && firsts.size() == host_ranks.size()) {
    out.first = firsts[0];
    out.second = firsts[1];
    out.from = "the CPUs ranks 0 and 1 of this host are bound to (environment.binding)";
  }
  if (all.size() < 2) {  // bound to one CPU, or unknown: every online CPU
    const long n = sysconf(_SC_NPROCESSORS_ONLN);
    for (int c = 0; c < n; ++c) all.insert(c);
  }
  out.candidates.assign(all.begin(), all.end());
  if (out.first < 0 && !out.candidates.empty()) {
    out.first = out.candidates[0];
    out.second = out.candidates.size() > 1 ? out.candidates[1] : -1;
    out.from =
        "the first two CPUs the ranks may run on, where mpirun -bind-to core puts ranks "
        "0 and 1";
  }
  return out;
}

json measure_floors(FloorsMode mode, const FloorsCpus& cpus) {
  if (mode == FloorsMode::Off) return {{"mode", "off"}};
  const bool long_run = mode == FloorsMode::Long;
  const double t0 = cb::now_s();
  json out = {{"mode", long_run ? "long" : "quick"}};
  out["handoff"] = measure_handoff(cpus, long_run);
  out["handoff"]["seconds"] = cb::now_s() - t0;
  const double t1 = cb::now_s();
  std::vector<int> pair;
  if (cpus.first >= 0 && cpus.second >= 0) pair = {cpus.first, cpus.second};
  out["bandwidth"] = measure_bandwidth(long_run, caches_of(std::max(cpus.first, 0)), pair);
  out["bandwidth"]["seconds"] = cb::now_s() - t1;
  out["collectives"] = collective_floors(out["handoff"], out["bandwidth"]);
  out["seconds"] = cb::now_s() - t0;
  return out;
}

void print_floors(const json& floors) {
  std::printf("[floors]\n");
  if (floors["mode"] == "off") {
    row("measured", "no (--floors off)");
    return;
  }
  if (floors.contains("error")) {
    row("measured", "failed: " + floors["error"].get<std::string>());
    return;
  }
  row("measured", floors["mode"].get<std::string>() + ", " +
                      fixed(floors["seconds"].get<double>(), 2) +
                      " s (--floors long: more samples, more precise)");
  const json& h = floors["handoff"];
  for (const auto& p : h["pairs"]) {
    const std::string key = "hand-off " + p["cpus"][0].dump() + "<->" + p["cpus"][1].dump();
    if (p.contains("unavailable")) {
      row(key, "none: " + p["unavailable"].get<std::string>());
      continue;
    }
    const json& ns = p["one_way_ns"];
    std::string ci = ns["ci95_lo"].is_number()
                         ? ", 95 % [" + fixed(ns["ci95_lo"].get<double>(), 1) + ", " +
                               fixed(ns["ci95_hi"].get<double>(), 1) + "]"
                         : "";
    row(key, fixed(ns["median"].get<double>(), 1) + " ns one way (median of " +
                 h["samples"].dump() + ci + ")");
  }
  if (h.contains("unavailable"))
    row("ranks' hand-off", "none: " + h["unavailable"].get<std::string>());
  row("ranks' CPUs", h["ranks_cpus"][0].dump() + " and " + h["ranks_cpus"][1].dump() + " (" +
                         h["ranks_cpus_from"].get<std::string>() + ")");
  for (const auto& r : floors["bandwidth"]["rows"])
    row("1 thread " + size_text(r["bytes"].get<size_t>()),
        "memcpy " + fixed(r["memcpy_GBps"].get<double>(), 1) + " GB/s copied, float sum " +
            fixed(r["read_write_GBps"].get<double>(), 1) + " GB/s read+written (" +
            r["where"].get<std::string>() + ")" +
            (r.contains("both_cpus_memcpy_GBps")
                 ? "; each of 2 CPUs at once: " +
                       fixed(r["both_cpus_memcpy_GBps"].get<double>(), 1) + ", " +
                       fixed(r["both_cpus_read_write_GBps"].get<double>(), 1)
                 : std::string()));
  if (floors["bandwidth"].contains("note"))
    row("note", floors["bandwidth"]["note"].get<std::string>());
  for (const auto& c : floors["collectives"]) {
    std::string text = c["latency_floor_us"].is_number()
                           ? c["handoffs"].dump() + " hand-off" + (c["handoffs"] == 1 ? "" : "s") +
                                 " = " + fixed(c["latency_floor_us"].get<double>(), 3) + " us"
                           : "no latency floor";
    if (!c["points"].empty()) {
      text += "; reads " + c["read_bytes_per_byte"].dump() + "N, writes " +
              c["write_bytes_per_byte"].dump() + "N per rank:";
      const auto us = [](const json& v) {
        return fixed(v.get<double>(), v.get<double>() < 10 ? 3 : 0);
      };
      for (const auto& p : c["points"])
        text += " " + size_text(p["bytes"].get<size_t>()) + " " + us(p["floor_us"]) + " us" +
                (p.contains("both_cpus_floor_us") && p["both_cpus_floor_us"] != p["floor_us"]
                     ? " (both CPUs at once: " + us(p["both_cpus_floor_us"]) + " us)"
                     : "") +
                ",";
      text.pop_back();
    }
    row(c["coll"].get<std::string>() + " (2 ranks)", text);
  }
}

}  // namespace cb::info
