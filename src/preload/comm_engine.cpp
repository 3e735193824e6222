#include "preload/comm_engine.hpp"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "core/coll_spec.hpp"
#include "core/errors.hpp"
#include "core/mpi_check.hpp"
#include "core/mpi_compat.hpp"
#include "core/settings.hpp"
#include "engine/algorithm.hpp"
#include "engine/execution.hpp"
#include "engine/select.hpp"
#include "preload/guard.hpp"

namespace cb::preload {

const Settings& settings() {
  static const Settings s = [] {
    Settings out;
    // A value the strict reader does not understand disables nothing silently: it is
    // reported once and the default kept (an exception cannot leave a C entry point).
    try {
      out.enabled = setting_flag("CB_ENGINE", true);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "cb_engine_preload: %s (the engine stays on)\n", e.what());
    }
    try {
      out.verbose = setting_flag("CB_PRELOAD_VERBOSE", false);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "cb_engine_preload: %s\n", e.what());
    }
    out.log = setting_text("CB_PRELOAD_LOG").value_or("");
    const std::string wait = setting_text("CB_PRELOAD_WAIT").value_or("auto");
    if (wait == "spin")
      out.wait = 0;
    else if (wait == "yield")
      out.wait = 1;
    else if (wait != "auto")
      std::fprintf(stderr,
                   "cb_engine_preload: CB_PRELOAD_WAIT=%s is not auto, spin or yield: auto\n",
                   wait.c_str());
    const std::string engines = setting_text("CB_PRELOAD_ENGINES").value_or("lazy");
    if (engines == "eager")
      out.eager = true;
    else if (engines != "lazy")
      std::fprintf(stderr, "cb_engine_preload: CB_PRELOAD_ENGINES=%s is not lazy or eager: lazy\n",
                   engines.c_str());
    const std::string progress = setting_text("CB_PRELOAD_PROGRESS").value_or("blocking");
    if (progress == "thread")
      out.progress_thread = true;
    else if (progress != "blocking")
      std::fprintf(stderr,
                   "cb_engine_preload: CB_PRELOAD_PROGRESS=%s is not blocking or thread: "
                   "blocking\n",
                   progress.c_str());
    return out;
  }();
  return s;
}

namespace {

const engine::TuningTable& tuning_table() {
  static const engine::TuningTable table = engine::TuningTable::load_default();
  return table;
}

// CB_<COLL>_ALGO, read once per collective (as the engine backend does).
const std::string& env_algo(Coll coll) {
  static const std::map<Coll, std::string> algos = [] {
    std::map<Coll, std::string> out;
    for (const CollSpec* spec : coll_specs()) {
      std::string var = "CB_" + std::string(to_string(spec->coll)) + "_ALGO";
      for (char& c : var) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      const char* v = std::getenv(var.c_str());
      out[spec->coll] = v ? v : "";
    }
    return out;
  }();
  static const std::string none;
  const auto it = algos.find(coll);
  return it == algos.end() ? none : it->second;
}

// Spin, or yield from the start when this node has more ranks of the communicator
// (`host_ranks`, from the engine's node map) than cores.
WaitMode wait_mode_for(int host_ranks) {
  if (settings().wait >= 0) return settings().wait ? WaitMode::Yield : WaitMode::Spin;
  static const long cores = sysconf(_SC_NPROCESSORS_ONLN);  // reads /sys: once
  return cores > 0 && host_ranks > cores ? WaitMode::Yield : WaitMode::Spin;
}

[[noreturn]] void fatal(const char* function, const std::string& what) {
  int rank = 0;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::fprintf(stderr, "cb_engine_preload: rank %d: %s: engine error: %s; aborting\n", rank,
               function, what.c_str());
  std::fflush(stderr);
  PMPI_Abort(MPI_COMM_WORLD, 1);
  std::abort();
}

}  // namespace

