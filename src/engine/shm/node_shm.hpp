// Shared memory of the ranks on one node. Each local rank creates one POSIX shm segment
// and maps everyone else's; as soon as all are attached every segment is unlinked, so
// nothing stays in /dev/shm even if a rank is killed later. A segment holds its owner's
// control area (operation slots and progress counters), the channels peers send it
// point-to-point messages through, staging space for collectives, and optionally a heap:
// buffers allocated there (--alloc backend) can be read by every local rank directly,
// which is what makes single-copy collectives possible. The preload, whose buffers are
// the program's private memory, asks for no heap.
//
// Size: every local rank lays out every segment alike (the sizes are agreed with MIN over
// the node). A rank's segment is two files: the control area (header, operation slots,
// the small path's area; tens of KiB) and the rest (channels, staging, heap). Both are
// reserved in /dev/shm (posix_fallocate: a tmpfs that is too small fails there with ENOSPC
// instead of a SIGBUS at the first touch of a page it cannot back), and all of it counts
// against this process's budget (CB_SHM_MAX_BYTES) from creation; the heap is sparse and
// each buffer's pages are reserved by alloc(), which returns null when /dev/shm cannot hold
// them. Any failure at creation on any local rank turns shared memory off on all of them
// (RuntimeError, the reason of the first rank that failed): the engine then takes the MPI
// transport.
//
// With a heap (--backend engine) both files are made and mapped at creation. Without one
// (the preload, whose communicators mostly run the small path or nothing at all) only the
// control files are: the channels and staging of local rank r are made by the first
// process that touches them (channel(), staging(), map()), whichever that is, with a name
// every local rank derives from r's control file, and mapped by each process at its own
// first touch, without waiting for any peer (a non-blocking collective may be the first
// to need them, and must not wait for a peer at its start). Creation only checks that
// /dev/shm has room for them; a reservation that fails later ends the process with a
// clear error (the operation that needed them is already under way on every rank). Nor
// does such a NodeShm make a control file where every local rank has a free slot in the
// pool its process shares with them (share_pool, made with MPI_COMM_WORLD's engine): it
// takes the slot, and creation is one MPI_Allgather and no system call. A slot is taken
// again once every peer that used it has destroyed its NodeShm (counted in the slot).
//
// Synchronisation is C++ atomics in shared memory (lock-free 64-bit atomics are address
// free), acquire/release, with monotonic counters that are never reset.
//
// Liveness: each rank holds a robust process-shared mutex in its own segment for as long
// as it is attached. When it dies (SIGKILL included) the kernel marks the mutex
// owner-dead, so a peer waiting on it finds out without help from the launcher (which may
// not kill the job: srun --kill-on-bad-exit=0), with no PID to reuse or look up. The
// mutexes are held by one thread per process that lives as long as the process (the
// "lifeline keeper"), not by the thread that created the NodeShm: a program may create
// the engine in a thread that then exits, and destroy it from any thread.
#pragma once

#include <mpi.h>
#include <pthread.h>
#include <sys/types.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/errors.hpp"

