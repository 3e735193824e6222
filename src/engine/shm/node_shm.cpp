#include "engine/shm/node_shm.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
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

namespace cb::engine {
namespace {

constexpr size_t kPage = 4096;
constexpr uint64_t kMagic = 0x636f6c6c62656e63;  // "collbenc"
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

struct Budget {
  size_t max;
  std::string origin;  // where `max` comes from, for messages
};

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
// reason, the same text on every rank (one MPI_Allreduce; a broadcast only on failure).
std::string agree(MPI_Comm node, int me, const std::string& failure) {
  int bad = failure.empty() ? INT_MAX : me, first = INT_MAX;
  CB_MPI(MPI_Allreduce(&bad, &first, 1, MPI_INT, MPI_MIN, node));
  if (first == INT_MAX) return {};
  char text[512] = "";
  if (me == first) std::snprintf(text, sizeof text, "%s", failure.c_str());
  CB_MPI(MPI_Bcast(text, sizeof text, MPI_CHAR, first, node));
  return std::string(text) + " (local rank " + std::to_string(first) + ")";
}

}  // namespace

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

void unlink_unattached_segments() noexcept {
  for (auto& p : pending_names)
    if (p.state.load(std::memory_order_acquire) == 2) shm_unlink(p.name);
}

struct NodeShm::Header {
  uint64_t magic;
  uint64_t self;  // where the owner maps this segment: peers probe CMA by reading `magic`
  int32_t pid;
  std::atomic<uint32_t> lost;  // set by the first peer that found the owner dead
  pthread_mutex_t lifeline;    // robust, process-shared: held by the owner while attached
  OpSlot slots[kOpSlots];
  alignas(64) std::byte small[kSmallAreaBytes];
};

PeerLost::PeerLost(int rank_, pid_t pid_)
    : RuntimeError("rank " + std::to_string(rank_) + " (pid " + std::to_string(pid_) +
                   ") exited while this rank waited for it in shared memory"),
      rank(rank_),
      pid(pid_) {}

std::string PeerLost::in(const std::string& where) const {
  return "rank " + std::to_string(rank) + " (pid " + std::to_string(pid) +
         ") exited while this rank waited in " + where;
}

NodeShm::NodeShm(MPI_Comm node, std::vector<int> members, size_t heap_bytes, size_t staging_bytes,
                 bool cma)
    : members_(std::move(members)) {
  MPI_Comm_rank(node, &local_rank_);
  const int n = local_size();
  const EngineSettings& settings = engine_settings();

  // Sizes. A channel's data ring: CB_SHM_CHANNEL_BYTES shared among the senders, 64 KiB
  // to 1 MiB each (1 MiB pipelines private buffers as fast as 2 MiB did here; 512 KiB was
  // 1.3-3x slower). The staging: as asked, or, when this process's budget cannot hold it,
  // what the budget leaves in whole MiB (at least 1 MiB, or no shared memory at all).
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
  failure = agree(node, local_rank_, failure);
  if (!failure.empty()) throw RuntimeError("shared memory unavailable: " + failure);

  // Every local rank computes every segment's layout: the sizes are agreed (MIN), so that
  // ranks with different CB_SHM_* values or budgets still read each other's alike.
  uint64_t sizes[3] = {staging, channel, round_up(heap_bytes)};
  CB_MPI(MPI_Allreduce(MPI_IN_PLACE, sizes, 3, MPI_UINT64_T, MPI_MIN, node));
  staging_bytes_ = sizes[0];
  channel_data_ = sizes[1];
  heap_bytes_ = sizes[2];
  if (staging_bytes_ < asked)
    note_ = "staging " + mib(staging_bytes_) + " per rank instead of " + mib(asked) +
            ": the shared-memory budget (CB_SHM_MAX_BYTES) of a local rank holds no more";
  channels_offset_ = round_up(sizeof(Header));
  channel_stride_ = sizeof(Channel) + channel_data_;
  staging_offset_ = round_up(channels_offset_ + static_cast<size_t>(n) * channel_stride_);
  heap_offset_ = round_up(staging_offset_ + staging_bytes_);
  heap_reserved_ = heap_offset_;
  const size_t total = heap_offset_ + heap_bytes_;

  // Claim the budget (another thread may have taken it meanwhile), then create, size,
  // reserve and map this rank's segment, and lay out its control structures. The name
  // carries a random part besides the PID: jobs in other PID namespaces (containers
  // sharing /dev/shm) or a crashed job's leftover may hold the same PID; on a clash
  // (EEXIST) another random name is tried, and a name that is not ours is never touched.
  failure = claim_budget(heap_offset_, budget);
  if (failure.empty()) reserved_ = heap_offset_;
  static std::atomic<int> instance{0};
  const int this_instance = instance++;
  std::random_device entropy;
  char name[64] = "";
  int fd = -1;
  for (int attempt = 0; failure.empty() && attempt < 16 && fd < 0; ++attempt) {
    std::snprintf(name, sizeof name, "/collbench.%d.%d.%08x", static_cast<int>(getpid()),
                  this_instance, static_cast<unsigned>(entropy()));
    fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
    if (fd < 0 && errno != EEXIST) break;
  }
  const int remembered = fd >= 0 ? remember_name(name) : -1;
  void* mine = MAP_FAILED;
  if (failure.empty()) {
    if (fd < 0)
      failure = std::string("shm_open(") + name + "): " + errno_text();
    else if (ftruncate(fd, static_cast<off_t>(total)) != 0)
      failure = "ftruncate of the shared-memory segment: " + errno_text();
    else if (const int rc = posix_fallocate(fd, 0, static_cast<off_t>(heap_offset_)))
      failure = "cannot reserve " + mib(heap_offset_) + " for this rank's segment (" +
                std::strerror(rc) + "; " + dev_shm_space() + ")";
    else if ((mine = mmap(nullptr, total, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)) == MAP_FAILED)
      failure = "mmap of the shared-memory segment: " + errno_text();
  }
  auto* base = static_cast<std::byte*>(mine);
  Header* h = nullptr;
  if (failure.empty()) {
    h = new (base) Header{};
    h->pid = static_cast<int32_t>(getpid());
    h->self = reinterpret_cast<uint64_t>(base);
    pthread_mutexattr_t attr;
    pthread_mutexattr_init(&attr);
    pthread_mutexattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
    pthread_mutexattr_setrobust(&attr, PTHREAD_MUTEX_ROBUST);
    pthread_mutex_init(&h->lifeline, &attr);
    pthread_mutexattr_destroy(&attr);
    keeper_ = LifelineKeeper::get(failure);  // held before any peer can look
    if (keeper_ && keeper_->call(&h->lifeline, true) != 0) {
      failure = "cannot lock the lifeline mutex";
      keeper_ = nullptr;
    }
  }
  bool linked = fd >= 0;
  const auto undo = [&] {
    if (keeper_) keeper_->call(&h->lifeline, false);
    keeper_ = nullptr;
    if (mine != MAP_FAILED) munmap(mine, total);
    if (fd >= 0) close(fd);
    if (linked) unlink_name(name, remembered);
    release_budget(reserved_);
    reserved_ = 0;
  };
  failure = agree(node, local_rank_, failure);
  if (!failure.empty()) {
    undo();
    throw RuntimeError("shared memory unavailable: " + failure);
  }
  for (int s = 0; s < n; ++s)
    new (base + channels_offset_ + static_cast<size_t>(s) * channel_stride_) Channel{};
  h->magic = kMagic;
  // The channels into this rank and its staging: the data rings and the staging regions
  // are used in turn, each page for the first time dozens of operations after creation.
  prefault(base + channels_offset_, staging_offset_ - channels_offset_ + staging_bytes_);

  // Everyone maps everyone's segment, then every segment is unlinked.
  std::vector<char> names(static_cast<size_t>(n) * sizeof name);
  CB_MPI(MPI_Allgather(name, sizeof name, MPI_CHAR, names.data(), sizeof name, MPI_CHAR, node));
  segments_.resize(static_cast<size_t>(n));
  for (int r = 0; r < n; ++r) {
    if (r == local_rank_) {
      segments_[static_cast<size_t>(r)] = {base, total};
      continue;
    }
    const char* peer = &names[static_cast<size_t>(r) * sizeof name];
    const int pfd = shm_open(peer, O_RDWR, 0600);
    void* p =
        pfd < 0 ? MAP_FAILED : mmap(nullptr, total, PROT_READ | PROT_WRITE, MAP_SHARED, pfd, 0);
    if (pfd >= 0) close(pfd);
    if (p == MAP_FAILED && failure.empty())
      failure = std::string("cannot map ") + peer + ": " + errno_text();
    segments_[static_cast<size_t>(r)] = {static_cast<std::byte*>(p == MAP_FAILED ? nullptr : p),
                                         total};
  }
  failure = agree(node, local_rank_, failure);
  unlink_name(name, remembered);  // all attached (or giving up): nothing stays in /dev/shm
  linked = false;
  if (!failure.empty()) {
    for (size_t r = 0; r < segments_.size(); ++r)
      if (segments_[r].base && static_cast<int>(r) != local_rank_)
        munmap(segments_[r].base, segments_[r].size);
    segments_.clear();
    undo();
    throw RuntimeError("shared memory unavailable: " + failure);
  }
  if (heap_bytes_) {
    fd_ = fd;  // kept: alloc() reserves the pages of each buffer
    free_[heap_offset_] = heap_bytes_;
  } else {
    close(fd);
  }
  // What this rank touches in a peer's segment (its owner populated it already): the
  // header, the channel it sends through and the staging; not the other ranks' channels,
  // which would cost page tables growing with the square of the ranks on a node.
  for (int r = 0; r < n; ++r) {
    if (r == local_rank_) continue;
    std::byte* peer = segments_[static_cast<size_t>(r)].base;
    prefault(peer, channels_offset_);
    prefault(peer + channels_offset_ + static_cast<size_t>(local_rank_) * channel_stride_,
             channel_stride_);
    prefault(peer + staging_offset_, staging_bytes_);
  }
  probe_cma(node, cma);
}

void NodeShm::probe_cma(MPI_Comm node, bool wanted) {
  // Every rank reads the next one's header; CMA is used only if all of them could.
  CmaVerdict mine{true, "process_vm_readv between ranks works"};
  if (!wanted) {
    mine = {false, "off (CB_ENGINE_CMA=0)"};
  } else if (local_size() > 1) {
    const int next = (local_rank_ + 1) % local_size();
    mine = cma_check(pid(next), header(next).self, kMagic);  // `magic` leads the header
  }
  int ok = mine.available, all_ok = 0;
  CB_MPI(MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, node));
  cma_ = all_ok != 0;
  cma_status_ = cma_ ? mine.detail
                : ok ? std::string("unavailable: refused on another local rank")
                     : (wanted ? "unavailable: " : "") + mine.detail;
}