// One non-blocking operation: its own schedule and execution, and the generalized request
// the application waits on. Owned by MPI (freed in free_fn once the request is freed).
class NbOp {
 public:
  NbOp(std::shared_ptr<CommEngine> eng, const engine::Algorithm& algo, const CollArgs& a,
       const char* function, std::shared_ptr<Packing> packing,
       std::shared_ptr<const CountMatrix> counts)
      : eng_(std::move(eng)),
        function_(function),
        packing_(std::move(packing)),
        counts_(std::move(counts)) {
    const int tag = engine::build_operation(sched_, algo, a, eng_->world_, eng_->comm_);
    exec_ = std::make_unique<engine::Execution>(sched_, eng_->comm_, eng_->host_, tag);
  }
  bool advance() {
    try {
      return exec_->test();
    } catch (const std::exception& e) {
      fatal(function_, e.what());  // peers are inside the same operation: no way back
    }
  }
  // Once advance() said done: the received bytes into a non-contiguous buffer.
  void finish() {
    try {
      if (packing_) packing_->unpack();
    } catch (const std::exception& e) {
      fatal(function_, e.what());
    }
  }
  WaitMode wait_mode() const { return eng_->comm_.wait_mode(); }
  // Whether advancing it never calls MPI: every peer on this node, reached through shared
  // memory (the preload never runs the engine's "mpi" algorithm as an operation).
  bool mpi_free() const { return eng_->comm_.node_count() == 1 && eng_->comm_.shm(); }

  MPI_Request greq = MPI_REQUEST_NULL;
  // Set with the engine mutex held; read without it too, by MPI's poll and wait functions
  // in other threads (MPI_THREAD_MULTIPLE).
  std::atomic<bool> done{false};

 private:
  std::shared_ptr<CommEngine> eng_;  // the communicator's engine outlives its operations
  const char* function_;
  std::shared_ptr<Packing> packing_;  // its bytes outlive the execution (declared before it)
  std::shared_ptr<const CountMatrix> counts_;  // the v-form's blocks, likewise
  engine::Schedule sched_;
  std::unique_ptr<engine::Execution> exec_;  // after sched_: destroyed first
};

