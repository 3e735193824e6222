// Legal MPI programs that libcb_engine_preload.so must run as plain MPI does
// (tests/integration/test_preload_legal.py, issue 25): many operations pending, several
// communicators, threads, the NBX pattern, progress through calls the preload does not own,
// reductions whose result depends on the order of contributions, the MPI-4 large-count
// bindings. Other files hold more cases (legal_progress.cpp: progress in every family of
// blocking call), sharing the result lines and checks of legal_common.hpp.
//
//   cb_legal_programs CASE OUT_PREFIX [ARGS...]
//
// Every rank writes its results to OUT_PREFIX.RANK, one line each:
//   own NAME HASH     this rank's result bits (64-bit FNV-1a): the same with and without the
//                     preload. Every result has one, floating-point ones included: their
//                     inputs are small integers or dyadic fractions whose sums are exact in
//                     any order (ex_in), so the engine's order of additions cannot change a bit
//   xrank NAME HASH   bits that must be the same on every rank of the run, but may differ
//                     between MPI libraries (a floating-point sum whose value depends on the
//                     order of contributions: order_dependent_sum, which has an exact variant
//                     in "own" lines too)
//   skip REASON       the case cannot run here (MPI_THREAD_MULTIPLE not provided)
//   ok                last line: the case ran to its end
// Wrong elements (every integer result is checked against its exact value) go to stderr and
// make the exit status 1. Plain MPI: no collbench headers, no collbench flags.
#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "legal_allgatherv.hpp"
#include "legal_common.hpp"
#include "legal_gather_scatter.hpp"

using namespace legal;

namespace {

using legal::dup;  // not POSIX dup(int): MPICH's MPI_Comm is an int

// ---- 1. many operations pending on one communicator --------------------------------------

// 40 of one kind ("allreduce") or five kinds interleaved ("mixed"), then one MPI_Waitall.
void many_pending(const std::string& mode, int ops) {
  MPI_Comm c = MPI_COMM_WORLD;
  const std::vector<int> who = members(c);
  const size_t n = 16384;   // 64 KiB of int
  const size_t blk = 4096;  // per rank / per peer: 16 KiB
  const size_t ns = static_cast<size_t>(g_size);
  std::vector<std::vector<int>> send(ops), recv(ops);
  std::vector<MPI_Request> req(static_cast<size_t>(ops));
  for (int k = 0; k < ops; ++k) {
    const int kind = mode == "mixed" ? k % 5 : 4;
    const int root = k % g_size;
    std::vector<int>& s = send[k];
    std::vector<int>& r = recv[k];
    switch (kind) {
      case 0:  // ibcast
        r.assign(n, -1);
        if (g_rank == root)
          for (size_t i = 0; i < n; ++i) r[i] = bc_val(k, i);
        MPI_Ibcast(r.data(), static_cast<int>(n), MPI_INT, root, c, &req[k]);
        break;
      case 1:  // iallgather
        s.resize(blk);
        for (size_t i = 0; i < blk; ++i) s[i] = g_rank * 100000 + k * 10 + static_cast<int>(i % 7);
        r.assign(ns * blk, -1);
        MPI_Iallgather(s.data(), static_cast<int>(blk), MPI_INT, r.data(), static_cast<int>(blk),
                       MPI_INT, c, &req[k]);
        break;
      case 2:  // ialltoall
        s.resize(ns * blk);
        for (size_t p = 0; p < ns; ++p)
          for (size_t i = 0; i < blk; ++i)
            s[p * blk + i] =
                g_rank * 1000000 + static_cast<int>(p) * 1000 + k + static_cast<int>(i % 3);
        r.assign(ns * blk, -1);
        MPI_Ialltoall(s.data(), static_cast<int>(blk), MPI_INT, r.data(), static_cast<int>(blk),
                      MPI_INT, c, &req[k]);
        break;
      case 3:  // ireduce
        s.resize(n);
        for (size_t i = 0; i < n; ++i) s[i] = ar_in(g_rank, k, i);
        r.assign(n, -1);
        MPI_Ireduce(s.data(), r.data(), static_cast<int>(n), MPI_INT, MPI_SUM, root, c, &req[k]);
        break;
      default:  // iallreduce
        s.resize(n);
        for (size_t i = 0; i < n; ++i) s[i] = ar_in(g_rank, k, i);
        r.assign(n, -1);
        MPI_Iallreduce(s.data(), r.data(), static_cast<int>(n), MPI_INT, MPI_SUM, c, &req[k]);
    }
  }
  MPI_Waitall(ops, req.data(), MPI_STATUSES_IGNORE);
  for (int k = 0; k < ops; ++k) {
    const int kind = mode == "mixed" ? k % 5 : 4;
    const int root = k % g_size;
    const std::string what = mode + "[" + std::to_string(k) + "]";
    const std::vector<int>& r = recv[k];
    auto sum = [&](size_t i) {
      int t = 0;
      for (int w : who) t += ar_in(w, k, i);
      return t;
    };
    if (kind == 0) {
      expect_eq<int>(what + " ibcast", r, [&](size_t i) { return bc_val(k, i); });
    } else if (kind == 1) {
      expect_eq<int>(what + " iallgather", r, [&](size_t i) {
        return static_cast<int>(i / blk) * 100000 + k * 10 + static_cast<int>(i % blk % 7);
      });
    } else if (kind == 2) {
      expect_eq<int>(what + " ialltoall", r, [&](size_t i) {
        return static_cast<int>(i / blk) * 1000000 + g_rank * 1000 + k +
               static_cast<int>(i % blk % 3);
      });
    } else if (kind == 3) {
      if (g_rank == root) expect_eq<int>(what + " ireduce", r, sum);
    } else {
      expect_eq<int>(what + " iallreduce", r, sum);
    }
    own(what, r);
  }
}

// ---- 2. reductions whose value depends on the order of contributions ----------------------

// Rank r's element i: 1, 1e-16 and -1 rotated over the ranks, scaled by powers of two and
// a few mantissas, so that (a + b) + c differs from a + (b + c) in most elements.
double od_in(int rank, size_t i) {
  static const double base[3] = {1.0, 1e-16, -1.0};
  const double scale =
      std::ldexp(1.0 + static_cast<double>(i % 7) * 0.123, static_cast<int>(i % 13) - 6);
  return base[(static_cast<size_t>(rank) + i) % 3] * scale;
}

// The result must be a sum of the inputs in some order: within a few ulps of the largest.
void od_check(const std::string& what, const std::vector<double>& got, size_t offset = 0) {
  int shown = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    long double exact = 0, mag = 0;
    for (int r = 0; r < g_size; ++r) {
      exact += od_in(r, offset + i);
      mag += std::fabs(od_in(r, offset + i));
    }
    if (std::fabs(static_cast<long double>(got[i]) - exact) <= mag * 1e-15L) continue;
    std::lock_guard<std::mutex> lock(g_mutex);
    ++g_errors;
    if (shown++ < 3)
      std::fprintf(stderr, "legal_programs: rank %d: %s: element %zu is %.17g, expected %.17Lg\n",
                   g_rank, what.c_str(), offset + i, got[i], exact);
  }
}

// The exact variant's element i of rank r: an integer of magnitude below 512 times
// 2^-((r + i) % 8), so every input and every partial sum of up to 2^7 ranks is a multiple of
// 2^-7 below 2^23: exact in float and double, whatever the order of the additions. So these
// sums, unlike od_in's, must have the same bits with and without the preload ("own").
double ex_in(int rank, size_t i) {
  const int k = static_cast<int>((static_cast<size_t>(rank) * 37 + i * 11) % 1000) - 500;
  return std::ldexp(static_cast<double>(k), -static_cast<int>((static_cast<size_t>(rank) + i) % 8));
}

// Exact: the one sum every order of addition gives.
template <typename T>
void ex_check(const std::string& what, const std::vector<T>& got, size_t offset = 0) {
  int shown = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    double exact = 0;
    for (int r = 0; r < g_size; ++r) exact += ex_in(r, offset + i);
    if (static_cast<double>(got[i]) == exact) continue;
    std::lock_guard<std::mutex> lock(g_mutex);
    ++g_errors;
    if (shown++ < 3)
      std::fprintf(stderr, "legal_programs: rank %d: %s: element %zu is %.17g, expected %.17g\n",
                   g_rank, what.c_str(), offset + i, static_cast<double>(got[i]), exact);
  }
  own(what, got);
}

// The same calls as order_dependent_sum's on exactly summable inputs (ex_in).
void exact_sums(MPI_Comm c, size_t n, const std::string& tag) {
  std::vector<double> in(n), out(n, -1);
  for (size_t i = 0; i < n; ++i) in[i] = ex_in(g_rank, i);
  MPI_Allreduce(in.data(), out.data(), static_cast<int>(n), MPI_DOUBLE, MPI_SUM, c);
  ex_check("exact allreduce " + tag, out);

  std::vector<double> io = in;
  MPI_Allreduce(MPI_IN_PLACE, io.data(), static_cast<int>(n), MPI_DOUBLE, MPI_SUM, c);
  ex_check("exact allreduce_in_place " + tag, io);

  std::vector<double> nb(n, -1);
  MPI_Request req;
  MPI_Iallreduce(in.data(), nb.data(), static_cast<int>(n), MPI_DOUBLE, MPI_SUM, c, &req);
  MPI_Wait(&req, MPI_STATUS_IGNORE);
  ex_check("exact iallreduce " + tag, nb);

  std::vector<float> fin(n), fout(n, -1);
  for (size_t i = 0; i < n; ++i) fin[i] = static_cast<float>(in[i]);  // exact in float
  MPI_Allreduce(fin.data(), fout.data(), static_cast<int>(n), MPI_FLOAT, MPI_SUM, c);
  ex_check("exact allreduce_float " + tag, fout);

  const size_t ns = static_cast<size_t>(g_size);
  std::vector<double> rin(n * ns), rblock(n, -1);
  for (size_t i = 0; i < n * ns; ++i) rin[i] = ex_in(g_rank, i);
  MPI_Reduce_scatter_block(rin.data(), rblock.data(), static_cast<int>(n), MPI_DOUBLE, MPI_SUM, c);
  ex_check("exact reduce_scatter_block " + tag, rblock, static_cast<size_t>(g_rank) * n);
}

