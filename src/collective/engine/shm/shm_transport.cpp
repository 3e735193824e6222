#include "collective/engine/shm/shm_transport.hpp"

#include <algorithm>
#include <cstring>
#include <set>

#include "harness/errors.hpp"

namespace cb::engine {
namespace {
enum Kind : uint32_t { kEager = 1, kInPlace = 2 };
}

ShmTransport::ShmTransport(NodeShm& shm)
    : shm_(shm), posted_(static_cast<size_t>(shm.local_size())) {}

int ShmTransport::local(int comm_rank) const {
  return shm_.local_of(comm_rank);
}

// The sender retires its descriptors in order once receivers have completed them.
void ShmTransport::retire(Channel& ch) {
  uint64_t tail = ch.tail.value.load(std::memory_order_relaxed);
  const uint64_t head = ch.head.value.load(std::memory_order_relaxed);
  while (tail < head && ch.ring[tail % kRingEntries].complete.load(std::memory_order_acquire)) {
    ch.ring[tail % kRingEntries].seq.store(0, std::memory_order_relaxed);
    ++tail;
  }
  ch.tail.value.store(tail, std::memory_order_release);
}

bool ShmTransport::try_send(Step& s) {
  Channel& ch = shm_.channel(local(s.peer), shm_.local_rank());
  retire(ch);
  const uint64_t head = ch.head.value.load(std::memory_order_relaxed);
  if (head - ch.tail.value.load(std::memory_order_relaxed) >= kRingEntries) return false;
  Descriptor& d = ch.ring[head % kRingEntries];
  d.tag = s.tag;
  d.bytes = s.bytes;
  d.claimed.store(0, std::memory_order_relaxed);
  d.complete.store(0, std::memory_order_relaxed);
  if (s.bytes <= kEagerBytes) {
    d.kind = kEager;
    std::memcpy(ch.eager[head % kRingEntries], s.src, s.bytes);
  } else {
    d.kind = kInPlace;
    d.source = shm_.describe(s.src, s.bytes);
  }
  d.seq.store(head + 1, std::memory_order_release);
  ch.head.value.store(head + 1, std::memory_order_release);
  s.token = head + 1;
  if (d.kind == kEager) s.done = true;  // the data is in the channel already
  return true;
}

void ShmTransport::post(Step& s, int tag) {
  if (s.kind == StepKind::Send) {
    s.tag = tag;
    s.token = 0;
    try_send(s);
    return;
  }
  posted_[static_cast<size_t>(local(s.peer))].push_back({&s, tag});
}

void ShmTransport::match(int sender) {
  auto& queue = posted_[static_cast<size_t>(sender)];
  if (queue.empty()) return;
  Channel& ch = shm_.channel(shm_.local_rank(), sender);
  const uint64_t head = ch.head.value.load(std::memory_order_acquire);
  const uint64_t tail = ch.tail.value.load(std::memory_order_acquire);
  std::set<int> blocked;  // a receive with this tag is still waiting: later ones must too
  for (auto it = queue.begin(); it != queue.end();) {
    if (blocked.count(it->tag)) {
      ++it;
      continue;
    }
    Descriptor* found = nullptr;
    for (uint64_t i = tail; i < head; ++i) {
      Descriptor& d = ch.ring[i % kRingEntries];
      if (d.seq.load(std::memory_order_acquire) == i + 1 &&
          !d.claimed.load(std::memory_order_relaxed) && d.tag == it->tag) {
        found = &d;
        break;
      }
    }
    if (!found) {
      blocked.insert(it->tag);
      ++it;
      continue;
    }
    Step& r = *it->step;
    if (found->bytes > r.bytes)
      throw RuntimeError("shm transport: a " + std::to_string(found->bytes) +
                         "-byte message from rank " + std::to_string(r.peer) + " does not fit a " +
                         std::to_string(r.bytes) + "-byte receive");
    found->claimed.store(1, std::memory_order_relaxed);
    if (found->kind == kEager)
      std::memcpy(r.dst, ch.eager[(found - ch.ring) % kRingEntries], found->bytes);
    else
      shm_.read(r.dst, found->source, 0, found->bytes);
    found->complete.store(1, std::memory_order_release);
    r.done = true;
    it = queue.erase(it);
  }
}

bool ShmTransport::test(Step& s) {
  if (s.done) return true;
  if (s.kind == StepKind::Send) {
    if (s.token == 0) {  // the ring was full when posted
      if (!try_send(s)) {
        shm_.check_peers(polls_);
        return false;
      }
      if (s.done) return true;
    }
    Channel& ch = shm_.channel(local(s.peer), shm_.local_rank());
    if (ch.ring[(s.token - 1) % kRingEntries].complete.load(std::memory_order_acquire)) {
      s.done = true;
      retire(ch);
      return true;
    }
  } else {
    match(local(s.peer));
    if (s.done) return true;
  }
  shm_.check_peers(polls_);
  return false;
}

}  // namespace cb::engine