namespace {

struct Holder;
void reap_freed();

std::vector<NbOp*>& in_flight() {
  static std::vector<NbOp*> ops;
  return ops;
}
std::atomic<size_t> g_in_flight{0};  // in_flight().size(), read without the engine mutex
bool g_progressing = false;

int query_fn(void*, MPI_Status* status) {
  PMPI_Status_set_elements(status, MPI_BYTE, 0);
  PMPI_Status_set_cancelled(status, 0);
  status->MPI_SOURCE = MPI_UNDEFINED;
  status->MPI_TAG = MPI_UNDEFINED;
  return MPI_SUCCESS;
}

// What MPI's callbacks leave to be freed under the engine mutex (guard.hpp: they run with
// MPI's lock held and must not wait for the mutex). g_freed_mu is a leaf: nothing is
// called while it is held.
std::mutex g_freed_mu;
std::vector<NbOp*> g_freed_ops;
std::vector<Holder*> g_freed_holders;

int free_fn(void* state) {
  std::lock_guard lock(g_freed_mu);
  g_freed_ops.push_back(static_cast<NbOp*>(state));
  return MPI_SUCCESS;
}

int cancel_fn(void*, int) {
  return MPI_SUCCESS;  // a collective cannot be cancelled (MPI: erroneous)
}

// With MPICH's extended generalized requests (mpi_compat::kHasGrequestExtensions), MPI_Wait
// and MPI_Test call this until the request is complete: every operation of this process
// advances, not only this one (a peer may need another of ours to go on). Without them the
// preload's own MPI_Wait*/MPI_Test* (preload_progress.cpp) do the same.
// Both run with MPI's lock held: they advance the engine only when its mutex is free, and
// otherwise return to MPI, whose progress loop calls the poll function again (the thread
// holding the mutex is advancing the same operations meanwhile).
int poll_fn(void* state, MPI_Status*) {
  if (inside_engine()) return MPI_SUCCESS;  // called back from inside the engine
  progress_all_if_free();
  const NbOp* op = static_cast<NbOp*>(state);
  if (!op->done && op->wait_mode() == WaitMode::Yield) sched_yield();
  return MPI_SUCCESS;
}

// MPI_Waitall and friends call this with the requests' states.
int wait_fn(int count, void** states, double, MPI_Status*) {
  if (inside_engine()) return MPI_SUCCESS;
  for (int i = 0; i < count; ++i) {
    const NbOp* op = static_cast<NbOp*>(states[i]);
    for (uint64_t polls = 0; !op->done;) {
      if (!progress_all_if_free()) return MPI_SUCCESS;  // another thread holds the mutex
      if (!op->done) pause(++polls, op->wait_mode());
    }
  }
  return MPI_SUCCESS;
}

// The attribute: the engine of one communicator (or why it could not be created), and the
// registry of every live one.
struct Holder {
  std::shared_ptr<CommEngine> engine;
  std::string error;  // the creation failed (engine null): reported at each routed call
};
int g_keyval = MPI_KEYVAL_INVALID;
std::once_flag g_keyval_once;
std::mutex g_registry_mu;  // registry(): creation runs without the engine mutex
std::map<MPI_Comm, Holder*>& registry() {
  static std::map<MPI_Comm, Holder*> r;
  return r;
}

std::atomic<uint64_t> g_generation{1};

// Inside MPI_Comm_free (MPI's lock held): the communicator leaves the registry at once; its
// engine is freed by the next thread that holds the engine mutex (reap_freed), with its
// last operation.
int delete_fn(MPI_Comm comm, int, void* value, void*) {
  g_generation.fetch_add(1, std::memory_order_relaxed);
  {
    std::lock_guard lock(g_registry_mu);
    registry().erase(comm);
  }
  std::lock_guard lock(g_freed_mu);
  g_freed_holders.push_back(static_cast<Holder*>(value));
  return MPI_SUCCESS;
}

// With the engine mutex held: frees what the callbacks left. An operation is freed once it
// is done (MPI may call the free function of a request the application released before it
// completed).
void reap_freed() {
  std::vector<NbOp*> ops;
  std::vector<Holder*> holders;
  {
    std::lock_guard lock(g_freed_mu);
    const auto done = std::partition(g_freed_ops.begin(), g_freed_ops.end(),
                                     [](const NbOp* op) { return !op->done; });
    ops.assign(done, g_freed_ops.end());
    g_freed_ops.erase(done, g_freed_ops.end());
    holders.swap(g_freed_holders);
  }
  for (NbOp* op : ops) delete op;
  for (Holder* h : holders) {
    try {
      delete h;  // the engine goes with its last operation
    } catch (...) {
    }
  }
}

void (*g_at_finalize)() = nullptr;

// MPI_Finalize deletes MPI_COMM_SELF's attributes before anything else: the hook runs even
// where the application's MPI_Finalize does not reach ours (Fortran's mpi_f08 bindings call
// PMPI_Finalize directly).
int finalize_fn(MPI_Comm, int, void*, void*) {
  if (g_at_finalize) g_at_finalize();
  return MPI_SUCCESS;
}

int keyval() {
  std::call_once(g_keyval_once, [] {
    Inside in;
    PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_fn, &g_keyval, nullptr);
    int self_key = MPI_KEYVAL_INVALID;
    if (PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, finalize_fn, &self_key, nullptr) ==
        MPI_SUCCESS)
      PMPI_Comm_set_attr(MPI_COMM_SELF, self_key, nullptr);
  });
  return g_keyval;
}

Holder* holder_of(MPI_Comm comm) {
  if (comm == MPI_COMM_NULL || keyval() == MPI_KEYVAL_INVALID) return nullptr;
  void* value = nullptr;
  int flag = 0;
  if (PMPI_Comm_get_attr(comm, g_keyval, &value, &flag) != MPI_SUCCESS || !flag) return nullptr;
  return static_cast<Holder*>(value);
}

}  // namespace

void at_finalize(void (*fn)()) {
  g_at_finalize = fn;
}

uint64_t engines_generation() {
  return g_generation.load(std::memory_order_relaxed);
}

