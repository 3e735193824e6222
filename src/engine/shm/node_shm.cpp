#include "engine/shm/node_shm.hpp"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <deque>
#include <new>
#include <random>

#include "core/mpi_check.hpp"
#include "engine/settings.hpp"
#include "engine/shm/cma.hpp"
#include "engine/shm/node_shm_internal.hpp"

namespace cb::engine {
// The helpers of node_shm.cpp; node_shm_internal.hpp declares those node_shm_pool.cpp uses.
namespace shm_internal {

size_t round_up(size_t n) {
  return (n + kPage - 1) / kPage * kPage;
}

std::string errno_text() {
  return std::strerror(errno);
}

#ifndef MADV_POPULATE_READ  // Linux 5.14; older C library headers lack the names
#define MADV_POPULATE_READ 22
#define MADV_POPULATE_WRITE 23
#endif

// Maps every page of [p, p + bytes) into this process now, leaving the contents as they
// are: the first message through a channel or staging region would otherwise take a page
// fault per 4 KiB (tens of microseconds on a VM), and a ring of 64 slots or 16 staging
// regions takes dozens of operations to cycle through, more than a benchmark's warmup.
// Without MADV_POPULATE_* (kernels before 5.14), read one byte a page: peers may already
// be writing there.
void prefault(std::byte* p, size_t bytes) {
  const size_t lead = reinterpret_cast<uintptr_t>(p) % kPage;  // madvise wants whole pages
  p -= lead;
  bytes = round_up(bytes + lead);
  if (madvise(p, bytes, MADV_POPULATE_WRITE) == 0) return;
  for (size_t off = 0; off < bytes; off += kPage)
    static_cast<void>(*static_cast<volatile std::byte*>(p + off));
}

// Names of segments created and not yet unlinked, readable from a signal handler: fixed
// slots, each claimed with an atomic state (0 free, 1 being filled, 2 holds a name).
struct PendingName {
  std::atomic<int> state{0};
  char name[64];
};
PendingName pending_names[8];

int remember_name(const char* name) {
  for (int i = 0; i < 8; ++i) {
    int expected = 0;
    if (pending_names[i].state.compare_exchange_strong(expected, 1)) {
      std::snprintf(pending_names[i].name, sizeof pending_names[i].name, "%s", name);
      pending_names[i].state.store(2, std::memory_order_release);
      return i;
    }
  }
  return -1;  // more than 8 at once: only a signal during setup would leave it behind
}

void unlink_name(const char* name, int remembered) {
  shm_unlink(name);
  if (remembered >= 0) pending_names[remembered].state.store(0, std::memory_order_release);
}

std::string mib(size_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f MiB", static_cast<double>(bytes) / (1 << 20));
  return text;
}

// The size of the file system behind shm_open (glibc: /dev/shm); 0 when unknown.
size_t dev_shm_size(size_t* free = nullptr) {
  struct statvfs fs {};
  if (statvfs("/dev/shm", &fs) != 0) return 0;
  if (free) *free = static_cast<size_t>(fs.f_bavail) * fs.f_frsize;
  return static_cast<size_t>(fs.f_blocks) * fs.f_frsize;
}

std::string dev_shm_space() {
  size_t free = 0;
  const size_t size = dev_shm_size(&free);
  if (!size) return "/dev/shm: size unknown";
  return "/dev/shm: " + mib(size) + ", " + mib(free) + " free";
}

// What this process's segments reserve (control areas, channels, staging), against
// CB_SHM_MAX_BYTES: unset (0), 1 GiB or half of /dev/shm shared among the local ranks of
// the communicator being created, whichever is less.
std::atomic<size_t> held_bytes{0};
constexpr size_t kMiB = size_t{1} << 20;
constexpr size_t kDefaultBudget = size_t{1} << 30;

Budget budget_for(int local_ranks, size_t setting) {
  if (setting) return {setting, "CB_SHM_MAX_BYTES"};
  Budget b{kDefaultBudget, "the default budget, CB_SHM_MAX_BYTES unset: 1 GiB"};
  const size_t size = dev_shm_size(), share = size / 2 / static_cast<size_t>(local_ranks);
  if (size && share < b.max)
    b = {share, "the default budget, CB_SHM_MAX_BYTES unset: half of /dev/shm (" + mib(size) +
                    ") shared among " + std::to_string(local_ranks) + " local ranks"};
  return b;
}

std::string over_budget(size_t bytes, size_t held, const Budget& b) {
  return "this rank's segment (" + mib(bytes) + ") would take this process's shared memory to " +
         mib(held + bytes) + ", over " + mib(b.max) + " (" + b.origin + ")";
}

std::string claim_budget(size_t bytes, const Budget& b) {
  size_t held = held_bytes.load(std::memory_order_relaxed);
  do {
    if (held + bytes > b.max) return over_budget(bytes, held, b);
  } while (!held_bytes.compare_exchange_weak(held, held + bytes, std::memory_order_relaxed));
  return {};
}

void release_budget(size_t bytes) {
  held_bytes.fetch_sub(bytes, std::memory_order_relaxed);
}

// Every local rank's verdict: empty when all succeeded, else the first failing rank's
// reason, the same text on every rank; with it, the MIN over the node of `values` (one
// MPI_Allreduce; a broadcast only on failure).
std::string told(MPI_Comm node, int me, int first, const std::string& failure) {
  char text[512] = "";
  if (me == first) std::snprintf(text, sizeof text, "%s", failure.c_str());
  CB_MPI(MPI_Bcast(text, sizeof text, MPI_CHAR, first, node));
  return std::string(text) + " (local rank " + std::to_string(first) + ")";
}

std::string agree(MPI_Comm node, int me, const std::string& failure, uint64_t* values, int count) {
  // No failure: a value past every rank that is positive also to an MPI_MIN that compares
  // MPI_UINT64_T as signed (MPICH 4.0.2 took UINT64_MAX for less than 0 here).
  constexpr uint64_t kNone = UINT64_MAX >> 1;
  uint64_t all[4] = {failure.empty() ? kNone : static_cast<uint64_t>(me)};
  for (int i = 0; i < count && i < 3; ++i) all[i + 1] = values[i];
  CB_MPI(MPI_Allreduce(MPI_IN_PLACE, all, count + 1, MPI_UINT64_T, MPI_MIN, node));
  for (int i = 0; i < count && i < 3; ++i) values[i] = all[i + 1];
  if (all[0] == kNone) return {};
  return told(node, me, static_cast<int>(all[0]), failure);
}

}  // namespace shm_internal
using namespace shm_internal;

// One thread per process, started with the first NodeShm and never ended, holds every
// lifeline: a robust mutex is released as owner-dead when its owner *thread* exits, and
// the thread that creates an engine may be short-lived (an MPI_THREAD_MULTIPLE program's
// first collective on a communicator run in a worker thread). It waits on a condition
// variable, with every signal blocked, and runs lock and unlock requests. The kernel
// walks at most 2048 robust mutexes of a dying thread: beyond 2048 engines at once in one
// process the oldest would not be reported dead (MPICH allows fewer communicators).
class LifelineKeeper {
 public:
  // The keeper of this process, started at the first call (and again in a forked child,
  // which has no keeper thread); null with `why` set when it cannot start.
  static LifelineKeeper* get(std::string& why) {
    static std::mutex mu;
    static LifelineKeeper* current = nullptr;
    std::lock_guard lock(mu);
    if (current && current->alive_here()) return current;
    auto* fresh = new LifelineKeeper;  // never deleted: its thread runs until exit
    if (const int rc = fresh->start()) {
      delete fresh;
      why = std::string("cannot start the lifeline thread: ") + std::strerror(rc);
      return nullptr;
    }
    current = fresh;
    return current;
  }
  bool alive_here() const { return pid_ == getpid(); }

