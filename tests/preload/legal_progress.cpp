// Legal programs of cb_legal_programs (legal_programs.cpp's main) on progress (issue 39,
// "Progress everywhere"; tests/integration/test_preload_legal.py, legal_progress_*): rank 0
// starts an engine operation (a 4 MiB MPI_Ibcast from either end, a 4 MiB MPI_Iallreduce),
// then blocks in a call of one family that can only complete once its peers have done
// their part; the peers first wait for the engine operation. Under the preload the
// operation advances only if rank 0's blocking call lets it (docs/preload.md, "Progress");
// plain MPI progresses both.
//
//   progress_family F[,F...] fence, pscw, lock (one-sided), file (open, write_at_all,
//                            read_at_all on OUT_PREFIX.dat), neighbor (allgather, alltoall,
//                            allgatherv on a periodic ring), persistent (an
//                            MPI_Allreduce_init request's MPI_Start and MPI_Wait)
//   progress_nodes N         the same pattern with MPI_Recv and MPI_Win_wait as the blocking
//                            calls, on the even and the odd world ranks' communicators
//                            (run with CB_RANKS_PER_NODE=1 so that they span nodes), N ints
#include <mpi.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "legal_common.hpp"

namespace {

using legal::bc_val;
using legal::error;
using legal::expect_eq;
using legal::g_rank;
using legal::members;
using legal::own;
using legal::rank_of;
using legal::size_of;

// Operation k on `c`: 0 an MPI_Ibcast from rank 0, 1 from the last rank, 2 an
// MPI_Iallreduce; n ints.
class EngineOp {
 public:
  EngineOp(MPI_Comm c, int k, size_t n) : k_(k) {
    if (k < 2) {
      root_ = k == 0 ? 0 : size_of(c) - 1;
      buf_.assign(n, -1);
      if (rank_of(c) == root_)
        for (size_t i = 0; i < n; ++i) buf_[i] = bc_val(k + 1, i);
      MPI_Ibcast(buf_.data(), static_cast<int>(n), MPI_INT, root_, c, &req_);
    } else {
      ar_ = std::make_unique<legal::Allreduce>(k, n, members(c));
      MPI_Iallreduce(ar_->send.data(), ar_->recv.data(), static_cast<int>(n), MPI_INT, MPI_SUM, c,
                     &req_);
    }
  }
  void wait() { MPI_Wait(&req_, MPI_STATUS_IGNORE); }
  void check(const std::string& what) {
    if (ar_) {
      ar_->check(what + ": iallreduce");
      return;
    }
    const std::string name = what + ": ibcast root " + std::to_string(root_);
    expect_eq<int>(name, buf_, [&](size_t i) { return bc_val(k_ + 1, i); });
    own(name, buf_);
  }

