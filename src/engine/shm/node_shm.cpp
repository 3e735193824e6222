#include "engine/shm/node_shm.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <new>

#include "core/mpi_check.hpp"

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

}  // namespace

struct NodeShm::Header {
  uint64_t magic;
  int32_t pid;
  OpSlot slots[kOpSlots];
};

NodeShm::NodeShm(MPI_Comm node, std::vector<int> members, size_t heap_bytes, size_t staging_bytes)
    : members_(std::move(members)),
      staging_bytes_(round_up(staging_bytes)),
      heap_bytes_(heap_bytes) {
  MPI_Comm_rank(node, &local_rank_);
  const int n = local_size();
  const size_t channels = round_up(sizeof(Header));
  const size_t staging = round_up(channels + static_cast<size_t>(n) * sizeof(Channel));
  heap_offset_ = round_up(staging + staging_bytes_);
  const size_t total = heap_offset_ + round_up(heap_bytes_);

  // Create, size and map this rank's segment, and lay out its control structures.
  static std::atomic<int> instance{0};
  char name[64];
  std::snprintf(name, sizeof name, "/collbench.%d.%d", static_cast<int>(getpid()), instance++);
  std::string failure;
  void* mine = MAP_FAILED;
  const int fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
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
    if (fd >= 0) shm_unlink(name);
    throw RuntimeError("shared memory unavailable: " +
                       (failure.empty() ? "failed on another local rank" : failure));
  }
  auto* base = static_cast<std::byte*>(mine);
  auto* h = new (base) Header{};
  h->pid = static_cast<int32_t>(getpid());
  for (int s = 0; s < n; ++s)
    new (base + channels + static_cast<size_t>(s) * sizeof(Channel)) Channel{};
  h->magic = kMagic;

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
  shm_unlink(name);  // all attached (or giving up): nothing stays in /dev/shm
  if (!all_ok) {
    for (auto& seg : segments_)
      if (seg.base) munmap(seg.base, seg.size);
    segments_.clear();
    throw RuntimeError("shared memory unavailable: " +
                       (failure.empty() ? "a local rank could not attach" : failure));
  }
  free_[heap_offset_] = round_up(heap_bytes_);
}

NodeShm::~NodeShm() {
  for (auto& seg : segments_)
    if (seg.base) munmap(seg.base, seg.size);
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
  auto* out = static_cast<std::byte*>(dst);
  uint64_t from = src.address + offset;
  while (bytes) {
    iovec local{out, bytes}, remote{reinterpret_cast<void*>(from), bytes};
    const ssize_t got = process_vm_readv(pid(src.owner), &local, 1, &remote, 1, 0);
    if (got <= 0)
      throw RuntimeError("process_vm_readv from local rank " + std::to_string(src.owner) +
                         " failed: " + errno_text());
    out += got;
    from += static_cast<uint64_t>(got);
    bytes -= static_cast<size_t>(got);
  }
}

void NodeShm::check_peers(uint64_t& polls) const {
  if (++polls % 16384) return;
  using Clock = std::chrono::steady_clock;
  static thread_local Clock::time_point last = Clock::now();
  const auto now = Clock::now();
  if (now - last < std::chrono::milliseconds(100)) return;
  last = now;
  for (int r = 0; r < local_size(); ++r) {
    if (r == local_rank_) continue;
    if (kill(pid(r), 0) != 0 && errno == ESRCH)
      throw RuntimeError("rank " + std::to_string(members_[static_cast<size_t>(r)]) + " (pid " +
                         std::to_string(pid(r)) +
                         ", same node) exited while this rank waited for it");
  }
}

}  // namespace cb::engine