  // pthread_mutex_lock (or unlock) of `m` on the keeper thread; its result.
  int call(pthread_mutex_t* m, bool lock) {
    Request r{m, lock};
    std::unique_lock guard(mu_);
    queue_.push_back(&r);
    cv_.notify_all();
    cv_.wait(guard, [&] { return r.done; });
    return r.rc;
  }

 private:
  struct Request {
    pthread_mutex_t* m;
    bool lock;
    int rc = 0;
    bool done = false;
  };

  int start() {
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&attr, 128 * 1024);
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);  // inherited: signals go to other threads
    pthread_t thread;
    const int rc = pthread_create(&thread, &attr, &LifelineKeeper::main, this);
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
    pthread_attr_destroy(&attr);
    if (rc == 0) pthread_setname_np(thread, "cb_lifelines");
    return rc;
  }
  static void* main(void* self) {
    static_cast<LifelineKeeper*>(self)->serve();
    return nullptr;
  }
  [[noreturn]] void serve() {
    std::unique_lock guard(mu_);
    for (;;) {
      cv_.wait(guard, [&] { return !queue_.empty(); });
      Request* r = queue_.front();
      queue_.pop_front();
      // Outside mu_: the lifelines stay locked while mu_ is taken again, so taking one
      // under mu_ would order the two both ways (ThreadSanitizer: lock-order inversion).
      guard.unlock();
      const int rc = r->lock ? pthread_mutex_lock(r->m) : pthread_mutex_unlock(r->m);
      guard.lock();
      r->rc = rc;
      r->done = true;
      cv_.notify_all();
    }
  }

  pid_t pid_ = getpid();
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Request*> queue_;
};