 private:
  int k_, root_ = 0;
  std::vector<int> buf_;
  std::unique_ptr<legal::Allreduce> ar_;
  MPI_Request req_ = MPI_REQUEST_NULL;
};

// One family: per round k, `pre` on every rank, then the engine operation; rank 0 (of `c`)
// calls `block` and waits for the operation, the others wait for it, then call `part`;
// then `post`.
struct Family {
  std::vector<int> kinds = {0, 1, 2};  // the engine operations, EngineOp's k
  std::function<void(int)> pre = [](int) {};
  std::function<void(int)> block, part;
  std::function<void(int)> post = [](int) {};
};

void rounds(const std::string& what, MPI_Comm c, size_t n, const Family& f) {
  for (int k : f.kinds) {
    f.pre(k);
    EngineOp op(c, k, n);
    if (rank_of(c) == 0) {
      f.block(k);
      op.wait();
    } else {
      op.wait();
      f.part(k);
    }
    op.check(what + " " + std::to_string(k));
    f.post(k);
  }
}

// MPICH 4.0.2's MPI_Win_wait and passive-target lock waits progress only its network, not
// the schedules of its own non-blocking collectives: with plain MPI, a peer waiting for an
// MPI_Ibcast from rank 1 or an MPI_Iallreduce while rank 0 blocks there hangs (seen: 15 s).
// An MPI_Ibcast from rank 0, which posts every send at its start, completes; the engine's
// needs rank 0's progress all the same (4 MiB: several rounds of staging).
// (Those families run only EngineOp kind 0.)
constexpr size_t kOpInts = 1 << 20;  // 4 MiB of int: the engine needs several rounds
constexpr int kBlock = 4096;         // ints per rank in the family's own data

int value(int rank, int k) {
  return 1000 * (k + 1) + rank;
}

// A window of one int per rank of world on every rank; rank r writes slot r of rank 0's.
struct Window {
  MPI_Win win = MPI_WIN_NULL;
  int* base = nullptr;
  explicit Window(MPI_Comm c) {
    const int n = size_of(c);
    MPI_Win_allocate(static_cast<MPI_Aint>(n * sizeof(int)), sizeof(int), MPI_INFO_NULL, c, &base,
                     &win);
    for (int i = 0; i < n; ++i) base[i] = -1;
  }
  ~Window() { MPI_Win_free(&win); }
  void put(int k) {
    const int r = rank_of_win(), v = value(r, k);
    MPI_Put(&v, 1, MPI_INT, 0, r, 1, MPI_INT, win);
  }
  int rank_of_win() const {
    MPI_Group g;
    MPI_Win_get_group(win, &g);
    int r = 0;
    MPI_Group_rank(g, &r);
    MPI_Group_free(&g);
    return r;
  }
};

// Rank 0's window slots after round k: own lines, and each against its writer's value.
void check_slots(const std::string& what, const std::vector<int>& slots, int first, int k) {
  for (size_t r = static_cast<size_t>(first); r < slots.size(); ++r)
    if (slots[r] != value(static_cast<int>(r), k))
      error(what + ": slot " + std::to_string(r) + " is " + std::to_string(slots[r]));
  own(what, slots);
}

void family_fence(MPI_Comm c) {
  Window w(c);
  const int n = size_of(c);
  Family f;
  f.pre = [&](int) { MPI_Win_fence(MPI_MODE_NOPRECEDE, w.win); };
  f.block = [&](int k) {
    MPI_Win_fence(MPI_MODE_NOSUCCEED, w.win);
    check_slots("fence " + std::to_string(k), std::vector<int>(w.base, w.base + n), 1, k);
  };
  f.part = [&](int k) {
    w.put(k);
    MPI_Win_fence(MPI_MODE_NOSUCCEED, w.win);
  };
  rounds("fence", c, kOpInts, f);
}

void family_pscw(MPI_Comm c, const std::string& what = "pscw", size_t n_op = kOpInts) {
  Window w(c);
  const int n = size_of(c);
  MPI_Group all, others, root;
  MPI_Comm_group(c, &all);
  const int zero = 0;
  MPI_Group_excl(all, 1, &zero, &others);
  MPI_Group_incl(all, 1, &zero, &root);
  Family f;
  f.kinds = {0};  // MPICH's own progress (above kOpInts)
  f.pre = [&](int) {
    if (rank_of(c) == 0) MPI_Win_post(others, 0, w.win);
  };
  f.block = [&](int k) {
    MPI_Win_wait(w.win);  // until every other rank's MPI_Win_complete
    check_slots(what + " " + std::to_string(k), std::vector<int>(w.base, w.base + n), 1, k);
  };
  f.part = [&](int k) {
    MPI_Win_start(root, 0, w.win);
    w.put(k);
    MPI_Win_complete(w.win);
  };
  rounds(what, c, n_op, f);
  MPI_Group_free(&all);
  MPI_Group_free(&others);
  MPI_Group_free(&root);
}

// Rank 1 holds an exclusive lock on rank 0's window (its MPI_Put flushed, so the lock is
// granted) before the operation starts, and releases it after waiting for it: rank 0's own
// lock (MPI_Win_lock, or its MPI_Win_unlock where the library takes locks lazily) waits.
void family_lock(MPI_Comm c) {
  Window w(c);
  Family f;
  f.kinds = {0};  // MPICH's own progress (above kOpInts)
  f.pre = [&](int k) {
    int token = 0;
    if (rank_of(c) == 1) {
      MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, w.win);
      w.put(k);
      MPI_Win_flush(0, w.win);
      MPI_Send(&token, 1, MPI_INT, 0, k, c);
    } else if (rank_of(c) == 0) {
      MPI_Recv(&token, 1, MPI_INT, 1, k, c, MPI_STATUS_IGNORE);
    }
  };
  f.block = [&](int k) {
    std::vector<int> got(2, -1);
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, w.win);
    MPI_Get(got.data(), 2, MPI_INT, 0, 0, 2, MPI_INT, w.win);
    MPI_Win_unlock(0, w.win);
    check_slots("lock " + std::to_string(k), got, 1, k);
  };
  f.part = [&](int) {
    if (rank_of(c) == 1) MPI_Win_unlock(0, w.win);
  };
  rounds("lock", c, kOpInts, f);
}

