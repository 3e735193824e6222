// The one interface every backend (mpi, nccl, engine) implements.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/args.hpp"
#include "core/coll_spec.hpp"
#include "gpu/graph.hpp"

namespace cb {

class Control;

// What a backend says of itself, once, for the table header and the JSON document.
struct BackendDescription {
  std::string title;            // "MPI", "NCCL", "Engine" (table header)
  std::string library_version;  // "MPICH Version: 4.0.2 ..."
  nlohmann::json facts;         // extra facts for the JSON document's "backend" object
};

// How the harness configures a backend: the options that are the backend's business.
struct BackendConfig {
  std::string name = "mpi";                  // --backend
  Mem mem = Mem::Host;                       // -d: where collective buffers live
  Mem side_mem[2] = {Mem::Host, Mem::Host};  // point to point: rank 0's and rank 1's buffers
  bool staging = false;                      // mpi: copy device buffers through host memory
  bool progress_thread = false;              // engine: advance non-blocking operations in a thread
  int local_register = 0;  // -R (nccl): 1 ncclCommRegister, 2 symmetric ncclCommWindowRegister
};

// A persistent collective (MPI 4.0's MPI_<Coll>_init): made once for fixed arguments,
// then started and completed any number of times.
class PersistentColl {
 public:
  virtual ~PersistentColl() = default;
  virtual void start() = 0;
  virtual void wait() = 0;  // as the backend waits (spin or yield)
};

// A backend moves data; the registry (core/coll_spec.hpp) says which collectives it runs.
class Backend {
 public:
  explicit Backend(BackendKind kind) : kind_(kind) {}
  virtual ~Backend() = default;
  Backend(const Backend&) = delete;
  Backend& operator=(const Backend&) = delete;

  BackendKind kind() const { return kind_; }
  std::string name() const { return std::string(to_string(kind_)); }  // "mpi", "nccl", "engine"
  int rank() const { return rank_; }
  int size() const { return size_; }
  virtual BackendDescription description() const = 0;

  // Buffers come from the backend (NCCL may use ncclMemAlloc, the engine shared memory).
  // Returned memory is pre-touched: first touch is far slower than steady state.
  virtual Buf alloc(size_t bytes, Mem mem);
  virtual void free(Buf& buf);

  // Point to point. batch() posts every op, then completes them all (OMB's window + Waitall).
  virtual void send(const Buf& buf, int peer, int tag) = 0;
  virtual void recv(const Buf& buf, int peer, int tag) = 0;
  virtual void batch(std::span<const P2POp> ops) = 0;

  // Why point-to-point buffers of this memory kind cannot be used (empty: they can).
  virtual std::string unsupported_memory(Mem) const { return {}; }

  // Collectives. unsupported() says why this backend cannot run `args` (empty: it can):
  // the registry's answer first, then refuses() for what is particular to the backend.
  std::string unsupported(const CollArgs& args) const;
  virtual void run(const CollArgs& args) = 0;
  // The blocking call of `args` as one callable with its arguments resolved once, for a
  // timed loop whose calls do not change (the mpi backend binds the MPI call itself, as
  // OMB's loop calls MPI_Bcast with fixed arguments); by default run(args).
  virtual std::function<void()> bind(const CollArgs& args) {
    return [this, args] { run(args); };
  }
  // `n` calls of `args` as one operation (nccl-tests' -m/--agg_iters): NCCL groups them
  // (ncclGroupStart/End, one launch); a host backend runs them one after the other.
  virtual void run_aggregated(const CollArgs& args, int n) {
    for (int i = 0; i < n; ++i) run(args);
  }
  virtual std::unique_ptr<Request> start(const CollArgs& args) = 0;
  // The neighborhood collectives' topology, before the first collective on it
  // (collective: every rank calls it; the MPI backend makes its graph communicator).
  virtual void use_topology(const Topology&) {}
  // The persistent form of `args` (args.persistent), made collectively: every rank calls
  // it with matching arguments. Only where unsupported() allows it (persistent_refuses()).
  virtual std::unique_ptr<PersistentColl> init(const CollArgs& args);
  // The algorithm that runs `args` (recorded in every result), and every algorithm the
  // backend has for a collective (--algo all); empty where the library decides itself.
  virtual std::string algorithm(const CollArgs&) const { return {}; }
  virtual std::vector<std::string> algorithms(Coll) const { return {}; }
  // How this backend reduces `dt` with `op`, where worth stating (table header and JSON
  // "reduction"): the MPI backend names its MPI_Op ("MPI_Op: MPI_SUM on MPI_FLOAT",
  // "MPI_Op: user-defined (fp16 sum, collbench) on ..."); empty: nothing to say.
  virtual std::string reduction_note(Dtype, Op) const { return {}; }
  virtual void sync() {}  // device backends: wait for queued work
  // The untimed barrier between the timed iterations of a blocking collective: OMB's
  // MPI_Barrier on the communicator the collective runs on. The mpi backend's is on its own
  // communicator (as OMB's, one communicator for both); the others use the control plane's.
  virtual void iteration_barrier(const Control& ctl);

  // CUDA graph launch (-G). capture() records the collective calls `enqueue` makes (run())
  // from the backend's stream into one graph, instantiated once; the graph is launched on
  // stream() and sync() waits for it. Only a backend whose collectives are stream
  // operations can (nccl); the others throw UsageError saying why (the options refuse -G
  // for them before it comes to that).
  virtual gpu::Graph capture(const std::function<void()>& enqueue);
  virtual gpu::StreamHandle stream() const { return nullptr; }

  // The time limit expired: release whatever could hang the exit (NCCL: ncclCommAbort).
  // Called from the watchdog thread just before the process ends, so it must be safe
  // while the main thread is inside the backend.
  virtual void abort() {}

 protected:
  // Arguments of a collective the registry lets this backend run, that it still cannot.
  virtual std::string refuses(const CollArgs&) const { return {}; }
  // Why this backend has no persistent form of `args` (empty: init() makes one).
  virtual std::string persistent_refuses(const CollArgs&) const;
  void set_layout(int rank, int size) {
    rank_ = rank;
    size_ = size;
  }

 private:
  BackendKind kind_;
  int rank_ = 0, size_ = 1;
};

}  // namespace cb
