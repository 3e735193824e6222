// What node_shm.cpp (a communicator's segments) and node_shm_pool.cpp (the process's pool
// of control areas) share, inside engine/shm only: a segment's header, the pool, and the
// helpers both use to make files in /dev/shm, count them against the budget and agree with
// the local ranks.
#pragma once

#include <pthread.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>

#include "engine/shm/node_shm.hpp"

namespace cb::engine {

namespace shm_internal {

inline constexpr size_t kPage = 4096;
inline constexpr uint64_t kMagic = 0x636f6c6c62656e63;  // "collbenc"

size_t round_up(size_t n);  // to whole pages
std::string errno_text();

// A name of a file being made, unlinked by unlink_unattached_segments() if a signal ends
// the process before unlink_name(): its slot, or -1.
int remember_name(const char* name);
void unlink_name(const char* name, int remembered);

// The shared memory this process's segments may reserve (CB_SHM_MAX_BYTES or the default)
// and where that bound comes from, for messages.
struct Budget {
  size_t max;
  std::string origin;
};
Budget budget_for(int local_ranks, size_t setting);
std::string claim_budget(size_t bytes, const Budget& b);  // empty, or why it does not fit
void release_budget(size_t bytes);

// Every local rank's verdict: empty when all succeeded, else the first failing rank's
// reason, the same text on every rank; with it, the MIN over the node of `values`.
std::string agree(MPI_Comm node, int me, const std::string& failure, uint64_t* values = nullptr,
                  int count = 0);

// A new file in /dev/shm ("/collbench.PID.TAG.RANDOM"), its name in `name`; -1 on failure.
int create_file(char (&name)[64], const std::string& tag);
// Maps a file of `bytes` with its pages populated.
void* map_file(int fd, size_t bytes);
// pthread_mutex_lock (or unlock) of a lifeline on the process's lifeline keeper.
int lifeline_call(LifelineKeeper* keeper, pthread_mutex_t* m, bool lock);

// What the local ranks tell each other when a NodeShm is made.
struct Entry {
  char name[64];    // the control file, or the pool's file
  uint64_t token;   // the pool's group (slot >= 0), else 0
  int32_t slot;     // in the pool, or -1: a control file of its own
  uint32_t gen;     // the slot's use
  uint32_t failed;  // this rank could not go on
  uint32_t pad;
  uint64_t sizes[3];  // staging, channel, heap: this rank's, agreed as the MIN
};

}  // namespace shm_internal

struct NodeShm::Header {
  uint64_t magic;
  uint64_t self;  // where the owner maps this segment: peers probe CMA by reading `magic`
  int32_t pid;
  std::atomic<uint32_t> lost;          // set by the first peer that found the owner dead
  std::atomic<uint32_t> ext_attached;  // processes that mapped its second file
  std::atomic<uint32_t> released;      // a pool slot: peers done with it since it was taken
  pthread_mutex_t lifeline;            // robust, process-shared: held by the owner while attached
  OpSlot slots[kOpSlots];
  alignas(64) std::byte small[kSmallAreaBytes];
};

// This process's pool: kPoolSlots control areas in one file, made once (share_pool, with
// MPI_COMM_WORLD's engine) and mapped by every local rank of that engine, so that a later
// communicator of the same processes takes a slot in each rank's pool instead of making
// and mapping files (docs/preload.md, "What a communicator costs"). node_shm_pool.cpp.
struct NodeShm::Pool {
  struct State {
    bool used = false;
    uint32_t expected = 0;  // peers that must release it before it is taken again
    uint32_t gen = 0;       // uses so far: names its second file
  };
  std::mutex mu;
  Header* mine = nullptr;  // mine[0] also holds this process's lifeline
  std::string name;        // its file (unlinked once every local rank mapped it)
  uint64_t token = 0;      // the same on the ranks that mapped each other's pools; 0: none
  bool cma = false;
  std::string cma_status;
  State state[kPoolSlots];
  std::map<std::string, Header*> peers;  // the local ranks' pools, by file name

  // A free slot whose last users have all released it, reset; -1 when there is none.
  int take(uint32_t& gen);
  void give_back(int slot, uint32_t expected);
};

}  // namespace cb::engine