int shm_internal::lifeline_call(LifelineKeeper* keeper, pthread_mutex_t* m, bool lock) {
  return keeper->call(m, lock);
}

void unlink_unattached_segments() noexcept {
  for (auto& p : pending_names)
    if (p.state.load(std::memory_order_acquire) == 2) shm_unlink(p.name);
}

PeerLost::PeerLost(int rank_, pid_t pid_)
    : RuntimeError("rank " + std::to_string(rank_) + " (pid " + std::to_string(pid_) +
                   ") exited while this rank waited for it in shared memory"),
      rank(rank_),
      pid(pid_) {}

std::string PeerLost::in(const std::string& where) const {
  return "rank " + std::to_string(rank) + " (pid " + std::to_string(pid) +
         ") exited while this rank waited in " + where;
}

namespace shm_internal {

// A new file in /dev/shm under a fresh name ("/collbench.PID.TAG.RANDOM"): the random part
// keeps it apart from other PID namespaces' files and a crashed job's leftovers; on a clash
// (EEXIST) another is tried, and a name that is not ours is never touched.
int create_file(char (&name)[64], const std::string& tag) {
  static std::random_device entropy;
  static std::mutex entropy_mu;
  int fd = -1;
  for (int attempt = 0; attempt < 16 && fd < 0; ++attempt) {
    unsigned r = 0;
    {
      std::lock_guard lock(entropy_mu);
      r = static_cast<unsigned>(entropy());
    }
    std::snprintf(name, sizeof name, "/collbench.%d.%s.%08x", static_cast<int>(getpid()),
                  tag.c_str(), r);
    fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
    if (fd < 0 && errno != EEXIST) break;
  }
  return fd;
}

// Maps a file of `bytes` with its pages populated (one call rather than a fault a page).
void* map_file(int fd, size_t bytes) {
  return mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
}

}  // namespace shm_internal

// Lays out a new header's lifeline and identity: the robust mutex its owner holds while
// attached, locked by the lifeline keeper.
std::string NodeShm::init_life(Header& h, LifelineKeeper*& keeper) {
  h.pid = static_cast<int32_t>(getpid());
  h.self = reinterpret_cast<uint64_t>(&h);
  pthread_mutexattr_t attr;
  pthread_mutexattr_init(&attr);
  pthread_mutexattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
  pthread_mutexattr_setrobust(&attr, PTHREAD_MUTEX_ROBUST);
  pthread_mutex_init(&h.lifeline, &attr);
  pthread_mutexattr_destroy(&attr);
  std::string failure;
  keeper = LifelineKeeper::get(failure);  // held before any peer can look
  if (keeper && keeper->call(&h.lifeline, true) != 0) {
    failure = "cannot lock the lifeline mutex";
    keeper = nullptr;
  }
  if (failure.empty()) h.magic = kMagic;
  return failure;
}

// This rank's control file (fresh mode): made, reserved, mapped, its header laid out.
std::string NodeShm::make_control() {
  static std::atomic<int> instance{0};
  char name[64] = "";
  const int fd = create_file(name, std::to_string(instance++));
  Segment& seg = segments_[static_cast<size_t>(local_rank_)];
  if (fd < 0) return std::string("shm_open(") + name + "): " + errno_text();
  control_remembered_ = remember_name(name);
  names_[static_cast<size_t>(local_rank_)] = name;
  control_linked_ = true;
  void* p = MAP_FAILED;
  std::string failure;
  if (const int rc = posix_fallocate(fd, 0, static_cast<off_t>(channels_offset_)))
    failure = "cannot reserve " + mib(channels_offset_) + " for this rank's segment (" +
              std::strerror(rc) + "; " + dev_shm_space() + ")";
  else if ((p = map_file(fd, channels_offset_)) == MAP_FAILED)
    failure = "mmap of the shared-memory segment: " + errno_text();
  close(fd);
  if (!failure.empty()) return failure;
  seg.base = static_cast<std::byte*>(p);
  seg.head = seg.life = new (p) Header{};
  return init_life(*seg.head, keeper_);
}

