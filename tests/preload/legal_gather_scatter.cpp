// MPI_Gather and MPI_Scatter as real programs call them (issue 39, "Take what real codes
// pass"; test_preload_legal.py, legal_gather_scatter), which libcb_engine_preload.so gives
// its engine: roots other than 0, MPI_IN_PLACE at the root, sub-communicators (ranks
// reversed, halves; a one-rank one at 3 ranks), blocking and non-blocking forms, and on
// each rank another description of the same bytes (MPI_INT x n, one contiguous type of n
// ints, one strided vector type that the preload packs), which MPI allows since only the
// type signatures must match. The arguments MPI calls not significant (a gather's receive
// side and a scatter's send side off the root, the root's own side in place) are null, 0
// and MPI_DATATYPE_NULL in two of three calls and a real buffer in the third, as programs
// pass them both ways.
//
// Lines: "own NAME HASH" for every buffer a call wrote or must leave alone, and
// "calls FUNCTION N" per function (its _c form counted with it): the test expects every one
// of those calls to be the engine's.
#include "legal_gather_scatter.hpp"

#include "legal_common.hpp"

#include <mpi.h>

#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

namespace {

using namespace legal;

template <typename Want>
void expect(const std::string& what, const std::vector<int>& got, Want&& want) {
  expect_eq<int>(what, got, std::function<int(size_t)>(std::forward<Want>(want)));
}

// Element i of communicator rank r's block in call k.
int val(int r, int k, size_t i) {
  return r * 1000000 + (k % 97) * 10000 + static_cast<int>(i);
}

// How a rank describes a block of `count` ints: MPI_INT x count, one contiguous type of
// count ints, or one vector type of every other int resized to 2 x count ints (packed by
// the preload).
enum Kind { kInts, kContiguous, kStrided };

// `blocks` blocks of `count` ints in a buffer laid out as `kind` says, poisoned.
struct Blocks {
  Kind kind;
  int count;
  size_t stride;
  MPI_Datatype type = MPI_INT;
  std::vector<int> buf;
  Blocks(Kind k, int n, int blocks, int poison) : kind(k), count(n), stride(k == kStrided ? 2 : 1) {
    buf.assign(static_cast<size_t>(blocks) * static_cast<size_t>(n) * stride, poison);
    if (k == kContiguous) {
      MPI_Type_contiguous(n, MPI_INT, &type);
      MPI_Type_commit(&type);
    } else if (k == kStrided) {
      MPI_Datatype vec;
      MPI_Type_vector(n, 1, 2, MPI_INT, &vec);
      MPI_Type_create_resized(vec, 0, static_cast<MPI_Aint>(2 * n * sizeof(int)), &type);
      MPI_Type_commit(&type);
      MPI_Type_free(&vec);
    }
  }
  ~Blocks() {
    if (type != MPI_INT) MPI_Type_free(&type);
  }
  Blocks(const Blocks&) = delete;
  Blocks& operator=(const Blocks&) = delete;
  int per_block() const { return kind == kInts ? count : 1; }  // the call's count
  int& at(int b, size_t i) {
    return buf[(static_cast<size_t>(b) * static_cast<size_t>(count) + i) * stride];
  }
  // The ints the type describes, block after block.
  std::vector<int> values(int blocks) {
    std::vector<int> out;
    for (int b = 0; b < blocks; ++b)
      for (size_t i = 0; i < static_cast<size_t>(count); ++i) out.push_back(at(b, i));
    return out;
  }
};

struct Call {
  MPI_Comm comm;
  std::string name;  // the communicator's
  int root, count, shift, k;
  bool in_place, nonblocking;
  std::string at() const {
    return " " + name + " root=" + std::to_string(root) + " n=" + std::to_string(count) +
           " shift=" + std::to_string(shift) + (in_place ? " in_place" : "") +
           (nonblocking ? " nonblocking" : "");
  }
};

int rank_of(MPI_Comm c) {
  int r = 0;
  MPI_Comm_rank(c, &r);
  return r;
}
int size_of(MPI_Comm c) {
  int s = 0;
  MPI_Comm_size(c, &s);
  return s;
}

void gather(const Call& c) {
  const int n = size_of(c.comm), me = rank_of(c.comm);
  const bool root = me == c.root, in_place = root && c.in_place;
  // Insignificant arguments null in two calls of three (shift 1 and 2), real in the third.
  const bool real = c.shift == 0;
  Blocks send(Kind((g_rank + c.shift) % 3), c.count, 1, -1);
  Blocks all(Kind((g_rank + c.shift + 1) % 3), c.count, root || real ? n : 0, -2);
  for (size_t i = 0; i < static_cast<size_t>(c.count); ++i)
    (in_place ? all.at(me, i) : send.at(0, i)) = val(me, c.k, i);
  const void* sb = in_place ? MPI_IN_PLACE : send.buf.data();
  const int sc = in_place && !real ? 0 : send.per_block();
  const MPI_Datatype st = in_place && !real ? MPI_DATATYPE_NULL : send.type;
  void* rb = root || real ? all.buf.data() : nullptr;
  const int rc = root || real ? all.per_block() : 0;
  const MPI_Datatype rt = root || real ? all.type : MPI_DATATYPE_NULL;
  if (c.nonblocking) {
    MPI_Request r;
    MPI_Igather(sb, sc, st, rb, rc, rt, c.root, c.comm, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    ++g_calls["MPI_Igather"];
  } else {
    MPI_Gather(sb, sc, st, rb, rc, rt, c.root, c.comm);
    ++g_calls["MPI_Gather"];
  }
  const std::string what = "gather" + c.at();
  if (root) {
    expect(what, all.values(n), [&](size_t i) {
      return val(static_cast<int>(i / static_cast<size_t>(c.count)), c.k,
                 i % static_cast<size_t>(c.count));
    });
    own(what, all.buf);  // the gaps of a strided type too: left as they were
  } else {
    expect(what + " (input)", send.values(1), [&](size_t i) { return val(me, c.k, i); });
    own(what + " (input)", send.buf);
  }
}

void scatter(const Call& c) {
  const int n = size_of(c.comm), me = rank_of(c.comm);
  const bool root = me == c.root, in_place = root && c.in_place;
  const bool real = c.shift == 0;
  Blocks all(Kind((g_rank + c.shift) % 3), c.count, root || real ? n : 0, -2);
  Blocks out(Kind((g_rank + c.shift + 1) % 3), c.count, 1, -3);
  if (root)
    for (int b = 0; b < n; ++b)
      for (size_t i = 0; i < static_cast<size_t>(c.count); ++i) all.at(b, i) = val(b, c.k, i);
  const void* sb = root || real ? all.buf.data() : nullptr;
  const int sc = root || real ? all.per_block() : 0;
  const MPI_Datatype st = root || real ? all.type : MPI_DATATYPE_NULL;
  void* rb = in_place ? MPI_IN_PLACE : out.buf.data();
  const int rc = in_place && !real ? 0 : out.per_block();
  const MPI_Datatype rt = in_place && !real ? MPI_DATATYPE_NULL : out.type;
  if (c.nonblocking) {
    MPI_Request r;
    MPI_Iscatter(sb, sc, st, rb, rc, rt, c.root, c.comm, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    ++g_calls["MPI_Iscatter"];
  } else {
    MPI_Scatter(sb, sc, st, rb, rc, rt, c.root, c.comm);
    ++g_calls["MPI_Scatter"];
  }
  const std::string what = "scatter" + c.at();
  if (root) {  // its blocks left as they were (its own one is its result in place)
    expect(what + " (input)", all.values(n), [&](size_t i) {
      return val(static_cast<int>(i / static_cast<size_t>(c.count)), c.k,
                 i % static_cast<size_t>(c.count));
    });
    own(what + " (input)", all.buf);
  }
  if (!in_place) {
    expect(what, out.values(1), [&](size_t i) { return val(me, c.k, i); });
    own(what, out.buf);
  }
}

#if MPI_VERSION >= 4
// The large-count forms, once each: MPI_Count counts, MPI_COMM_WORLD, the last rank the root.
void large_count(int n, int k) {
  const int size = size_of(MPI_COMM_WORLD), root = size - 1;
  std::vector<int> mine(static_cast<size_t>(n)), all(static_cast<size_t>(n * size), -2);
  for (size_t i = 0; i < mine.size(); ++i) mine[i] = val(g_rank, k, i);
  MPI_Gather_c(mine.data(), n, MPI_INT, all.data(), n, MPI_INT, root, MPI_COMM_WORLD);
  ++g_calls["MPI_Gather"];
  if (g_rank == root) {
    expect("gather_c", all, [&](size_t i) {
      return val(static_cast<int>(i / static_cast<size_t>(n)), k, i % static_cast<size_t>(n));
    });
    own("gather_c", all);
  }
  std::vector<int> got(static_cast<size_t>(n), -3);
  MPI_Scatter_c(all.data(), n, MPI_INT, got.data(), n, MPI_INT, root, MPI_COMM_WORLD);
  ++g_calls["MPI_Scatter"];
  expect("scatter_c", got, [&](size_t i) { return val(g_rank, k, i); });
  own("scatter_c", got);
}
#endif

void gather_scatter() {
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm rev, half;
  MPI_Comm_split(MPI_COMM_WORLD, 0, size - g_rank, &rev);
  MPI_Comm_split(MPI_COMM_WORLD, g_rank < (size + 1) / 2, g_rank, &half);
  const std::pair<MPI_Comm, const char*> comms[] = {
      {MPI_COMM_WORLD, "world"}, {rev, "reversed"}, {half, "half"}};
  int k = 0;
  for (const auto& [comm, name] : comms) {
    const int n = size_of(comm);
    std::vector<int> roots = {n - 1};  // roots other than 0 first
    for (int r : {1 % n, 0})
      if (r != roots.back() && r != roots.front()) roots.push_back(r);
    for (int root : roots)
      for (int count : {1, 37, 3000})
        for (int shift = 0; shift < 3; ++shift)
          for (int in_place = 0; in_place < 2; ++in_place)
            for (int nb = 0; nb < 2; ++nb) {
              const Call c{comm, name, root, count, shift, k++, in_place != 0, nb != 0};
              gather(c);
              scatter(c);
            }
  }
#if MPI_VERSION >= 4
  large_count(100, 5);  // not k: the halves made different numbers of calls
#endif
  report_calls();
  MPI_Comm_free(&rev);
  MPI_Comm_free(&half);
}

}  // namespace

bool run_gather_scatter_case(const std::string& name) {
  if (name != "gather_scatter") return false;
  gather_scatter();
  return true;
}
