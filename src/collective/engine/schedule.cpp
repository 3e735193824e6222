#include "collective/engine/schedule.hpp"

#include <algorithm>

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
  while (block_ < blocks_.size() && used_ + bytes > blocks_[block_].second) {
    ++block_;
    used_ = 0;
  }
  if (block_ == blocks_.size()) {
    const size_t size = std::max<size_t>(bytes, 1 << 16);
    // operator new[] for std::byte is aligned to __STDCPP_DEFAULT_NEW_ALIGNMENT__ (16);
    // over-allocate so that every slice can start on a 64-byte boundary.
    blocks_.emplace_back(new std::byte[size + kAlign], size);
    used_ = 0;
  }
  auto* base = blocks_[block_].first.get();
  const auto misalign = reinterpret_cast<uintptr_t>(base) % kAlign;
  std::byte* p = base + (misalign ? kAlign - misalign : 0) + used_;
  used_ += bytes;
  return p;
}

void Schedule::reset() {
  group_ = nullptr;
  steps_.clear();
  polls_.clear();
  round_ends_.clear();
  block_ = 0;
  used_ = 0;
}

}  // namespace cb::engine
