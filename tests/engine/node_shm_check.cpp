// NodeShm as a real MPI job (ranks on one node, MPI_THREAD_MULTIPLE), ctest
// engine_node_shm_np2/np3. Each check prints "ok <name>" on rank 0; a failure prints the
// reason and aborts the job.
//   lifeline_outlives_its_thread  the segments are created by a thread that exits; each
//                                 rank in turn then keeps the others waiting on it for
//                                 300 ms (six liveness checks): nobody is reported dead
//   destroyed_from_other_threads  created in one thread, destroyed in another
//   heap                          no heap when asked for none; a heap buffer is read by
//                                 every rank in place; a request beyond the heap is null
//   sizes_and_budget              a segment reserves what its layout says; the process
//                                 total; past CB_SHM_MAX_BYTES on one rank (not the
//                                 others) every rank refuses alike, naming the budget
//   transport_small_channels      messages of 0 B to 200 KiB, many in flight, through
//                                 64 KiB data rings (wrapping), checked byte for byte
//   alltoall_in_place_no_heap     the shm alltoall in place on private buffers without a
//                                 heap (the preload's NodeShm): its copy of the input is
//                                 private memory that peers read by CMA (skipped without)
#include <mpi.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include "core/errors.hpp"
#include "engine/shm/node_shm.hpp"
#include "engine/shm/shm_collectives.hpp"
#include "engine/shm/shm_transport.hpp"

namespace {

using cb::engine::NodeShm;

int rank = 0, size = 1;
constexpr size_t kStaging = 1 << 20;

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "node_shm_check: rank %d: FAILED: %s\n", rank, what.c_str());
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 1);
  std::abort();
}

void expect(bool cond, const std::string& what) {
  if (!cond) fail(what);
}

void passed(const char* name) {
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) std::printf("ok %s\n", name);
  std::fflush(stdout);
}

std::vector<int> everyone() {
  std::vector<int> m(static_cast<size_t>(size));
  std::iota(m.begin(), m.end(), 0);
  return m;
}

std::unique_ptr<NodeShm> make(size_t heap = 0) {
  return std::make_unique<NodeShm>(MPI_COMM_WORLD, everyone(), heap, kStaging, false);
}

// Waits (as PeerSync does: polling, with liveness checks) until local rank `r` has set
// its counter for operation `op` to `value`.
void wait_for(NodeShm& shm, int r, uint64_t op, uint64_t value) {
  uint64_t polls = 0;
  try {
    while (shm.slot(r, op).done.value.load(std::memory_order_acquire) < value) {
      shm.check_peers(polls);
      std::this_thread::yield();
    }
  } catch (const cb::engine::PeerLost& e) {
    fail(std::string("a live peer was reported dead: ") + e.what());
  }
}

void lifeline_outlives_its_thread() {
  std::unique_ptr<NodeShm> shm;
  std::thread([&] { shm = make(); }).join();  // its thread is gone from here on
  for (int r = 0; r < size; ++r) expect(shm->alive(r), "alive(" + std::to_string(r) + ")");
  for (int r = 0; r < size; ++r) {
    if (r == rank) {
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
      shm->slot(rank, 5).done.value.store(1, std::memory_order_release);
    } else {
      wait_for(*shm, r, 5, 1);
    }
  }
  passed("lifeline_outlives_its_thread");
  MPI_Barrier(MPI_COMM_WORLD);
}

