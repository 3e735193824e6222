// gpu::reduce_many (the IPC allreduce's kernel) against the host, bit for bit: n inputs
// folded in order with reduce_host's semantics, except sum and prod of half and bfloat16,
// which accumulate in float and round once (the documented contract). Aligned pointers
// (16-byte loads) and pointers offset by one element (the element-wise kernel).
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "core/errors.hpp"
#include "core/half.hpp"
#include "core/verify.hpp"
#include "engine/reduce_host.hpp"
#include "gpu/ipc.hpp"
#include "gpu/stream.hpp"
#include "gpu_test.hpp"
#include "reduce_reference.hpp"

namespace cb::gpu {
namespace {

using test::Bytes;
using test::DeviceBuffer;

// What reduce_many promises, computed on the host.
Bytes expected(const std::vector<Bytes>& in, size_t count, Dtype dt, Op op) {
  const bool wide =
      (dt == Dtype::Half || dt == Dtype::BFloat16) && (op == Op::Sum || op == Op::Prod);
  Bytes out = in[0];
  if (!wide) {
    for (size_t k = 1; k < in.size(); ++k)
      engine::reduce_host(out.data(), out.data(), in[k].data(), count, dt, op);
    return out;
  }
  const auto widen = [dt](uint16_t v) {
    return dt == Dtype::Half ? half_to_float(v) : bf16_to_float(v);
  };
  for (size_t i = 0; i < count; ++i) {
    uint16_t v;
    std::memcpy(&v, in[0].data() + 2 * i, 2);
    float acc = widen(v);
    for (size_t k = 1; k < in.size(); ++k) {
      std::memcpy(&v, in[k].data() + 2 * i, 2);
      acc = op == Op::Sum ? acc + widen(v) : acc * widen(v);
    }
    const uint16_t r = dt == Dtype::Half ? float_to_half(acc) : float_to_bf16(acc);
    std::memcpy(out.data() + 2 * i, &r, 2);
  }
  return out;
}

class ReduceMany : public test::GpuTest {};

TEST_F(ReduceMany, EveryDtypeAndOpFoldsInInputOrder) {
  const Stream stream;
  for (Dtype dt : kAllDtypes)
    for (Op op : kAllOps)
      for (int n : {1, 2, 3, 5})
        for (size_t count : {size_t{1}, size_t{33}, size_t{4099}})
          for (size_t shift : {size_t{0}, size_t{1}}) {  // 1: one element off 16 bytes
            const size_t width = dtype_size(dt), bytes = count * width;
            const size_t offset = shift * width;
            std::vector<Bytes> host;
            std::vector<std::unique_ptr<DeviceBuffer>> dev;
            std::vector<const void*> ptrs;
            for (int k = 0; k < n; ++k) {
              host.push_back(test::random_elements(dt, count, 7 + static_cast<uint64_t>(k)));
              dev.push_back(std::make_unique<DeviceBuffer>(bytes + offset));
              dev.back()->upload(host.back(), offset);
              ptrs.push_back(dev.back()->get() + offset);
            }
            DeviceBuffer out(bytes + offset);
            reduce_many(out.get() + offset, ptrs.data(), n, count, dt, op, stream.handle());
            stream.synchronize();
            test::expect_same(out.download(offset, bytes), expected(host, count, dt, op), dt, op,
                              std::string(to_string(dt)) + " " + std::string(to_string(op)) +
                                  " n " + std::to_string(n) + " count " + std::to_string(count) +
                                  " shift " + std::to_string(shift));
          }
}

TEST_F(ReduceMany, RefusesTooManyInputs) {
  const Stream stream;
  std::vector<const void*> ptrs(kMaxIpcInputs + 1, nullptr);
  EXPECT_THROW(reduce_many(nullptr, ptrs.data(), kMaxIpcInputs + 1, 1, Dtype::Float, Op::Sum,
                           stream.handle()),
               RuntimeError);
}

}  // namespace
}  // namespace cb::gpu
