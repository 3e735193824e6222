// The engine's communicator, bootstrapped from MPI: rank, size, which ranks share a node
// (physical, or virtual with CB_RANKS_PER_NODE=k: consecutive groups of k ranks of a node),
// the transport to each peer (shared memory on the node unless CB_ENGINE_SHM=0, MPI point
// to point otherwise), and a tag per operation so that several collectives can be in
// flight at once without their messages matching each other. It also carries the tuning
// table's parameters, which the algorithms read while building a schedule.
#pragma once

#include <mpi.h>

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/args.hpp"
#include "engine/shm/node_shm.hpp"
#include "engine/shm/shm_transport.hpp"
#include "engine/shm/small_slots.hpp"
#include "engine/transport_mpi.hpp"
#include "engine/tuning_parameters.hpp"

namespace cb::engine {

class Execution;
class IpcNode;

class Comm {
 public:
  // Collective over parent. `shm_heap_bytes`: the shared heap per rank in NodeShm (0:
  // none, for callers whose buffers are their own, like the preload; the default takes
  // CB_SHM_HEAP_BYTES, for --backend engine's --alloc backend).
  static constexpr size_t kHeapFromSettings = SIZE_MAX;
  Comm(MPI_Comm parent, WaitMode wait, size_t shm_heap_bytes = kHeapFromSettings);
  ~Comm();
  Comm(const Comm&) = delete;
  Comm& operator=(const Comm&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  int node_of(int rank) const { return node_of_[static_cast<size_t>(rank)]; }
  int node_count() const { return node_count_; }
  // Communicator ranks of a node, in rank order; leaders() = the first of each node.
  std::vector<int> node_members(int node) const;
  std::vector<int> leaders() const;
  MPI_Comm mpi() const { return comm_; }
  // The neighborhood collectives' topologies as distributed-graph communicators of mpi()
  // (make_graph_comm), on which the `mpi` algorithm calls the library's own. use_topology()
  // is collective (every rank, in the same order, before the topology's first collective);
  // graph() is MPI_COMM_NULL for a topology it was not given. Freed with the Comm.
  void use_topology(const Topology& topology);
  MPI_Comm graph(const Topology& topology) const;
  WaitMode wait_mode() const { return wait_; }
  void set_wait_mode(WaitMode wait) { wait_ = wait; }
  int host_size() const { return host_size_; }  // ranks on this rank's physical node
  // The tuning table's "parameters" (defaults until the backend sets its table's).
  const TuningParameters& tuning() const { return tuning_; }
  void set_tuning(const TuningParameters& parameters) { tuning_ = parameters; }

  NodeShm* shm() const { return shm_.get(); }  // null when shared memory is off
  // The small-message slots (shm/small_slots.hpp): null unless every rank is on this node
  // with shared memory.
  SmallSlots* small() const { return small_.get(); }
  const std::string& shm_status() const { return shm_status_; }
  Transport& transport(int peer) {
    return shm_ && node_of(peer) == node_of(rank_) ? static_cast<Transport&>(*shm_transport_)
                                                   : mpi_;
  }
  // For transfers of `mem` buffers: device buffers go through pinned host staging.
  Transport& transport(int peer, Mem mem) { return mem == Mem::Cuda ? staging() : transport(peer); }
  // CUDA IPC among the ranks (ipc/ipc_node.hpp), for device buffers when every rank is on
  // this node: made at the first call, which is collective (every rank calls it at the
  // same point: the IPC algorithms' cannot_run, evaluated alike everywhere). Check
  // usable() before use.
  IpcNode& ipc() const;
  // Tags for collectives: one per operation, taken in the same order on every rank.
  int next_tag();
  uint64_t operations() const { return seq_; }  // identifies the operation of the last tag

  // The window of operations in flight: operation k + kOpWindow starts only once every
  // operation up to k has completed on this rank. The shared-memory state of an operation
  // (its slots and staging region in NodeShm) is reused kOpWindow operations later, and a
  // rank completes an operation only when no peer reads its part of that state any more,
  // so a queued operation waits instead of overwriting what a peer still reads. An
  // application may have any number pending: the later ones start as the earlier finish.
  static constexpr uint64_t kOpWindow = kStagingRegions;
  void enlist(uint64_t op, Execution* e);  // e runs operation op (Execution's constructor)
  void retire(uint64_t op);                // it completed, or was abandoned
  // Whether operation `op` may start now. While it may not, advances the older operations
  // in its way once each (those no other thread is advancing at this moment): a caller
  // that waits only for `op` still moves what `op` waits for. An `exclusive` operation (the
  // small path's, Schedule::exclusive) starts only once every older one has completed.
  bool admit(uint64_t op, bool exclusive = false);
  // No operation is enlisted: a blocking small operation may run without a schedule.
  bool idle() const { return live_count_.load(std::memory_order_acquire) == 0; }

  static constexpr int kFirstCollTag = 1024;  // below: point-to-point benchmark tags
  static constexpr int kCollTagSpan = 16384;

 private:
  static bool world_hosts(MPI_Comm comm, std::vector<int>& host);
  static void remember_world_hosts(MPI_Comm parent, const std::vector<int>& host);
  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0, size_ = 1, node_count_ = 1, host_size_ = 1;
  std::vector<int> node_of_;
  WaitMode wait_;
  MpiTransport mpi_{MPI_COMM_NULL};
  std::unique_ptr<NodeShm> shm_;
  std::unique_ptr<ShmTransport> shm_transport_;
  std::string shm_status_;
  std::unique_ptr<Transport> staging_;  // created at the first device transfer
  std::map<const Topology*, MPI_Comm> graphs_;
  Transport& staging();
  uint64_t seq_ = 0;
  TuningParameters tuning_;
  // Shared by the progress thread and the caller; recursive: advancing an older operation
  // may admit or retire others.
  std::recursive_mutex live_mu_;
  std::map<uint64_t, Execution*> live_;  // operations enlisted and not retired, by number
  std::atomic<size_t> live_count_{0};    // live_.size(), read without the lock (idle())
  std::unique_ptr<SmallSlots> small_;
  mutable std::mutex ipc_mu_;
  mutable std::unique_ptr<IpcNode> ipc_;
};

}  // namespace cb::engine