void pause(uint64_t polls, WaitMode mode) {
  if (polls % 64 == 0) poke_mpi();
  if (mode == WaitMode::Yield || polls >= 2000) sched_yield();
}

// MPI_Test of a generalized request that never completes (it has no poll function): MPICH
// runs its whole progress engine for an incomplete request, its own non-blocking
// collectives' schedules included (MPI_Iprobe may only poll the network).
namespace {
MPI_Request g_poke = MPI_REQUEST_NULL;
}  // namespace

void poke_mpi() {
  Guard g;
  if (g_poke == MPI_REQUEST_NULL && PMPI_Grequest_start(
                                        query_fn, [](void*) -> int { return MPI_SUCCESS; },
                                        cancel_fn, nullptr, &g_poke) != MPI_SUCCESS)
    return;
  int flag = 0;
  PMPI_Test(&g_poke, &flag, MPI_STATUS_IGNORE);
}

namespace {
// With the engine mutex held.
bool progress_all_held() {
  if (g_progressing) return !in_flight().empty();
  g_progressing = true;
  std::vector<NbOp*>& ops = in_flight();
  for (size_t i = 0; i < ops.size();) {
    NbOp* op = ops[i];
    if (op->advance()) {
      ops.erase(ops.begin() + static_cast<std::ptrdiff_t>(i));
      g_in_flight.store(ops.size(), std::memory_order_relaxed);
      op->finish();
      op->done = true;
      PMPI_Grequest_complete(op->greq);  // may free op (a freed request): not used after
    } else {
      ++i;
    }
  }
  g_progressing = false;
  return !ops.empty();
}
}  // namespace

bool progress_all() {
  Guard g;
  reap_freed();
  return progress_all_held();
}

bool progress_all_if_free() {
  TryGuard g;
  if (!g) return false;
  progress_all_held();
  return true;
}

size_t operations_in_flight() {
  return g_in_flight.load(std::memory_order_relaxed);
}

// The background helper of BlockedProgress: while a thread of this process is blocked in
// an MPI call, it advances the operations whose progress needs no MPI call (mpi_free), so
// that a peer waiting for one of them is not stuck behind our blocking call. It calls no
// MPI function, so it is legal at any thread level; it completes nothing (completing the
// generalized request is an MPI call): the next progress_all() in the application's
// thread finds those operations finished.
// With the progress thread (enable_progress_thread: MPI_THREAD_MULTIPLE), it advances and
// completes every operation in flight, those that need MPI (spanning nodes) too: busily
// (yielding) while a thread is blocked, every kIdleRound while none is and an operation is
// in flight (start() wakes it), so that waits the preload never sees (a Fortran binding's
// PMPI_Wait, a call it does not interpose) complete too.
namespace {
std::atomic<bool> g_thread_mode{false};
constexpr auto kIdleRound = std::chrono::microseconds(200);

class Helper {
 public:
  static Helper& get() {
    static Helper* h = new Helper;  // never destroyed: the thread may outlive main's statics
    return *h;
  }
  void begin() {
    std::lock_guard lock(mu_);
    start();
    ++blocked_;
    cv_.notify_one();
  }
  void end() {
    std::lock_guard lock(mu_);
    --blocked_;
  }
  // Progress-thread mode: an operation was started (g_in_flight already counts it).
  void kick() {
    std::lock_guard lock(mu_);
    start();
    cv_.notify_one();
  }

 private:
  void start() {
    if (!started_) {
      started_ = true;
      std::thread([this] { loop(); }).detach();
    }
  }
  bool wanted() const {
    return blocked_ > 0 ||
           (g_thread_mode.load(std::memory_order_relaxed) && operations_in_flight() > 0);
  }
  void loop() {
    for (;;) {
      bool blocked = false;
      {
        std::unique_lock lock(mu_);
        cv_.wait(lock, [&] { return wanted(); });
        blocked = blocked_ > 0;
      }
      bool any = false;
      {
        Guard g;
        // Read under the mutex: free_all_engines clears it under the mutex before MPI is
        // finalized, so this thread never calls MPI after that.
        // It frees nothing (reap_freed: an engine's destructor frees its communicator, left
        // to the application's threads as without the option).
        if (g_thread_mode.load(std::memory_order_relaxed)) {
          any = progress_all_held();
        } else {
          for (NbOp* op : in_flight())
            if (op->mpi_free() && !op->done) {
              any = true;
              op->advance();
            }
        }
      }
      if (any && blocked) {
        sched_yield();
      } else {  // nothing it may advance, or nobody blocked: sleep a while (or until woken)
        std::unique_lock lock(mu_);
        cv_.wait_for(lock, any ? kIdleRound : std::chrono::microseconds(1000));
      }
    }
  }
  std::mutex mu_;
  std::condition_variable cv_;
  int blocked_ = 0;
  bool started_ = false;
};
}  // namespace