void order_dependent_sum() {
  MPI_Comm c = MPI_COMM_WORLD;
  for (size_t n : {size_t{1}, size_t{7}, size_t{64}, size_t{100000}}) {
    exact_sums(c, n, "n=" + sz(n));
    std::vector<double> in(n), out(n, -1);
    for (size_t i = 0; i < n; ++i) in[i] = od_in(g_rank, i);
    const std::string tag = "n=" + sz(n);

    MPI_Allreduce(in.data(), out.data(), static_cast<int>(n), MPI_DOUBLE, MPI_SUM, c);
    od_check("allreduce " + tag, out);
    xrank("allreduce " + tag, out);

    std::vector<double> io = in;
    MPI_Allreduce(MPI_IN_PLACE, io.data(), static_cast<int>(n), MPI_DOUBLE, MPI_SUM, c);
    od_check("allreduce in place " + tag, io);
    xrank("allreduce_in_place " + tag, io);

    std::vector<double> nb(n, -1);
    MPI_Request req;
    MPI_Iallreduce(in.data(), nb.data(), static_cast<int>(n), MPI_DOUBLE, MPI_SUM, c, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    od_check("iallreduce " + tag, nb);
    xrank("iallreduce " + tag, nb);

    std::vector<float> fin(n), fout(n, -1);
    for (size_t i = 0; i < n; ++i) fin[i] = static_cast<float>(od_in(g_rank, i) * 3.0e7);
    MPI_Allreduce(fin.data(), fout.data(), static_cast<int>(n), MPI_FLOAT, MPI_SUM, c);
    xrank("allreduce_float " + tag, fout);

    // reduce_scatter_block of n per rank, then every block gathered on every rank.
    const size_t ns = static_cast<size_t>(g_size);
    std::vector<double> rin(n * ns), rblock(n, -1), all(n * ns, -1);
    for (size_t i = 0; i < n * ns; ++i) rin[i] = od_in(g_rank, i);
    MPI_Reduce_scatter_block(rin.data(), rblock.data(), static_cast<int>(n), MPI_DOUBLE, MPI_SUM,
                             c);
    od_check("reduce_scatter_block " + tag, rblock, static_cast<size_t>(g_rank) * n);
    MPI_Allgather(rblock.data(), static_cast<int>(n), MPI_DOUBLE, all.data(), static_cast<int>(n),
                  MPI_DOUBLE, c);
    xrank("reduce_scatter_block+allgather " + tag, all);
  }
}

// ---- 3. operations started on two communicators in opposite orders ------------------------

// "warm": a blocking collective on A and on B first (same order everywhere); "fresh": the
// crossed operations are the first collectives on A and B.
void cross_comm_order(const std::string& mode) {
  MPI_Comm a = dup(MPI_COMM_WORLD), b = dup(MPI_COMM_WORLD);
  const std::vector<int> who = members(MPI_COMM_WORLD);
  if (mode == "warm") {
    blocking_allreduce(a, 0, 1, "warmup A");
    blocking_allreduce(b, 0, 1, "warmup B");
  }
  int k = 1;
  for (size_t n : {size_t{2}, size_t{16384}, size_t{262144}}) {
    Allreduce x(k, n, who), y(k + 1, n, who);
    MPI_Request req[2];
    auto start = [&](Allreduce& op, MPI_Comm c, MPI_Request* r) {
      MPI_Iallreduce(op.send.data(), op.recv.data(), static_cast<int>(n), MPI_INT, MPI_SUM, c, r);
    };
    if (g_rank % 2 == 0) {
      start(x, a, &req[0]);
      start(y, b, &req[1]);
    } else {
      start(y, b, &req[1]);
      start(x, a, &req[0]);
    }
    MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
    x.check("A n=" + sz(n));
    y.check("B n=" + sz(n));
    k += 2;
  }
  // Bcasts the same way (roots differ).
  const size_t n = 262144;
  std::vector<int> p(n, -1), q(n, -1);
  if (g_rank == 0)
    for (size_t i = 0; i < n; ++i) p[i] = bc_val(7, i);
  if (g_rank == g_size - 1)
    for (size_t i = 0; i < n; ++i) q[i] = bc_val(8, i);
  MPI_Request req[2];
  if (g_rank % 2 == 0) {
    MPI_Ibcast(p.data(), static_cast<int>(n), MPI_INT, 0, a, &req[0]);
    MPI_Ibcast(q.data(), static_cast<int>(n), MPI_INT, g_size - 1, b, &req[1]);
  } else {
    MPI_Ibcast(q.data(), static_cast<int>(n), MPI_INT, g_size - 1, b, &req[1]);
    MPI_Ibcast(p.data(), static_cast<int>(n), MPI_INT, 0, a, &req[0]);
  }
  MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
  expect_eq<int>("ibcast A", p, [](size_t i) { return bc_val(7, i); });
  expect_eq<int>("ibcast B", q, [](size_t i) { return bc_val(8, i); });
  own("ibcast A", p);
  own("ibcast B", q);
  MPI_Comm_free(&a);
  MPI_Comm_free(&b);
}

// ---- 4. the first collective on a communicator in a thread that exits ---------------------

void some_collectives(MPI_Comm c, const std::string& tag, int k0) {
  for (int k = k0; k < k0 + 4; ++k) {
    blocking_allreduce(c, k, 16384, tag + " allreduce " + std::to_string(k));
    blocking_bcast(c, k, 4096, k % size_of(c), tag + " bcast " + std::to_string(k));
  }
  Allreduce x(k0 + 10, 65536, members(c));
  MPI_Request r;
  MPI_Iallreduce(x.send.data(), x.recv.data(), 65536, MPI_INT, MPI_SUM, c, &r);
  MPI_Wait(&r, MPI_STATUS_IGNORE);
  x.check(tag + " iallreduce");
  MPI_Barrier(c);
}

void thread_exits() {
  MPI_Comm c = dup(MPI_COMM_WORLD);
  std::thread t([&] {
    blocking_allreduce(c, 1, 16384, "thread: first on dup");
    blocking_allreduce(MPI_COMM_WORLD, 2, 16384, "thread: first on world");
  });
  t.join();  // the thread that created both engines is gone
  some_collectives(c, "main on dup", 3);
  some_collectives(MPI_COMM_WORLD, "main on world", 20);
  // And once more: a second short-lived thread on the same communicators.
  std::thread t2([&] { some_collectives(c, "thread 2 on dup", 40); });
  t2.join();
  some_collectives(c, "main on dup again", 60);
  MPI_Comm_free(&c);
}

// ---- 5. threads on distinct communicators, engines created in opposite orders -------------

void threads_distinct_comms() {
  MPI_Comm a = dup(MPI_COMM_WORLD), b = dup(MPI_COMM_WORLD);
  const std::vector<int> who = members(MPI_COMM_WORLD);  // before the threads
  std::vector<std::string> lines[2];
  auto work = [&](MPI_Comm c, int which) {
    // Rank 0 starts on A at once and on B later; rank 1 the other way round.
    if ((g_rank % 2) != which) std::this_thread::sleep_for(std::chrono::milliseconds(200));
    for (int k = 0; k < 10; ++k) {
      const size_t n = k % 2 ? 16384 : 64;
      Allreduce x(k + which * 100, n, who);
      MPI_Allreduce(x.send.data(), x.recv.data(), static_cast<int>(n), MPI_INT, MPI_SUM, c);
      x.check(std::string(which ? "B" : "A") + " allreduce " + std::to_string(k));
      Allreduce y(k + which * 100 + 50, n, who);
      MPI_Request r;
      MPI_Iallreduce(y.send.data(), y.recv.data(), static_cast<int>(n), MPI_INT, MPI_SUM, c, &r);
      MPI_Wait(&r, MPI_STATUS_IGNORE);
      y.check(std::string(which ? "B" : "A") + " iallreduce " + std::to_string(k));
    }
  };
  std::thread ta(work, a, 0), tb(work, b, 1);
  ta.join();
  tb.join();
  std::sort(g_lines.begin(), g_lines.end());  // the threads' lines interleave by chance
  MPI_Comm_free(&a);
  MPI_Comm_free(&b);
}

// ---- 5b. one thread frees communicators while another runs collectives ------------------

// MPI calls back into the preload with its own lock held (MPI_Comm_free: the attribute's
// delete function; MPI_Test: a generalized request's free function), while the other thread
// calls MPI from inside the engine: a callback that waited for the engine deadlocked.
void threads_comm_free() {
  MPI_Comm a = dup(MPI_COMM_WORLD), b = dup(MPI_COMM_WORLD);
  const std::vector<int> who = members(MPI_COMM_WORLD);
  std::thread collectives([&] {
    for (int k = 0; k < 400; ++k) {
      const size_t n = k % 2 ? 16384 : 16;
      Allreduce y(k, n, who);
      MPI_Request r;
      MPI_Iallreduce(y.send.data(), y.recv.data(), static_cast<int>(n), MPI_INT, MPI_SUM, a, &r);
      MPI_Wait(&r, MPI_STATUS_IGNORE);
      y.check("A iallreduce " + std::to_string(k));
    }
  });
  std::thread churn([&] {
    for (int k = 0; k < 60; ++k) {
      MPI_Comm c = dup(b);  // an engine made and freed with each
      Allreduce x(k + 500, 64, who);
      MPI_Request r;
      MPI_Iallreduce(x.send.data(), x.recv.data(), 64, MPI_INT, MPI_SUM, c, &r);
      MPI_Wait(&r, MPI_STATUS_IGNORE);
      x.check("B iallreduce on dup " + std::to_string(k));
      MPI_Comm_free(&c);
    }
  });
  collectives.join();
  churn.join();
  std::sort(g_lines.begin(), g_lines.end());
  MPI_Comm_free(&a);
  MPI_Comm_free(&b);
}

// ---- 5d. blocking collectives in one thread, non-blocking ones in another ----------------

// One thread runs small blocking allreduces on A (now and then a larger one) while another
// starts and waits for non-blocking ones on B, in a loop: the blocking call's wait loop
// looks at the process's operations in flight while the other thread starts and completes
// them (issue 37: CommEngine::run read the list without the engine's lock, a data race
// that ThreadSanitizer reports).
void threads_race(int iters) {
  MPI_Comm a = dup(MPI_COMM_WORLD), b = dup(MPI_COMM_WORLD);
  const std::vector<int> who = members(MPI_COMM_WORLD);
  std::thread blocking([&] {
    for (int k = 0; k < iters; ++k) {
      const size_t n = k % 4 == 3 ? 16384 : 16;
      Allreduce x(k, n, who);
      MPI_Allreduce(x.send.data(), x.recv.data(), static_cast<int>(n), MPI_INT, MPI_SUM, a);
      x.check("A allreduce " + std::to_string(k));
    }
  });
  std::thread nonblocking([&] {
    for (int k = 0; k < iters; ++k) {
      const size_t n = k % 2 ? 4096 : 16;
      Allreduce y(k + 1000, n, who);
      MPI_Request r;
      MPI_Iallreduce(y.send.data(), y.recv.data(), static_cast<int>(n), MPI_INT, MPI_SUM, b, &r);
      MPI_Wait(&r, MPI_STATUS_IGNORE);
      y.check("B iallreduce " + std::to_string(k));
    }
  });
  blocking.join();
  nonblocking.join();
  std::sort(g_lines.begin(), g_lines.end());  // the threads' lines interleave by chance
  MPI_Comm_free(&a);
  MPI_Comm_free(&b);
}

// ---- 5c. the same call on communicators that reuse one handle -----------------------------

// The preload remembers the route of the last call with the same signature and buffers
// (preload.cpp, EngineRoute). Here every call has the same buffers, count and type, and each
// communicator is freed before the next is made, so MPI may hand out the same handle for a
// communicator of other members (the whole world, then each rank alone, then the world in
// reverse order): each call must still run on its own communicator.
void reused_handle() {
  constexpr size_t n = 64;
  std::vector<int> send(n), recv(n);
  std::vector<int> bc(n);
  for (int k = 0; k < 12; ++k) {
    MPI_Comm c;
    if (k % 3 == 0)
      MPI_Comm_dup(MPI_COMM_WORLD, &c);
    else if (k % 3 == 1)
      MPI_Comm_split(MPI_COMM_WORLD, g_rank, 0, &c);  // alone
    else
      MPI_Comm_split(MPI_COMM_WORLD, 0, g_size - g_rank, &c);  // reversed
    const std::vector<int> who = members(c);
    for (size_t i = 0; i < n; ++i) send[i] = ar_in(g_rank, k, i);
    std::fill(recv.begin(), recv.end(), -7);
    MPI_Allreduce(send.data(), recv.data(), static_cast<int>(n), MPI_INT, MPI_SUM, c);
    expect_eq<int>("allreduce " + std::to_string(k), recv, [&](size_t i) {
      int sum = 0;
      for (int w : who) sum += ar_in(w, k, i);
      return sum;
    });
    own("allreduce " + std::to_string(k), recv);
    // Root 0 of this communicator: world rank who[0].
    for (size_t i = 0; i < n; ++i) bc[i] = g_rank == who[0] ? bc_val(k, i) : -1;
    MPI_Bcast(bc.data(), static_cast<int>(n), MPI_INT, 0, c);
    expect_eq<int>("bcast " + std::to_string(k), bc, [&](size_t i) { return bc_val(k, i); });
    own("bcast " + std::to_string(k), bc);
    MPI_Comm_free(&c);
  }
}

// ---- 6. NBX: synchronous sends, then MPI_Ibarrier while probing ---------------------------

// Each rank sends 2 messages to each of up to 2 peers (rank+1, rank+2). Rank 1 sends late:
// once it has received all of its messages, and 100 ms after that (a rank may send at any
// time before its own MPI_Ibarrier). So its peers' sends complete and they enter their
// MPI_Ibarrier while rank 1's messages to them are still to come: the MPI_Ibarrier must
// return at once, and they go on probing until it completes.
void nbx(const std::string& which) {
  MPI_Comm c = which == "world" ? MPI_COMM_WORLD : dup(MPI_COMM_WORLD);
  const int tag = 77;
  const int fanout = std::min(2, g_size - 1);
  std::vector<std::vector<int>> msgs, expected;
  for (int d = 1; d <= fanout; ++d)
    for (int j = 0; j < 2; ++j) {
      const int to = (g_rank + d) % g_size, from = (g_rank - d + g_size) % g_size;
      msgs.push_back({g_rank, to, j, g_rank * 31 + to * 7 + j});
      expected.push_back({from, g_rank, j, from * 31 + g_rank * 7 + j});
    }
  std::sort(expected.begin(), expected.end());
  std::vector<MPI_Request> sends(msgs.size(), MPI_REQUEST_NULL);
  bool sent = false;
  const auto send_all = [&] {
    for (size_t m = 0; m < msgs.size(); ++m)
      MPI_Issend(msgs[m].data(), 4, MPI_INT, msgs[m][1], tag, c, &sends[m]);
    sent = true;
  };
  const bool late = g_rank == 1;
  if (!late) send_all();
  std::vector<std::vector<int>> got;
  MPI_Request barrier = MPI_REQUEST_NULL;
  bool barrier_started = false;
  for (;;) {
    int flag = 0;
    MPI_Status st;
    MPI_Iprobe(MPI_ANY_SOURCE, tag, c, &flag, &st);
    if (flag) {
      std::vector<int> m(4);
      MPI_Recv(m.data(), 4, MPI_INT, st.MPI_SOURCE, tag, c, MPI_STATUS_IGNORE);
      got.push_back(m);
    }
    if (!sent && got.size() == expected.size()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      send_all();
    }
    int done = 0;
    if (!barrier_started) {
      if (!sent) continue;
      MPI_Testall(static_cast<int>(sends.size()), sends.data(), &done, MPI_STATUSES_IGNORE);
      if (done) {
        MPI_Ibarrier(c, &barrier);
        barrier_started = true;
      }
    } else {
      MPI_Test(&barrier, &done, MPI_STATUS_IGNORE);
      if (done) break;
    }
  }
  std::sort(got.begin(), got.end());
  if (got != expected)
    error("nbx: received " + sz(got.size()) + " messages, not the " + sz(expected.size()) +
          " expected");
  std::vector<int> flat;
  for (const auto& m : got) flat.insert(flat.end(), m.begin(), m.end());
  own("nbx " + which + " received", flat);
  some_collectives(c, "after nbx", 1);
  if (c != MPI_COMM_WORLD) MPI_Comm_free(&c);
}

// ---- 7. the first collective on a communicator is non-blocking, and must be local ---------

void first_nonblocking(const std::string& which) {
  MPI_Comm c = which == "world" ? MPI_COMM_WORLD : dup(MPI_COMM_WORLD);
  const std::vector<int> who = [] {
    std::vector<int> w(static_cast<size_t>(g_size));
    for (int r = 0; r < g_size; ++r) w[static_cast<size_t>(r)] = r;
    return w;
  }();  // no collective before the one under test
  Allreduce x(3, 16384, who);
  MPI_Request r;
  int token = 42;
  if (g_rank == 0) {
    MPI_Iallreduce(x.send.data(), x.recv.data(), 16384, MPI_INT, MPI_SUM, c, &r);
    MPI_Send(&token, 1, MPI_INT, 1, 5, MPI_COMM_WORLD);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
  } else if (g_rank == 1) {
    MPI_Recv(&token, 1, MPI_INT, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Iallreduce(x.send.data(), x.recv.data(), 16384, MPI_INT, MPI_SUM, c, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
  } else {
    MPI_Iallreduce(x.send.data(), x.recv.data(), 16384, MPI_INT, MPI_SUM, c, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
  }
  x.check("first iallreduce on " + which);
  // The same with an Ibcast first on a fresh communicator, root 1, and the roles swapped.
  MPI_Comm d = dup(MPI_COMM_WORLD);
  std::vector<int> buf(4096, -1);
  if (g_rank == 1)
    for (size_t i = 0; i < buf.size(); ++i) buf[i] = bc_val(9, i);
  if (g_rank == 1) {
    MPI_Ibcast(buf.data(), 4096, MPI_INT, 1, d, &r);
    MPI_Send(&token, 1, MPI_INT, 0, 6, MPI_COMM_WORLD);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
  } else if (g_rank == 0) {
    MPI_Recv(&token, 1, MPI_INT, 1, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Ibcast(buf.data(), 4096, MPI_INT, 1, d, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
  } else {
    MPI_Ibcast(buf.data(), 4096, MPI_INT, 1, d, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
  }
  expect_eq<int>("first ibcast", buf, [](size_t i) { return bc_val(9, i); });
  own("first ibcast", buf);
  some_collectives(c, "after", 1);
  // MPI_Comm_idup is local too: rank 0 starts it, then sends what rank 1 waits for first.
  MPI_Comm e;
  if (g_rank == 0) {
    MPI_Comm_idup(c, &e, &r);
    MPI_Send(&token, 1, MPI_INT, 1, 7, MPI_COMM_WORLD);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
  } else if (g_rank == 1) {
    MPI_Recv(&token, 1, MPI_INT, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Comm_idup(c, &e, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
  } else {
    MPI_Comm_idup(c, &e, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
  }
  some_collectives(e, "on idup", 70);
  MPI_Comm_free(&e);
  MPI_Comm_free(&d);
  if (c != MPI_COMM_WORLD) MPI_Comm_free(&c);
}

// ---- 8. MPI_Comm_free while an operation is pending ---------------------------------------

void comm_free_pending() {
  const std::vector<int> who = members(MPI_COMM_WORLD);
  for (int warm = 1; warm >= 0; --warm) {
    MPI_Comm c = dup(MPI_COMM_WORLD);
    const std::string tag = warm ? "used before: " : "fresh: ";
    if (warm) blocking_allreduce(c, 0, 16, tag + "warmup");
    Allreduce x(5, 16384, who);
    std::vector<int> buf(262144, -1);
    if (g_rank == 0)
      for (size_t i = 0; i < buf.size(); ++i) buf[i] = bc_val(4, i);
    MPI_Request r[2];
    MPI_Iallreduce(x.send.data(), x.recv.data(), 16384, MPI_INT, MPI_SUM, c, &r[0]);
    MPI_Ibcast(buf.data(), 262144, MPI_INT, 0, c, &r[1]);
    MPI_Comm_free(&c);
    MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
    x.check(tag + "iallreduce");
    expect_eq<int>(tag + "ibcast", buf, [](size_t i) { return bc_val(4, i); });
    own(tag + "ibcast", buf);
  }
  MPI_Comm d = dup(MPI_COMM_WORLD);
  some_collectives(d, "next communicator", 1);
  MPI_Comm_free(&d);
}

// ---- 9. completion by MPI_Request_get_status; progress through MPI_Iprobe -----------------

// "get_status": completion by MPI_Request_get_status loops; "iprobe": rank 0 loops on
// MPI_Iprobe for a message rank 1 sends once its MPI_Iallreduce has completed.
void get_status_loop(const std::string& mode) {
  MPI_Comm c = dup(MPI_COMM_WORLD);
  const std::vector<int> who = members(c);
  blocking_allreduce(c, 0, 16, "warmup");
  const size_t n = 262144;  // 1 MiB
  MPI_Request r;
  int flag = 0;
  if (mode == "iprobe") {
    Allreduce y(4, n, who);
    MPI_Iallreduce(y.send.data(), y.recv.data(), static_cast<int>(n), MPI_INT, MPI_SUM, c, &r);
    int token = 0;
    if (g_rank == 0) {
      while (!flag) MPI_Iprobe(1, 9, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
      MPI_Recv(&token, 1, MPI_INT, 1, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Wait(&r, MPI_STATUS_IGNORE);
    } else {
      MPI_Wait(&r, MPI_STATUS_IGNORE);
      if (g_rank == 1) MPI_Send(&token, 1, MPI_INT, 0, 9, MPI_COMM_WORLD);
    }
    y.check("iallreduce, peer probing");
    MPI_Comm_free(&c);
    return;
  }
  std::vector<int> buf(n, -1);
  if (g_rank == 0)
    for (size_t i = 0; i < n; ++i) buf[i] = bc_val(2, i);
  MPI_Ibcast(buf.data(), static_cast<int>(n), MPI_INT, 0, c, &r);
  while (!flag) MPI_Request_get_status(r, &flag, MPI_STATUS_IGNORE);
  MPI_Wait(&r, MPI_STATUS_IGNORE);
  expect_eq<int>("ibcast by get_status", buf, [](size_t i) { return bc_val(2, i); });
  own("ibcast by get_status", buf);

  Allreduce x(3, n, who);
  MPI_Iallreduce(x.send.data(), x.recv.data(), static_cast<int>(n), MPI_INT, MPI_SUM, c, &r);
  for (flag = 0; !flag;) MPI_Request_get_status(r, &flag, MPI_STATUS_IGNORE);
  // Complete now: MPI_Test frees it (MPICH refuses MPI_Request_free of a collective's).
  MPI_Test(&r, &flag, MPI_STATUS_IGNORE);
  if (!flag || r != MPI_REQUEST_NULL)
    error("MPI_Test after MPI_Request_get_status's flag: not complete");
  x.check("iallreduce by get_status, then MPI_Test");

  MPI_Comm_free(&c);
}

// ---- 10. a blocking call on another communicator must progress pending operations ---------

// What rank 0 blocks in while its operation on A is pending, before it waits for it:
// "allreduce" (8 B on B, which the test's table hands to the library) or "recv" (from
// rank 1 on B, which sends once its own operation on A has completed).
void cross_comm_progress(const std::string& blocker) {
  MPI_Comm a = dup(MPI_COMM_WORLD), b = dup(MPI_COMM_WORLD);
  const std::vector<int> who = members(MPI_COMM_WORLD);
  blocking_allreduce(a, 0, 16, "warmup A");
  blocking_allreduce(b, 0, 2, "warmup B");
  const auto on_b = [&](int tag) {
    if (blocker == "allreduce") {
      const double mine = g_rank;
      double sum = -1;
      MPI_Allreduce(&mine, &sum, 1, MPI_DOUBLE, MPI_SUM, b);
      if (sum != g_size * (g_size - 1) / 2.0) error("allreduce on B: " + std::to_string(sum));
      own(blocker + ": allreduce on B " + std::to_string(tag), std::vector<double>{sum});
    } else if (g_rank == 0) {
      int token = 0;
      MPI_Recv(&token, 1, MPI_INT, 1, tag, b, MPI_STATUS_IGNORE);
    } else if (g_rank == 1) {
      int token = 0;
      MPI_Send(&token, 1, MPI_INT, 0, tag, b);
    }
  };
  const auto finish = [&](MPI_Request* r, int tag) {
    if (g_rank == 0) {  // blocked on B with A pending
      on_b(tag);
      MPI_Wait(r, MPI_STATUS_IGNORE);
    } else {
      MPI_Wait(r, MPI_STATUS_IGNORE);
      on_b(tag);
    }
  };
  const size_t n = 1 << 20;  // 4 MiB of int
  for (int root = 0; root < 2; ++root) {
    const int k = 1 + root;
    const std::string tag = blocker + ": ibcast root " + std::to_string(root);
    std::vector<int> buf(n, -1);
    if (g_rank == root)
      for (size_t i = 0; i < n; ++i) buf[i] = bc_val(k, i);
    MPI_Request r;
    MPI_Ibcast(buf.data(), static_cast<int>(n), MPI_INT, root, a, &r);
    finish(&r, 10 + root);
    expect_eq<int>(tag, buf, [&](size_t i) { return bc_val(k, i); });
    own(tag, buf);
  }
  Allreduce x(3, n, who);
  MPI_Request r;
  MPI_Iallreduce(x.send.data(), x.recv.data(), static_cast<int>(n), MPI_INT, MPI_SUM, a, &r);
  finish(&r, 12);
  x.check(blocker + ": iallreduce");
  MPI_Comm_free(&a);
  MPI_Comm_free(&b);
}

// ---- 11. many communicators ---------------------------------------------------------------

// A communicator of every rank, made by each of MPI's constructors in turn.
MPI_Comm make_comm(int i, MPI_Comm previous) {
  MPI_Comm c = MPI_COMM_NULL;
  MPI_Group world, reversed;
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  std::vector<int> order(static_cast<size_t>(g_size));
  for (int r = 0; r < g_size; ++r) order[static_cast<size_t>(r)] = g_size - 1 - r;
  MPI_Group_incl(world, g_size, order.data(), &reversed);
  switch (i % 9) {
    case 0:
      MPI_Comm_dup(MPI_COMM_WORLD, &c);
      break;
    case 1:
      MPI_Comm_split(MPI_COMM_WORLD, 0, g_size - 1 - g_rank, &c);  // ranks reversed
      break;
    case 2:
      MPI_Comm_dup(previous, &c);
      break;
    case 3:
      MPI_Comm_create(MPI_COMM_WORLD, reversed, &c);
      break;
    case 4:
      MPI_Comm_create_group(MPI_COMM_WORLD, reversed, i, &c);
      break;
    case 5: {
      MPI_Request r;
      MPI_Comm_idup(previous, &c, &r);
      MPI_Wait(&r, MPI_STATUS_IGNORE);
      break;
    }
    case 6:
      MPI_Comm_dup_with_info(MPI_COMM_WORLD, MPI_INFO_NULL, &c);
      break;
    case 7:
      MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &c);
      break;
    default: {  // even and odd ranks, joined by an intercommunicator, merged
      MPI_Comm local, inter;
      MPI_Comm_split(MPI_COMM_WORLD, g_rank % 2, g_rank, &local);
      MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, g_rank % 2 ? 0 : 1, 100 + i, &inter);
      MPI_Intercomm_merge(inter, g_rank % 2, &c);
      MPI_Comm_free(&inter);
      MPI_Comm_free(&local);
    }
  }
  MPI_Group_free(&reversed);
  MPI_Group_free(&world);
  return c;
}

void many_comms(int count) {
  std::vector<MPI_Comm> comms;
  for (int i = 0; i < count; ++i)
    comms.push_back(make_comm(i, comms.empty() ? MPI_COMM_WORLD : comms.back()));
  for (int i = 0; i < count; ++i) {
    MPI_Comm c = comms[static_cast<size_t>(i)];
    const std::string tag = "comm " + std::to_string(i);
    blocking_allreduce(c, i, 1024, tag + " allreduce");
    blocking_bcast(c, i, 1024, i % g_size, tag + " bcast");
    std::vector<int> mine(256), all(256 * static_cast<size_t>(g_size), -1);
    for (size_t j = 0; j < mine.size(); ++j) mine[j] = g_rank * 1000 + i + static_cast<int>(j);
    MPI_Allgather(mine.data(), 256, MPI_INT, all.data(), 256, MPI_INT, c);
    const std::vector<int> who = members(c);
    expect_eq<int>(tag + " allgather", all,
                   [&](size_t j) { return who[j / 256] * 1000 + i + static_cast<int>(j % 256); });
    own(tag + " allgather", all);
    if (i % 4 == 0) MPI_Comm_free(&comms[static_cast<size_t>(i)]);  // freed in the middle
  }
  // Round 2: one operation pending on every communicator still alive, then one Waitall.
  std::vector<MPI_Request> reqs;
  std::vector<std::unique_ptr<Allreduce>> ops;
  const std::vector<int> who = members(MPI_COMM_WORLD);
  for (int i = 0; i < count; ++i) {
    if (comms[static_cast<size_t>(i)] == MPI_COMM_NULL) continue;
    ops.push_back(std::make_unique<Allreduce>(100 + i, 4096, who));
    reqs.emplace_back();
    MPI_Iallreduce(ops.back()->send.data(), ops.back()->recv.data(), 4096, MPI_INT, MPI_SUM,
                   comms[static_cast<size_t>(i)], &reqs.back());
  }
  MPI_Waitall(static_cast<int>(reqs.size()), reqs.data(), MPI_STATUSES_IGNORE);
  for (size_t j = 0; j < ops.size(); ++j) ops[j]->check("round 2 op " + sz(j));
  for (MPI_Comm& c : comms)
    if (c != MPI_COMM_NULL) MPI_Comm_free(&c);
}

// ---- 12. sub-communicators from split_type and split, interleaved with world --------------

void split_type_subcomms() {
  MPI_Comm shared, parity, half;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, g_rank, MPI_INFO_NULL, &shared);
  MPI_Comm_split(MPI_COMM_WORLD, g_rank % 2, g_rank, &parity);
  MPI_Comm_split(MPI_COMM_WORLD, g_rank / 2, -g_rank, &half);
  const std::vector<int> w = members(MPI_COMM_WORLD), s = members(shared), p = members(parity),
                         h = members(half);
  for (int it = 0; it < 4; ++it) {
    const std::string tag = "it " + std::to_string(it) + " ";
    blocking_allreduce(MPI_COMM_WORLD, it, 4096, tag + "world allreduce");
    blocking_allreduce(parity, it + 10, 4096, tag + "parity allreduce");
    blocking_bcast(shared, it, 16384, it % size_of(shared), tag + "shared bcast");
    Allreduce x(it + 20, 16384, p), y(it + 30, 16384, w), z(it + 40, 16384, h), v(it + 50, 64, s);
    MPI_Request r[4];
    MPI_Iallreduce(x.send.data(), x.recv.data(), 16384, MPI_INT, MPI_SUM, parity, &r[0]);
    MPI_Iallreduce(y.send.data(), y.recv.data(), 16384, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r[1]);
    MPI_Iallreduce(z.send.data(), z.recv.data(), 16384, MPI_INT, MPI_SUM, half, &r[2]);
    MPI_Iallreduce(v.send.data(), v.recv.data(), 64, MPI_INT, MPI_SUM, shared, &r[3]);
    MPI_Waitall(4, r, MPI_STATUSES_IGNORE);
    x.check(tag + "parity iallreduce");
    y.check(tag + "world iallreduce");
    z.check(tag + "half iallreduce");
    v.check(tag + "shared iallreduce");
    blocking_allreduce(half, it + 60, 1024, tag + "half allreduce");
    std::vector<int> red(1024, -1), in(1024);
    for (size_t i = 0; i < in.size(); ++i) in[i] = ar_in(g_rank, it + 70, i);
    const int root = size_of(parity) - 1;
    MPI_Reduce(in.data(), red.data(), 1024, MPI_INT, MPI_SUM, root, parity);
    if (rank_of(parity) == root)
      expect_eq<int>(tag + "parity reduce", red, [&](size_t i) {
        int t = 0;
        for (int m : p) t += ar_in(m, it + 70, i);
        return t;
      });
    own(tag + "parity reduce", red);  // untouched (-1) off the root, with the preload too
    MPI_Barrier(shared);
  }
  MPI_Comm_free(&shared);
  MPI_Comm_free(&parity);
  MPI_Comm_free(&half);
}

// ---- 13. MPI_COMM_SELF and a one-rank split -----------------------------------------------

void on_one_rank(MPI_Comm c, const std::string& tag) {
  const size_t n = 4096;
  std::vector<int> in(n), out(n, -1);
  for (size_t i = 0; i < n; ++i) in[i] = ar_in(g_rank, 1, i);
  auto same = [&](size_t i) { return in[i]; };
  MPI_Allreduce(in.data(), out.data(), static_cast<int>(n), MPI_INT, MPI_SUM, c);
  expect_eq<int>(tag + " allreduce", out, same);
  std::vector<double> d{1.5, -2.25, 1e-16}, dout(3, 0);
  MPI_Allreduce(d.data(), dout.data(), 3, MPI_DOUBLE, MPI_SUM, c);
  if (dout != d) error(tag + " allreduce of doubles changed the values");
  own(tag + " allreduce of doubles", dout);
  std::vector<int> b = in;
  MPI_Bcast(b.data(), static_cast<int>(n), MPI_INT, 0, c);
  expect_eq<int>(tag + " bcast", b, same);
  MPI_Request r;
  MPI_Ibarrier(c, &r);
  MPI_Wait(&r, MPI_STATUS_IGNORE);
  std::fill(out.begin(), out.end(), -1);
  MPI_Iallreduce(in.data(), out.data(), static_cast<int>(n), MPI_INT, MPI_SUM, c, &r);
  MPI_Wait(&r, MPI_STATUS_IGNORE);
  expect_eq<int>(tag + " iallreduce", out, same);
  std::fill(out.begin(), out.end(), -1);
  MPI_Reduce(in.data(), out.data(), static_cast<int>(n), MPI_INT, MPI_MAX, 0, c);
  expect_eq<int>(tag + " reduce", out, same);
  std::fill(out.begin(), out.end(), -1);
  MPI_Alltoall(in.data(), static_cast<int>(n), MPI_INT, out.data(), static_cast<int>(n), MPI_INT,
               c);
  expect_eq<int>(tag + " alltoall", out, same);
  std::fill(out.begin(), out.end(), -1);
  MPI_Iallgather(in.data(), static_cast<int>(n), MPI_INT, out.data(), static_cast<int>(n), MPI_INT,
                 c, &r);
  MPI_Wait(&r, MPI_STATUS_IGNORE);
  expect_eq<int>(tag + " iallgather", out, same);
  std::fill(out.begin(), out.end(), -1);
  MPI_Reduce_scatter_block(in.data(), out.data(), static_cast<int>(n), MPI_INT, MPI_SUM, c);
  expect_eq<int>(tag + " reduce_scatter_block", out, same);
  MPI_Barrier(c);
  own(tag, out);
}

void comm_self() {
  on_one_rank(MPI_COMM_SELF, "self");
  MPI_Comm one;
  MPI_Comm_split(MPI_COMM_WORLD, g_rank, 0, &one);
  on_one_rank(one, "split");
  on_one_rank(MPI_COMM_SELF, "self again");
  blocking_allreduce(MPI_COMM_WORLD, 3, 1024, "world");
  MPI_Comm_free(&one);
}

// ---- 14. MPI_Reduce at roots other than 0 -------------------------------------------------

void reduce_roots() {
  MPI_Comm c = MPI_COMM_WORLD;
  // "library NAME": MPI_Get_library_version's first line, blanks made one space (as
  // src/engine/mpi_library_info.cpp does), from which the test knows which calls the preload
  // must give the engine (MPICH 4.0's in-place reduce at a root other than 0 crashes).
  char version[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int length = 0;
  MPI_Get_library_version(version, &length);
  std::string first;
  for (const char* p = version; *p && *p != '\n'; ++p)
    if (!std::isspace(static_cast<unsigned char>(*p)))
      first += *p;
    else if (!first.empty() && first.back() != ' ')
      first += ' ';
  g_lines.push_back("library " + first);
  std::vector<int> roots{g_size - 1, 1, 0};
  roots.erase(std::unique(roots.begin(), roots.end()), roots.end());  // 2 ranks: 1, 0
  for (size_t n : {size_t{128}, size_t{1024}, size_t{8192}}) {        // 1, 8, 64 KiB of double
    for (int root : roots) {
      for (int in_place = 0; in_place < 2; ++in_place) {
        // MPICH 4.0.2's own in-place reduce at a root other than 0 segfaults from 8 KiB of
        // double (and this case hands reduce to the library): in place there at 1 KiB only.
        if (in_place && root != 0 && n > 128) continue;
        const std::string tag =
            "n=" + sz(n) + " root " + std::to_string(root) + (in_place ? " in place" : "");
        std::vector<double> in(n), out(n, -1);
        for (size_t i = 0; i < n; ++i) in[i] = (g_rank + 1) * static_cast<double>(i % 17 + 1);
        const bool me = g_rank == root;
        if (in_place && me)
          MPI_Reduce(MPI_IN_PLACE, in.data(), static_cast<int>(n), MPI_DOUBLE, MPI_SUM, root, c);
        else
          MPI_Reduce(in.data(), out.data(), static_cast<int>(n), MPI_DOUBLE, MPI_SUM, root, c);
        if (!me) continue;
        const std::vector<double>& got = in_place ? in : out;
        const double ranks = g_size * (g_size + 1) / 2.0;
        for (size_t i = 0; i < n; ++i)
          if (got[i] != ranks * static_cast<double>(i % 17 + 1)) {
            error("reduce " + tag + ": element " + sz(i) + " is " + std::to_string(got[i]));
            break;
          }
        own(tag, got);
      }
    }
  }
}

// ---- 15. the MPI-4 large-count bindings ---------------------------------------------------

void large_count() {
#if MPI_VERSION < 4
  // Open MPI 5.0 is an MPI-3.1 library: it has no _c bindings to test.
  g_lines.push_back("skip this MPI library (MPI_VERSION " + std::to_string(MPI_VERSION) +
                    ") has no MPI-4 large-count bindings");
#else
  MPI_Comm c = MPI_COMM_WORLD;
  const std::vector<int> who = [] {
    std::vector<int> w(static_cast<size_t>(g_size));
    for (int r = 0; r < g_size; ++r) w[static_cast<size_t>(r)] = r;
    return w;
  }();  // no MPI_Allgather: only _c collectives in this case
  const MPI_Count n = 16384;
  const size_t un = static_cast<size_t>(n), ns = static_cast<size_t>(g_size);
  MPI_Request r;
  auto sum = [&](int k) {
    return [&who, k](size_t i) {
      int t = 0;
      for (int w : who) t += ar_in(w, k, i);
      return t;
    };
  };
  {
    Allreduce x(1, un, who);
    MPI_Allreduce_c(x.send.data(), x.recv.data(), n, MPI_INT, MPI_SUM, c);
    x.check("MPI_Allreduce_c");
    Allreduce y(2, un, who);
    MPI_Iallreduce_c(y.send.data(), y.recv.data(), n, MPI_INT, MPI_SUM, c, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    y.check("MPI_Iallreduce_c");
  }
  {
    std::vector<int> buf(un, -1);
    if (g_rank == 0)
      for (size_t i = 0; i < un; ++i) buf[i] = bc_val(3, i);
    MPI_Bcast_c(buf.data(), n, MPI_INT, 0, c);
    expect_eq<int>("MPI_Bcast_c", buf, [](size_t i) { return bc_val(3, i); });
    own("MPI_Bcast_c", buf);
    std::fill(buf.begin(), buf.end(), -1);
    if (g_rank == g_size - 1)
      for (size_t i = 0; i < un; ++i) buf[i] = bc_val(4, i);
    MPI_Ibcast_c(buf.data(), n, MPI_INT, g_size - 1, c, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    expect_eq<int>("MPI_Ibcast_c", buf, [](size_t i) { return bc_val(4, i); });
    own("MPI_Ibcast_c", buf);
  }
  {
    std::vector<int> in(un), out(un, -1);
    for (size_t i = 0; i < un; ++i) in[i] = ar_in(g_rank, 5, i);
    MPI_Reduce_c(in.data(), out.data(), n, MPI_INT, MPI_SUM, 0, c);
    if (g_rank == 0) expect_eq<int>("MPI_Reduce_c", out, sum(5));
    own("MPI_Reduce_c", out);
  }
  {
    const MPI_Count blk = 4096;
    const size_t ub = static_cast<size_t>(blk);
    std::vector<int> s(ns * ub), out(ns * ub, -1);
    for (size_t p = 0; p < ns; ++p)
      for (size_t i = 0; i < ub; ++i)
        s[p * ub + i] = g_rank * 1000000 + static_cast<int>(p) * 1000 + static_cast<int>(i % 3);
    MPI_Alltoall_c(s.data(), blk, MPI_INT, out.data(), blk, MPI_INT, c);
    expect_eq<int>("MPI_Alltoall_c", out, [&](size_t i) {
      return static_cast<int>(i / ub) * 1000000 + g_rank * 1000 + static_cast<int>(i % ub % 3);
    });
    own("MPI_Alltoall_c", out);
    std::vector<int> mine(ub);
    for (size_t i = 0; i < ub; ++i) mine[i] = g_rank * 100000 + static_cast<int>(i % 7);
    std::fill(out.begin(), out.end(), -1);
    MPI_Allgather_c(mine.data(), blk, MPI_INT, out.data(), blk, MPI_INT, c);
    expect_eq<int>("MPI_Allgather_c", out, [&](size_t i) {
      return static_cast<int>(i / ub) * 100000 + static_cast<int>(i % ub % 7);
    });
    own("MPI_Allgather_c", out);
    std::vector<int> rin(ns * ub), rout(ub, -1);
    for (size_t i = 0; i < ns * ub; ++i) rin[i] = ar_in(g_rank, 6, i);
    MPI_Reduce_scatter_block_c(rin.data(), rout.data(), blk, MPI_INT, MPI_SUM, c);
    const auto whole = sum(6);
    expect_eq<int>("MPI_Reduce_scatter_block_c", rout,
                   [&](size_t i) { return whole(static_cast<size_t>(g_rank) * ub + i); });
    own("MPI_Reduce_scatter_block_c", rout);
  }
#endif  // MPI_VERSION < 4
}

// ---- 16. many communicators, many operations: what a small /dev/shm must still run ---------

void small_devshm(int count) {
  std::vector<MPI_Comm> comms{MPI_COMM_WORLD};
  for (int i = 0; i < count; ++i) comms.push_back(dup(MPI_COMM_WORLD));
  const std::vector<int> who = members(MPI_COMM_WORLD);
  for (size_t j = 0; j < comms.size(); ++j) {
    MPI_Comm c = comms[j];
    const std::string tag = "comm " + sz(j);
    blocking_allreduce(c, static_cast<int>(j), 16384, tag + " allreduce");
    blocking_bcast(c, static_cast<int>(j), 262144, static_cast<int>(j) % g_size, tag + " bcast");
    std::vector<std::unique_ptr<Allreduce>> ops;
    std::vector<MPI_Request> reqs(20);
    for (int k = 0; k < 20; ++k) {
      ops.push_back(std::make_unique<Allreduce>(k, 16384, who));
      MPI_Iallreduce(ops.back()->send.data(), ops.back()->recv.data(), 16384, MPI_INT, MPI_SUM, c,
                     &reqs[static_cast<size_t>(k)]);
    }
    MPI_Waitall(20, reqs.data(), MPI_STATUSES_IGNORE);
    for (int k = 0; k < 20; ++k) ops[static_cast<size_t>(k)]->check(tag + " iallreduce " + sz(k));
  }
  for (size_t j = 1; j < comms.size(); ++j) MPI_Comm_free(&comms[j]);
}

int arg_int(int argc, char** argv, int i, int dflt) {
  return argc > i ? std::atoi(argv[i]) : dflt;
}
// ---- 17. the small-message path (issue 30): back to back on two communicators -------------

// Per iteration k (sizes 1 to 1024 ints, every block within the engine's 16 KiB slot): on A
// an MPI_Iallreduce and an MPI_Ibcast left pending; on B every blocking small collective
// (allreduce, bcast, allgather, alltoall, reduce, reduce_scatter_block, barrier); then a
// blocking MPI_Allreduce on A while A's operations are still pending (the small path must
// wait its turn behind them); an MPI_Waitall every 8 iterations.
void small_interleaved(int iters) {
  MPI_Comm a = dup(MPI_COMM_WORLD), b = dup(MPI_COMM_WORLD);
  const std::vector<int> who = members(MPI_COMM_WORLD);
  const size_t ns = static_cast<size_t>(g_size);
  std::vector<std::unique_ptr<Allreduce>> ars;
  std::vector<std::pair<int, std::vector<int>>> bcs;  // (k, buffer)
  std::vector<MPI_Request> reqs;
  const auto complete = [&] {
    MPI_Waitall(static_cast<int>(reqs.size()), reqs.data(), MPI_STATUSES_IGNORE);
    for (auto& ar : ars) ar->check("A iallreduce " + std::to_string(ar->k));
    for (auto& [k, buf] : bcs) {
      const int kk = k;
      expect_eq<int>("A ibcast " + std::to_string(k), buf, [&](size_t i) { return bc_val(kk, i); });
      own("A ibcast " + std::to_string(k), buf);
    }
    ars.clear();
    bcs.clear();
    reqs.clear();
  };
  const size_t sizes[] = {1, 7, 64, 333, 1024};
  for (int k = 0; k < iters; ++k) {
    const size_t n = sizes[k % 5];
    const std::string at = " k=" + std::to_string(k);
    ars.push_back(std::make_unique<Allreduce>(k, n, who));
    reqs.push_back(MPI_REQUEST_NULL);
    MPI_Iallreduce(ars.back()->send.data(), ars.back()->recv.data(), static_cast<int>(n), MPI_INT,
                   MPI_SUM, a, &reqs.back());
    const int root = k % g_size;
    bcs.emplace_back(k, std::vector<int>(n, -1));
    if (g_rank == root)
      for (size_t i = 0; i < n; ++i) bcs.back().second[i] = bc_val(k, i);
    reqs.push_back(MPI_REQUEST_NULL);
    MPI_Ibcast(bcs.back().second.data(), static_cast<int>(n), MPI_INT, root, a, &reqs.back());

    blocking_allreduce(b, k + 1000, n, "B allreduce" + at);
    blocking_bcast(b, k + 2000, n, (k + 1) % g_size, "B bcast" + at);
    const size_t m = 1 + static_cast<size_t>(k) % 200;  // a block
    std::vector<int> s(ns * m), r(ns * m, -1);
    for (size_t i = 0; i < m; ++i) s[i] = g_rank * 100000 + k * 10 + static_cast<int>(i % 7);
    MPI_Allgather(s.data(), static_cast<int>(m), MPI_INT, r.data(), static_cast<int>(m), MPI_INT,
                  b);
    expect_eq<int>("B allgather" + at, r, [&](size_t i) {
      return static_cast<int>(i / m) * 100000 + k * 10 + static_cast<int>(i % m % 7);
    });
    own("B allgather" + at, r);
    for (size_t i = 0; i < ns * m; ++i)
      s[i] = g_rank * 1000000 + static_cast<int>(i / m) * 1000 + k + static_cast<int>(i % m % 3);
    MPI_Alltoall(s.data(), static_cast<int>(m), MPI_INT, r.data(), static_cast<int>(m), MPI_INT, b);
    expect_eq<int>("B alltoall" + at, r, [&](size_t i) {
      return static_cast<int>(i / m) * 1000000 + g_rank * 1000 + k + static_cast<int>(i % m % 3);
    });
    own("B alltoall" + at, r);
    for (size_t i = 0; i < ns * m; ++i) s[i] = ar_in(g_rank, k, i);
    const auto sum = [&](size_t i) {
      int t = 0;
      for (int w : who) t += ar_in(w, k, i);
      return t;
    };
    const int rroot = (k + 2) % g_size;
    std::vector<int> red(m, -1);
    MPI_Reduce(s.data(), red.data(), static_cast<int>(m), MPI_INT, MPI_SUM, rroot, b);
    if (g_rank == rroot) {
      expect_eq<int>("B reduce" + at, red, sum);
      own("B reduce" + at, red);
    }
    MPI_Reduce_scatter_block(s.data(), red.data(), static_cast<int>(m), MPI_INT, MPI_SUM, b);
    const size_t mine = static_cast<size_t>(g_rank) * m;
    expect_eq<int>("B reduce_scatter_block" + at, red, [&](size_t i) { return sum(mine + i); });
    own("B reduce_scatter_block" + at, red);
    MPI_Barrier(b);

    blocking_allreduce(a, k + 3000, n, "A allreduce behind pending" + at);
    if (k % 8 == 7) complete();
  }
  complete();
  MPI_Comm_free(&a);
  MPI_Comm_free(&b);
}

// ---- 18. engines made at a communicator's first routed collective (issue 39) -------------

// Each rank makes a different number of calls that are no collective on three new
// communicators (local queries, probes, point-to-point to itself), then one collective
// the preload hands to MPI (MPI_BOR), before the first one the engine takes: the engine
// must be made at that call on every rank. One communicator is made and freed unused.
// Then, on two fresh communicators, even ranks start an MPI_Iallreduce on A before the
// first (blocking) collective on B, odd ranks the other way round.
void lazy_first_collective() {
  MPI_Group world_group;
  MPI_Comm_group(MPI_COMM_WORLD, &world_group);
  MPI_Comm c[3];
  MPI_Comm_dup(MPI_COMM_WORLD, &c[0]);
  MPI_Comm_split(MPI_COMM_WORLD, 0, g_size - g_rank, &c[1]);
  MPI_Comm_create(MPI_COMM_WORLD, world_group, &c[2]);
  MPI_Group_free(&world_group);
  MPI_Comm unused = dup(MPI_COMM_WORLD);
  MPI_Comm_free(&unused);
  for (int i = 0; i < 3; ++i) {
    const int me = rank_of(c[i]);
    for (int j = 0; j < (g_rank + 1) * (i + 2); ++j) {
      int flag = 0, v = j, w = -1;
      MPI_Status st;
      MPI_Iprobe(MPI_ANY_SOURCE, 3, c[i], &flag, &st);
      MPI_Sendrecv(&v, 1, MPI_INT, me, 3, &w, 1, MPI_INT, me, 3, c[i], MPI_STATUS_IGNORE);
      if (w != v) error("lazy: self message " + std::to_string(w));
      void* attr = nullptr;
      MPI_Comm_get_attr(c[i], MPI_TAG_UB, &attr, &flag);
    }
    long bits = 1L << g_rank, all = 0;
    MPI_Allreduce(&bits, &all, 1, MPI_LONG, MPI_BOR, c[i]);
    if (all != (1L << g_size) - 1) error("lazy: MPI_BOR gave " + std::to_string(all));
  }
  const std::vector<int> who = members(MPI_COMM_WORLD);
  for (int i = 0; i < 3; ++i) {
    const std::string tag = "lazy comm " + std::to_string(i);
    blocking_allreduce(c[i], i, 1024, tag + " first allreduce");
    blocking_bcast(c[i], i, 4096, i % g_size, tag + " bcast");
  }
  std::vector<std::unique_ptr<Allreduce>> ops;
  std::vector<MPI_Request> reqs(3);
  for (int i = 0; i < 3; ++i) {
    ops.push_back(std::make_unique<Allreduce>(10 + i, 4096, members(c[i])));
    MPI_Iallreduce(ops.back()->send.data(), ops.back()->recv.data(), 4096, MPI_INT, MPI_SUM, c[i],
                   &reqs[static_cast<size_t>(i)]);
  }
  MPI_Waitall(3, reqs.data(), MPI_STATUSES_IGNORE);
  for (int i = 0; i < 3; ++i)
    ops[static_cast<size_t>(i)]->check("lazy iallreduce " + std::to_string(i));
  for (MPI_Comm& x : c) MPI_Comm_free(&x);

  MPI_Comm a = dup(MPI_COMM_WORLD), b = dup(MPI_COMM_WORLD);
  Allreduce x(50, 16384, who);
  MPI_Request r;
  if (g_rank % 2 == 0) {
    MPI_Iallreduce(x.send.data(), x.recv.data(), 16384, MPI_INT, MPI_SUM, a, &r);
    blocking_allreduce(b, 51, 16384, "B first, blocking");
  } else {
    blocking_allreduce(b, 51, 16384, "B first, blocking");
    MPI_Iallreduce(x.send.data(), x.recv.data(), 16384, MPI_INT, MPI_SUM, a, &r);
  }
  MPI_Wait(&r, MPI_STATUS_IGNORE);
  x.check("A first, non-blocking");
  blocking_allreduce(a, 52, 16384, "A then blocking");
  MPI_Comm_free(&a);
  MPI_Comm_free(&b);
}

// ---- 19. inputs that may differ per rank (issue 39) ----------------------------------------

// A vector of n ints at every other int (stride 2), and its buffer of 2n ints whose odd
// positions must stay untouched (-3).
MPI_Datatype strided(int n) {
  MPI_Datatype t;
  MPI_Type_vector(n, 1, 2, MPI_INT, &t);
  MPI_Type_commit(&t);
  return t;
}
MPI_Datatype contiguous(int n) {
  MPI_Datatype t;
  MPI_Type_contiguous(n, MPI_INT, &t);
  MPI_Type_commit(&t);
  return t;
}
// How rank r describes n ints: 0 MPI_INT x n, 1 a contiguous type of n ints x 1, 2 a
// strided vector x 1 (2n ints of buffer).
int kind_of(int rank, int shift) {
  return (rank + shift) % 3;
}
struct Ints {
  int kind, n;
  std::vector<int> buf;
  MPI_Datatype type = MPI_INT;
  int count;
  Ints(int kind_, int n_)
      : kind(kind_), n(n_), buf(static_cast<size_t>(kind_ == 2 ? 2 * n_ : n_), -3) {
    count = kind == 0 ? n : 1;
    if (kind == 1) type = contiguous(n);
    if (kind == 2) type = strided(n);
  }
  ~Ints() {
    if (type != MPI_INT) MPI_Type_free(&type);
  }
  Ints(const Ints&) = delete;
  Ints& operator=(const Ints&) = delete;
  int& at(int i) { return buf[static_cast<size_t>(kind == 2 ? 2 * i : i)]; }
  std::vector<int> values() {
    std::vector<int> v(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) v[static_cast<size_t>(i)] = at(i);
    return v;
  }
  void check_gaps(const std::string& what) {
    if (kind != 2) return;
    for (int i = 0; i < n; ++i)
      if (buf[static_cast<size_t>(2 * i + 1)] != -3) {
        error(what + ": a gap of the strided type was written");
        return;
      }
  }
};

// Bcast, allgather and alltoall (blocking and non-blocking) where ranks describe the same
// ints with MPI_INT, a contiguous derived type or a strided vector; MPI_BOTTOM with an
// absolute-address struct on one rank. (Reductions take one datatype on every rank, and
// MPI's predefined ops predefined types only: no mixing there.)
void mixed_types() {
  const std::vector<int> sizes = {1, 8, 700, 20000};
  for (int shift = 0; shift < 3; ++shift)
    for (int n : sizes)
      for (int nb = 0; nb < 2; ++nb) {
        const std::string at = " n=" + std::to_string(n) + " shift=" + std::to_string(shift) +
                               (nb ? " nonblocking" : "");
        const int root = (shift + n) % g_size;
        {
          Ints b(kind_of(g_rank, shift), n);
          if (g_rank == root)
            for (int i = 0; i < n; ++i) b.at(i) = bc_val(shift + n, static_cast<size_t>(i));
          if (nb) {
            MPI_Request r;
            MPI_Ibcast(b.buf.data(), b.count, b.type, root, MPI_COMM_WORLD, &r);
            MPI_Wait(&r, MPI_STATUS_IGNORE);
          } else {
            MPI_Bcast(b.buf.data(), b.count, b.type, root, MPI_COMM_WORLD);
          }
          expect_eq<int>("bcast" + at, b.values(), [&](size_t i) { return bc_val(shift + n, i); });
          b.check_gaps("bcast" + at);
          own("bcast" + at, b.values());
        }
        if (n > 700) continue;
        {  // allgather: send as one kind, receive every block as another
          Ints s(kind_of(g_rank, shift), n);
          for (int i = 0; i < n; ++i) s.at(i) = g_rank * 100000 + i;
          const int rk = kind_of(g_rank, shift + 1);
          std::vector<int> all(static_cast<size_t>(g_size * n * (rk == 2 ? 2 : 1)), -3);
          MPI_Datatype block = rk == 0 ? MPI_INT : rk == 1 ? contiguous(n) : strided(n);
          const int rc = rk == 0 ? n : 1;
          if (rk == 2) {  // blocks of 2n ints each
            MPI_Datatype vec = block;
            MPI_Type_create_resized(vec, 0, static_cast<MPI_Aint>(2 * n * sizeof(int)), &block);
            MPI_Type_commit(&block);
            MPI_Type_free(&vec);
          }
          if (nb) {
            MPI_Request r;
            MPI_Iallgather(s.buf.data(), s.count, s.type, all.data(), rc, block, MPI_COMM_WORLD,
                           &r);
            if (block != MPI_INT) MPI_Type_free(&block);  // freed while the operation runs
            MPI_Wait(&r, MPI_STATUS_IGNORE);
          } else {
            MPI_Allgather(s.buf.data(), s.count, s.type, all.data(), rc, block, MPI_COMM_WORLD);
            if (block != MPI_INT) MPI_Type_free(&block);
          }
          std::vector<int> got;
          for (int p = 0; p < g_size; ++p)
            for (int i = 0; i < n; ++i)
              got.push_back(all[static_cast<size_t>(rk == 2 ? 2 * (p * n + i) : p * n + i)]);
          expect_eq<int>("allgather" + at, got, [&](size_t i) {
            return static_cast<int>(i / static_cast<size_t>(n)) * 100000 +
                   static_cast<int>(i % static_cast<size_t>(n));
          });
          own("allgather" + at, got);
        }
        {  // alltoall: n ints per peer, send contiguous types or MPI_INT, receive MPI_INT
          const int k = kind_of(g_rank, shift) == 1 ? 1 : 0;
          std::vector<int> s(static_cast<size_t>(g_size * n)), r(s.size(), -3);
          for (size_t i = 0; i < s.size(); ++i) s[i] = g_rank * 1000000 + static_cast<int>(i);
          MPI_Datatype st = k ? contiguous(n) : MPI_INT;
          MPI_Alltoall(s.data(), k ? 1 : n, st, r.data(), n, MPI_INT, MPI_COMM_WORLD);
          if (k) MPI_Type_free(&st);
          expect_eq<int>("alltoall" + at, r, [&](size_t i) {
            const int p = static_cast<int>(i / static_cast<size_t>(n));
            return p * 1000000 + g_rank * n + static_cast<int>(i % static_cast<size_t>(n));
          });
          own("alltoall" + at, r);
        }
      }
  // MPI_BOTTOM: rank 0 describes the bcast's ints by their absolute addresses.
  {
    std::vector<int> head(5, -1), tail(7, -1);
    if (g_rank == 1 % g_size)
      for (int i = 0; i < 12; ++i)
        (i < 5 ? head[static_cast<size_t>(i)] : tail[static_cast<size_t>(i - 5)]) =
            bc_val(77, static_cast<size_t>(i));
    MPI_Datatype t = MPI_INT;
    if (g_rank == 0) {
      MPI_Aint where[2];
      MPI_Get_address(head.data(), &where[0]);
      MPI_Get_address(tail.data(), &where[1]);
      const int lens[2] = {5, 7};
      const MPI_Datatype types[2] = {MPI_INT, MPI_INT};
      MPI_Type_create_struct(2, lens, where, types, &t);
      MPI_Type_commit(&t);
      MPI_Bcast(MPI_BOTTOM, 1, t, 1 % g_size, MPI_COMM_WORLD);
      MPI_Type_free(&t);
    } else {
      std::vector<int> all(12, -1);
      if (g_rank == 1 % g_size)
        for (int i = 0; i < 12; ++i)
          all[static_cast<size_t>(i)] = bc_val(77, static_cast<size_t>(i));
      MPI_Bcast(all.data(), 12, MPI_INT, 1 % g_size, MPI_COMM_WORLD);
      std::copy(all.begin(), all.begin() + 5, head.begin());
      std::copy(all.begin() + 5, all.end(), tail.begin());
    }
    head.insert(head.end(), tail.begin(), tail.end());
    expect_eq<int>("bcast MPI_BOTTOM", head, [](size_t i) { return bc_val(77, i); });
    own("bcast MPI_BOTTOM", head);
  }
}

// The same collectives with buffers of different kinds per rank: MPI_Alloc_mem, a shared
// window (MPI_Win_allocate_shared) and the heap.
void buffer_kinds() {
  const int n = 4096;
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int* shared = nullptr;
  MPI_Win win;
  MPI_Win_allocate_shared(static_cast<MPI_Aint>(2 * n * sizeof(int)), sizeof(int), MPI_INFO_NULL,
                          node, &shared, &win);
  int* alloc = nullptr;
  MPI_Alloc_mem(static_cast<MPI_Aint>(2 * n * sizeof(int)), MPI_INFO_NULL, &alloc);
  std::vector<int> heap(static_cast<size_t>(2 * n));
  int* kinds[3] = {heap.data(), alloc, shared};
  const std::vector<int> who = members(MPI_COMM_WORLD);
  for (int shift = 0; shift < 3; ++shift) {
    int* in = kinds[(g_rank + shift) % 3];
    int* out = in + n;
    for (int i = 0; i < n; ++i) in[i] = ar_in(g_rank, shift, static_cast<size_t>(i));
    MPI_Allreduce(in, out, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    std::vector<int> got(out, out + n);
    expect_eq<int>("allreduce kind shift " + sz(shift), got, [&](size_t i) {
      int t = 0;
      for (int w : who) t += ar_in(w, shift, i);
      return t;
    });
    own("allreduce kind shift " + sz(shift), got);
    if (g_rank == shift % g_size)
      for (int i = 0; i < n; ++i) out[i] = bc_val(shift, static_cast<size_t>(i));
    MPI_Bcast(out, n, MPI_INT, shift % g_size, MPI_COMM_WORLD);
    got.assign(out, out + n);
    expect_eq<int>("bcast kind shift " + sz(shift), got,
                   [&](size_t i) { return bc_val(shift, i); });
    own("bcast kind shift " + sz(shift), got);
  }
  MPI_Free_mem(alloc);
  MPI_Win_free(&win);
  MPI_Comm_free(&node);
}

// The v-forms with counts that differ per rank (some zero), between routed collectives.
void vform_counts() {
  const size_t ns = static_cast<size_t>(g_size);
  std::vector<int> counts(ns), displs(ns);
  int total = 0;
  for (int p = 0; p < g_size; ++p) {
    counts[static_cast<size_t>(p)] = p % 3 == 1 ? 0 : 100 * (p + 1);
    displs[static_cast<size_t>(p)] = total;
    total += counts[static_cast<size_t>(p)];
  }
  std::vector<int> mine(static_cast<size_t>(counts[static_cast<size_t>(g_rank)]));
  for (size_t i = 0; i < mine.size(); ++i) mine[i] = g_rank * 10000 + static_cast<int>(i);
  std::vector<int> all(static_cast<size_t>(total), -1);
  MPI_Allgatherv(mine.data(), static_cast<int>(mine.size()), MPI_INT, all.data(), counts.data(),
                 displs.data(), MPI_INT, MPI_COMM_WORLD);
  own("allgatherv", all);
  blocking_allreduce(MPI_COMM_WORLD, 3, 64, "allreduce after allgatherv");
  // alltoallv: rank r sends (r + p) % 4 * 10 ints to p.
  std::vector<int> sc(ns), sd(ns), rc(ns), rd(ns);
  int st = 0, rt = 0;
  for (int p = 0; p < g_size; ++p) {
    sc[static_cast<size_t>(p)] = (g_rank + p) % 4 * 10;
    rc[static_cast<size_t>(p)] = (p + g_rank) % 4 * 10;
    sd[static_cast<size_t>(p)] = st;
    rd[static_cast<size_t>(p)] = rt;
    st += sc[static_cast<size_t>(p)];
    rt += rc[static_cast<size_t>(p)];
  }
  std::vector<int> s(static_cast<size_t>(st)), r(static_cast<size_t>(rt), -1);
  for (size_t i = 0; i < s.size(); ++i) s[i] = g_rank * 1000 + static_cast<int>(i);
  MPI_Alltoallv(s.data(), sc.data(), sd.data(), MPI_INT, r.data(), rc.data(), rd.data(), MPI_INT,
                MPI_COMM_WORLD);
  own("alltoallv", r);
  blocking_bcast(MPI_COMM_WORLD, 5, 64, g_size - 1, "bcast after alltoallv");
}

// ---- issue 39: the reduction types real codes pass ---------------------------------------
//
// Complex sum and prod, 16-bit integers under every operator (unsigned max and min pass
// through), MPI_MAXLOC/MPI_MINLOC on every pair type, with ties (equal values on several
// ranks: the lowest index wins), in allreduce, reduce (root size - 1), reduce_scatter_block
// and iallreduce, at 37 elements (the small path) and 3000 (the others). Inputs are small
// integers, so every complex product and sum is exact in any order (cx_in). Only the values and
// indices of pairs are hashed, never a struct's padding (which MPI leaves alone and the
// engine does not promise to).

template <typename T>
struct Cx {
  T re, im;
};

// Rank r's complex input at i. Sum: parts in -2..2. Prod: 2..4 + 1i, whose partial
// products all lie in the first quadrant (arguments below 27 degrees each, 3 ranks): no part
// is ever zero, since a zero's sign would depend on the order of the products (MPI fixes
// none), and every product is exact.
template <typename T>
Cx<T> cx_in(int rank, size_t i, bool prod) {
  if (prod) return {T((rank + static_cast<int>(i)) % 3 + 2), T(1)};
  const int a = (rank + static_cast<int>(i)) % 5 - 2, b = (rank * 3 + static_cast<int>(i)) % 4 - 1;
  return {T(a), T(b)};
}

template <typename T>
void complex_case(MPI_Datatype type, const char* name, size_t n) {
  for (const bool prod : {false, true}) {
    const std::string tag = std::string(name) + (prod ? " prod" : " sum") + " n=" + sz(n);
    std::vector<Cx<T>> in(n), out(n, Cx<T>{T(-9), T(-9)});
    for (size_t i = 0; i < n; ++i) in[i] = cx_in<T>(g_rank, i, prod);
    MPI_Allreduce(in.data(), out.data(), static_cast<int>(n), type, prod ? MPI_PROD : MPI_SUM,
                  MPI_COMM_WORLD);
    std::vector<long long> re(n), im(n);
    for (size_t i = 0; i < n; ++i)
      re[i] = static_cast<long long>(out[i].re), im[i] = static_cast<long long>(out[i].im);
    const auto want = [&](size_t i) {
      Cx<long long> acc{prod ? 1 : 0, 0};
      for (int r = 0; r < g_size; ++r) {
        const Cx<T> v = cx_in<T>(r, i, prod);
        const auto vr = static_cast<long long>(v.re), vi = static_cast<long long>(v.im);
        acc = prod ? Cx<long long>{acc.re * vr - acc.im * vi, acc.re * vi + acc.im * vr}
                   : Cx<long long>{acc.re + vr, acc.im + vi};
      }
      return acc;
    };
    expect_eq<long long>(tag + " re", re, [&](size_t i) { return want(i).re; });
    expect_eq<long long>(tag + " im", im, [&](size_t i) { return want(i).im; });
    own(tag, out);
  }
  // Reduce at the last rank and a non-blocking allreduce of the same type.
  std::vector<Cx<T>> in(n), out(n, Cx<T>{T(-9), T(-9)});
  for (size_t i = 0; i < n; ++i) in[i] = cx_in<T>(g_rank, i, true);
  MPI_Reduce(in.data(), out.data(), static_cast<int>(n), type, MPI_PROD, g_size - 1,
             MPI_COMM_WORLD);
  if (g_rank == g_size - 1) own(std::string(name) + " reduce prod n=" + sz(n), out);
  MPI_Request req;
  MPI_Iallreduce(in.data(), out.data(), static_cast<int>(n), type, MPI_SUM, MPI_COMM_WORLD, &req);
  MPI_Wait(&req, MPI_STATUS_IGNORE);
  own(std::string(name) + " iallreduce sum n=" + sz(n), out);
}

// 16-bit integers, -20..20 (unsigned 0..40): no sum or product of 3 ranks overflows. What an
// overflow gives is the library's: Open MPI 5.0.11 saturates 16-bit sums (MPI_SUM of 62307,
// 31153 and 27925 as MPI_UNSIGNED_SHORT is 65535), where MPICH and the engine wrap (55849);
// the engine's wrapping is tested in reduce_host_tests.
template <typename T>
T i16_in(int rank, size_t i) {
  const int v = static_cast<int>((i * 7 + static_cast<size_t>(rank) * 13) % 41);
  return static_cast<T>(std::is_signed_v<T> ? v - 20 : v);
}

template <typename T>
void int16_case(MPI_Datatype type, const char* name, size_t n) {
  const MPI_Op ops[] = {MPI_SUM, MPI_PROD, MPI_MAX, MPI_MIN};
  const char* names[] = {"sum", "prod", "max", "min"};
  for (int k = 0; k < 4; ++k) {
    std::vector<T> in(n), out(n, T(7));
    for (size_t i = 0; i < n; ++i) in[i] = i16_in<T>(g_rank, i);
    MPI_Allreduce(in.data(), out.data(), static_cast<int>(n), type, ops[k], MPI_COMM_WORLD);
    // Unsigned max and min pass through to MPI, whose result is only compared: MPICH 4.0.2
    // orders unsigned types as signed ones (MPI_MAX of 62307 and 31153 as MPI_UNSIGNED_SHORT
    // gives 31153; of 4e9 and 5 as MPI_UNSIGNED, 5).
    if (std::is_unsigned_v<T> && k >= 2) {
      own(std::string(name) + " allreduce " + names[k] + " n=" + sz(n), out);
      continue;
    }
    expect_eq<T>(std::string(name) + " " + names[k], out, [&](size_t i) {
      T acc = 0;
      for (int r = 0; r < g_size; ++r) {
        const T v = i16_in<T>(r, i);
        if (r == 0)
          acc = v;
        else if (k == 0)
          acc = static_cast<T>(acc + v);
        else if (k == 1)
          acc = static_cast<T>(acc * v);
        else if (k == 2)
          acc = std::max(acc, v);
        else
          acc = std::min(acc, v);
      }
      return acc;
    });
    own(std::string(name) + " allreduce " + names[k] + " n=" + sz(n), out);
  }
  // reduce_scatter_block and reduce: the sum.
  const size_t ns = static_cast<size_t>(g_size);
  std::vector<T> in(n * ns), out(n, T(7));
  for (size_t i = 0; i < in.size(); ++i) in[i] = i16_in<T>(g_rank, i);
  MPI_Reduce_scatter_block(in.data(), out.data(), static_cast<int>(n), type, MPI_SUM,
                           MPI_COMM_WORLD);
  own(std::string(name) + " reduce_scatter_block sum n=" + sz(n), out);
  MPI_Reduce(in.data(), out.data(), static_cast<int>(n), type, MPI_MAX, g_size - 1, MPI_COMM_WORLD);
  if (g_rank == g_size - 1) own(std::string(name) + " reduce max n=" + sz(n), out);
}

template <typename V>
struct Loc {
  V value;
  int index;
};

// Rank r's pair at i: value (r + i) % 3 when i % 4 != 0 (ties between ranks), else the same
// value on every rank (all tie); index r * 10 + i % 7 (unordered across ranks).
template <typename V>
Loc<V> loc_in(int rank, size_t i) {
  const int v = i % 4 == 0 ? static_cast<int>(i % 5) : (rank + static_cast<int>(i)) % 3;
  return {static_cast<V>(v), ((rank * 5 + 3) % 7) * 10 + static_cast<int>(i % 7)};
}

template <typename V>
void loc_result(const std::string& tag, const std::vector<Loc<V>>& got, bool max, size_t offset) {
  std::vector<long long> values(got.size()), index(got.size());
  for (size_t i = 0; i < got.size(); ++i) {
    values[i] = static_cast<long long>(got[i].value);
    index[i] = got[i].index;
  }
  const auto want = [&](size_t i) {
    Loc<V> acc = loc_in<V>(0, offset + i);
    for (int r = 1; r < g_size; ++r) {
      const Loc<V> v = loc_in<V>(r, offset + i);
      if (v.value == acc.value)
        acc.index = std::min(acc.index, v.index);
      else if (max ? v.value > acc.value : v.value < acc.value)
        acc = v;
    }
    return acc;
  };
  expect_eq<long long>(tag + " value", values,
                       [&](size_t i) { return static_cast<long long>(want(i).value); });
  expect_eq<long long>(tag + " index", index,
                       [&](size_t i) { return static_cast<long long>(want(i).index); });
  own(tag + " value", values);
  own(tag + " index", index);
}

template <typename V>
void loc_case(MPI_Datatype type, const char* name, size_t n) {
  for (const bool max : {true, false}) {
    const std::string tag = std::string(name) + (max ? " maxloc" : " minloc") + " n=" + sz(n);
    std::vector<Loc<V>> in(n), out(n, Loc<V>{V(-5), -5});
    for (size_t i = 0; i < n; ++i) in[i] = loc_in<V>(g_rank, i);
    const MPI_Op op = max ? MPI_MAXLOC : MPI_MINLOC;
    MPI_Allreduce(in.data(), out.data(), static_cast<int>(n), type, op, MPI_COMM_WORLD);
    loc_result(tag, out, max, 0);
    MPI_Request req;
    MPI_Iallreduce(in.data(), out.data(), static_cast<int>(n), type, op, MPI_COMM_WORLD, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    loc_result(tag + " iallreduce", out, max, 0);
    MPI_Reduce(in.data(), out.data(), static_cast<int>(n), type, op, g_size - 1, MPI_COMM_WORLD);
    if (g_rank == g_size - 1) loc_result(tag + " reduce", out, max, 0);
  }
  // reduce_scatter_block with maxloc: rank r gets block r.
  const size_t ns = static_cast<size_t>(g_size);
  std::vector<Loc<V>> in(n * ns), out(n, Loc<V>{V(-5), -5});
  for (size_t i = 0; i < in.size(); ++i) in[i] = loc_in<V>(g_rank, i);
  MPI_Reduce_scatter_block(in.data(), out.data(), static_cast<int>(n), type, MPI_MAXLOC,
                           MPI_COMM_WORLD);
  loc_result(std::string(name) + " reduce_scatter_block maxloc n=" + sz(n), out, true,
             n * static_cast<size_t>(g_rank));
}

void reduction_types() {
  for (const size_t n : {size_t{37}, size_t{3000}}) {
    complex_case<float>(MPI_C_FLOAT_COMPLEX, "c_float_complex", n);
    complex_case<double>(MPI_C_DOUBLE_COMPLEX, "c_double_complex", n);
    complex_case<float>(MPI_COMPLEX, "complex", n);
    complex_case<double>(MPI_DOUBLE_COMPLEX, "double_complex", n);
    int16_case<short>(MPI_SHORT, "short", n);
    int16_case<unsigned short>(MPI_UNSIGNED_SHORT, "unsigned_short", n);
    int16_case<int16_t>(MPI_INT16_T, "int16_t", n);
    int16_case<uint16_t>(MPI_UINT16_T, "uint16_t", n);
    int16_case<int16_t>(MPI_INTEGER2, "integer2", n);  // Fortran's sized types, as BLACS's
    complex_case<double>(MPI_COMPLEX16, "complex16", n);
    loc_case<int>(MPI_2INT, "2int", n);
    loc_case<float>(MPI_FLOAT_INT, "float_int", n);
    loc_case<double>(MPI_DOUBLE_INT, "double_int", n);
    loc_case<long>(MPI_LONG_INT, "long_int", n);
    loc_case<short>(MPI_SHORT_INT, "short_int", n);
    loc_case<long double>(MPI_LONG_DOUBLE_INT, "long_double_int", n);
  }
}

std::string arg_str(int argc, char** argv, int i, const char* dflt) {
  return argc > i ? argv[i] : dflt;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s CASE OUT_PREFIX [ARGS...]\n", argv[0]);
    return 2;
  }
  const std::string name = argv[1];
  const bool threaded = name == "thread_exits" || name == "threads_distinct_comms" ||
                        name == "threads_comm_free" || name == "threads_race";
  int provided = MPI_THREAD_SINGLE;
  if (threaded)
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  else
    MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  bool known = true;
  if (threaded && provided < MPI_THREAD_MULTIPLE) {
    g_lines.push_back("skip MPI_THREAD_MULTIPLE not provided");
  } else if (name == "many_pending") {
    many_pending(arg_str(argc, argv, 3, "allreduce"), arg_int(argc, argv, 4, 40));
  } else if (name == "order_dependent_sum") {
    order_dependent_sum();
  } else if (name == "cross_comm_order") {
    cross_comm_order(arg_str(argc, argv, 3, "warm"));
  } else if (name == "thread_exits") {
    thread_exits();
  } else if (name == "threads_distinct_comms") {
    threads_distinct_comms();
  } else if (name == "threads_comm_free") {
    threads_comm_free();
  } else if (name == "threads_race") {
    threads_race(arg_int(argc, argv, 3, 200));
  } else if (name == "reused_handle") {
    reused_handle();
  } else if (name == "nbx") {
    nbx(arg_str(argc, argv, 3, "dup"));
  } else if (name == "first_nonblocking") {
    first_nonblocking(arg_str(argc, argv, 3, "dup"));
  } else if (name == "comm_free_pending") {
    comm_free_pending();
  } else if (name == "get_status_loop") {
    get_status_loop(arg_str(argc, argv, 3, "get_status"));
  } else if (name == "cross_comm_progress") {
    cross_comm_progress(arg_str(argc, argv, 3, "allreduce"));
  } else if (name == "many_comms") {
    many_comms(arg_int(argc, argv, 3, 64));
  } else if (name == "split_type_subcomms") {
    split_type_subcomms();
  } else if (name == "comm_self") {
    comm_self();
  } else if (name == "reduce_roots") {
    reduce_roots();
  } else if (name == "large_count") {
    large_count();
  } else if (name == "small_interleaved") {
    small_interleaved(arg_int(argc, argv, 3, 40));
  } else if (name == "mixed_types") {
    mixed_types();
  } else if (name == "buffer_kinds") {
    buffer_kinds();
  } else if (name == "vform_counts") {
    vform_counts();
  } else if (name == "reduction_types") {
    reduction_types();
  } else if (name == "lazy_first_collective") {
    lazy_first_collective();
  } else if (name == "small_devshm") {
    small_devshm(arg_int(argc, argv, 3, 8));
  } else if (legal_progress(name, argc, argv)) {  // legal_progress.cpp's cases
  } else if (run_gather_scatter_case(name)) {
    // legal_gather_scatter.cpp's cases
  } else if (run_allgatherv_case(name)) {
    // legal_allgatherv.cpp's cases
  } else {
    known = false;
    if (g_rank == 0) std::fprintf(stderr, "legal_programs: unknown case %s\n", name.c_str());
  }
  if (known) {
    g_lines.push_back("ok");
    const std::string path = std::string(argv[2]) + "." + std::to_string(g_rank);
    FILE* f = std::fopen(path.c_str(), "w");
    if (!f) {
      std::fprintf(stderr, "legal_programs: cannot write %s\n", path.c_str());
      ++g_errors;
    } else {
      for (const std::string& l : g_lines) std::fprintf(f, "%s\n", l.c_str());
      std::fclose(f);
    }
  }
  MPI_Finalize();
  return !known || g_errors ? 1 : 0;
}