void destroyed_from_other_threads() {
  for (int round = 0; round < 3; ++round) {
    std::unique_ptr<NodeShm> shm;
    std::thread([&] { shm = make(); }).join();
    MPI_Barrier(MPI_COMM_WORLD);
    std::thread([&] { shm.reset(); }).join();
  }
  auto shm = make();  // made here, destroyed by another thread while peers still use theirs
  MPI_Barrier(MPI_COMM_WORLD);
  auto other = make();
  std::thread([&] { shm.reset(); }).join();
  // Peers see this rank alive through `other`, and keep seeing it after its first one went.
  for (int r = 0; r < size; ++r) {
    if (r == rank) {
      std::this_thread::sleep_for(std::chrono::milliseconds(120));
      other->slot(rank, 9).done.value.store(1, std::memory_order_release);
    } else {
      wait_for(*other, r, 9, 1);
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
  passed("destroyed_from_other_threads");
}

void heap() {
  {
    auto none = make(0);
    expect(none->heap_bytes() == 0 && none->alloc(64) == nullptr, "no heap when none is asked");
  }
  auto shm = make(1 << 20);
  expect(shm->heap_bytes() == 1 << 20, "heap size");
  expect(shm->alloc((1 << 20) + 1) == nullptr, "beyond the heap: null");
  auto* p = static_cast<unsigned char*>(shm->alloc(300000));
  expect(p && shm->is_shared(p), "a heap buffer, in shared memory");
  for (size_t i = 0; i < 300000; ++i) p[i] = static_cast<unsigned char>(i * 7 + rank);
  cb::engine::BufferRef mine = shm->describe(p, 300000);
  std::vector<cb::engine::BufferRef> refs(static_cast<size_t>(size));
  MPI_Allgather(&mine, sizeof mine, MPI_BYTE, refs.data(), sizeof mine, MPI_BYTE, MPI_COMM_WORLD);
  for (int r = 0; r < size; ++r) {
    const auto* q = reinterpret_cast<const unsigned char*>(shm->map(refs[static_cast<size_t>(r)]));
    expect(q != nullptr, "a peer's heap buffer maps");
    for (size_t i = 0; i < 300000; ++i)
      if (q[i] != static_cast<unsigned char>(i * 7 + r))
        fail("heap buffer of rank " + std::to_string(r));
  }
  MPI_Barrier(MPI_COMM_WORLD);
  expect(shm->free(p), "free");
  void* again = shm->alloc(1 << 20);  // the whole heap once freed and coalesced
  expect(again != nullptr, "the whole heap after free");
  shm->free(again);
  passed("heap");
}

void sizes_and_budget() {
  const size_t before = NodeShm::process_bytes();
  auto a = make();
  const size_t n = static_cast<size_t>(size);
  const size_t channels = n * (sizeof(cb::engine::Channel) + a->channel_data_bytes());
  expect(a->channel_data_bytes() == cb::engine::kMinChannelData, "CB_SHM_CHANNEL_BYTES=64K");
  expect(a->staging_bytes() * cb::engine::kStagingRegions == kStaging, "staging");
  // Beyond channels and staging: the control area (operation slots, and the small-message
  // path's area of kSmallAreaBytes).
  expect(a->segment_bytes() >= channels + kStaging + cb::engine::kSmallAreaBytes &&
             a->segment_bytes() < channels + kStaging + cb::engine::kSmallAreaBytes + (64 << 10),
         "segment bytes " + std::to_string(a->segment_bytes()));
  expect(NodeShm::process_bytes() == before + a->segment_bytes(), "process total");
  // CB_SHM_MAX_BYTES=6M: four segments of ~1.2 MiB fit. Rank 0 holds one more of 1.6 MiB,
  // its own (MPI_COMM_SELF), so its fourth does not fit while the others' would: all refuse.
  std::unique_ptr<NodeShm> own;
  if (rank == 0) own = std::make_unique<NodeShm>(MPI_COMM_SELF, std::vector<int>{0}, 0, 3 << 19);
  std::vector<std::unique_ptr<NodeShm>> more;
  more.push_back(make());
  more.push_back(make());
  std::string refused;
  try {
    more.push_back(make());
  } catch (const cb::RuntimeError& e) {
    refused = e.what();
  }
  expect(refused.find("CB_SHM_MAX_BYTES") != std::string::npos &&
             refused.find("(local rank 0)") != std::string::npos,
         "every rank refuses, naming the budget and rank 0: '" + refused + "'");
  own.reset();
  more.push_back(make());  // fits again
  more.clear();
  a.reset();
  expect(NodeShm::process_bytes() == before, "all released");
  passed("sizes_and_budget");
}

void transport_small_channels() {
  auto shm = make();
  cb::engine::ShmTransport t(*shm);
  constexpr int kMessages = 40;
  const size_t sizes[] = {0, 1, 8, 100, 8192, 8193, 40000, 65536, 200000, 70001};
  std::vector<std::vector<unsigned char>> out, in;
  std::vector<cb::engine::Step> steps;
  steps.reserve(static_cast<size_t>(2 * kMessages * size));
  for (int peer = 0; peer < size; ++peer) {
    if (peer == rank) continue;
    for (int m = 0; m < kMessages; ++m) {
      const size_t bytes = sizes[static_cast<size_t>(m) % std::size(sizes)];
      out.emplace_back(bytes);
      for (size_t i = 0; i < bytes; ++i)
        out.back()[i] = static_cast<unsigned char>(i + static_cast<size_t>(m * 31 + rank));
      in.emplace_back(bytes, 0xee);
      cb::engine::Step s{.kind = cb::engine::StepKind::Send};
      s.peer = peer;
      s.src = out.back().data();
      s.bytes = bytes;
      steps.push_back(s);
      cb::engine::Step r{.kind = cb::engine::StepKind::Recv};
      r.peer = peer;
      r.dst = in.back().data();
      r.bytes = bytes;
      steps.push_back(r);
    }
  }
  for (size_t i = 0; i < steps.size(); ++i)
    t.post(steps[i], 2000 + static_cast<int>(i / 2 % kMessages));
  for (bool all = false; !all;) {
    all = true;
    for (auto& s : steps) all = t.test(s) && all;
  }
  size_t k = 0;
  for (int peer = 0; peer < size; ++peer) {
    if (peer == rank) continue;
    for (int m = 0; m < kMessages; ++m, ++k) {
      const auto& got = in[k];
      for (size_t i = 0; i < got.size(); ++i)
        if (got[i] != static_cast<unsigned char>(i + static_cast<size_t>(m * 31 + peer)))
          fail("message " + std::to_string(m) + " from rank " + std::to_string(peer) + ", byte " +
               std::to_string(i));
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
  passed("transport_small_channels");
}

void alltoall_in_place_no_heap() {
  auto shm = std::make_unique<NodeShm>(MPI_COMM_WORLD, everyone(), 0, kStaging, true);
  if (!shm->cma()) {
    if (rank == 0)
      std::printf("skipped alltoall_in_place_no_heap: %s\n", shm->cma_status().c_str());
    return;
  }
  // Block d of rank s's input holds d * 16 + s + k at offset k; after one alltoall block
  // j of rank r holds what rank j had for r (r * 16 + j + k), after two the input again.
  const size_t block = 100000, n = static_cast<size_t>(size), me = static_cast<size_t>(rank);
  const auto value = [](size_t s, size_t d, size_t k) {
    return static_cast<unsigned char>(d * 16 + s + k);
  };
  std::vector<unsigned char> buf(block * n);
  for (size_t i = 0; i < buf.size(); ++i) buf[i] = value(me, i / block, i % block);
  for (uint64_t op : {4, 8}) {  // twice: the first private copy is freed in between
    auto work = cb::engine::shm_alltoall(*shm, op, buf.data(), buf.data(), block);
    while (!work->advance()) std::this_thread::yield();
    for (size_t i = 0; i < buf.size(); ++i) {
      const size_t j = i / block, k = i % block;
      if (buf[i] != (op == 4 ? value(j, me, k) : value(me, j, k)))
        fail("alltoall in place, op " + std::to_string(op) + ", byte " + std::to_string(i));
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
  passed("alltoall_in_place_no_heap");
}

}  // namespace

int main(int argc, char** argv) {
  // Read by engine_settings() at the first NodeShm.
  setenv("CB_SHM_MAX_BYTES", "6M", 1);
  setenv("CB_SHM_CHANNEL_BYTES", "64K", 1);
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (provided < MPI_THREAD_MULTIPLE) {
    if (rank == 0) std::printf("SKIP: MPI_THREAD_MULTIPLE not provided\n");
    MPI_Finalize();
    return 77;
  }
  try {
    lifeline_outlives_its_thread();
    destroyed_from_other_threads();
    heap();
    sizes_and_budget();
    transport_small_channels();
    alltoall_in_place_no_heap();
  } catch (const std::exception& e) {
    fail(e.what());
  }
  MPI_Finalize();
  return 0;
}