void NodeShm::layout(const uint64_t sizes[3]) {
  staging_bytes_ = sizes[0];
  channel_data_ = sizes[1];
  heap_bytes_ = sizes[2];
  channels_offset_ = round_up(sizeof(Header));
  channel_stride_ = sizeof(Channel) + channel_data_;
  staging_offset_ =
      round_up(channels_offset_ + static_cast<size_t>(local_size()) * channel_stride_);
  heap_offset_ = round_up(staging_offset_ + staging_bytes_);
  heap_reserved_ = heap_offset_;
  total_ = heap_offset_ + heap_bytes_;
}

NodeShm::NodeShm(MPI_Comm node, std::vector<int> members, size_t heap_bytes, size_t staging_bytes,
                 bool cma)
    : members_(std::move(members)) {
  MPI_Comm_rank(node, &local_rank_);
  const int n = local_size();
  const EngineSettings& settings = engine_settings();
  const bool lazy = heap_bytes == 0;  // channels and staging made at first use

  // Sizes. A channel's data ring: CB_SHM_CHANNEL_BYTES shared among the senders, 64 KiB
  // to 1 MiB each (enough for private buffers to pipeline as fast as with a larger ring;
  // a smaller one makes senders wait for free room). The staging: as asked, or, when this process's
  // budget cannot hold it, what the budget leaves in whole MiB (at least 1 MiB, or no shared memory
  // at all).
  const size_t channel =
      n == 1 ? kMinChannelData
             : std::clamp(settings.shm_channel_bytes / static_cast<size_t>(n) / 64 * 64,
                          kMinChannelData, kMaxChannelData);
  const size_t before_staging =
      round_up(round_up(sizeof(Header)) + static_cast<size_t>(n) * (sizeof(Channel) + channel));
  const Budget budget = budget_for(n, settings.shm_max_bytes);
  const size_t asked = round_up(staging_bytes), held = held_bytes.load(std::memory_order_relaxed);
  size_t staging = asked;
  std::string failure;
  if (held + before_staging + staging > budget.max) {
    const size_t room = budget.max > held + before_staging ? budget.max - held - before_staging : 0;
    staging = room / kMiB * kMiB;
    if (staging < std::min(asked, kMiB))
      failure = over_budget(before_staging + std::min(asked, kMiB), held, budget);
  }
  // Made later, the channels and staging must find room then: a /dev/shm without room for
  // every local rank's turns shared memory off now, as a failed reservation would.
  size_t room = 0;
  const size_t each = before_staging + staging;
  if (failure.empty() && lazy && dev_shm_size(&room) && room / static_cast<size_t>(n) < each)
    failure = "/dev/shm has " + mib(room) + " free, not " + mib(each) + " for each of " +
              std::to_string(n) + " local ranks' channels and staging (No space left on device)";

  // This rank's layout, claimed from the budget now (another thread may have taken it
  // meanwhile); the agreed one (the MIN over the node) is no larger.
  const uint64_t own[3] = {staging, channel, round_up(heap_bytes)};
  layout(own);
  if (failure.empty() && (failure = claim_budget(heap_offset_, budget)).empty())
    reserved_ = heap_offset_;
  segments_ = std::make_unique<Segment[]>(static_cast<size_t>(n));
  names_.assign(static_cast<size_t>(n), std::string());

  // A slot of this process's pool (no file to make or map), else a control file.
  Pool& P = pool();
  uint32_t gen = 0;
  if (failure.empty() && lazy) pool_slot_ = P.take(gen);
  if (failure.empty() && pool_slot_ < 0) failure = make_control();
  const auto undo = [&] {
    Header* life = segments_[static_cast<size_t>(local_rank_)].life;
    if (keeper_ && life && pool_slot_ < 0) keeper_->call(&life->lifeline, false);
    keeper_ = nullptr;
    release_segments();
    if (control_linked_)
      unlink_name(names_[static_cast<size_t>(local_rank_)].c_str(), control_remembered_);
    control_linked_ = false;
    if (pool_slot_ >= 0) P.give_back(pool_slot_, 0);
    pool_slot_ = -1;
    release_budget(reserved_);
    reserved_ = 0;
  };
  const auto entry = [&] {
    Entry e{};
    if (pool_slot_ >= 0) {
      std::snprintf(e.name, sizeof e.name, "%s", P.name.c_str());
      e.token = P.token;
      e.gen = gen;
    } else {
      std::snprintf(e.name, sizeof e.name, "%s", names_[static_cast<size_t>(local_rank_)].c_str());
    }
    e.slot = pool_slot_;
    e.failed = failure.empty() ? 0 : 1;
    std::copy(own, own + 3, e.sizes);
    return e;
  };
  // Every rank's entry; the first failure (its reason, on every rank) ends it.
  std::vector<Entry> all(static_cast<size_t>(n));
  const auto exchange = [&] {
    const Entry e = entry();
    CB_MPI(MPI_Allgather(&e, sizeof e, MPI_BYTE, all.data(), sizeof e, MPI_BYTE, node));
    for (int r = 0; r < n; ++r)
      if (all[static_cast<size_t>(r)].failed) {
        failure = told(node, local_rank_, r, failure);
        undo();
        throw RuntimeError("shared memory unavailable: " + failure);
      }
  };
  exchange();

  // The layout every rank computes alike (MIN of the sizes), so that ranks with different
  // CB_SHM_* values or budgets still read each other's segments alike.
  uint64_t sizes[3] = {UINT64_MAX, UINT64_MAX, UINT64_MAX};
  for (const Entry& e : all)
    for (int i = 0; i < 3; ++i) sizes[i] = std::min(sizes[i], e.sizes[i]);
  layout(sizes);
  release_budget(reserved_ - heap_offset_);
  reserved_ = heap_offset_;
  if (staging_bytes_ < asked)
    note_ = "staging " + mib(staging_bytes_) + " per rank instead of " + mib(asked) +
            ": the shared-memory budget (CB_SHM_MAX_BYTES) of a local rank holds no more";

  // Every rank in a slot of a pool the others mapped: nothing more to do.
  bool pooled = true;
  for (const Entry& e : all) pooled &= e.slot >= 0 && e.token == all[0].token && e.token != 0;
  if (pooled) {
    for (int r = 0; r < n; ++r) {
      const Entry& e = all[static_cast<size_t>(r)];
      Header* pool_r = r == local_rank_ ? P.mine : P.peers.at(e.name);
      Segment& seg = segments_[static_cast<size_t>(r)];
      seg.head = &pool_r[e.slot];
      seg.life = pool_r;
      names_[static_cast<size_t>(r)] =
          std::string(e.name) + ".s" + std::to_string(e.slot) + "g" + std::to_string(e.gen);
    }
    cma_ = P.cma;
    cma_status_ = P.cma_status;
    return;
  }
  // Otherwise control files: made now by the ranks that had taken a slot, told again.
  bool again = false;
  for (const Entry& e : all) again |= e.slot >= 0;
  if (pool_slot_ >= 0) {
    P.give_back(pool_slot_, 0);
    pool_slot_ = -1;
    failure = make_control();
  }
  if (again) exchange();
  for (int r = 0; r < n; ++r) {
    if (r == local_rank_) continue;
    const char* peer = all[static_cast<size_t>(r)].name;
    names_[static_cast<size_t>(r)] = peer;
    const int pfd = shm_open(peer, O_RDWR, 0600);
    void* p = pfd < 0 ? MAP_FAILED : map_file(pfd, channels_offset_);
    if (pfd >= 0) close(pfd);
    if (p == MAP_FAILED) {
      if (failure.empty()) failure = std::string("cannot map ") + peer + ": " + errno_text();
      continue;
    }
    Segment& seg = segments_[static_cast<size_t>(r)];
    seg.base = static_cast<std::byte*>(p);
    seg.head = seg.life = static_cast<Header*>(p);
  }
  // With a heap: every rank's channels, staging and heap now, each made by its owner first
  // (a failure's reason is then the owner's own: ENOSPC, not "another rank could not").
  if (!lazy) {
    try {
      if (failure.empty()) attach(local_rank_);
    } catch (const RuntimeError& e) {
      failure = e.what();
    }
    failure = agree(node, local_rank_, failure);
    if (!failure.empty()) {
      undo();
      throw RuntimeError("shared memory unavailable: " + failure);
    }
    try {
      for (int r = 0; r < n; ++r) attach(r);
    } catch (const RuntimeError& e) {
      failure = e.what();
    }
  }
  // Whether every rank may read its peers' private memory: each reads the next one's
  // header by cross-memory attach; used only if all of them could (agreed with the rest).
  CmaVerdict verdict{true, "process_vm_readv between ranks works"};
  if (!cma) {
    verdict = {false, "off (CB_ENGINE_CMA=0)"};
  } else if (n > 1 && failure.empty()) {
    const int next = (local_rank_ + 1) % n;
    verdict = cma_check(pid(next), life(next).self, kMagic);  // `magic` leads the header
  }
  uint64_t all_ok = verdict.available ? 1 : 0;
  failure = agree(node, local_rank_, failure, &all_ok, 1);
  // Every rank attached (or is giving up): nothing stays in /dev/shm.
  if (control_linked_)
    unlink_name(names_[static_cast<size_t>(local_rank_)].c_str(), control_remembered_);
  control_linked_ = false;
  if (!failure.empty()) {
    undo();
    throw RuntimeError("shared memory unavailable: " + failure);
  }
  cma_ = all_ok != 0;
  cma_status_ = cma_                ? verdict.detail
                : verdict.available ? std::string("unavailable: refused on another local rank")
                                    : (cma ? "unavailable: " : "") + verdict.detail;
  if (heap_bytes_) free_[heap_offset_] = heap_bytes_;
}

