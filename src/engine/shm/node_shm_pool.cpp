// The process's pool of control areas, so that a communicator's engine is cheap to make
// (docs/preload.md, "What a communicator costs"): made once with MPI_COMM_WORLD's engine
// (share_pool) and mapped by every local rank, so that a later communicator of the same
// processes takes a slot in each rank's pool (NodeShm's constructor, node_shm.cpp) instead
// of making and mapping files.
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <new>
#include <vector>

#include "core/mpi_check.hpp"
#include "engine/settings.hpp"
#include "engine/shm/cma.hpp"
#include "engine/shm/node_shm_internal.hpp"

namespace cb::engine {
using namespace shm_internal;

int NodeShm::Pool::take(uint32_t& gen) {
  std::lock_guard lock(mu);
  for (int i = 0; mine && i < kPoolSlots; ++i) {
    State& s = state[i];
    if (s.used || mine[i].released.load(std::memory_order_acquire) != s.expected) continue;
    s.used = true;
    gen = ++s.gen;
    Header& h = mine[i];
    h.ext_attached.store(0, std::memory_order_relaxed);
    h.released.store(0, std::memory_order_relaxed);
    for (OpSlot& o : h.slots) new (&o) OpSlot{};
    std::memset(h.small, 0, 64);  // the small path's arrival counter (small_slots.cpp)
    return i;
  }
  return -1;
}

void NodeShm::Pool::give_back(int slot, uint32_t expected) {
  std::lock_guard lock(mu);
  state[slot].used = false;
  state[slot].expected = expected;
}

NodeShm::Pool& NodeShm::pool() {
  static Pool* p = new Pool;  // never destroyed: engines may be freed after static destructors
  return *p;
}

namespace {

// An FNV-1a hash of a pool's file name, never 0.
uint64_t token_of(const char* name) {
  uint64_t h = 1469598103934665603ull;
  for (const char* c = name; *c; ++c) h = (h ^ static_cast<unsigned char>(*c)) * 1099511628211ull;
  return h ? h : 1;
}

}  // namespace

// Collective over `node`: every rank makes its pool and maps its peers'; all or none (the
// engines then make control files of their own, as before).
void NodeShm::share_pool(MPI_Comm node) {
  Pool& P = pool();
  int me = 0, n = 1;
  MPI_Comm_rank(node, &me);
  MPI_Comm_size(node, &n);
  const size_t bytes = round_up(sizeof(Header) * kPoolSlots);
  std::string failure;
  {
    std::lock_guard lock(P.mu);
    if (P.mine) failure = "a pool exists";
  }
  const Budget budget = budget_for(n, engine_settings().shm_max_bytes);
  bool claimed = false;
  if (failure.empty()) claimed = (failure = claim_budget(bytes, budget)).empty();
  char name[64] = "";
  const int fd = failure.empty() ? create_file(name, "pool") : -1;
  const int remembered = fd >= 0 ? remember_name(name) : -1;
  void* base = MAP_FAILED;
  if (failure.empty()) {
    if (fd < 0)
      failure = "shm_open: " + errno_text();
    else if (const int rc = posix_fallocate(fd, 0, static_cast<off_t>(bytes)))
      failure = std::strerror(rc);
    else if ((base = map_file(fd, bytes)) == MAP_FAILED)
      failure = "mmap: " + errno_text();
  }
  if (fd >= 0) close(fd);
  auto* mine = static_cast<Header*>(base == MAP_FAILED ? nullptr : base);
  LifelineKeeper* keeper = nullptr;
  if (failure.empty()) {
    for (int i = 0; i < kPoolSlots; ++i) new (&mine[i]) Header{};
    failure = init_life(*mine, keeper);
  }
  Entry entry{};
  std::memcpy(entry.name, name, sizeof name);
  entry.failed = failure.empty() ? 0 : 1;
  std::vector<Entry> all(static_cast<size_t>(n));
  CB_MPI(MPI_Allgather(&entry, sizeof entry, MPI_BYTE, all.data(), sizeof entry, MPI_BYTE, node));
  bool failed = false;
  for (const Entry& e : all) failed |= e.failed != 0;
  std::map<std::string, Header*> peers;
  CmaVerdict verdict{false, "no pool"};
  if (!failed) {
    for (int r = 0; r < n; ++r) {
      if (r == me) continue;
      const Entry& e = all[static_cast<size_t>(r)];
      const int pfd = shm_open(e.name, O_RDWR, 0600);
      void* p = pfd < 0 ? MAP_FAILED : map_file(pfd, bytes);
      if (pfd >= 0) close(pfd);
      if (p == MAP_FAILED) {
        if (failure.empty()) failure = std::string("cannot map ") + e.name + ": " + errno_text();
        continue;
      }
      peers[e.name] = static_cast<Header*>(p);
    }
    verdict = {true, "process_vm_readv between ranks works"};
    if (!engine_settings().cma) {
      verdict = {false, "off (CB_ENGINE_CMA=0)"};
    } else if (n > 1 && failure.empty()) {
      const Header* next = peers[all[static_cast<size_t>((me + 1) % n)].name];
      verdict = cma_check(next->pid, next->self, kMagic);
    }
    uint64_t ok = verdict.available ? 1 : 0;
    failure = agree(node, me, failure, &ok, 1);
    failed = !failure.empty();
    if (!failed) {
      std::lock_guard lock(P.mu);
      P.mine = mine;
      P.name = name;
      P.token = token_of(all[0].name);
      P.peers = peers;
      P.cma = ok != 0;
      P.cma_status = P.cma ? verdict.detail
                     : verdict.available
                         ? std::string("unavailable: refused on another local rank")
                         : (engine_settings().cma ? "unavailable: " : "") + verdict.detail;
    }
  }
  unlink_name(name, remembered);  // every local rank mapped it, or it is not used
  // No pool: engines make control files of their own.
  if (failed) {
    for (auto& [peer, p] : peers) munmap(p, bytes);
    if (keeper) lifeline_call(keeper, &mine->lifeline, false);
    if (mine) munmap(mine, bytes);
    if (claimed) release_budget(bytes);
  }
}

}  // namespace cb::engine
