// The engine's correctness matrix, run as a real MPI job at 1-8 ranks (ctest starts it
// once per rank count, in yield mode when ranks outnumber cores): every algorithm of every
// collective against a locally computed reference, for every dtype and op, counts 0, 1,
// around the rank count and not divisible by it, in and out of place, several roots, and
// several MiB, in plain and in engine-allocated (shared) buffers (CB_CHECK_BUFFERS: one kind);
// the neighborhood collectives on Cartesian topologies, also persistent; then non-blocking
// operations in flight together, and the errors for algorithms that cannot run. Prints each
// failure; exits 1 if any.
#include <mpi.h>

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "backends/engine_backend.hpp"
#include "config.hpp"
#include "core/coll_spec.hpp"
#include "core/errors.hpp"
#include "core/topology.hpp"
#include "core/vcounts.hpp"
#include "gpu/memory.hpp"

namespace cb {
namespace {

struct Case {
  const CollSpec* spec;
  std::string algo;
  Dtype dtype;
  Op op;
  size_t count;
  bool in_place;
  int root;
  const CountMatrix* counts = nullptr;  // alltoallv, the v forms
  const Topology* topology = nullptr;   // neighborhood collectives
};

std::string describe(const Case& c) {
  return std::string(to_string(c.spec->coll)) + "/" + c.algo + " " +
         std::string(to_string(c.dtype)) + " " + std::string(to_string(c.op)) + " count " +
         std::to_string(c.count) + (c.in_place ? " in place" : "") + " root " +
         std::to_string(c.root) + (c.counts ? " counts " + c.counts->pattern().str() : "") +
         (c.topology ? " on " + c.topology->spec().str() : "");
}

class Checker {
 public:
  explicit Checker(const Control& ctl) : ctl_(ctl), be_(ctl) {}

  // Plain heap buffers, or the engine's own (node shared memory: peers read them in place).
  void use_backend_buffers(bool on) { backend_buffers_ = on; }

  // Buffers and host images for one case, filled with the exact inputs.
  struct Prepared {
    CollArgs args;
    Buf send, recv;
  };

  Prepared prepare(const Case& c) {
    const int n = ctl_.size();
    const size_t w = dtype_size(c.dtype);
    Prepared p;
    CollArgs& a = p.args;
    a = {.coll = c.spec->coll,
         .count = c.count,
         .dtype = c.dtype,
         .op = c.op,
         .root = c.root,
         .in_place = c.in_place,
         .algo = c.algo,
         .counts = c.counts,
         .topology = c.topology};
    // Out of place as the spec sizes it (in place it has no send buffer; one is still
    // allocated, unused, so that send and recv are never the same allocation). A
    // neighborhood collective's buffers are this rank's edges.
    const size_t send_bytes = (c.topology ? c.spec->neighbor_elements(a, ctl_.rank(), true)
                               : c.counts ? c.spec->counted_send(*c.counts, false)
                                          : c.spec->send_elements(c.count, n)) *
                              w;
    const size_t recv_bytes = (c.topology ? c.spec->neighbor_elements(a, ctl_.rank(), false)
                                          : c.spec->recv_elements_of(a, n)) *
                              w;
    p.recv = allocate(recv_bytes);
    p.send = allocate(send_bytes);
    a.recv = p.recv;
    a.send = c.in_place ? p.recv : p.send;
    fill(c, p);
    return p;
  }

  // The exact inputs in send, recv poisoned (again, for a persistent collective's next start).
  void fill(const Case& c, Prepared& p) {
    std::vector<std::byte> send(p.send.bytes), recv(p.recv.bytes);
    c.spec->fill(p.args, ctl_.rank(), ctl_.size(), send.data(), recv.data());
    write_buffer(p.send, send);
    write_buffer(p.recv, recv);
  }

  long long finish(const Case& c, Prepared& p) {
    const long long wrong = static_cast<long long>(
        c.spec->check(p.args, ctl_.rank(), ctl_.size(), read_buffer(p.recv).data()));
    release(p);
    return wrong;
  }

  // Runs one case blocking; every rank must agree on whether it is runnable.
  void blocking(const Case& c) {
    Prepared p = prepare(c);
    const std::string why = be_.unsupported(p.args);
    if (!why.empty()) {
      release(p);
      return;  // e.g. ring with fewer elements than ranks: checked in errors()
    }
    be_.run(p.args);
    record(c, finish(c, p));
  }

