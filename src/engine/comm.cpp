#include "engine/comm.hpp"

#include <cstdio>
#include <map>
#include <mutex>

#include "core/mpi_check.hpp"
#include "engine/execution.hpp"
#include "engine/ipc/ipc_node.hpp"
#include "engine/mpi_collective.hpp"
#include "engine/settings.hpp"
#include "engine/staging_transport.hpp"

namespace cb::engine {
namespace {

// MPI_COMM_WORLD's physical node names (the lowest world rank of each node), once an
// engine was made on a communicator congruent with it (the preload's at MPI_Init).
std::mutex g_world_mu;
std::vector<int> g_world_hosts;

}  // namespace

// Fills host[r] for every rank of `comm` from MPI_COMM_WORLD's map: false when there is
// none yet or a member is not a process of MPI_COMM_WORLD. Local: no communication.
bool Comm::world_hosts(MPI_Comm comm, std::vector<int>& host) {
  std::vector<int> world;
  {
    std::lock_guard lock(g_world_mu);
    if (g_world_hosts.empty()) return false;
    world = g_world_hosts;
  }
  MPI_Group mine, all;
  MPI_Comm_group(comm, &mine);
  MPI_Comm_group(MPI_COMM_WORLD, &all);
  const int n = static_cast<int>(host.size());
  std::vector<int> ranks(host.size()), in_world(host.size(), MPI_UNDEFINED);
  for (int r = 0; r < n; ++r) ranks[static_cast<size_t>(r)] = r;
  const int rc = MPI_Group_translate_ranks(mine, n, ranks.data(), all, in_world.data());
  MPI_Group_free(&mine);
  MPI_Group_free(&all);
  if (rc != MPI_SUCCESS) return false;
  for (int r = 0; r < n; ++r) {
    const int w = in_world[static_cast<size_t>(r)];
    if (w < 0 || w >= static_cast<int>(world.size())) return false;  // MPI_UNDEFINED
    host[static_cast<size_t>(r)] = world[static_cast<size_t>(w)];
  }
  return true;
}

void Comm::remember_world_hosts(MPI_Comm parent, const std::vector<int>& host) {
  int same = MPI_UNEQUAL;
  if (MPI_Comm_compare(parent, MPI_COMM_WORLD, &same) != MPI_SUCCESS ||
      (same != MPI_IDENT && same != MPI_CONGRUENT))
    return;
  std::lock_guard lock(g_world_mu);
  if (g_world_hosts.empty()) g_world_hosts = host;
}

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
  // virtual node is a run of CB_RANKS_PER_NODE consecutive ranks within it. A communicator
  // of MPI_COMM_WORLD's processes reads it off MPI_COMM_WORLD's map (no communication);
  // others (the first, processes of other worlds) ask MPI.
  std::vector<int> host(static_cast<size_t>(size_));  // the physical node's name per rank
  if (!world_hosts(comm_, host)) {
    MPI_Comm local;
    CB_MPI(MPI_Comm_split_type(comm_, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &local));
    int lowest = rank_;
    CB_MPI(MPI_Allreduce(MPI_IN_PLACE, &lowest, 1, MPI_INT, MPI_MIN, local));
    MPI_Comm_free(&local);
    CB_MPI(MPI_Allgather(&lowest, 1, MPI_INT, host.data(), 1, MPI_INT, comm_));
    remember_world_hosts(parent, host);
  }
  const int per_node = settings.ranks_per_node;
  std::map<std::pair<int, int>, int> ids;
  std::map<int, int> seen;  // ranks met so far per physical node: the local rank
  node_of_.resize(static_cast<size_t>(size_));
  for (int r = 0; r < size_; ++r) {
    const int h = host[static_cast<size_t>(r)], local = seen[h]++;
    const auto k = std::make_pair(h, per_node > 0 ? local / per_node : 0);
    const auto [it, fresh] = ids.emplace(k, static_cast<int>(ids.size()));
    node_of_[static_cast<size_t>(r)] = it->second;
  }
  node_count_ = static_cast<int>(ids.size());
  host_size_ = seen[host[static_cast<size_t>(rank_)]];

  if (!settings.shm) {
    shm_status_ = "off (CB_ENGINE_SHM=0)";
    return;
  }
  // The ranks of this node: all of them (no split), or a communicator of their own.
  MPI_Comm node = comm_;
  if (node_count_ > 1) CB_MPI(MPI_Comm_split(comm_, node_of(rank_), rank_, &node));
  try {
    const size_t heap =
        shm_heap_bytes == kHeapFromSettings ? settings.shm_heap_bytes : shm_heap_bytes;
    shm_ = std::make_unique<NodeShm>(node, node_members(node_of(rank_)), heap,
                                     settings.shm_staging_bytes, settings.cma);
    shm_transport_ = std::make_unique<ShmTransport>(*shm_);
    // MPI_COMM_WORLD's engine without a heap (the preload's, at MPI_Init): every process
    // shares a pool of control areas with its local peers, from which the engines of
    // later communicators of the same processes take theirs (NodeShm::share_pool).
    int same = MPI_UNEQUAL;
    if (heap == 0 && MPI_Comm_compare(parent, MPI_COMM_WORLD, &same) == MPI_SUCCESS &&
        same == MPI_IDENT)
      NodeShm::share_pool(node);
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
  if (node != comm_) MPI_Comm_free(&node);
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
