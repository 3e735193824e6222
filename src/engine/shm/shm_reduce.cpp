// Allreduce (and reduce to a leader) among the ranks of a node through shared memory.
// Per chunk: (1) a rank whose input is private copies the parts of the chunk that peers
// reduce into its staging slot (Flat: all of it); (2) it reduces its range of the chunk
// reading every rank's input directly (its own where it lies); (3) it copies
// the other ranks' reduced ranges into its output. Counters in each rank's operation slot
// (staged, reduced, gathered) say how far it got; slots are double-buffered, and a slot is
// reused only once every peer is done with its previous contents.
#include <algorithm>
#include <cstring>
#include <vector>

#include "engine/partition/blocks.hpp"
#include "engine/reduce_host.hpp"
#include "engine/settings.hpp"
#include "engine/shm/peer_sync.hpp"
#include "engine/shm/rank_order.hpp"
#include "engine/shm/shm_collectives.hpp"
#include "engine/shm/shm_reduce_direct.hpp"

namespace cb::engine {

size_t shm_chunk_bytes() {
  return engine_settings().shm_chunk_bytes;
}

namespace {

class ShmReduce final : public Pollable {
 public:
  ShmReduce(NodeShm& shm, uint64_t op, const void* in, void* out, size_t count, Dtype dt, Op rop,
            ShmReduceMode mode, int root, bool direct)
      : shm_(shm),
        sync_(shm, op),
        in_(in),
        out_(static_cast<std::byte*>(out)),
        count_(count),
        dt_(dt),
        op_(rop),
        mode_(mode),
        root_(root),
        direct_wanted_(direct && mode != ShmReduceMode::Flat),
        w_(dtype_size(dt)) {
    // Four slots per rank (2 inputs, 2 results) must fit in its staging space.
    chunk_ = std::max<size_t>(1, std::min(shm_chunk_bytes(), shm.staging_bytes() / 4) / w_);
    chunks_ = (count_ + chunk_ - 1) / chunk_;
  }

  bool advance() override {
    for (;;) {
      switch (phase_) {
        case Phase::Publish: {
          BufferRef in = shm_.describe(in_, count_ * w_);
          // Flat in place overwrites the whole chunk that peers read as input: stage it.
          if (mode_ == ShmReduceMode::Flat && in_ == out_) in.segment = -1;
          sync_.publish_buffers(in, shm_.describe(out_, count_ * w_));
          phase_ = Phase::Peers;
          break;
        }
        case Phase::Peers:
          if (!sync_.peers_published()) return false;
          if (direct_wanted_) {
            direct_ = reduce_direct(shm_, sync_, in_, out_, count_, dt_, op_, mode_, root_);
            phase_ = Phase::Direct;
            break;
          }
          if (!chunks_) sync_.publish(&OpSlot::gathered, 0);  // nothing to do, say so
          phase_ = chunks_ ? Phase::Stage : Phase::Finish;
          break;
        case Phase::Stage:
          if (!stage()) return false;
          phase_ = Phase::Reduce;
          break;
        case Phase::Reduce:
          if (!reduce()) return false;
          phase_ = Phase::Gather;
          break;
        case Phase::Gather:
          if (!gather()) return false;
          phase_ = ++c_ < chunks_ ? Phase::Stage : Phase::Finish;
          break;
        case Phase::Finish:  // nobody reads my buffers or slots any more
          if (!sync_.all_reached(&OpSlot::gathered, chunks_)) return false;
          phase_ = Phase::Done;
          return true;
        case Phase::Direct:  // private buffers read with cross-memory attach instead
          if (!direct_->advance()) return false;
          phase_ = Phase::Done;
          return true;
        case Phase::Done:
          return true;
      }
    }
  }

 private:
  enum class Phase { Publish, Peers, Stage, Reduce, Gather, Finish, Direct, Done };

  size_t chunk_len(size_t c) const { return std::min(chunk_, count_ - c * chunk_); }
  bool shared_in(int r) { return sync_.slot(r).in.segment >= 0; }
  bool shared_out(int r) { return sync_.slot(r).out.segment >= 0; }
  std::byte* slot_area(int r, int which, size_t c) {  // which: 0 input, 1 result
    return shm_.staging(r, sync_.op()) + (static_cast<size_t>(which) * 2 + c % 2) * chunk_ * w_;
  }
  // Element `off` of chunk c of rank r's input / reduced result, as this rank sees it.
  const std::byte* input(int r, size_t c, size_t off) {
    if (shared_in(r)) return shm_.map(sync_.slot(r).in) + (c * chunk_ + off) * w_;
    if (r == sync_.me()) return static_cast<const std::byte*>(in_) + (c * chunk_ + off) * w_;
    return slot_area(r, 0, c) + off * w_;
  }
  std::byte* result(int r, size_t c, size_t off) {
    if (shared_out(r)) return shm_.map(sync_.slot(r).out) + (c * chunk_ + off) * w_;
    return slot_area(r, 1, c) + off * w_;
  }
  Block my_range(size_t c) const {
    if (mode_ == ShmReduceMode::Flat) return {0, chunk_len(c)};
    return block_of(chunk_len(c), static_cast<size_t>(sync_.size()),
                    static_cast<size_t>(sync_.me()));
  }