std::string NodeShm::ext_name(int local) const {
  return names_[static_cast<size_t>(local)] + "+";
}

bool NodeShm::extended(int local) const {
  return segments_[static_cast<size_t>(local)].ext.load(std::memory_order_acquire) != nullptr;
}

std::byte* NodeShm::attach(int local) const {
  std::lock_guard lock(attach_mu_);
  Segment& seg = segments_[static_cast<size_t>(local)];
  if (std::byte* p = seg.ext.load(std::memory_order_relaxed)) return p;
  const std::string name = ext_name(local);
  const std::string whose = "local rank " + std::to_string(local) + "'s channels and staging";
  const size_t size = total_ - channels_offset_, reserve = heap_offset_ - channels_offset_;
  // The first process to touch it makes it (reserving its pages); the others open it and
  // wait until it has its size (the maker is inside posix_fallocate, waiting for nobody).
  int fd = shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
  if (fd >= 0) {
    seg.created = true;
    seg.remembered = remember_name(name.c_str());
    int rc = posix_fallocate(fd, 0, static_cast<off_t>(reserve));
    if (rc == 0 && size > reserve && ftruncate(fd, static_cast<off_t>(size)) != 0) rc = errno;
    if (rc != 0) {
      if (ftruncate(fd, 1) != 0) {
      }  // size 1: tells the others that wait for it
      close(fd);
      throw RuntimeError("cannot reserve " + mib(reserve) + " for " + whose + " (" +
                         std::strerror(rc) + "; " + dev_shm_space() + ")");
    }
  } else if (errno == EEXIST && (fd = shm_open(name.c_str(), O_RDWR, 0600)) >= 0) {
    uint64_t polls = 0;
    for (struct stat st{};;) {
      if (fstat(fd, &st) != 0 || st.st_size == 1) {
        close(fd);
        throw RuntimeError("another local rank could not reserve " + whose + " (" +
                           dev_shm_space() + ")");
      }
      if (static_cast<size_t>(st.st_size) == size) break;
      try {
        check_peers(polls);
      } catch (...) {
        close(fd);
        throw;
      }
      sched_yield();
    }
  } else {
    throw RuntimeError("shm_open(" + name + ") for " + whose + ": " + errno_text());
  }
  void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) {
    const std::string why = errno_text();
    close(fd);
    throw RuntimeError("mmap of " + whose + ": " + why);
  }
  if (local == local_rank_ && heap_bytes_)
    fd_ = fd;  // kept: alloc() reserves the pages of each buffer
  else
    close(fd);
  auto* e = static_cast<std::byte*>(p);
  // The data rings and staging regions are used in turn, each page for the first time
  // dozens of operations later. A peer's: only the channel this rank sends through and the
  // staging; not the other ranks' channels, which would cost page tables growing with the
  // square of the ranks on a node.
  if (local == local_rank_) {
    prefault(e, staging_offset_ - channels_offset_ + staging_bytes_);
  } else {
    prefault(e + static_cast<size_t>(local_rank_) * channel_stride_, channel_stride_);
    prefault(e + (staging_offset_ - channels_offset_), staging_bytes_);
  }
  // Once every local rank has it mapped, its name goes (its owner unlinks it otherwise).
  if (header(local).ext_attached.fetch_add(1, std::memory_order_acq_rel) + 1 ==
      static_cast<uint32_t>(local_size()))
    shm_unlink(name.c_str());
  seg.ext.store(e, std::memory_order_release);
  return e;
}