void enable_progress_thread() {
  g_thread_mode.store(true, std::memory_order_relaxed);
}

bool progress_thread_enabled() {
  return g_thread_mode.load(std::memory_order_relaxed);
}

BlockedProgress::BlockedProgress() {
  if (inside_engine() || operations_in_flight() == 0) return;
  Helper::get().begin();
  active_ = true;
}

BlockedProgress::~BlockedProgress() {
  if (active_) Helper::get().end();
}

CommEngine::CommEngine(MPI_Comm comm)
    : comm_(comm, WaitMode::Spin, 0),  // no shared heap: a program's buffers are its own
      world_(comm_.rank(), comm_.size(), &comm_, comm_.node_count() == 1 ? comm_.shm() : nullptr) {
  comm_.set_wait_mode(wait_mode_for(comm_.host_size()));
  comm_.set_tuning(tuning_table().parameters());
  for (const CollSpec* spec : coll_specs())
    if (spec->runs_on(BackendKind::Engine))
      pruned_[spec->coll] = tuning_table().prune(spec->coll, Mem::Host, comm_.size());
}

const engine::Algorithm* CommEngine::choose(const CollArgs& a, std::string* why) const {
  // Every rank must choose alike, from arguments equal on all ranks. A reduce's in_place is
  // not one: MPI_IN_PLACE is the root's choice alone, and route.cpp marks every non-root
  // in place (its input read from sendbuf). The choice is made as if all were in place (the
  // MPI library's refusal of in-place reduce at some roots, mpi_collective_refuses, then
  // applies to every rank); the operation itself runs with the real arguments.
  if (a.coll == Coll::Reduce && !a.in_place) {
    CollArgs as_in_place = a;
    as_in_place.in_place = true;
    return engine::choose_algorithm(pruned_.at(a.coll), env_algo(a.coll), as_in_place, world_, why);
  }
  // Gather and scatter: the root's buffer of all blocks and its in-place choice are its own,
  // and another rank's buffers on the root's side are absent (route.cpp). Chosen from the
  // block, root and communicator alone (a program's buffers are all private here).
  if (a.coll == Coll::Gather || a.coll == Coll::Scatter) {
    CollArgs agreed = a;
    agreed.in_place = false;
    agreed.send = agreed.recv = Buf{};
    return engine::choose_algorithm(pruned_.at(a.coll), env_algo(a.coll), agreed, world_, why);
  }
  return engine::choose_algorithm(pruned_.at(a.coll), env_algo(a.coll), a, world_, why);
}

std::string CommEngine::passes(const CollArgs& a, const engine::Algorithm** chosen) const {
  const engine::Algorithm* algo = choose(a, nullptr);
  if (!algo) return "engine refuses";
  // The table (or CB_<COLL>_ALGO) hands this size to the MPI library: call it directly,
  // without the engine's schedule around it.
  if (algo->name == "mpi") return kTunedToLibrary;
  if (chosen) *chosen = algo;
  return {};
}

