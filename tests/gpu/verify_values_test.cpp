// The device validation formulas (core/verify_values.hpp), compiled for the host, against
// the host code that still has its own form: store_element(), store_poison(),
// load_element() and the CollSpec fill/check functions. (input_value, apply_op and
// pattern_byte are one function for both, so there is nothing to compare.)
// Runs without a GPU: this is what keeps device-side -c honest on machines without one.
#include "core/verify_values.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "core/coll_spec.hpp"
#include "core/verify.hpp"

namespace cb::gpu {
namespace {

using Bytes = std::vector<std::byte>;

std::string label(Dtype dt, Op op, int rank, int nranks) {
  return std::string(to_string(dt)) + " " + std::string(to_string(op)) + " rank " +
         std::to_string(rank) + "/" + std::to_string(nranks);
}

TEST(VerifyValues, EncodingEqualsStoreAndLoadElement) {
  for (Dtype dt : kAllDtypes) {
    const size_t width = dtype_size(dt);
    ASSERT_EQ(values::element_size(dt), width);
    for (Op op : kAllOps)
      for (int nranks : {1, 2, 5, 64})
        for (uint64_t i = 0; i < 500; ++i) {
          const double v = i % 2 ? input_value(dt, op, 0, nranks, i)
                                 : values::allreduce_expected(dt, op, nranks, i);
          Bytes stored(width), poisoned(width);
          store_element(stored.data(), 0, dt, v);
          store_poison(poisoned.data(), 0, dt, v);
          const uint64_t bits = values::encode(dt, v), bad = values::poison(dt, v);
          ASSERT_EQ(std::memcmp(stored.data(), &bits, width), 0) << to_string(dt) << " " << v;
          ASSERT_EQ(std::memcmp(poisoned.data(), &bad, width), 0) << to_string(dt) << " " << v;
          ASSERT_EQ(values::decode(dt, bits), load_element(stored.data(), 0, dt));
          ASSERT_NE(values::decode(dt, bad), v) << "poison must differ: " << to_string(dt);
        }
  }
}

const CollSpec& spec_of(Coll c) {
  return *find_coll_spec(c);
}

// The per-element logic the fill kernel runs, applied on the host.
void fill_like_kernel(const CollData& d, Bytes& send, Bytes& recv) {
  const size_t width = dtype_size(d.dtype);
  Bytes& input = values::input_is_recv(d) ? recv : send;
  for (size_t k = 0; k < values::elements(d); ++k) {
    if (!values::input_is_recv(d)) {
      const uint64_t bad = values::poison(d.dtype, values::expected_at(d, k));
      std::memcpy(recv.data() + k * width, &bad, width);
    }
  }
  for (size_t k = 0; k < values::input_elements(d); ++k) {
    const uint64_t bits = values::input_bits_at(d, k);
    std::memcpy(input.data() + k * width, &bits, width);
  }
}

size_t check_like_kernel(const CollData& d, const Bytes& recv) {
  const size_t width = dtype_size(d.dtype);
  size_t wrong = 0;
  for (size_t k = 0; k < values::elements(d); ++k) {
    uint64_t bits = 0;
    std::memcpy(&bits, recv.data() + k * width, width);
    wrong += values::wrong_at(d, k, bits);
  }
  return wrong;
}

struct Layout {
  Coll coll;
  bool in_place;
};

// fill_collective() / check_collective() lay out and judge buffers exactly as the
// benchmarks' host CollSpec fill() / check() do.
TEST(VerifyValues, CollectiveFillAndCheckEqualCollSpec) {
  const Layout layouts[] = {
      {Coll::Allreduce, false}, {Coll::Allreduce, true},      {Coll::Bcast, false},
      {Coll::Alltoall, false},  {Coll::Alltoall, true},       {Coll::Allgather, false},
      {Coll::Allgather, true},  {Coll::ReduceScatter, false}, {Coll::ReduceScatter, true}};
  for (const Layout& l : layouts)
    for (Dtype dt : kAllDtypes)
      for (Op op : kAllOps) {
        if (!spec_of(l.coll).reduces && op != Op::Sum) continue;  // op matters to reductions
        for (int nranks : {1, 3, 4})
          for (int rank = 0; rank < nranks; ++rank)
            for (size_t count : {size_t{0}, size_t{1}, size_t{17}, size_t{300}}) {
              const CollSpec& spec = spec_of(l.coll);
              CollArgs a;
              a.coll = l.coll;
              a.count = count;
              a.dtype = dt;
              a.op = op;
              a.root = nranks - 1;
              a.in_place = l.in_place;
              const CollData d{l.coll, dt, op, count, a.root, l.in_place, rank, nranks};
              const size_t width = dtype_size(dt);
              const size_t send_bytes = spec.send_elements_of(a, nranks) * width;
              const size_t recv_bytes = spec.recv_elements_of(a, nranks) * width;
              ASSERT_EQ(std::max(values::elements(d),
                                 values::input_is_recv(d) ? values::input_elements(d) : 0) *
                            width,
                        recv_bytes);
              ASSERT_EQ(values::input_is_recv(d) ? 0 : values::input_elements(d) * width,
                        send_bytes);
              Bytes want_send(send_bytes), want_recv(recv_bytes);
              Bytes got_send(send_bytes), got_recv(recv_bytes);
              spec.fill(a, rank, nranks, want_send.data(), want_recv.data());
              fill_like_kernel(d, got_send, got_recv);
              const std::string what =
                  std::string(to_string(l.coll)) + (l.in_place ? " in place " : " ") +
                  label(dt, op, rank, nranks) + " count " + std::to_string(count);
              if (!values::input_is_recv(d)) {
                ASSERT_EQ(got_send, want_send) << what;
              }
              ASSERT_EQ(got_recv, want_recv) << what;

              // The poisoned image is all wrong (unless the input is the result, as on a
              // bcast root); a correct result is all right; a few corrupted elements count.
              ASSERT_EQ(check_like_kernel(d, got_recv),
                        spec.check(a, rank, nranks, got_recv.data()))
                  << what;
              Bytes result(recv_bytes);
              for (size_t k = 0; k < values::elements(d); ++k)
                store_element(result.data(), k, dt, values::expected_at(d, k));
              ASSERT_EQ(spec.check(a, rank, nranks, result.data()), 0u) << what;
              ASSERT_EQ(check_like_kernel(d, result), 0u) << what;
              for (size_t k = 0; k < values::elements(d); k += 7) result[k * width] ^= std::byte{1};
              ASSERT_EQ(check_like_kernel(d, result), spec.check(a, rank, nranks, result.data()))
                  << what;
            }
      }
}

}  // namespace
}  // namespace cb::gpu