  // Made persistent once, then started twice: before the second start the buffers are
  // filled and poisoned again, so a start that moves nothing fails the check.
  void persistent(const Case& c) {
    Prepared p = prepare(c);
    p.args.persistent = true;
    if (const std::string why = be_.unsupported(p.args); !why.empty()) {
      release(p);
      // Refused only where the algorithm's schedule cannot run twice (mpi).
      const engine::Algorithm* algo = engine::find_algorithm(c.spec->coll, c.algo);
      if (algo && !algo->rerunnable) return;
      ++checked_;
      ++failed_;
      std::fprintf(stderr, "rank %d: %s: no persistent form: %s\n", ctl_.rank(),
                   describe(c).c_str(), why.c_str());
      return;
    }
    std::unique_ptr<PersistentColl> op = be_.init(p.args);
    for (int start = 0; start < 2; ++start) {
      if (start) fill(c, p);
      op->start();
      op->wait();
    }
    op.reset();
    record(c, finish(c, p));
  }

  // Several operations of different collectives and algorithms in flight at once.
  void in_flight(const std::vector<Case>& cases) {
    std::vector<Case> runnable;
    std::vector<Prepared> ps;
    std::vector<std::unique_ptr<Request>> reqs;
    for (const Case& c : cases) {
      Prepared p = prepare(c);
      if (be_.unsupported(p.args).empty()) {
        runnable.push_back(c);
        ps.push_back(p);
      } else {
        release(p);
      }
    }
    for (Prepared& p : ps) reqs.push_back(be_.start(p.args));
    for (size_t i = reqs.size(); i-- > 0;) reqs[i]->wait();  // completed in reverse order
    for (size_t i = 0; i < runnable.size(); ++i) record(runnable[i], finish(runnable[i], ps[i]));
  }

  // Forcing an algorithm that cannot run says why, naming it.
  void expect_refusal(const Case& c, const std::string& needle) {
    Prepared p = prepare(c);
    const std::string why = be_.unsupported(p.args);
    bool threw = false;
    try {
      be_.run(p.args);
    } catch (const UsageError& e) {
      threw = std::string(e.what()).find(needle) != std::string::npos;
    }
    release(p);
    ++checked_;
    if (why.find(needle) == std::string::npos || !threw) {
      ++failed_;
      std::fprintf(stderr, "rank %d: %s: expected a refusal mentioning '%s', got '%s'\n",
                   ctl_.rank(), describe(c).c_str(), needle.c_str(), why.c_str());
    }
  }

  std::vector<std::string> algorithms(Coll coll) const { return be_.algorithms(coll); }
  void use_topology(const Topology& t) { be_.use_topology(t); }
  // Failures summed over ranks (a case wrong on two ranks counts twice), agreed once at the
  // end: an agreement per case (an MPI_Allreduce) took 10-25 % of the 8-rank matrix, whose
  // ranks yield-wait on two cores, and it kept ranks in step between cases, which programs
  // do not do for the engine.
  long long failures() const { return ctl_.sum(failed_); }
  long long checked() const { return checked_; }

 private:
  // Each rank checks its own result and reports what it found wrong there.
  void record(const Case& c, long long wrong_here) {
    ++checked_;
    if (wrong_here == 0) return;
    ++failed_;
    std::fprintf(stderr, "FAIL rank %d: %s%s: %lld wrong elements\n", ctl_.rank(),
                 describe(c).c_str(), backend_buffers_ ? " (engine buffers)" : "", wrong_here);
  }
  Buf allocate(size_t bytes) {
    return backend_buffers_ ? be_.alloc(bytes, Mem::Host) : alloc_buffer(bytes, Mem::Host);
  }
  void release(Prepared& p) {
    for (Buf* b : {&p.send, &p.recv}) backend_buffers_ ? be_.free(*b) : free_buffer(*b);
  }

