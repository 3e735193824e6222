// The collectives of one block per rank: gather, scatter, and the v forms gatherv,
// scatterv, allgatherv and reduce_scatterv. Each block's size and place come from
// Blocks: `count` elements at block i x count, or with --counts (the v forms) row 0 of the
// count matrix (CountMatrix::block), so a fixed form and its v form share one fill and one
// check. The message size is a rank's block (the mean with --counts), as OMB's osu_gather
// and osu_scatter; algbw counts all n blocks (as nccl-tests' gather_perf and scatter_perf);
// busbw = algbw x (n-1)/n: the root's own block crosses no link.
//
// In place (MPI_IN_PLACE), block `rank` of recv is where the rank's data is: gather(v) and
// allgatherv read the input there, scatter(v) leaves the result there (the root's n blocks
// are its input in recv), reduce_scatterv holds all n blocks of input in recv and leaves
// the result at its start, as MPI_Reduce_scatter does.
#include "core/coll_spec.hpp"
#include "core/vcounts.hpp"
#include "core/verify.hpp"
#include "core/verify_values.hpp"

namespace cb {
namespace {

class Blocks {
 public:
  Blocks(const CollArgs& a, int nranks) : a_(a), n_(nranks) {}
  size_t size(int i) const { return rank_block_elements(a_, i); }
  size_t offset(int i) const { return rank_block_offset(a_, i); }
  size_t total() const { return a_.counts ? a_.counts->blocks_total() : a_.count * n_; }
  int ranks() const { return n_; }

