// The CUDA-only parts of cb_gpu in a build without CUDA: streams and kernels exist as
// declarations, so callers need no #if, and every use says why it cannot work (the same
// reason device.hpp gives).
#include "core/errors.hpp"
#include "gpu/compute_kernel.hpp"
#include "gpu/device.hpp"
#include "gpu/graph.hpp"
#include "gpu/ipc.hpp"
#include "gpu/pointer_cache.hpp"
#include "gpu/reduce.hpp"
#include "gpu/stream.hpp"
#include "gpu/validate.hpp"

namespace cb::gpu {
namespace {
[[noreturn]] void refuse() {
  throw UsageError(unavailable_reason());
}
}  // namespace

Stream::Stream() {
  refuse();
}
Stream::~Stream() = default;
Stream::Stream(Stream&&) noexcept = default;
Stream& Stream::operator=(Stream&&) noexcept = default;
bool Stream::query() const {
  refuse();
}
void Stream::synchronize() const {
  refuse();
}

Event::Event(bool) {
  refuse();
}
Event::~Event() = default;
Event::Event(Event&&) noexcept = default;
Event& Event::operator=(Event&&) noexcept = default;
void Event::record(StreamHandle) {
  refuse();
}
bool Event::query() const {
  refuse();
}
void Event::synchronize() const {
  refuse();
}
void Event::wait_on(StreamHandle) const {
  refuse();
}
double Event::elapsed_s(const Event&, const Event&) {
  refuse();
}

// -G: unavailable_reason() says "collbench was built without CUDA".
Graph::Graph(StreamHandle, const std::function<void()>&) {
  refuse();
}
Graph::~Graph() = default;
Graph::Graph(Graph&&) noexcept = default;
Graph& Graph::operator=(Graph&&) noexcept = default;
void Graph::reset() noexcept {  // nothing was ever captured: only the fields to clear
  graph_ = exec_ = nullptr;
  nodes_ = 0;
}
void Graph::launch(StreamHandle) const {
  refuse();
}

void reduce(void*, const void*, const void*, size_t, Dtype, Op, StreamHandle) {
  refuse();
}
void reduce(void*, const void*, size_t, Dtype, Op, StreamHandle) {
  refuse();
}
namespace detail {
void set_reduce_blocks_per_sm(int) {}
int reduce_blocks_per_sm() {
  return 0;
}
}  // namespace detail

void fill_collective(const CollData&, void*, void*, StreamHandle) {
  refuse();
}
size_t check_collective(const CollData&, const void*, StreamHandle) {
  refuse();
}
void fill_pattern(void*, size_t, uint32_t, bool, StreamHandle) {
  refuse();
}
size_t count_pattern_errors(const void*, size_t, uint32_t, StreamHandle) {
  refuse();
}

// Without CUDA nothing is device memory.
PointerInfo PointerCache::lookup(const void*) {
  return {};
}
void PointerCache::insert(const PointerInfo&) {}
void PointerCache::erase(const void*) {}
void PointerCache::clear() {}
size_t PointerCache::driver_queries() const {
  return 0;
}
size_t PointerCache::entries() const {
  return 0;
}
IpcHandle ipc_export(void*) {
  refuse();
}
void* ipc_open(const IpcHandle&) {
  refuse();
}
void ipc_close(void*) noexcept {}
void reduce_many(void*, const void* const*, int, size_t, Dtype, Op, StreamHandle) {
  refuse();
}
void launch_compute(double, StreamHandle) {
  refuse();
}

PointerCache& pointer_cache() {
  static PointerCache cache;
  return cache;
}

}  // namespace cb::gpu