// Unmaps every file; the owner's second file loses its name (no peer touches it for the
// first time after its owner is done with it: a rank completes an operation only once its
// peers have read what it shares, and sends to it arrive before it completes).
void NodeShm::release_segments() {
  if (!segments_) return;
  for (int r = 0; r < local_size(); ++r) {
    Segment& seg = segments_[static_cast<size_t>(r)];
    if (seg.base) munmap(seg.base, channels_offset_);
    if (std::byte* e = seg.ext.load(std::memory_order_acquire))
      munmap(e, total_ - channels_offset_);
    if (r == local_rank_ && !names_[static_cast<size_t>(r)].empty())
      shm_unlink(ext_name(r).c_str());
    if (seg.remembered >= 0)
      pending_names[seg.remembered].state.store(0, std::memory_order_release);
  }
  segments_.reset();
}

NodeShm::~NodeShm() {
  if (pool_slot_ >= 0 && segments_) {
    // Done with the peers' slots: each may be taken again once all its users are.
    for (int r = 0; r < local_size(); ++r)
      if (r != local_rank_)
        segments_[static_cast<size_t>(r)].head->released.fetch_add(1, std::memory_order_release);
  } else if (keeper_ && keeper_->alive_here() && segments_) {
    // The keeper unlocks the lifeline (it leaves the keeper's robust list) before the
    // segment is unmapped, whichever thread destroys this. A forked child has no keeper
    // thread and no such list entry: there is nothing to unlock.
    keeper_->call(&life(local_rank_).lifeline, false);
  }
  release_segments();
  if (pool_slot_ >= 0) pool().give_back(pool_slot_, static_cast<uint32_t>(local_size() - 1));
  if (fd_ >= 0) close(fd_);
  release_budget(reserved_);
}

