#include "engine/shm/shm_transport.hpp"

#include <cstdint>
#include <cstring>
#include <set>

#include "core/errors.hpp"
#include "engine/settings.hpp"

namespace cb::engine {
namespace {

enum Wire : uint32_t { kEager = 1, kInPlace = 2, kAttach = 3, kFragment = 4 };

uint64_t padded(uint64_t bytes) {  // data in the ring starts 64-byte aligned
  return (bytes + 63) / 64 * 64;
}

}  // namespace

ShmTransport::ShmTransport(NodeShm& shm)
    : shm_(shm),
      sends_(static_cast<size_t>(shm.local_size())),
      recvs_(static_cast<size_t>(shm.local_size())),
      next_message_(static_cast<size_t>(shm.local_size()), 0),
      data_(static_cast<size_t>(shm.local_size())),
      cma_bytes_(shm.cma() ? engine_settings().shm_cma_bytes : SIZE_MAX) {}

// The sender retires descriptors in order once receivers have completed them, and with
// them the data they held (allocated in the same order).
void ShmTransport::retire(Channel& ch, Ring& data) {
  uint64_t tail = ch.tail.value.load(std::memory_order_relaxed);
  const uint64_t head = ch.head.value.load(std::memory_order_relaxed);
  while (tail < head && ch.ring[tail % kRingEntries].complete.load(std::memory_order_acquire)) {
    Descriptor& d = ch.ring[tail % kRingEntries];
    if (d.kind == kEager || d.kind == kFragment) data.tail = d.data + padded(d.bytes);
    d.seq.store(0, std::memory_order_relaxed);
    ++tail;
  }
  ch.tail.value.store(tail, std::memory_order_release);
}

bool ShmTransport::post_next(Channel& ch, Ring& data, Step& s) {
  const uint64_t head = ch.head.value.load(std::memory_order_relaxed);
  if (head - ch.tail.value.load(std::memory_order_relaxed) >= kRingEntries) return false;
  if (s.wire == 0) {  // first descriptor: choose how the message travels
    const BufferRef src = shm_.describe(s.src, s.bytes);
    s.wire = s.bytes <= kEagerBytes  ? kEager
             : src.segment >= 0      ? kInPlace
             : s.bytes >= cma_bytes_ ? kAttach
                                     : kFragment;
    s.token = next_message_[static_cast<size_t>(local(s.peer))]++;
  }
  Descriptor& d = ch.ring[head % kRingEntries];
  const size_t chunk = s.wire == kFragment ? std::min(kSlotBytes, s.bytes - s.moved) : s.bytes;
  uint64_t at = 0;  // where its bytes go in the data ring: contiguous, so not across the end
  if (s.wire == kEager || s.wire == kFragment) {
    const uint64_t size = shm_.channel_data_bytes();
    at = data.head;
    if (at % size + padded(chunk) > size) at += size - at % size;
    if (at + padded(chunk) - data.tail > size) return false;  // wait for the receiver
    data.head = at + padded(chunk);
  }
  d.tag = s.tag;
  d.kind = s.wire;
  d.bytes = chunk;
  d.message = s.token;
  d.offset = s.moved;
  d.total = s.bytes;
  d.claimed.store(0, std::memory_order_relaxed);
  d.complete.store(0, std::memory_order_relaxed);
  d.data = at;
  if ((s.wire == kEager || s.wire == kFragment) && chunk)  // an empty buffer may be null
    std::memcpy(ch.data() + at % shm_.channel_data_bytes(),
                static_cast<const std::byte*>(s.src) + s.moved, chunk);
  else
    d.source = shm_.describe(s.src, s.bytes);
  d.seq.store(head + 1, std::memory_order_release);
  ch.head.value.store(head + 1, std::memory_order_release);
  s.moved += chunk;
  if (s.wire == kInPlace || s.wire == kAttach) s.moved = s.bytes, s.count = head;  // its slot
  return true;
}

// Sends to one receiver go out in posting order, as far as its ring has room. Data in the
// slots is the sender's own copy, so eager and fragmented sends complete once posted.
void ShmTransport::push_sends(int receiver) {
  auto& queue = sends_[static_cast<size_t>(receiver)];
  if (queue.empty()) return;
  Channel& ch = shm_.channel(receiver, shm_.local_rank());
  Ring& data = data_[static_cast<size_t>(receiver)];
  retire(ch, data);
  while (!queue.empty()) {
    Step& s = *queue.front();
    while (s.moved < s.bytes || s.wire == 0)
      if (!post_next(ch, data, s)) return;
    if (s.wire == kEager || s.wire == kFragment) s.done = true;
    queue.pop_front();
  }
}

void ShmTransport::post(Step& s, int tag) {
  s.tag = tag;
  s.wire = 0;
  s.moved = 0;
  if (s.kind == StepKind::Send) {
    sends_[static_cast<size_t>(local(s.peer))].push_back(&s);
    push_sends(local(s.peer));
  } else {
    recvs_[static_cast<size_t>(local(s.peer))].push_back({&s, tag});
    match(local(s.peer));
  }
}

bool ShmTransport::consume(Channel& ch, Descriptor& d, Step& r) {
  d.claimed.store(1, std::memory_order_relaxed);
  auto* dst = static_cast<std::byte*>(r.dst) + d.offset;
  if ((d.kind == kEager || d.kind == kFragment) && d.bytes)
    std::memcpy(dst, ch.data() + d.data % shm_.channel_data_bytes(), d.bytes);
  else
    shm_.read(dst, d.source, 0, d.bytes);  // memcpy from shared memory, or CMA
  d.complete.store(1, std::memory_order_release);
  r.moved += d.bytes;
  r.done = r.moved == d.total;
  return r.done;
}

void ShmTransport::match(int sender) {
  auto& queue = recvs_[static_cast<size_t>(sender)];
  if (queue.empty()) return;
  Channel& ch = shm_.channel(shm_.local_rank(), sender);
  const uint64_t head = ch.head.value.load(std::memory_order_acquire);
  const uint64_t tail = ch.tail.value.load(std::memory_order_acquire);
  const auto find = [&](auto&& wanted) -> Descriptor* {
    for (uint64_t i = tail; i < head; ++i) {
      Descriptor& d = ch.ring[i % kRingEntries];
      if (d.seq.load(std::memory_order_acquire) == i + 1 &&
          !d.claimed.load(std::memory_order_relaxed) && wanted(d))
        return &d;
    }
    return nullptr;
  };
  // The fragments of a message a receive already started, in order, as far as they came.
  const auto continue_train = [&](Step& r) {
    while (!r.done) {
      Descriptor* d = find([&](const Descriptor& x) {
        return x.kind == kFragment && x.message + 1 == r.token && x.offset == r.moved;
      });
      if (!d) return;
      consume(ch, *d, r);
    }
  };
  std::set<int> blocked;  // a receive with this tag is still waiting: later ones must too
  for (auto it = queue.begin(); it != queue.end();) {
    Step& r = *it->step;
    if (r.token == 0 && !blocked.count(it->tag)) {
      Descriptor* d = find([&](const Descriptor& x) {
        return x.tag == it->tag && (x.kind != kFragment || x.offset == 0);
      });
      if (!d) {
        blocked.insert(it->tag);
      } else {
        if (d->total > r.bytes)
          throw RuntimeError("shm transport: a " + std::to_string(d->total) +
                             "-byte message from rank " + std::to_string(r.peer) +
                             " does not fit a " + std::to_string(r.bytes) + "-byte receive");
        r.token = d->message + 1;
        consume(ch, *d, r);
      }
    }
    if (r.token && !r.done) continue_train(r);
    it = r.done ? queue.erase(it) : std::next(it);
  }
}

bool ShmTransport::test(Step& s) {
  if (s.done) return true;
  if (s.kind == StepKind::Send) {
    push_sends(local(s.peer));
    if (s.done) return true;
    if (s.moved == s.bytes && (s.wire == kInPlace || s.wire == kAttach)) {
      Channel& ch = shm_.channel(local(s.peer), shm_.local_rank());
      if (ch.ring[s.count % kRingEntries].complete.load(std::memory_order_acquire)) {
        s.done = true;
        retire(ch, data_[static_cast<size_t>(local(s.peer))]);
        return true;
      }
    }
  } else {
    match(local(s.peer));
    if (s.done) return true;
  }
  shm_.check_peers(polls_);
  return false;
}

}  // namespace cb::engine
