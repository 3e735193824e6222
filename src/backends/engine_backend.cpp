#include "backends/engine_backend.hpp"

#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>
#include <utility>

#include "config.hpp"
#include "core/errors.hpp"
#include "engine/algorithm.hpp"
#include "engine/execution.hpp"
#include "engine/executor_cuda.hpp"
#include "engine/mpi_library_info.hpp"
#include "engine/shm/node_shm.hpp"
#include "gpu/device.hpp"

namespace cb {
namespace {

// What an operation was, for the message when a local peer dies during it.
struct OpName {
  Coll coll;
  bool nonblocking;
  std::string_view algo;
  size_t bytes;
  std::string str() const {
    return (nonblocking ? "i" : "") + std::string(to_string(coll)) + " (engine algorithm " +
           std::string(algo) + ", message size " + std::to_string(bytes) + " B)";
  }
};
OpName op_name(const engine::Algorithm& algo, const CollArgs& a, bool nonblocking) {
  return {a.coll, nonblocking, algo.name, a.count * dtype_size(a.dtype)};
}

// Runs f; a local peer's death in it becomes a PeerExited error naming the operation.
template <typename F>
decltype(auto) naming_lost_peer(const OpName& op, F&& f) {
  try {
    return f();
  } catch (const engine::PeerLost& e) {
    throw PeerExited(e.in(op.str()));
  }
}

// A persistent collective: the schedule is built once, here, and each start() re-arms it
// under the next operation number and tag (the same on every rank, which start in the
// same order as MPI requires) instead of building it again; the number taken at the build
// is never run, which the window (engine::Comm::admit) allows.
class EnginePersistent final : public PersistentColl {
 public:
  EnginePersistent(const engine::Algorithm& algo, const CollArgs& args, const engine::Group& group,
                   engine::Comm& comm, engine::Executor& exec)
      : comm_(comm), exec_(exec), name_(op_name(algo, args, true)) {
    engine::build_operation(sched_, algo, args, group, comm);
  }
  ~EnginePersistent() override {  // never leave posted receives behind
    if (!run_) return;
    try {
      wait();
    } catch (...) {  // unwinding already, or the error surfaces elsewhere
    }
  }
  void start() override {
    if (run_) throw UsageError("persistent collective started again before its wait()");
    const int tag = comm_.next_tag();
    if (!sched_.rearm(comm_.operations()))
      throw RuntimeError("internal error: a persistent " + name_.str() + " cannot be re-armed");
    run_ = std::make_unique<engine::Execution>(sched_, comm_, exec_, tag);
    naming_lost_peer(name_, [&] { return run_->test(); });  // small messages may finish here
  }
  void wait() override {
    if (!run_) return;
    naming_lost_peer(name_,
                     [&] { engine::wait_until([&] { return run_->test(); }, comm_.wait_mode()); });
    run_.reset();
  }

 private:
  engine::Comm& comm_;
  engine::Executor& exec_;
  OpName name_;
  engine::Schedule sched_;
  std::unique_ptr<engine::Execution> run_;
};

// A non-blocking collective: its own schedule, advanced by test() and wait().
class EngineRequest final : public Request {
 public:
  EngineRequest(const engine::Algorithm& algo, const CollArgs& args, const engine::Group& group,
                engine::Comm& comm, engine::Executor& exec)
      : exec_(sched_, comm, exec, engine::build_operation(sched_, algo, args, group, comm)),
        wait_(comm.wait_mode()),
        name_(op_name(algo, args, true)) {
    test();  // start the first round at once (small messages may finish here)
  }
  ~EngineRequest() override {  // never leave posted receives behind
    if (failed_) return;       // a peer died: waiting again would fail again
    try {
      wait();
    } catch (...) {  // unwinding already, or the error surfaces elsewhere
    }
  }
  bool test() override {
    return guarded([&] { return exec_.test(); });
  }
  void wait() override {
    guarded([&] {
      engine::wait_until([&] { return exec_.test(); }, wait_);
      return true;
    });
  }

 private:
  template <typename F>
  bool guarded(F&& f) {
    try {
      return naming_lost_peer(name_, f);
    } catch (...) {
      failed_ = true;
      throw;
    }
  }
  engine::Schedule sched_;
  engine::Execution exec_;
  WaitMode wait_;
  OpName name_;
  bool failed_ = false;
};

// A non-blocking collective handed to the progress thread.
class ThreadedRequest final : public Request {
 public:
  ThreadedRequest(std::shared_ptr<engine::Task> task, WaitMode mode, OpName name)
      : task_(std::move(task)), wait_(mode), name_(name) {}
  ~ThreadedRequest() override {
    engine::wait_until([&] { return finished(); }, wait_);
  }
  bool test() override {
    if (!finished()) return false;
    rethrow();
    return true;
  }
  void wait() override {
    engine::wait_until([&] { return finished(); }, wait_);
    rethrow();
  }