int NodeShm::local_of(int comm_rank) const {
  for (size_t i = 0; i < members_.size(); ++i)
    if (members_[i] == comm_rank) return static_cast<int>(i);
  return -1;
}

NodeShm::Header& NodeShm::header(int local) const {
  return *segments_[static_cast<size_t>(local)].head;
}

NodeShm::Header& NodeShm::life(int local) const {
  return *segments_[static_cast<size_t>(local)].life;
}

OpSlot& NodeShm::slot(int local, uint64_t op) {
  return header(local).slots[op % kOpSlots];
}

std::byte* NodeShm::small_area(int local) const {
  return header(local).small;
}

Channel& NodeShm::channel(int receiver, int sender) {
  return *reinterpret_cast<Channel*>(ext(receiver) + static_cast<size_t>(sender) * channel_stride_);
}

std::byte* NodeShm::staging(int local, uint64_t op) const {
  return ext(local) + (staging_offset_ - channels_offset_) +
         (op / 4 % kStagingRegions) * staging_bytes();
}

size_t NodeShm::process_bytes() {
  return held_bytes.load(std::memory_order_relaxed);
}

pid_t NodeShm::pid(int local) const {
  return life(local).pid;
}

void* NodeShm::alloc(size_t bytes) {
  if (!heap_bytes_ || fd_ < 0) return nullptr;
  bytes = round_up(bytes ? bytes : 1);
  std::lock_guard lock(heap_mu_);
  for (auto it = free_.begin(); it != free_.end(); ++it) {
    if (it->second < bytes) continue;
    const size_t offset = it->first, left = it->second - bytes;
    // First fit from the bottom: [heap_offset_, heap_reserved_) is reserved, so only what
    // lies above needs reserving (a full /dev/shm: no buffer rather than a SIGBUS later).
    if (offset + bytes > heap_reserved_) {
      if (posix_fallocate(fd_, static_cast<off_t>(heap_reserved_ - channels_offset_),
                          static_cast<off_t>(offset + bytes - heap_reserved_)) != 0)
        return nullptr;
      heap_reserved_ = offset + bytes;
    }
    free_.erase(it);
    if (left) free_[offset + bytes] = left;
    used_[offset] = bytes;
    return ext(local_rank_) + (offset - channels_offset_);
  }
  return nullptr;
}

