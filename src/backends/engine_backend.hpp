// --backend engine: collbench's own collective engine (src/engine).
#pragma once

#include <map>
#include <memory>
#include <vector>

#include "backends/backend.hpp"
#include "backends/control.hpp"
#include "engine/comm.hpp"
#include "engine/executor.hpp"
#include "engine/progress_thread.hpp"
#include "engine/schedule.hpp"
#include "engine/select.hpp"

namespace cb {

class EngineBackend final : public Backend {
 public:
  EngineBackend(const Control& ctl, bool progress_thread = false);

  BackendDescription description() const override;

  // Host buffers come from the node's shared heap, so that local peers read them directly.
  Buf alloc(size_t bytes, Mem mem) override;
  void free(Buf& buf) override;

  void send(const Buf& buf, int peer, int tag) override;
  void recv(const Buf& buf, int peer, int tag) override;
  void batch(std::span<const P2POp> ops) override;

  void run(const CollArgs& args) override;
  std::unique_ptr<Request> start(const CollArgs& args) override;
  // The engine's algorithms read the topology from the arguments; the `mpi` algorithm runs
  // the library's collective on a graph communicator of it, made here (engine::Comm).
  void use_topology(const Topology& topology) override { comm_.use_topology(topology); }
  // Built once here, re-armed at every start (engine::Schedule::rearm), for algorithms whose
  // schedule can run again (engine::Algorithm::rerunnable).
  std::unique_ptr<PersistentColl> init(const CollArgs& args) override;
  std::string algorithm(const CollArgs& args) const override;
  std::vector<std::string> algorithms(Coll coll) const override;

 private:
  std::string refuses(const CollArgs& args) const override;
  std::string persistent_refuses(const CollArgs& args) const override;
  // The algorithm for args: --algo, else CB_<COLL>_ALGO, else the tuning table.
  const engine::Algorithm* choose(const CollArgs& args, std::string* why) const;
  // Posts point-to-point steps (tags[i] for steps[i]) and waits for all of them.
  void complete(std::span<engine::Step> steps, std::span<const int> tags, Mem mem);
  engine::Executor& executor(Mem mem);  // host kernels, or CUDA kernels (created at first use)

  mutable engine::Comm comm_;
  engine::Group world_;  // every rank of comm_
  engine::HostExecutor host_;
  std::unique_ptr<engine::Executor> cuda_;
  engine::TuningTable table_;
  std::map<std::pair<Coll, Mem>, std::vector<engine::Rule>> pruned_;
  std::map<Coll, std::string> env_algos_;  // CB_<COLL>_ALGO, read once (not per call)
  engine::Schedule blocking_;              // reused by every blocking call: no allocation per call
  std::vector<engine::Step> steps_;        // reused by batch()
  std::vector<int> tags_;
  std::unique_ptr<engine::ProgressThread> progress_;  // last: stops before the rest goes
};

}  // namespace cb
