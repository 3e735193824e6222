#include "engine/shm/node_shm.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <new>
#include <random>

#include "core/mpi_check.hpp"
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

}  // namespace

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
    : members_(std::move(members)),
      staging_bytes_(round_up(staging_bytes)),
      heap_bytes_(heap_bytes) {
  MPI_Comm_rank(node, &local_rank_);
  const int n = local_size();
  const size_t channels = round_up(sizeof(Header));
  const size_t staging = round_up(channels + static_cast<size_t>(n) * sizeof(Channel));
  heap_offset_ = round_up(staging + staging_bytes_);
  const size_t total = heap_offset_ + round_up(heap_bytes_);

  // Create, size and map this rank's segment, and lay out its control structures. The
  // name carries a random part besides the PID: jobs in other PID namespaces (containers
  // sharing /dev/shm) or a crashed job's leftover may hold the same PID; on a clash
  // (EEXIST) another random name is tried, and a name that is not ours is never touched.
  static std::atomic<int> instance{0};
  const int this_instance = instance++;
  std::random_device entropy;
  char name[64];
  int fd = -1;
  for (int attempt = 0; attempt < 16 && fd < 0; ++attempt) {
    std::snprintf(name, sizeof name, "/collbench.%d.%d.%08x", static_cast<int>(getpid()),
                  this_instance, static_cast<unsigned>(entropy()));
    fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
    if (fd < 0 && errno != EEXIST) break;
  }
  const int remembered = fd >= 0 ? remember_name(name) : -1;
  std::string failure;
  void* mine = MAP_FAILED;
  if (fd < 0) {
    failure = std::string("shm_open(") + name + "): " + errno_text();
  } else {
    if (ftruncate(fd, static_cast<off_t>(total)) != 0)
      failure = "ftruncate of the shared-memory segment: " + errno_text();
    else if ((mine = mmap(nullptr, total, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)) == MAP_FAILED)
      failure = "mmap of the shared-memory segment: " + errno_text();
    close(fd);
  }
  int ok = failure.empty(), all_ok = 0;
  CB_MPI(MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, node));
  if (!all_ok) {
    if (mine != MAP_FAILED) munmap(mine, total);
    if (fd >= 0) unlink_name(name, remembered);
    throw RuntimeError("shared memory unavailable: " +
                       (failure.empty() ? "failed on another local rank" : failure));
  }
  auto* base = static_cast<std::byte*>(mine);
  auto* h = new (base) Header{};
  h->pid = static_cast<int32_t>(getpid());
  h->self = reinterpret_cast<uint64_t>(base);
  pthread_mutexattr_t attr;
  pthread_mutexattr_init(&attr);
  pthread_mutexattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
  pthread_mutexattr_setrobust(&attr, PTHREAD_MUTEX_ROBUST);
  pthread_mutex_init(&h->lifeline, &attr);
  pthread_mutexattr_destroy(&attr);
  holds_lifeline_ = pthread_mutex_lock(&h->lifeline) == 0;  // before any peer can look
  owner_ = pthread_self();
  for (int s = 0; s < n; ++s)
    new (base + channels + static_cast<size_t>(s) * sizeof(Channel)) Channel{};
  h->magic = kMagic;
  prefault(base + staging, staging_bytes_);  // the channels were written just above; the
                                             // heap is faulted per buffer

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
    if (p == MAP_FAILED) failure = std::string("cannot map ") + peer + ": " + errno_text();
    segments_[static_cast<size_t>(r)] = {static_cast<std::byte*>(p == MAP_FAILED ? nullptr : p),
                                         total};
  }
  ok = failure.empty();
  CB_MPI(MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, node));
  unlink_name(name, remembered);  // all attached (or giving up): nothing stays in /dev/shm
  if (!all_ok) {
    if (holds_lifeline_) pthread_mutex_unlock(&h->lifeline);
    for (auto& seg : segments_)
      if (seg.base) munmap(seg.base, seg.size);
    segments_.clear();
    throw RuntimeError("shared memory unavailable: " +
                       (failure.empty() ? "a local rank could not attach" : failure));
  }
  // What this rank touches in a peer's segment (its owner populated it already): the
  // header, the channel it sends through and the staging; not the other ranks' channels,
  // which would cost page tables growing with the square of the ranks on a node.
  for (int r = 0; r < n; ++r) {
    if (r == local_rank_) continue;
    std::byte* peer = segments_[static_cast<size_t>(r)].base;
    prefault(peer, channels);
    prefault(peer + channels + static_cast<size_t>(local_rank_) * sizeof(Channel), sizeof(Channel));
    prefault(peer + staging, staging_bytes_);
  }
  free_[heap_offset_] = round_up(heap_bytes_);
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
  // The lifeline sits on its owner thread's robust list until unlocked; unmapped while
  // still there, glibc would follow a dangling link. Another thread cannot unlock it:
  // then this segment stays mapped (the process is ending anyway).
  bool keep_mine = false;
  if (holds_lifeline_ && !segments_.empty()) {
    if (pthread_equal(owner_, pthread_self()))
      pthread_mutex_unlock(&header(local_rank_).lifeline);
    else
      keep_mine = true;
  }
  for (size_t r = 0; r < segments_.size(); ++r)
    if (segments_[r].base && !(keep_mine && static_cast<int>(r) == local_rank_))
      munmap(segments_[r].base, segments_[r].size);
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

Channel& NodeShm::channel(int receiver, int sender) {
  std::byte* base = segments_[static_cast<size_t>(receiver)].base + round_up(sizeof(Header));
  return *reinterpret_cast<Channel*>(base + static_cast<size_t>(sender) * sizeof(Channel));
}

std::byte* NodeShm::staging(int local, uint64_t op) const {
  const size_t channels = round_up(sizeof(Header));
  return segments_[static_cast<size_t>(local)].base +
         round_up(channels + members_.size() * sizeof(Channel)) +
         (op / 4 % kStagingRegions) * staging_bytes();
}

pid_t NodeShm::pid(int local) const {
  return header(local).pid;
}

void* NodeShm::alloc(size_t bytes) {
  bytes = round_up(bytes ? bytes : 1);
  std::lock_guard lock(heap_mu_);
  for (auto it = free_.begin(); it != free_.end(); ++it) {
    if (it->second < bytes) continue;
    const size_t offset = it->first, left = it->second - bytes;
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