bool NodeShm::free(void* p) {
  const std::byte* e = segments_[static_cast<size_t>(local_rank_)].ext.load();
  auto* b = static_cast<std::byte*>(p);
  if (!e || b < e || b >= e + (total_ - channels_offset_)) return false;
  std::lock_guard lock(heap_mu_);
  const auto it = used_.find(channels_offset_ + static_cast<size_t>(b - e));
  if (it == used_.end()) return false;
  auto [offset, bytes] = *it;
  used_.erase(it);
  // Coalesce with the free neighbours on both sides.
  auto next = free_.lower_bound(offset);
  if (next != free_.end() && offset + bytes == next->first) {
    bytes += next->second;
    next = free_.erase(next);
  }
  if (next != free_.begin()) {
    auto prev = std::prev(next);
    if (prev->first + prev->second == offset) {
      prev->second += bytes;
      return true;
    }
  }
  free_[offset] = bytes;
  return true;
}

BufferRef NodeShm::describe(const void* p, size_t bytes) const {
  BufferRef ref{.segment = -1,
                .owner = local_rank_,
                .address = reinterpret_cast<uint64_t>(p),
                .bytes = bytes};
  const auto* b = static_cast<const std::byte*>(p);
  // Only what this process maps can hold p: the second files not yet touched are left alone.
  for (int i = 0; i < local_size(); ++i) {
    const Segment& seg = segments_[static_cast<size_t>(i)];
    const std::byte* e = seg.ext.load(std::memory_order_acquire);
    const auto* head = reinterpret_cast<const std::byte*>(seg.head);
    if (head && b >= head && b + bytes <= head + sizeof(Header)) {
      ref.offset = static_cast<uint64_t>(b - head);
    } else if (e && b >= e && b + bytes <= e + (total_ - channels_offset_)) {
      ref.offset = channels_offset_ + static_cast<uint64_t>(b - e);
    } else {
      continue;
    }
    ref.segment = i;
    break;
  }
  return ref;
}

std::byte* NodeShm::map(const BufferRef& ref) const {
  if (ref.segment < 0) return nullptr;
  if (ref.offset < channels_offset_)
    return reinterpret_cast<std::byte*>(segments_[static_cast<size_t>(ref.segment)].head) +
           ref.offset;
  return ext(ref.segment) + (ref.offset - channels_offset_);
}

void NodeShm::read(void* dst, const BufferRef& src, size_t offset, size_t bytes) const {
  if (!bytes) return;
  if (const std::byte* p = map(src)) {
    std::memcpy(dst, p + offset, bytes);
    return;
  }
  // Cross-memory attach: one copy straight out of the owner's address space.
  if (!cma_)
    throw RuntimeError("a peer's private buffer cannot be read: cross-memory attach is " +
                       cma_status_);
  if (!cma_read(pid(src.owner), dst, src.address + offset, bytes))
    throw RuntimeError("process_vm_readv from local rank " + std::to_string(src.owner) +
                       " failed: " + errno_text());
}

bool NodeShm::alive(int local) const {
  if (local == local_rank_) return true;
  Header& h = life(local);
  if (h.lost.load(std::memory_order_acquire)) return false;
  switch (pthread_mutex_trylock(&h.lifeline)) {
    case EBUSY:  // held: the owner lives
      return true;
    case 0:  // released: the owner detached normally (it waits for nobody any more)
      pthread_mutex_unlock(&h.lifeline);
      return true;
    case EOWNERDEAD:  // the kernel released it for a dead owner; now held by this rank
      h.lost.store(1, std::memory_order_release);  // for the other local ranks
      // Unlocked without pthread_mutex_consistent: it stays unrecoverable for everyone,
      // and leaves this thread's robust list (its segment may be unmapped later).
      pthread_mutex_unlock(&h.lifeline);
      return false;
    case ENOTRECOVERABLE:
      return false;
    default:
      return true;
  }
}

void NodeShm::check_peers_now() const {
  using Clock = std::chrono::steady_clock;
  static thread_local Clock::time_point last{};
  const auto now = Clock::now();
  if (now - last < std::chrono::milliseconds(50)) return;
  last = now;
  for (int r = 0; r < local_size(); ++r)
    if (!alive(r)) throw PeerLost(members_[static_cast<size_t>(r)], pid(r));
}

}  // namespace cb::engine