namespace cb::engine {

// A local rank exited (killed, crashed) while this rank waited for it in shared memory.
struct PeerLost : RuntimeError {
  PeerLost(int rank, pid_t pid);
  // "rank R (pid P) exited while this rank waited in <where>"
  std::string in(const std::string& where) const;
  int rank;  // communicator rank
  pid_t pid;
};

// Unlinks the segments of this process that are created but not yet unlinked (between
// shm_open and the moment every local rank has attached). Async-signal-safe: for a
// signal handler that ends the process during setup.
void unlink_unattached_segments() noexcept;

struct alignas(64) Counter {
  std::atomic<uint64_t> value{0};
};
static_assert(std::atomic<uint64_t>::is_always_lock_free);

// A buffer as peers see it: in some local rank's segment, or only in its owner's address
// space (then peers read it with cross-memory attach).
struct BufferRef {
  int32_t segment = -1;  // local rank whose segment holds it; -1: private memory
  int32_t owner = -1;    // local rank whose process owns the address
  uint64_t offset = 0;   // within `segment`
  uint64_t address = 0;  // in the owner's address space
  uint64_t bytes = 0;
};

// What one rank shares about one collective (op % kOpSlots). Progress counters hold
// op * 2^24 + count, so they only grow, across operations too.
struct alignas(64) OpSlot {
  Counter published;  // == op once `in` and `out` describe this operation's buffers
  BufferRef in, out;
  Counter staged, reduced, gathered, done;
};

// Slots per rank: shared-memory operations in flight at once, times their phases.
inline constexpr int kOpSlots = 64;
inline constexpr int kStagingRegions = kOpSlots / 4;  // operations use op * 4 + phase
inline constexpr uint64_t progress(uint64_t op, uint64_t count) {
  return (op << 24) + count;
}

// The small-message path's area of each rank (shm/small_slots.hpp lays it out): a cache
// line of flags and two inline data buffers of kSmallSlotBytes, in the segment's control
// area (zeroed and populated when the segment is made, like the operation slots).
inline constexpr size_t kSmallSlotBytes = 16384;
inline constexpr size_t kSmallAreaBytes = 64 + 2 * kSmallSlotBytes;
// Control areas in a process's pool (NodeShm::share_pool): communicators alive at once, and
// freed ones whose peers have not yet freed theirs, beyond which control files are made.
inline constexpr int kPoolSlots = 16;

// Point-to-point messages from one local rank to another, in the receiver's segment.
// A message is one descriptor (data in its slot, or described in place), or a train of
// fragments through consecutive slots (a pipelined copy for private buffers).
struct alignas(64) Descriptor {
  std::atomic<uint64_t> seq;  // ring position + 1 once valid
  int32_t tag;
  uint32_t kind;                   // see ShmTransport
  uint64_t bytes;                  // in this descriptor
  uint64_t message;                // the sender's message number on this channel
  uint64_t offset;                 // of this fragment in the message
  uint64_t total;                  // message bytes
  BufferRef source;                // in place: where the receiver copies from
  uint64_t data;                   // eager, fragment: position of the bytes in the data ring
  std::atomic<uint32_t> claimed;   // a receive took it
  std::atomic<uint32_t> complete;  // data copied out: the slot can be reused
};

// A channel is a ring of descriptors followed by a ring of data bytes (the eager messages'
// and the fragments' contents, in posting order, each contiguous, 64-byte aligned):
// NodeShm::channel_data_bytes() of it, CB_SHM_CHANNEL_BYTES shared among the senders.
inline constexpr int kRingEntries = 64;
inline constexpr size_t kSlotBytes = 32768;  // one fragment
inline constexpr size_t kEagerBytes = 8192;  // up to this, a message is one descriptor
inline constexpr size_t kMinChannelData = 2 * kSlotBytes;
inline constexpr size_t kMaxChannelData = size_t{1} << 20;

struct alignas(64) Channel {
  Counter head;  // descriptors posted (sender)
  Counter tail;  // descriptors retired (sender, once complete)
  Descriptor ring[kRingEntries];
  std::byte* data() { return reinterpret_cast<std::byte*>(this + 1); }  // the data ring
};

class LifelineKeeper;

class NodeShm {
 public:
  // Collective over `node` (the ranks of one node). `members[i]` is the communicator rank
  // of local rank i. `heap_bytes`: the shared heap per rank (0: none); `staging_bytes`:
  // the staging per rank; the channels' size and the budget come from engine_settings().
  // Throws RuntimeError on every local rank alike when shared memory cannot be set up.
  // With `cma`, probes whether every local rank may read its peers' private memory (see
  // cma.hpp).
  // Without a heap (heap_bytes 0) the channels and staging are made at first use (above).
  NodeShm(MPI_Comm node, std::vector<int> members, size_t heap_bytes, size_t staging_bytes,
          bool cma = true);
  // Collective over `node`, once per process (MPI_COMM_WORLD's engine without a heap): every
  // local rank makes a pool of kPoolSlots control areas and maps the others'. A later
  // NodeShm without a heap whose local ranks all took a slot in pools shared this way makes
  // and maps no file: one MPI_Allgather. No pool (shared memory short, a failure on any
  // local rank) is not an error: NodeShms then make control files of their own.
  static void share_pool(MPI_Comm node);
  ~NodeShm();
  NodeShm(const NodeShm&) = delete;
  NodeShm& operator=(const NodeShm&) = delete;

  int local_rank() const { return local_rank_; }
  int local_size() const { return static_cast<int>(members_.size()); }
  int local_of(int comm_rank) const;  // -1 when not on this node
  const std::vector<int>& members() const { return members_; }

  OpSlot& slot(int local, uint64_t op);
  std::byte* small_area(int local) const;  // kSmallAreaBytes, 64-byte aligned
  Channel& channel(int receiver, int sender);
  // Staging space of a local rank for the pipelined collective `op`: one region per
  // operation in flight, so concurrent collectives never share one (region_bytes each).
  std::byte* staging(int local, uint64_t op) const;
  size_t staging_bytes() const { return staging_bytes_ / kStagingRegions; }
  size_t channel_data_bytes() const { return channel_data_; }  // per channel (sender)