 private:
  const CollArgs& a_;
  int n_;
};

// Gather(v), allgatherv: element j of rank `from`'s block.
double gathered_value(const CollArgs& a, int from, int nranks, size_t j) {
  return values::allgather_value(a.dtype, from, nranks, j, a.generation);
}

// Scatter(v): element k of the root's n blocks (each block's elements differ by root and
// by destination).
double scattered_value(const CollArgs& a, int nranks, size_t k) {
  return values::bcast_value(a.dtype, a.root, nranks, k, a.generation);
}

// Every block of recv poisoned against its expected contents; block `mine` (if >= 0)
// holds the rank's own input instead.
void gathered_image(const CollArgs& a, const Blocks& b, int mine, std::byte* recv) {
  for (int from = 0; from < b.ranks(); ++from)
    for (size_t j = 0; j < b.size(from); ++j) {
      const double v = gathered_value(a, from, b.ranks(), j);
      if (from == mine)
        store_element(recv, b.offset(from) + j, a.dtype, v);
      else
        store_poison(recv, b.offset(from) + j, a.dtype, v);
    }
}

size_t gathered_wrong(const CollArgs& a, const Blocks& b, const std::byte* recv) {
  size_t wrong = 0;
  for (int from = 0; from < b.ranks(); ++from)
    wrong += count_wrong(recv, b.offset(from), b.size(from), a.dtype,
                         [&](size_t j) { return gathered_value(a, from, b.ranks(), j); });
  return wrong;
}

void fill_gather(const CollArgs& a, int rank, int nranks, std::byte* send, std::byte* recv) {
  const Blocks b(a, nranks);
  gathered_image(a, b, a.in_place ? rank : -1, recv);
  if (!a.in_place)
    for (size_t j = 0; j < b.size(rank); ++j)
      store_element(send, j, a.dtype, gathered_value(a, rank, nranks, j));
}

size_t check_gather(const CollArgs& a, int rank, int nranks, const std::byte* recv) {
  return rank == a.root ? gathered_wrong(a, Blocks(a, nranks), recv) : 0;
}

size_t check_allgatherv(const CollArgs& a, int, int nranks, const std::byte* recv) {
  return gathered_wrong(a, Blocks(a, nranks), recv);
}

void fill_scatter(const CollArgs& a, int rank, int nranks, std::byte* send, std::byte* recv) {
  const Blocks b(a, nranks);
  const bool root = rank == a.root;
  // The root's n blocks: in send, or in place in recv (its own block is then its result).
  if (root)
    for (size_t k = 0; k < b.total(); ++k)
      store_element(a.in_place ? recv : send, k, a.dtype, scattered_value(a, nranks, k));
  if (root && a.in_place) return;
  const size_t at = a.in_place ? b.offset(rank) : 0;
  for (size_t j = 0; j < b.size(rank); ++j)
    store_poison(recv, at + j, a.dtype, scattered_value(a, nranks, b.offset(rank) + j));
}

size_t check_scatter(const CollArgs& a, int rank, int nranks, const std::byte* recv) {
  const Blocks b(a, nranks);
  return count_wrong(recv, a.in_place ? b.offset(rank) : 0, b.size(rank), a.dtype,
                     [&](size_t j) { return scattered_value(a, nranks, b.offset(rank) + j); });
}

// Reduce_scatterv: element k < total of every rank's input is input_value(rank, k); rank
// r's result is elements offset(r) ... of their reduction.
double reduced_value(const CollArgs& a, int nranks, size_t k) {
  return values::allreduce_expected(a.dtype, a.op, nranks, k, a.generation);
}

void fill_reduce_scatterv(const CollArgs& a, int rank, int nranks, std::byte* send,
                          std::byte* recv) {
  const Blocks b(a, nranks);
  if (!a.in_place)
    for (size_t j = 0; j < b.size(rank); ++j)
      store_poison(recv, j, a.dtype, reduced_value(a, nranks, b.offset(rank) + j));
  for (size_t k = 0; k < b.total(); ++k)
    store_element(a.in_place ? recv : send, k, a.dtype,
                  input_value(a.dtype, a.op, rank, nranks, k, a.generation));
}

size_t check_reduce_scatterv(const CollArgs& a, int rank, int nranks, const std::byte* recv) {
  const Blocks b(a, nranks);
  return count_wrong(recv, 0, b.size(rank), a.dtype,
                     [&](size_t j) { return reduced_value(a, nranks, b.offset(rank) + j); });
}

size_t one(size_t count, int) {
  return count;
}
size_t times_n(size_t count, int n) {
  return count * static_cast<size_t>(n);
}
double all_but_own(int n) {
  return (n - 1.0) / n;
}
size_t all_blocks(const CountMatrix& m, bool) {
  return m.blocks_total();
}
// In place the input (gatherv, allgatherv) or the result (scatterv, reduce_scatterv) is in
// recv: no send buffer, or recv holds all blocks.
size_t largest_out_of_place(const CountMatrix& m, bool in_place) {
  return in_place ? 0 : m.max_block();
}
size_t all_out_of_place(const CountMatrix& m, bool in_place) {
  return in_place ? 0 : m.blocks_total();
}
size_t largest_or_all_in_place(const CountMatrix& m, bool in_place) {
  return in_place ? m.blocks_total() : m.max_block();
}

constexpr std::string_view kPerRank = "average bytes per rank's block; all blocks = size x ranks";
double largest_block(const CountMatrix& m) {
  return m.block_imbalance();
}

}  // namespace

size_t rank_block_elements(const CollArgs& a, int rank) {
  return a.counts ? a.counts->block(rank) : a.count;
}

size_t rank_block_offset(const CollArgs& a, int rank) {
  return a.counts ? a.counts->block_offset(rank) : static_cast<size_t>(rank) * a.count;
}

namespace {

// Gather, gatherv and allgatherv: every rank's block to the root (to every rank).
constexpr CollSpec gathering(Coll coll, bool rooted, bool varying) {
  return {
      .coll = coll,
      .reduces = false,
      .rooted = rooted,
      .send_elements = one,
      .recv_elements = times_n,
      .algbw_elements = times_n,
      .bus_factor = all_but_own,
      .fill = fill_gather,
      .check = rooted ? check_gather : check_allgatherv,
      .backends = kAllBackends,
      .varying_counts = varying,
      .counted_send = varying ? largest_out_of_place : nullptr,
      .counted_recv = varying ? all_blocks : nullptr,
      .counts_meaning = varying ? kPerRank : std::string_view(),
      .counts_imbalance = varying ? largest_block : nullptr,
      .same_on_all_ranks = !rooted,
  };
}

// Scatter and scatterv: the root's n blocks, one to each rank.
constexpr CollSpec scattering(Coll coll, bool varying) {
  return {
      .coll = coll,
      .reduces = false,
      .rooted = true,
      .send_elements = times_n,
      .recv_elements = one,
      .algbw_elements = times_n,
      .bus_factor = all_but_own,
      .fill = fill_scatter,
      .check = check_scatter,
      .backends = kAllBackends,
      .in_place_recv_elements = times_n,
      .varying_counts = varying,
      .counted_send = varying ? all_out_of_place : nullptr,
      .counted_recv = varying ? largest_or_all_in_place : nullptr,
      .counts_meaning = varying ? kPerRank : std::string_view(),
      .counts_imbalance = varying ? largest_block : nullptr,
  };
}

}  // namespace

const CollSpec kGatherSpec = gathering(Coll::Gather, true, false);
const CollSpec kGathervSpec = gathering(Coll::Gatherv, true, true);
const CollSpec kAllgathervSpec = gathering(Coll::Allgatherv, false, true);
const CollSpec kScatterSpec = scattering(Coll::Scatter, false);
const CollSpec kScattervSpec = scattering(Coll::Scatterv, true);

const CollSpec kReduceScatterVSpec{
    .coll = Coll::ReduceScatterV,
    .reduces = true,
    .rooted = false,
    .send_elements = times_n,
    .recv_elements = one,
    .algbw_elements = times_n,
    .bus_factor = all_but_own,
    .fill = fill_reduce_scatterv,
    .check = check_reduce_scatterv,
    .backends = backend_bit(BackendKind::Mpi),
    .in_place_recv_elements = times_n,
    .varying_counts = true,
    .counted_send = all_out_of_place,
    .counted_recv = largest_or_all_in_place,
    .counts_meaning = kPerRank,
    .counts_imbalance = largest_block,
};

}  // namespace cb
