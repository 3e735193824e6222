#include "engine/comm.hpp"

#include <cstdio>
#include <map>

#include "core/mpi_check.hpp"
#include "engine/execution.hpp"
#include "engine/ipc/ipc_node.hpp"
#include "engine/mpi_collective.hpp"
#include "engine/settings.hpp"
#include "engine/staging_transport.hpp"

namespace cb::engine {

Comm::Comm(MPI_Comm parent, WaitMode wait, size_t shm_heap_bytes) : wait_(wait) {
  // Bad CB_* values are reported here, when the engine is created (UsageError on every
  // rank alike), rather than in the middle of a collective.
  const EngineSettings& settings = engine_settings();
  CB_MPI(MPI_Comm_dup(parent, &comm_));
  MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
  mpi_ = MpiTransport(comm_);

  // Node map: the lowest rank of each shared-memory group names the physical node; a
  // virtual node is a run of CB_RANKS_PER_NODE consecutive ranks within it.
  MPI_Comm local;
  CB_MPI(MPI_Comm_split_type(comm_, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &local));
  int key[2] = {rank_, 0};
  CB_MPI(MPI_Allreduce(MPI_IN_PLACE, &key[0], 1, MPI_INT, MPI_MIN, local));
  MPI_Comm_rank(local, &key[1]);
  MPI_Comm_free(&local);
  const int per_node = settings.ranks_per_node;
  if (per_node > 0)
    key[1] /= per_node;
  else
    key[1] = 0;
  std::vector<int> keys(static_cast<size_t>(2 * size_));
  CB_MPI(MPI_Allgather(key, 2, MPI_INT, keys.data(), 2, MPI_INT, comm_));
  std::map<std::pair<int, int>, int> ids;
  node_of_.resize(static_cast<size_t>(size_));
  for (int r = 0; r < size_; ++r) {
    const auto k =
        std::make_pair(keys[static_cast<size_t>(2 * r)], keys[static_cast<size_t>(2 * r + 1)]);
    const auto [it, fresh] = ids.emplace(k, static_cast<int>(ids.size()));
    node_of_[static_cast<size_t>(r)] = it->second;
  }
  node_count_ = static_cast<int>(ids.size());

  if (!settings.shm) {
    shm_status_ = "off (CB_ENGINE_SHM=0)";
    return;
  }
  MPI_Comm node;
  CB_MPI(MPI_Comm_split(comm_, node_of(rank_), rank_, &node));
  try {
    const size_t heap =
        shm_heap_bytes == kHeapFromSettings ? settings.shm_heap_bytes : shm_heap_bytes;
    shm_ = std::make_unique<NodeShm>(node, node_members(node_of(rank_)), heap,
                                     settings.shm_staging_bytes, settings.cma);
    shm_transport_ = std::make_unique<ShmTransport>(*shm_);
    if (node_count_ == 1) small_ = std::make_unique<SmallSlots>(*shm_);
    shm_status_ = shm_->note().empty() ? "on" : "on (" + shm_->note() + ")";
    // Said once per process: the single-copy paths on private buffers are off.
    static bool said = false;
    if (settings.cma && !shm_->cma() && rank_ == 0 && !said) {
      said = true;
      std::fprintf(stderr,
                   "collbench engine: cross-memory attach %s; private buffers take the "
                   "pipelined shared-memory copy instead\n",
                   shm_->cma_status().c_str());
    }
  } catch (const RuntimeError& e) {
    shm_status_ = std::string("off: ") + e.what();  // every local rank reached the same verdict
  }
  MPI_Comm_free(&node);
}

Comm::~Comm() {
  ipc_.reset();
  for (auto& [topology, graph] : graphs_) MPI_Comm_free(&graph);
  small_.reset();
  staging_.reset();
  shm_transport_.reset();
  shm_.reset();
  if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
}

IpcNode& Comm::ipc() const {
  const std::lock_guard<std::mutex> lock(ipc_mu_);
  if (!ipc_) {
    const MPI_Comm comm = comm_;
    ipc_ = std::make_unique<IpcNode>(rank_, size_, [comm](const void* mine, void* all, size_t n) {
      CB_MPI(MPI_Allgather(mine, static_cast<int>(n), MPI_BYTE, all, static_cast<int>(n), MPI_BYTE,
                           comm));
    });
  }
  return *ipc_;
}

void Comm::use_topology(const Topology& t) {
  if (!graphs_.count(&t)) graphs_[&t] = make_graph_comm(comm_, t, rank_);
}

MPI_Comm Comm::graph(const Topology& t) const {
  const auto it = graphs_.find(&t);
  return it == graphs_.end() ? MPI_COMM_NULL : it->second;
}

std::vector<int> Comm::node_members(int node) const {
  std::vector<int> out;
  for (int r = 0; r < size_; ++r)
    if (node_of(r) == node) out.push_back(r);
  return out;
}

std::vector<int> Comm::leaders() const {
  std::vector<int> out;
  for (int n = 0; n < node_count_; ++n) out.push_back(node_members(n).front());
  return out;
}

Transport& Comm::staging() {
  if (!staging_)
    staging_ =
        std::make_unique<StagingTransport>([this](int p) -> Transport& { return transport(p); });
  return *staging_;
}

int Comm::next_tag() {
  return kFirstCollTag + static_cast<int>(seq_++ % kCollTagSpan);
}

void Comm::enlist(uint64_t op, Execution* e) {
  std::lock_guard lock(live_mu_);
  live_[op] = e;
  live_count_.store(live_.size(), std::memory_order_release);
}

void Comm::retire(uint64_t op) {
  std::lock_guard lock(live_mu_);
  live_.erase(op);
  live_count_.store(live_.size(), std::memory_order_release);
}

bool Comm::admit(uint64_t op, bool exclusive) {
  std::lock_guard lock(live_mu_);
  const uint64_t window = exclusive ? 1 : kOpWindow;
  const auto open = [&] { return live_.empty() || live_.begin()->first + window > op; };
  if (open()) return true;
  std::vector<uint64_t> older;
  for (auto it = live_.begin(); it != live_.end() && it->first + window <= op; ++it)
    older.push_back(it->first);
  // Oldest first, each strictly older than `op`, so this never comes back to its caller.
  // The lock is held throughout, so none is destroyed meanwhile (its destructor retires
  // it first); one retired by an earlier one's progress is skipped, and one that another
  // thread is advancing right now is left to it.
  for (uint64_t o : older)
    if (const auto it = live_.find(o); it != live_.end()) it->second->advance_if_idle();
  return open();
}

}  // namespace cb::engine