  // What this rank's segment takes of the budget (control area, channels, staging; heap
  // buffers not included), and what all of this process's NodeShms take. Without a heap
  // the channels and staging are in /dev/shm only once something used them: extended().
  size_t segment_bytes() const { return reserved_; }
  bool extended(int local) const;  // local rank's channels and staging mapped here
  // Empty, or what was made smaller than asked and why (the same on every local rank).
  const std::string& note() const { return note_; }
  static size_t process_bytes();
  size_t heap_bytes() const { return heap_bytes_; }

  // Heap in this rank's segment: memory every local rank can read and write. Null when
  // there is no room, in the heap or in /dev/shm (its pages are reserved here).
  void* alloc(size_t bytes);
  bool free(void* p);  // false when p is not from this heap

  // How peers reach [p, p + bytes): shared when it lies in a segment, else by address.
  BufferRef describe(const void* p, size_t bytes) const;
  // Where a buffer described by a peer is in this process; null when not shared.
  std::byte* map(const BufferRef& ref) const;
  // Copies from a peer's buffer: memcpy when shared, process_vm_readv otherwise (only
  // when cma(): the algorithms that need it check first).
  void read(void* dst, const BufferRef& src, size_t offset, size_t bytes) const;
  // Whether every local rank may read every other's private memory (agreed on the node),
  // and why (not); private buffers take the pipelined staging copy or MPI without it.
  bool cma() const { return cma_; }
  const std::string& cma_status() const { return cma_status_; }
  bool is_shared(const void* p) const { return describe(p, 1).segment >= 0; }
  pid_t pid(int local) const;

  // Called on every unsuccessful poll while waiting on peers; `polls` counts them. Every
  // 64 polls it reads the clock (yield-mode polls can take milliseconds each), and at
  // most every 50 ms checks that every local peer is still alive, throwing PeerLost
  // naming one that is not, instead of waiting forever.
  void check_peers(uint64_t& polls) const {
    if (++polls % kPollsPerCheck == 0) check_peers_now();
  }
  bool alive(int local) const;  // false once `local`'s process has exited

 private:
  // A local rank's segment as this process maps it: the control file at `base`
  // ([0, channels_offset_) of the layout) and the rest at `ext` ([channels_offset_, size)),
  // null until this process first touches it.
  struct Header;
  struct Segment {
    std::byte* base = nullptr;  // the control file, when it is one of its own (not pooled)
    Header* head = nullptr;     // its header: operation slots, small area (base, or a pool slot)
    Header* life = nullptr;     // its owner's identity and lifeline (head, or the pool's first)
    std::atomic<std::byte*> ext{nullptr};
    bool created = false;  // this process made its second file (a name to unlink)
    int remembered = -1;   // pending_names slot of that name, for a signal during a run
  };
  struct Pool;
  static Pool& pool();
  static std::string init_life(Header& h, LifelineKeeper*& keeper);
  std::string make_control();
  void layout(const uint64_t sizes[3]);
  Header& header(int local) const;
  Header& life(int local) const;
  std::byte* ext(int local) const {  // the second file of `local`'s segment, mapped here
    std::byte* p = segments_[static_cast<size_t>(local)].ext.load(std::memory_order_acquire);
    return p ? p : attach(local);
  }
  std::byte* attach(int local) const;  // makes or opens, maps, prefaults; throws RuntimeError
  std::string ext_name(int local) const;
  void release_segments();
  void check_peers_now() const;
  static constexpr uint64_t kPollsPerCheck = 64;

  int local_rank_ = 0;
  std::vector<int> members_;
  std::unique_ptr<Segment[]> segments_;  // local_size() of them; null until made
  std::vector<std::string> names_;       // every local rank's control file
  mutable std::mutex attach_mu_;         // attach(): one mapping per segment
  size_t staging_bytes_ = 0, channel_data_ = 0, heap_bytes_ = 0;
  size_t channels_offset_ = 0, channel_stride_ = 0, staging_offset_ = 0, heap_offset_ = 0;
  size_t total_ = 0;     // the layout's end: channels_offset_ + the second file's size
  size_t reserved_ = 0;  // counted in process_bytes()
  std::string note_;
  mutable int fd_ = -1;       // this rank's second file, kept while it has a heap for alloc()
  size_t heap_reserved_ = 0;  // [heap_offset_, heap_reserved_) is reserved in /dev/shm
  std::mutex heap_mu_;
  std::map<size_t, size_t> free_;  // offset -> bytes, in this rank's heap
  std::map<size_t, size_t> used_;
  bool cma_ = false;
  std::string cma_status_;
  LifelineKeeper* keeper_ = nullptr;  // holds this rank's own robust mutex (its lifeline)
  int pool_slot_ = -1;                // this rank's slot in its process's pool, or -1
  bool control_linked_ = false;       // this rank's control file still has its name
  int control_remembered_ = -1;       // its pending_names slot
};

}  // namespace cb::engine