NodeShm::~NodeShm() {
  // The keeper unlocks the lifeline (it leaves the keeper's robust list) before the
  // segment is unmapped, whichever thread destroys this. A forked child has no keeper
  // thread and no such list entry: there is nothing to unlock.
  if (keeper_ && keeper_->alive_here() && !segments_.empty())
    keeper_->call(&header(local_rank_).lifeline, false);
  for (const Segment& seg : segments_)
    if (seg.base) munmap(seg.base, seg.size);
  if (fd_ >= 0) close(fd_);
  release_budget(reserved_);
}

int NodeShm::local_of(int comm_rank) const {
  for (size_t i = 0; i < members_.size(); ++i)
    if (members_[i] == comm_rank) return static_cast<int>(i);
  return -1;
}

NodeShm::Header& NodeShm::header(int local) const {
  return *reinterpret_cast<Header*>(segments_[static_cast<size_t>(local)].base);
}

OpSlot& NodeShm::slot(int local, uint64_t op) {
  return header(local).slots[op % kOpSlots];
}

std::byte* NodeShm::small_area(int local) const {
  return header(local).small;
}

Channel& NodeShm::channel(int receiver, int sender) {
  std::byte* base = segments_[static_cast<size_t>(receiver)].base + channels_offset_;
  return *reinterpret_cast<Channel*>(base + static_cast<size_t>(sender) * channel_stride_);
}