  const Control& ctl_;
  EngineBackend be_;
  long long checked_ = 0, failed_ = 0;
  bool backend_buffers_ = false;
};

// Up to 3 ranks every dtype meets every op; from 4 ranks each dtype meets one op and each op
// several dtypes (float sum always), and data movement runs one dtype per element size. The
// reduction kernels and the dtype handling do not depend on the rank count (1-3 ranks, and
// the unit tests, check every combination); what does (block division, roots, rank order,
// the algorithms' steps) still meets every count, root, algorithm and element size. This
// keeps the 4-8 rank matrices, which yield-wait on two cores, inside CI's time.
// A sanitizer build (ASan+UBSan, TSan) looks for memory errors and races, which depend on
// element sizes, counts, ranks and algorithms, not on which op meets which dtype (the release
// build checks that product): it takes the 4-rank selection at every rank count, every
// element size and every op still met. CB_CHECK_EVERY_COMBINATION=1 restores the full
// product at any rank count, in any build.
bool every_combination(int n) {
  static const bool forced = std::getenv("CB_CHECK_EVERY_COMBINATION") != nullptr;
  static const bool sanitized = std::string_view(CB_SANITIZE) != "";
  return (n <= 3 && !sanitized) || forced;
}

std::vector<std::pair<Dtype, Op>> reduction_pairs(int n) {
  std::vector<std::pair<Dtype, Op>> pairs;
  if (every_combination(n)) {
    for (Dtype dt : kAllDtypes)
      for (Op op : kAllOps) pairs.emplace_back(dt, op);
    return pairs;
  }
  size_t i = 0;
  for (Dtype dt : kAllDtypes) pairs.emplace_back(dt, kAllOps[i++ % std::size(kAllOps)]);
  if (std::find(pairs.begin(), pairs.end(), std::pair{Dtype::Float, Op::Sum}) == pairs.end())
    pairs.emplace_back(Dtype::Float, Op::Sum);
  return pairs;
}

std::vector<Dtype> movement_dtypes(int n) {
  if (every_combination(n)) return {std::begin(kAllDtypes), std::end(kAllDtypes)};
  return {Dtype::Char, Dtype::Half, Dtype::Float, Dtype::Double};  // 1, 2, 4 and 8 bytes
}

// Allgather and reduce_scatter (block): every count of the matrix (odd and even) in and
// out of place; every dtype (and for reduce_scatter every op) at an odd and an even count;
// a block of about 1 MiB per rank, large enough for several ring segments.
void run_gather_scatter_matrix(Checker& chk, int n, const std::vector<size_t>& counts, size_t big) {
  const size_t block = big / 4 + 1;
  for (const std::string& algo : chk.algorithms(Coll::Allgather)) {
    for (Dtype dt : movement_dtypes(n))
      for (size_t count : dt == Dtype::Float ? counts : std::vector<size_t>{2, 1003})
        for (bool in_place : {false, true})
          chk.blocking({&kAllgatherSpec, algo, dt, Op::Max, count, in_place, 0});
    chk.blocking({&kAllgatherSpec, algo, Dtype::Float, Op::Max, block, n % 2 == 0, 0});
  }
  for (const std::string& algo : chk.algorithms(Coll::ReduceScatter)) {
    for (const auto& [dt, op] : reduction_pairs(n))
      for (bool in_place : {false, true}) {
        if (dt == Dtype::Float && op == Op::Sum) {
          for (size_t count : counts)
            chk.blocking({&kReduceScatterSpec, algo, dt, op, count, in_place, 0});
        } else {  // odd out of place, even in place
          chk.blocking({&kReduceScatterSpec, algo, dt, op, in_place ? 2u : 1003u, in_place, 0});
        }
      }
    chk.blocking({&kReduceScatterSpec, algo, Dtype::Float, Op::Sum, block, n % 2 == 1, 0});
    chk.blocking({&kReduceScatterSpec, algo, Dtype::BFloat16, Op::Sum, block + 1, false, 0});
  }
}

// Reduce (every root kind, in and out of place), barrier, and alltoallv with uniform,
// Zipf-skewed (zero-sized blocks included) and random counts.
void run_reduce_barrier_alltoallv(Checker& chk, int n, const std::vector<size_t>& counts,
                                  size_t big) {
  for (const std::string& algo : chk.algorithms(Coll::Reduce)) {
    for (const auto& [dt, op] : reduction_pairs(n))
      for (size_t count :
           dt == Dtype::Float && op == Op::Sum ? counts : std::vector<size_t>{2, 1003})
        for (bool in_place : {false, true})
          for (int root : {0, n - 1})
            chk.blocking({&kReduceSpec, algo, dt, op, count, in_place, root});
    for (size_t count : counts)
      chk.blocking({&kReduceSpec, algo, Dtype::Int32, Op::Sum, count, false, n / 2});
    chk.blocking({&kReduceSpec, algo, Dtype::Float, Op::Sum, big + 3, false, n / 2});
    chk.blocking({&kReduceSpec, algo, Dtype::BFloat16, Op::Max, big, true, n - 1});
  }
  for (const std::string& algo : chk.algorithms(Coll::Barrier))
    for (int i = 0; i < 3; ++i)
      chk.blocking({&kBarrierSpec, algo, Dtype::Char, Op::Sum, 0, false, 0});
  static std::vector<std::unique_ptr<CountMatrix>> matrices;  // outlive the cases
  for (const char* pattern : {"uniform", "zipf:1.2", "zipf:4,9", "random:5"})
    for (size_t mean :
         {size_t{0}, size_t{1}, size_t{3}, size_t{1001}, big / 8 / static_cast<size_t>(n)})
      matrices.push_back(std::make_unique<CountMatrix>(parse_counts_pattern(pattern), mean, n));
  for (const std::string& algo : chk.algorithms(Coll::Alltoallv))
    for (const auto& m : matrices)
      for (Dtype dt : {Dtype::Char, Dtype::Half, Dtype::Double})
        chk.blocking({&kAlltoallvSpec, algo, dt, Op::Max, m->mean(), false, 0, m.get()});
}

// Gather, scatter, their v forms and allgatherv: every algorithm, every dtype, counts
// around the rank count, in and out of place, at roots 0, n - 1 and n / 2 (subtrees that
// wrap around the last rank), with uniform, Zipf-skewed (zero-sized blocks) and random
// per-rank blocks, and blocks of about 1 MiB.
void run_rooted_blocks(Checker& chk, int n, const std::vector<size_t>& counts, size_t big) {
  const CollSpec* fixed[] = {&kGatherSpec, &kScatterSpec};
  const CollSpec* varying[] = {&kGathervSpec, &kScattervSpec, &kAllgathervSpec};
  const std::vector<int> roots = {0, n - 1, n / 2};
  for (const CollSpec* spec : fixed)
    for (const std::string& algo : chk.algorithms(spec->coll)) {
      for (Dtype dt : movement_dtypes(n))
        for (size_t count : dt == Dtype::Float ? counts : std::vector<size_t>{2, 1003})
          for (bool in_place : {false, true})
            for (int root : roots) chk.blocking({spec, algo, dt, Op::Max, count, in_place, root});
      chk.blocking({spec, algo, Dtype::Float, Op::Max, big / 4 + 1, n % 2 == 0, n - 1});
    }
  static std::vector<std::unique_ptr<CountMatrix>> matrices;  // outlive the cases
  for (const char* pattern : {"uniform", "zipf:1.5,3", "random:5"})
    for (size_t mean : {size_t{0}, size_t{1}, size_t{1001}, big / 8 / static_cast<size_t>(n)})
      matrices.push_back(std::make_unique<CountMatrix>(parse_counts_pattern(pattern), mean, n));
  for (const CollSpec* spec : varying)
    for (const std::string& algo : chk.algorithms(spec->coll))
      for (const auto& m : matrices)
        for (Dtype dt : {Dtype::Char, Dtype::Half, Dtype::Double})
          for (bool in_place : {false, true})
            for (int root : spec->rooted ? roots : std::vector<int>{0})
              chk.blocking({spec, algo, dt, Op::Max, m->mean(), in_place, root, m.get()});
}

// The Cartesian topologies of -N the neighborhood collectives run on: 1-3 dimensions, radius
// 1 and 2 (short dimensions, where +r and -r meet; at 1 rank no neighbor at all), made once
// and given to the backend (collective: every rank, same order).
const std::vector<std::unique_ptr<Topology>>& topologies(Checker& chk, int n) {
  static std::vector<std::unique_ptr<Topology>> made;
  if (!made.empty()) return made;
  for (const char* text : {"cart:1:1", "cart:1:2", "cart:2:1", "cart:2:2", "cart:3:1"}) {
    const TopologySpec spec = parse_topology(text);
    std::vector<int> extents(static_cast<size_t>(spec.dims), 0);
    MPI_Dims_create(n, spec.dims, extents.data());
    made.push_back(std::make_unique<Topology>(Topology::cartesian(spec, extents)));
    chk.use_topology(*made.back());
  }
  return made;
}

// The five neighborhood collectives: every algorithm on every topology, counts 0, 1, odd and
// about 256 KiB per edge, uniform, Zipf-skewed (zero-sized edges) and random counts for the
// v and w forms; persistent (built once, started twice) where the algorithm can be.
void run_neighbors(Checker& chk, int n) {
  const CollSpec* fixed[] = {&kNeighborAllgatherSpec, &kNeighborAlltoallSpec};
  const CollSpec* varying[] = {&kNeighborAllgathervSpec, &kNeighborAlltoallvSpec,
                               &kNeighborAlltoallwSpec};
  static std::vector<std::unique_ptr<CountMatrix>> matrices;  // outlive the cases
  if (matrices.empty())
    for (const char* pattern : {"uniform", "zipf:1.5,3", "random:5"})
      for (size_t mean : {size_t{0}, size_t{1}, size_t{1001}, size_t{40000}})
        matrices.push_back(std::make_unique<CountMatrix>(parse_counts_pattern(pattern), mean, n));
  static const CountMatrix skewed(parse_counts_pattern("zipf:1.5,3"), 1001, n);
  for (const auto& t : topologies(chk, n)) {
    for (const CollSpec* spec : fixed)
      for (const std::string& algo : chk.algorithms(spec->coll)) {
        for (Dtype dt : {Dtype::Char, Dtype::Half, Dtype::Double})
          for (size_t count : {size_t{0}, size_t{1}, size_t{1003}})
            chk.blocking({spec, algo, dt, Op::Max, count, false, 0, nullptr, t.get()});
        const Case big{spec, algo, Dtype::Float, Op::Max, 65539, false, 0, nullptr, t.get()};
        chk.blocking(big);
        chk.persistent(big);
      }
    for (const CollSpec* spec : varying)
      for (const std::string& algo : chk.algorithms(spec->coll)) {
        for (const auto& m : matrices)
          for (Dtype dt : {Dtype::Char, Dtype::Double})
            chk.blocking({spec, algo, dt, Op::Max, m->mean(), false, 0, m.get(), t.get()});
        chk.persistent({spec, algo, Dtype::Int32, Op::Max, 1001, false, 0, &skewed, t.get()});
      }
  }
}

void run_matrix(Checker& chk, int n) {
  const std::vector<size_t> counts = {
      0, 1, static_cast<size_t>(n > 1 ? n - 1 : 2), static_cast<size_t>(n + 1), 7, 1003};
  const size_t big = (size_t{4} << 20) / sizeof(float);  // several MiB
  for (const std::string& algo : chk.algorithms(Coll::Allreduce)) {
    for (const auto& [dt, op] : reduction_pairs(n))
      for (size_t count : counts)
        for (bool in_place : {false, true})
          chk.blocking({&kAllreduceSpec, algo, dt, op, count, in_place, 0});
    chk.blocking({&kAllreduceSpec, algo, Dtype::Float, Op::Sum, big + 3, false, 0});
    chk.blocking({&kAllreduceSpec, algo, Dtype::BFloat16, Op::Max, big, true, 0});
  }
  for (const std::string& algo : chk.algorithms(Coll::Bcast)) {
    for (Dtype dt : movement_dtypes(n))
      for (size_t count : counts)
        for (int root : {0, n - 1, n / 2})
          chk.blocking({&kBcastSpec, algo, dt, Op::Max, count, false, root});
    chk.blocking({&kBcastSpec, algo, Dtype::Double, Op::Max, big / 2 + 1, false, n - 1});
  }
  for (const std::string& algo : chk.algorithms(Coll::Alltoall)) {
    for (Dtype dt : {Dtype::Char, Dtype::Half, Dtype::Float, Dtype::Int64})
      for (size_t count : counts)
        for (bool in_place : {false, true})
          chk.blocking({&kAlltoallSpec, algo, dt, Op::Max, count, in_place, 0});
    chk.blocking(
        {&kAlltoallSpec, algo, Dtype::Float, Op::Max, big / static_cast<size_t>(n), false, 0});
  }
  run_gather_scatter_matrix(chk, n, counts, big);
  run_reduce_barrier_alltoallv(chk, n, counts, big);
  run_rooted_blocks(chk, n, counts, big);
  run_neighbors(chk, n);
}

void run_in_flight(Checker& chk, int n) {
  std::vector<Case> cases;
  for (const std::string& algo : chk.algorithms(Coll::Allreduce))
    cases.push_back({&kAllreduceSpec, algo, Dtype::Int32, Op::Sum, 1000, false, 0});
  for (const std::string& algo : chk.algorithms(Coll::Bcast))
    cases.push_back({&kBcastSpec, algo, Dtype::Float, Op::Max, 777, false, n - 1});
  for (const std::string& algo : chk.algorithms(Coll::Alltoall))
    cases.push_back({&kAlltoallSpec, algo, Dtype::Char, Op::Max, 33, true, 0});
  for (const std::string& algo : chk.algorithms(Coll::Allgather))
    cases.push_back({&kAllgatherSpec, algo, Dtype::Int32, Op::Max, 301, false, 0});
  for (const std::string& algo : chk.algorithms(Coll::ReduceScatter))
    cases.push_back({&kReduceScatterSpec, algo, Dtype::Half, Op::Sum, 257, true, 0});
  for (const std::string& algo : chk.algorithms(Coll::Reduce))
    cases.push_back({&kReduceSpec, algo, Dtype::Half, Op::Sum, 513, false, n - 1});
  for (const std::string& algo : chk.algorithms(Coll::Barrier))
    cases.push_back({&kBarrierSpec, algo, Dtype::Char, Op::Sum, 0, false, 0});
  static const CountMatrix zipf(parse_counts_pattern("zipf:1.5,3"), 77, n);
  for (const std::string& algo : chk.algorithms(Coll::Alltoallv))
    cases.push_back({&kAlltoallvSpec, algo, Dtype::Int32, Op::Max, 77, false, 0, &zipf});
  for (const CollSpec* spec : {&kGathervSpec, &kScattervSpec, &kAllgathervSpec})
    for (const std::string& algo : chk.algorithms(spec->coll))
      cases.push_back({spec, algo, Dtype::Int32, Op::Max, 77, false, n - 1, &zipf});
  const Topology* grid = topologies(chk, n)[2].get();  // cart:2:1
  for (const CollSpec* spec : {&kNeighborAllgatherSpec, &kNeighborAlltoallvSpec})
    for (const std::string& algo : chk.algorithms(spec->coll))
      cases.push_back({spec, algo, Dtype::Int32, Op::Max, 77, false, 0,
                       spec->varying_counts ? &zipf : nullptr, grid});
  cases.push_back({&kAllreduceSpec, "", Dtype::Double, Op::Max, 70000, true, 0});  // tuned
  // All of them in flight at once, more than the engine's window of 16 operations whose
  // shared-memory state stays apart (engine::Comm::kOpWindow), waited for newest first: the
  // later ones queue, and waiting for one advances the older ones in its way.
  chk.in_flight(cases);
}

void run_errors(Checker& chk, int n) {
  chk.expect_refusal({&kAllreduceSpec, "binomial", Dtype::Float, Op::Sum, 8, false, 0},
                     "unknown allreduce algorithm 'binomial'");
  chk.expect_refusal({&kBcastSpec, "no_such", Dtype::Float, Op::Max, 8, false, 0},
                     "the engine has: binomial");
  if (n > 1)
    chk.expect_refusal(
        {&kAllreduceSpec, "ring", Dtype::Float, Op::Sum, static_cast<size_t>(n - 1), false, 0},
        "ring needs at least one element per rank");
  if (n & (n - 1)) {
    chk.expect_refusal({&kAllgatherSpec, "recursive_doubling", Dtype::Float, Op::Max, 8, false, 0},
                       "needs a power-of-two rank count");
    chk.expect_refusal(
        {&kReduceScatterSpec, "recursive_halving", Dtype::Float, Op::Sum, 8, false, 0},
        "needs a power-of-two rank count");
  }
}

}  // namespace
}  // namespace cb

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int status = 0;
  {
    cb::Control ctl;
    const bool crowded = ctl.max_ranks_per_node() > cb::cores_on_node();
    ctl.set_wait_mode(crowded ? cb::WaitMode::Yield : cb::WaitMode::Spin);
    cb::Checker chk(ctl);
    // CB_CHECK_BUFFERS=plain or backend: one kind of buffers only (tests/engine/CMakeLists:
    // the largest rank counts alternate, to keep the suite inside CI's time).
    const char* only = std::getenv("CB_CHECK_BUFFERS");
    const std::string which = only ? only : "both";
    if (which != "both" && which != "plain" && which != "backend") {
      std::fprintf(stderr, "engine_check: CB_CHECK_BUFFERS=%s: plain, backend or both\n", only);
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
    for (bool backend_buffers : {false, true}) {
      if (which != "both" && backend_buffers != (which == "backend")) continue;
      chk.use_backend_buffers(backend_buffers);
      cb::run_matrix(chk, ctl.size());
      cb::run_in_flight(chk, ctl.size());
    }
    cb::run_errors(chk, ctl.size());
    const long long failures = chk.failures();
    if (ctl.is_root())
      std::printf("engine_check: %d ranks, %lld cases, %lld failed (summed over ranks)\n",
                  ctl.size(), chk.checked(), failures);
    status = failures ? 1 : 0;
  }
  MPI_Finalize();
  return status;
}
