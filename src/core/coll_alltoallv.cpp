// Alltoallv and alltoallw (the same exchange; MPI_Alltoallw takes byte displacements and
// a datatype per peer, every one --dtype here, as OMB's osu_alltoallw): rank i sends counts(i, j)
// elements to rank j (a CountMatrix from --counts, packed in rank order in both buffers). `count`
// is the mean elements per peer, so the message size is the average bytes per peer; every rank
// sends count x n elements in all (algbw counts them, as alltoall), busbw = algbw x (n-1)/n. The
// receive buffer holds the largest receive total of any rank. In place is not defined (blocks
// differ in size).
#include "core/coll_spec.hpp"
#include "core/errors.hpp"
#include "core/vcounts.hpp"
#include "core/verify.hpp"

namespace cb {
namespace {

const CountMatrix& matrix(const CollArgs& a) {
  if (!a.counts) throw RuntimeError("alltoallv without a count matrix");
  return *a.counts;
}

// Element k of rank `from`'s send buffer (the block for rank `to` starts at send_offset).
double send_value(const CollArgs& a, int from, int nranks, size_t k) {
  return input_value(a.dtype, Op::Max, from, nranks, k, a.generation);
}

void fill(const CollArgs& a, int rank, int nranks, std::byte* send, std::byte* recv) {
  const CountMatrix& m = matrix(a);
  for (size_t k = 0; k < m.send_total(rank); ++k)
    store_element(send, k, a.dtype, send_value(a, rank, nranks, k));
  for (int from = 0; from < nranks; ++from) {
    const size_t src = m.send_offset(from, rank), dst = m.recv_offset(rank, from);
    for (size_t j = 0; j < m.count(from, rank); ++j)
      store_poison(recv, dst + j, a.dtype, send_value(a, from, nranks, src + j));
  }
}

size_t check(const CollArgs& a, int rank, int nranks, const std::byte* recv) {
  const CountMatrix& m = matrix(a);
  size_t wrong = 0;
  for (int from = 0; from < nranks; ++from) {
    const size_t src = m.send_offset(from, rank);
    wrong += count_wrong(recv, m.recv_offset(rank, from), m.count(from, rank), a.dtype,
                         [&](size_t j) { return send_value(a, from, nranks, src + j); });
  }
  return wrong;
}

size_t times_n(size_t count, int n) {
  return count * static_cast<size_t>(n);
}

constexpr CollSpec exchange(Coll coll) {
  return {
      .coll = coll,
      .reduces = false,
      .rooted = false,
      .send_elements = times_n,
      // Without the matrix, the bound: every element of every rank to one rank.
      .recv_elements = [](size_t count, int n) { return count * static_cast<size_t>(n) * n; },
      .algbw_elements = times_n,
      .bus_factor = [](int n) { return (n - 1.0) / n; },
      .fill = fill,
      .check = check,
      .backends = coll == Coll::Alltoallv ? kAllBackends : backend_bit(BackendKind::Mpi),
      .in_place_defined = false,
      .varying_counts = true,
      .counted_send = [](const CountMatrix& m, bool) { return m.max_send_total(); },
      .counted_recv = [](const CountMatrix& m, bool) { return m.max_recv_total(); },
      .counts_meaning = "average bytes per peer; every rank sends size x ranks",
      .counts_imbalance = [](const CountMatrix& m) { return m.imbalance(); },
  };
}

}  // namespace

const CollSpec kAlltoallvSpec = exchange(Coll::Alltoallv);
const CollSpec kAlltoallwSpec = exchange(Coll::Alltoallw);

}  // namespace cb