std::byte* NodeShm::staging(int local, uint64_t op) const {
  return segments_[static_cast<size_t>(local)].base + staging_offset_ +
         (op / 4 % kStagingRegions) * staging_bytes();
}

size_t NodeShm::process_bytes() {
  return held_bytes.load(std::memory_order_relaxed);
}

pid_t NodeShm::pid(int local) const {
  return header(local).pid;
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
      if (posix_fallocate(fd_, static_cast<off_t>(heap_reserved_),
                          static_cast<off_t>(offset + bytes - heap_reserved_)) != 0)
        return nullptr;
      heap_reserved_ = offset + bytes;
    }
    free_.erase(it);
    if (left) free_[offset + bytes] = left;
    used_[offset] = bytes;
    return segments_[static_cast<size_t>(local_rank_)].base + offset;
  }
  return nullptr;
}

bool NodeShm::free(void* p) {
  const Segment& seg = segments_[static_cast<size_t>(local_rank_)];
  auto* b = static_cast<std::byte*>(p);
  if (b < seg.base || b >= seg.base + seg.size) return false;
  std::lock_guard lock(heap_mu_);
  const auto it = used_.find(static_cast<size_t>(b - seg.base));
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
  for (size_t i = 0; i < segments_.size(); ++i) {
    const Segment& seg = segments_[i];
    if (b >= seg.base && b + bytes <= seg.base + seg.size) {
      ref.segment = static_cast<int32_t>(i);
      ref.offset = static_cast<uint64_t>(b - seg.base);
      break;
    }
  }
  return ref;
}

std::byte* NodeShm::map(const BufferRef& ref) const {
  return ref.segment < 0 ? nullptr : segments_[static_cast<size_t>(ref.segment)].base + ref.offset;
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
  Header& h = header(local);
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
