// Per-peer element counts of a collective whose blocks differ in size (alltoallv): a
// matrix generated from a pattern and a seed, so that every rank builds the same one
// without communicating. Every rank sends the same number of elements in all
// (mean x nranks, the "tokens" it holds); the pattern decides how they are spread over the
// receivers, so a skewed pattern loads some receivers (MoE experts) far more than others.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace cb {

struct CountsPattern {
  enum class Kind : uint8_t { Uniform, Zipf, Random };
  Kind kind = Kind::Uniform;
  double skew = 0;    // Zipf exponent s (zipf:S)
  uint64_t seed = 1;  // zipf:S,SEED and random:SEED

  std::string str() const;  // "uniform", "zipf:1.2,7", "random:7" (parses back)
};

// "uniform", "zipf:S[,SEED]" (S >= 0, SEED default 1), "random[:SEED]". Throws UsageError
// naming --counts and the value otherwise.
CountsPattern parse_counts_pattern(std::string_view text);

// A number in [0, 1) from a seed and two indices: the same on every rank, no state.
double seeded_unit(uint64_t seed, uint64_t a, uint64_t b);

class CountMatrix {
 public:
  // `mean` elements per (sender, receiver) pair on average; row sums are mean x nranks.
  //  uniform: every pair `mean`;
  //  zipf:S: receiver popularity follows Zipf's law with exponent S (the receiver ranked k
  //    gets a share proportional to 1 / k^S); the ranking is a permutation drawn from SEED,
  //    the same for every sender (hot experts are hot for all tokens);
  //  random:SEED: each sender spreads its elements with weights uniform in [0, 1).
  // Shares are rounded by largest remainder, so every row sums exactly.
  CountMatrix(const CountsPattern& pattern, size_t mean, int nranks);
  // Explicit counts, row-major (`counts[from * nranks + to]`), e.g. tokens routed to experts;
  // mean() is the average per pair, rounded down. Throws std::invalid_argument when the
  // size is not nranks^2.
  CountMatrix(std::vector<size_t> counts, int nranks);
  // The v forms with one block per rank (allgatherv's recvcounts): every sender's row is
  // `blocks`, held once, so a call at n ranks costs O(n), not the n^2 of a full matrix
  // (the drop-in builds one per MPI_Allgatherv). Reads exactly as the full matrix would.
  static CountMatrix rows_alike(std::vector<size_t> blocks);

  // The reverse exchange: count(from, to) of the result is count(to, from) here (a MoE
  // layer's combine returns what its dispatch sent).
  CountMatrix transposed() const;

  int nranks() const { return n_; }
  size_t mean() const { return mean_; }
  const CountsPattern& pattern() const { return pattern_; }
  // Elements rank `from` sends to rank `to`.
  size_t count(int from, int to) const {
    return counts_[rows_alike_ ? static_cast<size_t>(to) : at(from, to)];
  }
  // Where that block starts (elements): in `from`'s send buffer and in `to`'s receive
  // buffer. Blocks lie packed in rank order in both.
  size_t send_offset(int from, int to) const {
    return send_off_[rows_alike_ ? static_cast<size_t>(to) : at(from, to)];
  }
  size_t recv_offset(int to, int from) const {  // rows alike: `from` blocks of to's size before
    return rows_alike_ ? static_cast<size_t>(from) * counts_[static_cast<size_t>(to)]
                       : recv_off_[at(to, from)];
  }
  size_t send_total(int rank) const { return send_tot_[static_cast<size_t>(rank)]; }
  size_t recv_total(int rank) const { return recv_tot_[static_cast<size_t>(rank)]; }
  size_t max_send_total() const { return max_send_; }
  size_t max_recv_total() const { return max_recv_; }
  // The largest receive total over the average one (1: balanced; the hot expert's load).
  double imbalance() const;

  // The v forms with one block per rank (gatherv, scatterv, allgatherv, reduce_scatterv)
  // take row 0: rank i's block is count(0, i) elements at send_offset(0, i) of mean x
  // nranks, spread over the ranks as the pattern spreads one sender's elements.
  size_t block(int rank) const { return count(0, rank); }
  size_t block_offset(int rank) const { return send_offset(0, rank); }
  size_t blocks_total() const { return send_total(0); }
  size_t max_block() const;
  // max_block() over mean(): 1 when balanced.
  double block_imbalance() const;

 private:
  void index();  // offsets and totals from counts_
  size_t at(int a, int b) const {
    return static_cast<size_t>(a) * static_cast<size_t>(n_) + static_cast<size_t>(b);
  }
  CountMatrix() = default;
  CountsPattern pattern_;
  bool rows_alike_ = false;  // counts_ and send_off_ hold one row (n), recv_off_ nothing
  int n_ = 0;
  size_t mean_ = 0;
  std::vector<size_t> counts_, send_off_, recv_off_, send_tot_, recv_tot_;
  size_t max_send_ = 0, max_recv_ = 0;
};

}  // namespace cb
