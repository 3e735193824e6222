#include "engine/schedule.hpp"

#include <algorithm>
#include <cstdlib>

#include "core/errors.hpp"
#include "gpu/device.hpp"

namespace cb::engine {

void Schedule::add(Step s) {
  steps_.push_back(s);
}

void Schedule::send(const void* src, size_t bytes, int peer) {
  if (bytes)
    add({.kind = StepKind::Send,
         .peer = group_ ? group_->global(peer) : peer,
         .src = src,
         .bytes = bytes});
}

void Schedule::recv(void* dst, size_t bytes, int peer) {
  if (bytes)
    add({.kind = StepKind::Recv,
         .peer = group_ ? group_->global(peer) : peer,
         .dst = dst,
         .bytes = bytes});
}

void Schedule::reduce(void* inout, const void* in, size_t count, Dtype dt, Op op) {
  if (count)
    add({.kind = StepKind::Reduce, .dst = inout, .src = in, .count = count, .dtype = dt, .op = op});
}

void Schedule::copy(void* dst, const void* src, size_t bytes) {
  if (bytes && dst != src) add({.kind = StepKind::Copy, .dst = dst, .src = src, .bytes = bytes});
}

void Schedule::poll(std::unique_ptr<Pollable> work) {
  add({.kind = StepKind::Poll, .poll = work.get()});
  polls_.push_back(std::move(work));
}

void Schedule::end_round() {
  const size_t start = round_ends_.empty() ? 0 : round_ends_.back();
  if (steps_.size() > start) round_ends_.push_back(steps_.size());
}

std::span<Step> Schedule::round(size_t i) {
  const size_t start = i == 0 ? 0 : round_ends_[i - 1];
  return {steps_.data() + start, round_ends_[i] - start};
}

std::byte* Schedule::scratch(size_t bytes) {
  constexpr size_t kAlign = 64;
  bytes = (bytes + kAlign - 1) / kAlign * kAlign;
  Arena& a = arenas_[static_cast<int>(mem_)];
  while (a.block < a.blocks.size() && a.used + bytes > a.blocks[a.block].second) {
    ++a.block;
    a.used = 0;
  }
  if (a.block == a.blocks.size()) {
    const size_t size = std::max<size_t>(bytes, 1 << 16);
    // cudaMalloc aligns to 256 B; aligned_alloc to 64 B as asked.
    void* p = mem_ == Mem::Cuda ? gpu::device_alloc(size) : std::aligned_alloc(kAlign, size);
    if (!p)
      throw RuntimeError("cannot allocate " + std::to_string(size) + " bytes of scratch memory");
    a.blocks.emplace_back(static_cast<std::byte*>(p), size);
    a.used = 0;
  }
  std::byte* p = a.blocks[a.block].first + a.used;
  a.used += bytes;
  return p;
}

Schedule::~Schedule() {
  for (auto& [p, size] : arenas_[static_cast<int>(Mem::Host)].blocks) std::free(p);
  for (auto& [p, size] : arenas_[static_cast<int>(Mem::Cuda)].blocks) gpu::device_free(p);
}

bool Schedule::rearm(uint64_t op) {
  for (Step& s : steps_) {
    if (s.kind == StepKind::Poll && !s.poll->renumber(op_, op)) return false;
    s.started = s.done = false;
    s.tag = 0;
    s.token = 0;
    s.wire = 0;
    s.moved = 0;
  }
  op_ = op;
  return true;
}

void Schedule::reset() {
  group_ = nullptr;
  exclusive_ = false;
  steps_.clear();
  polls_.clear();
  round_ends_.clear();
  for (Arena& a : arenas_) a.block = a.used = 0;
}

}  // namespace cb::engine
