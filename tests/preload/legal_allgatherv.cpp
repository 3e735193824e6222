// MPI_Allgatherv as real programs call it (issue 39, "Take what real codes pass";
// test_preload_legal.py, legal_allgatherv), which libcb_engine_preload.so gives its engine:
// uneven counts with an empty block, MPI_IN_PLACE (each rank's block already at
// displs[rank]), sub-communicators (ranks reversed, halves; a one-rank one at 3 ranks),
// blocking and non-blocking and large-count forms, and on each rank its own layout of the
// same bytes, which MPI allows (only every block's type signature must match): the receive
// blocks packed in rank order, in reverse rank order, or with gaps between them; described
// as MPI_INT, a contiguous type of 2 ints or a strided vector type (every other int) that
// the preload packs; the send side in another of the same size. In place, the send count
// and type are not significant: 0 and MPI_DATATYPE_NULL in every other call.
//
// Lines: "own NAME HASH" for every buffer a call wrote (gaps included: left as they were)
// and "calls FUNCTION N" per function (its _c form counted with it): the test expects every
// one of those calls to be the engine's.
#include "legal_allgatherv.hpp"

#include <mpi.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "legal_common.hpp"

namespace {

using namespace legal;

// Int t of communicator rank r's block in call k.
int val(int r, int k, size_t t) {
  return r * 1000000 + (k % 97) * 10000 + static_cast<int>(t);
}

// Ints in rank j's block of call k on a communicator of n ranks: uneven, even (the 2-int
// types), one empty block in two calls of three where there are several ranks.
size_t block_ints(int j, int k, int n, int base) {
  if (n > 1 && (j + k) % 3 == 1) return 0;
  return 2 * (static_cast<size_t>(base) * static_cast<size_t>(j + 1) + static_cast<size_t>(k % 5));
}

// How a rank describes its ints: MPI_INT, a contiguous type of 2 ints, or a vector type of 2
// ints at every other int (extent 4 ints).
enum Kind { kInts, kContiguous, kStrided };

struct Type {
  MPI_Datatype type = MPI_INT;
  size_t per = 1, extent = 1;    // ints per element and its extent in ints
  std::vector<size_t> at = {0};  // the element's ints within its extent
  explicit Type(Kind k) {
    if (k == kContiguous) {
      MPI_Type_contiguous(2, MPI_INT, &type);
      per = extent = 2;
      at = {0, 1};
    } else if (k == kStrided) {
      MPI_Datatype vec;
      MPI_Type_vector(2, 1, 2, MPI_INT, &vec);
      MPI_Type_create_resized(vec, 0, static_cast<MPI_Aint>(4 * sizeof(int)), &type);
      MPI_Type_free(&vec);
      per = 2;
      extent = 4;
      at = {0, 2};
    }
    if (type != MPI_INT) MPI_Type_commit(&type);
  }
  ~Type() {
    if (type != MPI_INT) MPI_Type_free(&type);
  }
  Type(const Type&) = delete;
  Type& operator=(const Type&) = delete;
  // Where int t of a block that starts at element `first` lies in the buffer (ints).
  size_t place(size_t first, size_t t) const { return (first + t / per) * extent + at[t % per]; }
};

// The receive blocks' layout on this rank: packed in rank order, in reverse rank order, or
// rank order with a gap of one element after every block.
enum Layout { kPacked, kReversed, kGaps };

struct Call {
  MPI_Comm comm;
  std::string name;  // the communicator's
  int base, shift, layout, k;
  bool in_place, nonblocking;
  std::string at() const {
    return " " + name + " base=" + std::to_string(base) + " shift=" + std::to_string(shift) +
           " layout=" + std::to_string(layout) + (in_place ? " in_place" : "") +
           (nonblocking ? " nonblocking" : "");
  }
};

// Counts and displacements in `t`'s elements for `layout`; returns the elements spanned.
template <typename C, typename D>
size_t lay_out(const std::vector<size_t>& ints, const Type& t, Layout layout,
               std::vector<C>& counts, std::vector<D>& displs) {
  const size_t n = ints.size();
  counts.assign(n, 0);
  displs.assign(n, 0);
  size_t next = 0;
  for (size_t i = 0; i < n; ++i) {
    const size_t j = layout == kReversed ? n - 1 - i : i;
    counts[j] = static_cast<C>(ints[j] / t.per);
    displs[j] = static_cast<D>(next);
    next += ints[j] / t.per + (layout == kGaps ? 1 : 0);
  }
  return next;
}

template <typename C, typename D>
void allgatherv(const Call& c) {
  const int n = size_of(c.comm), me = rank_of(c.comm);
  std::vector<size_t> ints(static_cast<size_t>(n));
  for (int j = 0; j < n; ++j) ints[static_cast<size_t>(j)] = block_ints(j, c.k, n, c.base);
  // The send type another description of the same size as the receive type's (MPI_INT:
  // itself; contiguous and strided swap): Open MPI 5.0.11's allgatherv decision multiplies
  // recvcounts by the send type's size, so ranks whose send and receive types differ in size
  // choose different algorithms there and hang without the preload.
  const Kind rk = Kind((g_rank + c.shift) % 3);
  const Type rt(rk), st(rk == kInts ? kInts : rk == kContiguous ? kStrided : kContiguous);
  std::vector<C> counts;
  std::vector<D> displs;
  const size_t elements = lay_out(ints, rt, Layout((g_rank + c.layout) % 3), counts, displs);
  std::vector<int> all(elements * rt.extent + 1, -2);
  const size_t mine = ints[static_cast<size_t>(me)];
  std::vector<int> send(mine / st.per * st.extent + 1, -1);
  for (size_t t = 0; t < mine; ++t) {
    const int v = val(me, c.k, t);
    if (c.in_place)
      all[rt.place(static_cast<size_t>(displs[static_cast<size_t>(me)]), t)] = v;
    else
      send[st.place(0, t)] = v;
  }
  const bool real = !c.in_place || c.k % 2 == 0;  // insignificant in place: real or null
  const void* sb = c.in_place ? MPI_IN_PLACE : send.data();
  const C sc = real ? static_cast<C>(mine / st.per) : 0;
  const MPI_Datatype sty = real ? st.type : MPI_DATATYPE_NULL;
  constexpr bool large = sizeof(C) != sizeof(int) || sizeof(D) != sizeof(int);
  if (c.nonblocking) {
    MPI_Request r;
    if constexpr (large) {
#if MPI_VERSION >= 4
      MPI_Iallgatherv_c(sb, sc, sty, all.data(), counts.data(), displs.data(), rt.type, c.comm, &r);
#endif
    } else {
      MPI_Iallgatherv(sb, sc, sty, all.data(), counts.data(), displs.data(), rt.type, c.comm, &r);
    }
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    ++g_calls["MPI_Iallgatherv"];
  } else {
    if constexpr (large) {
#if MPI_VERSION >= 4
      MPI_Allgatherv_c(sb, sc, sty, all.data(), counts.data(), displs.data(), rt.type, c.comm);
#endif
    } else {
      MPI_Allgatherv(sb, sc, sty, all.data(), counts.data(), displs.data(), rt.type, c.comm);
    }
    ++g_calls["MPI_Allgatherv"];
  }
  const std::string what = std::string(large ? "allgatherv_c" : "allgatherv") + c.at();
  std::vector<int> got, want;
  for (int j = 0; j < n; ++j)
    for (size_t t = 0; t < ints[static_cast<size_t>(j)]; ++t) {
      got.push_back(all[rt.place(static_cast<size_t>(displs[static_cast<size_t>(j)]), t)]);
      want.push_back(val(j, c.k, t));
    }
  expect_eq<int>(what, got, [&](size_t i) { return want[i]; });
  own(what, all);  // the gaps too: left as they were
  if (!c.in_place) own(what + " (input)", send);
}

void allgatherv_cases() {
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm rev, half;
  MPI_Comm_split(MPI_COMM_WORLD, 0, size - g_rank, &rev);
  MPI_Comm_split(MPI_COMM_WORLD, g_rank < (size + 1) / 2, g_rank, &half);
  const std::pair<MPI_Comm, const char*> comms[] = {
      {MPI_COMM_WORLD, "world"}, {rev, "reversed"}, {half, "half"}};
  int k = 0;
  for (const auto& [comm, name] : comms)
    for (int base : {1, 37, 1500})
      for (int shift = 0; shift < 3; ++shift)
        for (int layout = 0; layout < 3; ++layout)
          for (int in_place = 0; in_place < 2; ++in_place)
            for (int nb = 0; nb < 2; ++nb)
              allgatherv<int, int>(
                  Call{comm, name, base, shift, layout, k++, in_place != 0, nb != 0});
#if MPI_VERSION >= 4
  // The large-count forms on MPI_COMM_WORLD: every layout and type, in place and not.
  for (int shift = 0; shift < 3; ++shift)
    for (int layout = 0; layout < 3; ++layout)
      for (int in_place = 0; in_place < 2; ++in_place)
        for (int nb = 0; nb < 2; ++nb)
          allgatherv<MPI_Count, MPI_Aint>(
              Call{MPI_COMM_WORLD, "world", 37, shift, layout, k++, in_place != 0, nb != 0});
#endif
  report_calls();
  MPI_Comm_free(&rev);
  MPI_Comm_free(&half);
}

}  // namespace

bool run_allgatherv_case(const std::string& name) {
  if (name != "allgatherv") return false;
  allgatherv_cases();
  return true;
}