  bool stage() {
    const int me = sync_.me();
    if (!shared_in(me)) {
      // My staged chunk c-2 shares this slot: every peer must have reduced past it.
      if (c_ >= 2 && !sync_.all_reached(&OpSlot::reduced, c_ - 1)) return false;
      // Peers read every range but mine (Scatter, ToLeader); I read mine where it lies.
      // Flat: every rank reads the whole chunk.
      const Block own = mode_ == ShmReduceMode::Flat ? Block{chunk_len(c_), 0} : my_range(c_);
      stage_range(0, own.offset);
      stage_range(own.offset + own.length, chunk_len(c_) - own.offset - own.length);
    }
    sync_.publish(&OpSlot::staged, c_ + 1);
    return true;
  }

  void stage_range(size_t off, size_t len) {  // elements of the current chunk
    if (len)
      std::memcpy(slot_area(sync_.me(), 0, c_) + off * w_,
                  static_cast<const std::byte*>(in_) + (c_ * chunk_ + off) * w_, len * w_);
  }

  bool reduce() {
    const int me = sync_.me(), n = sync_.size();
    if (!sync_.all_reached(&OpSlot::staged, c_ + 1)) return false;
    const bool to_slot = mode_ != ShmReduceMode::Flat && !shared_out(me);
    // My result slot held chunk c-2: every rank that gathers must be past it.
    if (to_slot && c_ >= 2 && !sync_.all_reached(&OpSlot::gathered, c_ - 1)) return false;
    const Block b = my_range(c_);
    std::byte* dst = mode_ == ShmReduceMode::Flat || !to_slot
                         ? out_ + (c_ * chunk_ + b.offset) * w_
                         : slot_area(me, 1, c_) + b.offset * w_;
    if (b.length)  // in rank order: every rank gets the same bits (rank_order.hpp)
      reduce_in_rank_order(dst, input(me, c_, b.offset), me, n, b.length, dt_, op_, save_,
                           [&](int r, int) { return input(r, c_, b.offset); });
    if (b.length && to_slot && mode_ == ShmReduceMode::Scatter)  // my range of my output too
      std::memcpy(out_ + (c_ * chunk_ + b.offset) * w_, dst, b.length * w_);
    sync_.publish(&OpSlot::reduced, c_ + 1);
    return true;
  }

  bool gather() {
    const int me = sync_.me(), n = sync_.size();
    const bool gathers =
        mode_ == ShmReduceMode::Scatter || (mode_ == ShmReduceMode::ToLeader && me == root_);
    if (gathers) {
      if (!sync_.all_reached(&OpSlot::reduced, c_ + 1)) return false;
      for (int k = 1; k < n; ++k) {
        const int r = (me + k) % n;  // start at different peers: spread the reads
        const Block b = block_of(chunk_len(c_), static_cast<size_t>(n), static_cast<size_t>(r));
        if (b.length)
          std::memcpy(out_ + (c_ * chunk_ + b.offset) * w_, result(r, c_, b.offset), b.length * w_);
      }
      if (mode_ == ShmReduceMode::ToLeader && !shared_out(me)) {
        const Block b = my_range(c_);
        if (b.length)
          std::memcpy(out_ + (c_ * chunk_ + b.offset) * w_, result(me, c_, b.offset),
                      b.length * w_);
      }
    }
    sync_.publish(&OpSlot::gathered, c_ + 1);
    return true;
  }

  NodeShm& shm_;
  PeerSync sync_;
  const void* in_;
  std::byte* out_;
  size_t count_;
  Dtype dt_;
  Op op_;
  ShmReduceMode mode_;
  int root_;
  bool direct_wanted_;
  size_t w_, chunk_ = 1, chunks_ = 0, c_ = 0;
  Phase phase_ = Phase::Publish;
  std::unique_ptr<Pollable> direct_;
  std::vector<std::byte> save_;  // my input, in place, while the rank-order sum overwrites it
};

}  // namespace

std::unique_ptr<Pollable> shm_reduce(NodeShm& shm, uint64_t op, const void* in, void* out,
                                     size_t count, Dtype dt, Op rop, ShmReduceMode mode, int root,
                                     bool direct) {
  return std::make_unique<ShmReduce>(shm, op, in, out, count, dt, rop, mode, root, direct);
}

}  // namespace cb::engine
