#include "engine/staging_transport.hpp"

#include <bit>

#include "gpu/device.hpp"
#include "gpu/pointer_cache.hpp"

namespace cb::engine {
namespace {

bool on_device(const void* p) {
  return p && gpu::pointer_cache().lookup(p).kind == gpu::MemoryKind::Device;
}

}  // namespace

StagingTransport::StagingTransport(std::function<Transport&(int)> inner)
    : inner_(std::move(inner)) {}

StagingTransport::~StagingTransport() {
  for (auto& [p, size] : all_) gpu::pinned_free(p);
}

std::byte* StagingTransport::take_bounce(size_t bytes, size_t& capacity) {
  capacity = std::bit_ceil(std::max<size_t>(bytes, 4096));  // size classes: reuse is likely
  const auto it = free_.find(capacity);
  if (it != free_.end()) {
    std::byte* p = it->second;
    free_.erase(it);
    return p;
  }
  auto* p = static_cast<std::byte*>(gpu::pinned_alloc(capacity));
  all_.emplace_back(p, capacity);
  return p;
}

void StagingTransport::give_back(std::byte* bounce, size_t capacity) {
  free_.emplace(capacity, bounce);
}

void StagingTransport::post(Step& s, int tag) {
  const void* user = s.kind == StepKind::Send ? s.src : s.dst;
  if (!on_device(user)) return inner_(s.peer).post(s, tag);
  auto st = std::make_unique<Staged>();
  st->bounce = take_bounce(s.bytes, st->capacity);
  st->host = s;
  st->host.src = st->bounce;
  st->host.dst = st->bounce;
  st->tag = tag;
  if (s.kind == StepKind::Send) {
    gpu::copy_async(st->bounce, s.src, s.bytes, stream_.handle());
    st->copied.record(stream_.handle());
    st->phase = Phase::CopyIn;
  } else {
    inner_(s.peer).post(st->host, tag);
    st->phase = Phase::Transfer;
  }
  staged_[&s] = std::move(st);
}

bool StagingTransport::test(Step& s) {
  const auto it = staged_.find(&s);
  if (it == staged_.end()) return inner_(s.peer).test(s);
  Staged& st = *it->second;
  if (st.phase == Phase::CopyIn) {
    if (!st.copied.query()) return false;
    inner_(s.peer).post(st.host, st.tag);
    st.phase = Phase::Transfer;
  }
  if (st.phase == Phase::Transfer) {
    if (!inner_(s.peer).test(st.host)) return false;
    if (s.kind == StepKind::Send) {
      st.phase = Phase::Done;
    } else {
      gpu::copy_async(s.dst, st.bounce, s.bytes, stream_.handle());
      st.copied.record(stream_.handle());
      st.phase = Phase::CopyOut;
    }
  }
  if (st.phase == Phase::CopyOut && !st.copied.query()) return false;
  give_back(st.bounce, st.capacity);
  staged_.erase(it);
  return true;
}

}  // namespace cb::engine