void CommEngine::run(const CollArgs& a, const engine::Algorithm& algo) {
  std::unique_ptr<engine::Execution> exec;
  engine::SmallOp small;  // the small path with nothing pending: no schedule, no allocation
  bool on_slots = false;
  {
    Guard g;
    on_slots = engine::start_small(small, algo, a, world_, comm_);
    if (!on_slots) {
      blocking_.reset();
      const int tag = engine::build_operation(blocking_, algo, a, world_, comm_);
      exec = std::make_unique<engine::Execution>(blocking_, comm_, host_, tag);
    }
  }
  // The small operation is advanced without the engine's lock: nothing else of this
  // communicator runs meanwhile (nothing was pending, and MPI orders a communicator's
  // collectives), its state is on this stack, and it makes no MPI call.
  // Other threads start and complete operations meanwhile (MPI_THREAD_MULTIPLE): whether
  // any is in flight is read from the atomic count, never from in_flight() without the lock.
  for (uint64_t polls = 0; on_slots && !small.advance();) {
    if (operations_in_flight() > 0) progress_all();
    pause(++polls, comm_.wait_mode());
  }
  for (uint64_t polls = 0; !on_slots;) {
    {
      Guard g;
      if (exec->test()) break;
    }
    if (operations_in_flight() > 0) progress_all();
    pause(++polls, comm_.wait_mode());
  }
}

void CommEngine::start(const CollArgs& a, const engine::Algorithm& algo, const char* function,
                       MPI_Request* request, std::shared_ptr<Packing> packing,
                       std::shared_ptr<const CountMatrix> counts) {
  Guard g;
  started_nonblocking_.store(true, std::memory_order_relaxed);
  auto op = std::make_unique<NbOp>(shared_from_this(), algo, a, function, std::move(packing),
                                   std::move(counts));
  CB_MPI(mpi_compat::pmpi_grequest_start(query_fn, free_fn, cancel_fn, poll_fn, wait_fn, op.get(),
                                         request));
  NbOp* raw = op.release();  // MPI owns it now (free_fn)
  raw->greq = *request;
  in_flight().push_back(raw);
  g_in_flight.store(in_flight().size(), std::memory_order_relaxed);
  progress_all();  // the first round at once (small operations may finish here)
  if (progress_thread_enabled() && operations_in_flight() > 0) Helper::get().kick();
}

void create_engine(MPI_Comm comm) {
  {
    Guard g;
    reap_freed();  // freed communicators' shared memory counts against the budget until then
  }
  // Collective, so it may wait for peers that wait for our operations on other
  // communicators (made lazily, inside a blocking collective): those advance meanwhile.
  BlockedProgress progress;
  Inside in;  // collective over comm, which no other thread of this process uses yet
  if (keyval() == MPI_KEYVAL_INVALID || holder_of(comm)) return;
  auto holder = std::make_unique<Holder>();
  try {
    holder->engine = std::make_shared<CommEngine>(comm);
  } catch (const std::exception& e) {
    holder->error = e.what();
  }
  if (PMPI_Comm_set_attr(comm, g_keyval, holder.get()) != MPI_SUCCESS) return;
  std::lock_guard lock(g_registry_mu);
  registry()[comm] = holder.release();
}

std::shared_ptr<CommEngine> engine_of(MPI_Comm comm, bool create) {
  Holder* h = holder_of(comm);
  if (!h && create) {
    create_engine(comm);
    h = holder_of(comm);
  }
  if (!h) return nullptr;
  if (!h->engine) throw RuntimeError(h->error);
  return h->engine;
}

void free_all_engines() {
  Guard g;
  // The progress thread calls MPI no more.
  g_thread_mode.store(false, std::memory_order_relaxed);
  if (g_keyval == MPI_KEYVAL_INVALID) return;  // no engine, so no poke request either
  std::vector<MPI_Comm> comms;
  {
    std::lock_guard lock(g_registry_mu);
    for (const auto& [comm, holder] : registry()) comms.push_back(comm);
  }
  for (MPI_Comm c : comms) PMPI_Comm_delete_attr(c, g_keyval);  // delete_fn queues
  reap_freed();
  PMPI_Comm_free_keyval(&g_keyval);
  if (g_poke != MPI_REQUEST_NULL) {
    PMPI_Grequest_complete(g_poke);
    PMPI_Wait(&g_poke, MPI_STATUS_IGNORE);
  }
}

}  // namespace cb::preload
