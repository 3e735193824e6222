// What tests/preload/legal_programs.cpp and the cases of its other files
// (legal_progress.cpp, legal_gather_scatter.cpp, ...) share: the result lines each rank
// writes (own, xrank, report_calls), the checks that count wrong elements, and the integer
// collectives with exact expectations. Plain MPI: no collbench headers.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <cstdio>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace legal {

inline int g_rank = 0, g_size = 1;
inline int g_errors = 0;
inline std::mutex g_mutex;  // lines and errors from several threads
inline std::vector<std::string> g_lines;
// Calls a case made per MPI function, written by report_calls() as "calls FUNCTION N" lines
// (the test sums them over the ranks and expects exactly the engine's counts).
inline std::map<std::string, long> g_calls;

inline uint64_t fnv(const void* p, size_t bytes) {
  uint64_t h = 1469598103934665603ull;
  const auto* b = static_cast<const unsigned char*>(p);
  for (size_t i = 0; i < bytes; ++i) h = (h ^ b[i]) * 1099511628211ull;
  return h;
}

inline void line(const char* kind, const std::string& name, const void* p, size_t bytes) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(fnv(p, bytes)));
  std::lock_guard<std::mutex> lock(g_mutex);
  g_lines.push_back(std::string(kind) + " " + name + " " + buf);
}

template <typename T>
inline void own(const std::string& name, const std::vector<T>& v) {
  line("own", name, v.data(), v.size() * sizeof(T));
}
template <typename T>
inline void xrank(const std::string& name, const std::vector<T>& v) {
  line("xrank", name, v.data(), v.size() * sizeof(T));
}

// Counts a wrong element; reports the first few of each check.
template <typename T>
inline void expect_eq(const std::string& what, const std::vector<T>& got,
                      const std::function<T(size_t)>& want) {
  int shown = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const T w = want(i);
    if (got[i] == w) continue;
    std::lock_guard<std::mutex> lock(g_mutex);
    ++g_errors;
    if (shown++ < 3)
      std::fprintf(stderr, "legal_programs: rank %d: %s: element %zu is %lld, expected %lld\n",
                   g_rank, what.c_str(), i, static_cast<long long>(got[i]),
                   static_cast<long long>(w));
  }
}

inline void error(const std::string& what) {
  std::lock_guard<std::mutex> lock(g_mutex);
  ++g_errors;
  std::fprintf(stderr, "legal_programs: rank %d: %s\n", g_rank, what.c_str());
}

inline void report_calls() {
  for (const auto& [fn, calls] : g_calls)
    g_lines.push_back("calls " + fn + " " + std::to_string(calls));
}

inline std::string sz(size_t n) {
  return std::to_string(n);
}

inline MPI_Comm dup(MPI_Comm c) {
  MPI_Comm d;
  MPI_Comm_dup(c, &d);
  return d;
}

inline int rank_of(MPI_Comm c) {
  int r = 0;
  MPI_Comm_rank(c, &r);
  return r;
}
inline int size_of(MPI_Comm c) {
  int s = 0;
  MPI_Comm_size(c, &s);
  return s;
}

// The world ranks of a communicator's members, in its rank order.
inline std::vector<int> members(MPI_Comm c) {
  const int n = size_of(c);
  std::vector<int> out(static_cast<size_t>(n));
  MPI_Allgather(&g_rank, 1, MPI_INT, out.data(), 1, MPI_INT, c);
  return out;
}

// ---- integer collectives with exact expectations, on any communicator ------------------

// Rank r's allreduce input for operation `k`: an exact sum over the members' world ranks.
inline int ar_in(int world_rank, int k, size_t i) {
  return (world_rank + 1) * (k + 1) + static_cast<int>(i % 97);
}

struct Allreduce {
  std::vector<int> send, recv;
  std::vector<int> who;
  int k = 0;
  // `who_`: the world ranks of the communicator's members.
  Allreduce(int k_, size_t n, const std::vector<int>& who_) : who(who_), k(k_) {
    send.resize(n);
    recv.assign(n, -7);
    for (size_t i = 0; i < n; ++i) send[i] = ar_in(g_rank, k, i);
  }
  void check(const std::string& what) {
    expect_eq<int>(what, recv, [&](size_t i) {
      int s = 0;
      for (int w : who) s += ar_in(w, k, i);
      return s;
    });
    own(what, recv);
  }
};

inline void blocking_allreduce(MPI_Comm c, int k, size_t n, const std::string& what) {
  Allreduce a(k, n, members(c));
  MPI_Allreduce(a.send.data(), a.recv.data(), static_cast<int>(n), MPI_INT, MPI_SUM, c);
  a.check(what);
}

// Bcast of n ints from `root` (its communicator rank), value k.
inline int bc_val(int k, size_t i) {
  return k * 1000 + static_cast<int>(i % 1013);
}

inline void blocking_bcast(MPI_Comm c, int k, size_t n, int root, const std::string& what) {
  std::vector<int> buf(n, -1);
  if (rank_of(c) == root)
    for (size_t i = 0; i < n; ++i) buf[i] = bc_val(k, i);
  MPI_Bcast(buf.data(), static_cast<int>(n), MPI_INT, root, c);
  expect_eq<int>(what, buf, [&](size_t i) { return bc_val(k, i); });
  own(what, buf);
}

}  // namespace legal

// legal_progress.cpp: runs the case `name` if it is one of its own (then true).
bool legal_progress(const std::string& name, int argc, char** argv);
