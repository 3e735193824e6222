// Device-side -c (gpu/validate.hpp) against the host validation it replaces: the device
// fill writes the same bytes as the benchmarks' CollSpec fill(), the device check counts
// what CollSpec check() counts, and the byte pattern matches harness/memory.cpp's.
#include "gpu/validate.hpp"

#include <string>
#include <vector>

#include "core/coll_spec.hpp"
#include "core/verify.hpp"
#include "core/verify_values.hpp"
#include "gpu/memory.hpp"
#include "gpu/stream.hpp"
#include "gpu_test.hpp"

namespace cb::gpu {
namespace {

using test::DeviceBuffer;
using test::GpuTest;
using Bytes = std::vector<std::byte>;

class ValidateKernel : public GpuTest {};

const CollSpec& spec_of(Coll c) {
  return *find_coll_spec(c);
}

TEST_F(ValidateKernel, FillAndCheckEqualTheHostCollSpec) {
  const Stream stream;
  struct Layout {
    Coll coll;
    bool in_place;
  };
  const Layout layouts[] = {
      {Coll::Allreduce, false}, {Coll::Allreduce, true},      {Coll::Bcast, false},
      {Coll::Alltoall, false},  {Coll::Alltoall, true},       {Coll::Allgather, false},
      {Coll::Allgather, true},  {Coll::ReduceScatter, false}, {Coll::ReduceScatter, true}};
  for (const Layout& l : layouts)
    for (Dtype dt : kAllDtypes)
      for (Op op : kAllOps) {
        if (!spec_of(l.coll).reduces && op != Op::Sum) continue;
        for (int nranks : {1, 3})
          for (int rank = 0; rank < nranks; ++rank)
            for (size_t count : {size_t{1}, size_t{1000}, size_t{65537}}) {
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
              Bytes want_send(send_bytes), want_recv(recv_bytes);
              spec.fill(a, rank, nranks, want_send.data(), want_recv.data());

              DeviceBuffer send(send_bytes + 1), recv(recv_bytes + 1);
              fill_collective(d, send.get(), recv.get(), stream.handle());
              stream.synchronize();
              const std::string what =
                  std::string(to_string(l.coll)) + " " + std::string(to_string(dt)) + " " +
                  std::string(to_string(op)) + " rank " + std::to_string(rank) + "/" +
                  std::to_string(nranks) + " count " + std::to_string(count);
              if (!l.in_place && l.coll != Coll::Bcast) {
                ASSERT_EQ(send.download(0, send_bytes), want_send) << what;
              }
              ASSERT_EQ(recv.download(0, recv_bytes), want_recv) << what;
              EXPECT_EQ(check_collective(d, recv.get(), stream.handle()),
                        spec.check(a, rank, nranks, want_recv.data()))
                  << what;

              // A correct result (spec.check() finds nothing wrong in it: verify_values_test)
              // with every 1000th element corrupted.
              const size_t n = values::elements(d);  // the result's elements
              Bytes result(recv_bytes);
              for (size_t k = 0; k < n; ++k)
                store_element(result.data(), k, dt, values::expected_at(d, k));
              for (size_t k = 0; k < n; k += 1000) result[k * width] ^= std::byte{1};
              recv.upload(result);
              EXPECT_EQ(check_collective(d, recv.get(), stream.handle()),
                        spec.check(a, rank, nranks, result.data()))
                  << what;
              EXPECT_EQ(spec.check(a, rank, nranks, result.data()), (n + 999) / 1000) << what;
            }
      }
}

TEST_F(ValidateKernel, PatternFillAndCountEqualTheHarness) {
  const Stream stream;
  for (size_t bytes : {size_t{1}, size_t{4097}, (size_t{1} << 20) + 3}) {
    Buf host = alloc_buffer(bytes, Mem::Host);
    DeviceBuffer dev(bytes);
    for (bool poison : {false, true}) {
      if (poison)
        cb::poison_pattern(host, 42);
      else
        cb::fill_pattern(host, 42);
      fill_pattern(dev.get(), bytes, 42, poison, stream.handle());
      stream.synchronize();
      const Bytes want(static_cast<std::byte*>(host.ptr),
                       static_cast<std::byte*>(host.ptr) + bytes);
      EXPECT_EQ(dev.download(0, bytes), want) << bytes << (poison ? " poison" : " fill");
      EXPECT_EQ(count_pattern_errors(dev.get(), bytes, 42, stream.handle()),
                cb::count_pattern_errors(host, 42));
    }
    free_buffer(host);
  }
}

}  // namespace
}  // namespace cb::gpu