// Round 0 opens OUT_PREFIX.dat (collective), round 1 writes each rank's block
// (MPI_File_write_at_all), round 2 reads the whole file on every rank (MPI_File_read_at_all).
void family_file(MPI_Comm c, const std::string& path) {
  MPI_File fh = MPI_FILE_NULL;
  const int n = size_of(c), me = rank_of(c);
  std::vector<int> mine(kBlock), all(static_cast<size_t>(n) * kBlock, -1);
  for (int i = 0; i < kBlock; ++i) mine[static_cast<size_t>(i)] = value(me, i % 211);
  const auto call = [&](int k) {
    if (k == 0) {
      MPI_File_open(c, path.c_str(), MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
    } else if (k == 1) {
      MPI_File_write_at_all(fh, static_cast<MPI_Offset>(me) * kBlock * sizeof(int), mine.data(),
                            kBlock, MPI_INT, MPI_STATUS_IGNORE);
    } else {
      MPI_File_read_at_all(fh, 0, all.data(), n * kBlock, MPI_INT, MPI_STATUS_IGNORE);
      expect_eq<int>("file read", all, [&](size_t i) {
        return value(static_cast<int>(i / kBlock), static_cast<int>(i % kBlock) % 211);
      });
      own("file read", all);
    }
  };
  Family f;
  f.block = call;
  f.part = call;
  f.post = [&](int k) {
    if (k == 1) {  // the writes visible to every rank's read (sync, barrier, sync)
      MPI_File_sync(fh);
      MPI_Barrier(c);
      MPI_File_sync(fh);
    }
  };
  rounds("file", c, kOpInts, f);
  MPI_File_close(&fh);
  MPI_Barrier(c);
  if (me == 0) MPI_File_delete(path.c_str(), MPI_INFO_NULL);
}

// A periodic ring (MPI_Cart_create): round 0 MPI_Neighbor_allgather, 1 MPI_Neighbor_alltoall,
// 2 MPI_Neighbor_allgatherv.
void family_neighbor(MPI_Comm c) {
  MPI_Comm ring;
  const int n = size_of(c), periodic = 1;
  MPI_Cart_create(c, 1, &n, &periodic, 0, &ring);
  const int me = rank_of(ring);
  const auto call = [&](int k) {
    std::vector<int> send(2 * kBlock), recv(2 * kBlock, -1);
    for (int i = 0; i < 2 * kBlock; ++i) send[static_cast<size_t>(i)] = value(me, k) * 7 + i;
    if (k == 0) {
      MPI_Neighbor_allgather(send.data(), kBlock, MPI_INT, recv.data(), kBlock, MPI_INT, ring);
    } else if (k == 1) {
      MPI_Neighbor_alltoall(send.data(), kBlock, MPI_INT, recv.data(), kBlock, MPI_INT, ring);
    } else {
      const int counts[2] = {kBlock, kBlock}, displs[2] = {0, kBlock};
      MPI_Neighbor_allgatherv(send.data(), kBlock, MPI_INT, recv.data(), counts, displs, MPI_INT,
                              ring);
    }
    // The left neighbour's block, then the right one's (alltoall: the block meant for us).
    const int left = (me + n - 1) % n, right = (me + 1) % n;
    expect_eq<int>("neighbor " + std::to_string(k), recv, [&](size_t i) {
      const bool second = i >= static_cast<size_t>(kBlock);
      const int from = second ? right : left;
      const int offset = k == 1 && !second ? kBlock : 0;  // left's block 1, right's block 0
      return value(from, k) * 7 + static_cast<int>(i % kBlock) + offset;
    });
    own("neighbor " + std::to_string(k), recv);
  };
  Family f;
  f.block = call;
  f.part = call;
  rounds("neighbor", c, kOpInts, f);
  MPI_Comm_free(&ring);
}

void family_persistent(MPI_Comm c) {
#if MPI_VERSION >= 4 || (defined(OMPI_MAJOR_VERSION) && OMPI_MAJOR_VERSION >= 5)
  MPI_Comm pc;
  MPI_Comm_dup(c, &pc);
  legal::Allreduce x(7, kBlock, members(pc));
  MPI_Request preq;
  MPI_Allreduce_init(x.send.data(), x.recv.data(), kBlock, MPI_INT, MPI_SUM, pc, MPI_INFO_NULL,
                     &preq);
  const auto call = [&](int k) {
    x.recv.assign(kBlock, -7);
    MPI_Start(&preq);
    MPI_Wait(&preq, MPI_STATUS_IGNORE);
    x.check("persistent allreduce " + std::to_string(k));
  };
  Family f;
  f.block = call;
  f.part = call;
  rounds("persistent", c, kOpInts, f);
  MPI_Request_free(&preq);
  MPI_Comm_free(&pc);
#else
  (void)c;  // an MPI without persistent collectives: nothing to run
#endif
}

// Nodes: on the even and the odd world ranks' communicator (with CB_RANKS_PER_NODE=1 each
// rank is a node of its own: a virtual node is a run of a communicator's consecutive ranks
// on a host, engine/comm.cpp), MPI_Recv (from its rank 1) and MPI_Win_wait (pscw) block
// its rank 0. On MPICH 4.0.2 the MPI_Recv rounds pass even without the progress thread
// (its MPI_Recv runs the progress engine that calls the generalized requests' poll
// functions, it seems); the MPI_Win_wait one hangs without it, with CB_BCAST_ALGO=chain
// (the root sends segment after segment). Also the thread level the program was told.
void progress_nodes(size_t n) {
  int level = -1;
  MPI_Query_thread(&level);
  own("MPI_Query_thread", std::vector<int>{level});
  MPI_Comm half;
  MPI_Comm_split(MPI_COMM_WORLD, g_rank % 2, g_rank, &half);
  legal::blocking_allreduce(half, 0, 16, "nodes warmup");  // the communicator's engine
  Family recv;
  recv.block = [&](int k) {
    int token = -1;
    MPI_Recv(&token, 1, MPI_INT, 1, k, half, MPI_STATUS_IGNORE);
    if (token != value(1, k)) error("nodes recv: token " + std::to_string(token));
  };
  recv.part = [&](int k) {
    const int token = value(1, k);
    if (rank_of(half) == 1) MPI_Send(&token, 1, MPI_INT, 0, k, half);
  };
  rounds("nodes recv", half, n, recv);
  family_pscw(half, "nodes pscw", n);
  MPI_Comm_free(&half);
}

}  // namespace

bool legal_progress(const std::string& name, int argc, char** argv) {
  const std::string arg = argc > 3 ? argv[3] : "";
  if (name == "progress_family") {  // FAMILY[,FAMILY...]: in that order, in one run
    MPI_Comm c = MPI_COMM_WORLD;
    for (size_t at = 0; at <= arg.size();) {
      const size_t end = std::min(arg.find(',', at), arg.size());
      const std::string family = arg.substr(at, end - at);
      at = end + 1;
      if (family == "fence")
        family_fence(c);
      else if (family == "pscw")
        family_pscw(c);
      else if (family == "lock")
        family_lock(c);
      else if (family == "file")
        family_file(c, std::string(argv[2]) + ".dat");
      else if (family == "neighbor")
        family_neighbor(c);
      else if (family == "persistent")
        family_persistent(c);
      else
        error("progress_family: unknown family '" + family + "'");
    }
    return true;
  }
  if (name == "progress_nodes") {
    progress_nodes(arg.empty() ? size_t{1} << 18 : std::stoul(arg));
    return true;
  }
  return false;
}