 private:
  bool finished() const { return task_->done.load(std::memory_order_acquire); }
  void rethrow() {
    if (task_->error)
      naming_lost_peer(name_,
                       [&] { std::rethrow_exception(std::exchange(task_->error, nullptr)); });
  }
  std::shared_ptr<engine::Task> task_;
  WaitMode wait_;
  OpName name_;
};

std::string env_algo(Coll coll) {
  std::string var = "CB_" + std::string(to_string(coll)) + "_ALGO";
  for (char& c : var) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  const char* v = std::getenv(var.c_str());
  return v ? v : "";
}

}  // namespace

EngineBackend::EngineBackend(const Control& ctl, bool progress_thread)
    : Backend(BackendKind::Engine),
      comm_(ctl.base(), ctl.wait_mode()),
      world_(comm_.rank(), comm_.size(), &comm_, comm_.node_count() == 1 ? comm_.shm() : nullptr),
      table_(engine::TuningTable::load_default()) {
  comm_.set_tuning(table_.parameters());  // the algorithms' thresholds
  if (progress_thread) {
    int level = 0;
    MPI_Query_thread(&level);
    if (level < MPI_THREAD_MULTIPLE)
      throw UsageError(
          "--progress-thread needs MPI_THREAD_MULTIPLE, which this MPI does not provide");
    progress_ = std::make_unique<engine::ProgressThread>(comm_.wait_mode());
  }
  set_layout(comm_.rank(), comm_.size());
  for (const CollSpec* spec : coll_specs()) {
    if (!spec->runs_on(BackendKind::Engine)) continue;
    for (Mem m : {Mem::Host, Mem::Cuda})
      pruned_[{spec->coll, m}] = table_.prune(spec->coll, m, comm_.size());
    env_algos_[spec->coll] = env_algo(spec->coll);
  }
}

BackendDescription EngineBackend::description() const {
  BackendDescription d{"Engine",
                       std::string("collbench engine ") + CB_VERSION +
                           ", transport: " + (comm_.shm() ? "shared memory + " : "") +
                           "MPI point-to-point (" + mpi_library_version() + ")",
                       {}};
  nlohmann::json& out = d.facts;
  nlohmann::json algos = nlohmann::json::array();
  for (const engine::Algorithm* a : engine::all_algorithms())
    algos.push_back({{"coll", to_string(a->coll)}, {"name", a->name}, {"summary", a->summary}});
  out["algorithms"] = algos;
  table_.to_json(out["tuning"]);
  out["transport"] = comm_.shm() ? "shm on the node, mpi between nodes" : "mpi";
  out["shared_memory"] = comm_.shm_status();
  out["cross_memory_attach"] =
      comm_.shm() ? comm_.shm()->cma_status() : "not used (no shared memory)";
  out["nodes"] = comm_.node_count();
  out["wait"] = comm_.wait_mode() == WaitMode::Yield ? "yield" : "spin, then yield";
  out["progress_thread"] = progress_ != nullptr;
  return d;
}

Buf EngineBackend::alloc(size_t bytes, Mem mem) {
  if (mem == Mem::Host && comm_.shm()) {
    if (void* p = comm_.shm()->alloc(bytes)) {
      std::memset(p, 0, bytes);  // fault the pages in now, not while timing
      return {p, bytes, mem};
    }
  }
  return Backend::alloc(bytes, mem);  // heap exhausted (CB_SHM_HEAP_BYTES) or no shm
}

void EngineBackend::free(Buf& buf) {
  if (buf.mem == Mem::Host && comm_.shm() && comm_.shm()->free(buf.ptr)) {
    buf = Buf{};
    return;
  }
  Backend::free(buf);
}

// Point to point on the engine's transport (the pt2pt benchmarks with --backend engine).
engine::Executor& EngineBackend::executor(Mem mem) {
  if (mem == Mem::Host) return host_;
  if (!cuda_) cuda_ = engine::make_cuda_executor();  // reductions as CUDA kernels
  return *cuda_;
}

void EngineBackend::complete(std::span<engine::Step> steps, std::span<const int> tags, Mem mem) {
  for (size_t i = 0; i < steps.size(); ++i)
    comm_.transport(steps[i].peer, mem).post(steps[i], tags[i]);
  try {
    engine::wait_until(
        [&] {
          bool all = true;
          for (engine::Step& s : steps)
            if (!s.done) all &= (s.done = comm_.transport(s.peer, mem).test(s));
          return all;
        },
        comm_.wait_mode());
  } catch (const engine::PeerLost& e) {
    throw PeerExited(e.in("a point-to-point transfer (engine shared memory)"));
  }
}

namespace {
engine::Step p2p_step(P2POp::Kind kind, const Buf& buf, int peer) {
  return {.kind = kind == P2POp::Kind::Send ? engine::StepKind::Send : engine::StepKind::Recv,
          .peer = peer,
          .dst = buf.ptr,
          .src = buf.ptr,
          .bytes = buf.bytes};
}
}  // namespace

void EngineBackend::send(const Buf& buf, int peer, int tag) {
  engine::Step s = p2p_step(P2POp::Kind::Send, buf, peer);
  complete({&s, 1}, {&tag, 1}, buf.mem);
}

void EngineBackend::recv(const Buf& buf, int peer, int tag) {
  engine::Step s = p2p_step(P2POp::Kind::Recv, buf, peer);
  complete({&s, 1}, {&tag, 1}, buf.mem);
}

void EngineBackend::batch(std::span<const P2POp> ops) {
  steps_.clear();
  tags_.clear();
  for (const P2POp& op : ops) {
    steps_.push_back(p2p_step(op.kind, op.buf, op.peer));
    tags_.push_back(op.tag);
  }
  // One memory kind per batch: the staging transport also checks each pointer itself.
  complete(steps_, tags_, ops.empty() ? Mem::Host : ops.front().buf.mem);
}

const engine::Algorithm* EngineBackend::choose(const CollArgs& a, std::string* why) const {
  const auto env = env_algos_.find(a.coll);
  const std::string& forced = !a.algo.empty() || env == env_algos_.end() ? a.algo : env->second;
  return engine::choose_algorithm(pruned_.at({a.coll, a.recv.mem}), forced, a, world_, why);
}

std::string EngineBackend::refuses(const CollArgs& a) const {
  if (a.recv.mem == Mem::Cuda) {
    if (const std::string why = gpu::unavailable_reason(); !why.empty()) return why;
  }
  std::string why;
  return choose(a, &why) ? std::string() : why;
}

void EngineBackend::run(const CollArgs& a) {
  std::string why;
  const engine::Algorithm* algo = choose(a, &why);
  if (!algo) throw UsageError(why);
  // Like a schedule below, it advances only this call, not requests in flight (those move
  // in their own test()/wait() or on the progress thread), so it waits for nothing more.
  if (algo->run_blocking) {
    algo->run_blocking(a, world_);
    return;
  }
  if (engine::SmallOp op; engine::start_small(op, *algo, a, world_, comm_)) {
    naming_lost_peer(op_name(*algo, a, false),
                     [&] { engine::wait_until([&] { return op.advance(); }, comm_.wait_mode()); });
    return;
  }
  blocking_.reset();
  const int tag = engine::build_operation(blocking_, *algo, a, world_, comm_);
  engine::Execution exec(blocking_, comm_, executor(a.recv.mem), tag);
  naming_lost_peer(op_name(*algo, a, false),
                   [&] { engine::wait_until([&] { return exec.test(); }, comm_.wait_mode()); });
}

std::unique_ptr<Request> EngineBackend::start(const CollArgs& a) {
  std::string why;
  const engine::Algorithm* algo = choose(a, &why);
  if (!algo) throw UsageError(why);
  if (progress_) {
    auto task = std::make_shared<engine::Task>();
    const int tag = engine::build_operation(task->schedule, *algo, a, world_, comm_);
    task->execution =
        std::make_unique<engine::Execution>(task->schedule, comm_, executor(a.recv.mem), tag);
    progress_->submit(task);
    return std::make_unique<ThreadedRequest>(std::move(task), comm_.wait_mode(),
                                             op_name(*algo, a, true));
  }
  return std::make_unique<EngineRequest>(*algo, a, world_, comm_, executor(a.recv.mem));
}

std::string EngineBackend::persistent_refuses(const CollArgs& a) const {
  std::string why;
  const engine::Algorithm* algo = choose(a, &why);
  if (!algo) return why;
  if (algo->rerunnable) return {};
  std::string can;
  for (const engine::Algorithm* other : engine::all_algorithms())
    if (other->coll == a.coll && other->rerunnable)
      can += (can.empty() ? "" : ", ") + std::string(other->name);
  return "the engine's " + std::string(to_string(a.coll)) + " algorithm " +
         std::string(algo->name) +
         " has no persistent form: its schedule is not one that can run twice "
         "(engine::Algorithm::rerunnable; mpi posts the library's call as it is built)" +
         (can.empty() ? "; run --backend mpi" : "; force one that has (--algo " + can + ")");
}

std::unique_ptr<PersistentColl> EngineBackend::init(const CollArgs& a) {
  if (std::string why = persistent_refuses(a); !why.empty()) throw UsageError(why);
  return std::make_unique<EnginePersistent>(*choose(a, nullptr), a, world_, comm_,
                                            executor(a.recv.mem));
}

std::string EngineBackend::algorithm(const CollArgs& a) const {
  const engine::Algorithm* algo = choose(a, nullptr);
  return algo ? std::string(algo->name) : std::string();
}

std::vector<std::string> EngineBackend::algorithms(Coll coll) const {
  std::vector<std::string> out;
  for (const engine::Algorithm* a : engine::all_algorithms())
    if (a->coll == coll) out.emplace_back(a->name);
  return out;
}

}  // namespace cb
