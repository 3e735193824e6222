#include "gpu/memory.hpp"

#include <cstdlib>
#include <cstring>
#include <new>

#include "core/errors.hpp"
#include "core/verify_values.hpp"
#include "gpu/device.hpp"
#include "gpu/validate.hpp"

namespace cb {
namespace {
constexpr size_t kPage = 4096;
}

Buf alloc_buffer(size_t bytes, Mem mem) {
  Buf b{nullptr, bytes, mem};
  if (mem == Mem::Cuda) {
    b.ptr = gpu::device_alloc(bytes);
    gpu::device_memset(b.ptr, 0, bytes);
    return b;
  }
  const size_t rounded = (bytes + kPage - 1) / kPage * kPage;
  b.ptr = std::aligned_alloc(kPage, rounded ? rounded : kPage);
  if (!b.ptr)
    throw RuntimeError("cannot allocate " + std::to_string(bytes) + " bytes of host memory");
  std::memset(b.ptr, 0, rounded);
  return b;
}

void free_buffer(Buf& buf) {
  if (buf.mem == Mem::Cuda)
    gpu::device_free(buf.ptr);
  else
    std::free(buf.ptr);
  buf = Buf{};
}

std::vector<std::byte> read_buffer(const Buf& buf) {
  std::vector<std::byte> out(buf.bytes);
  if (buf.mem == Mem::Cuda)
    gpu::copy(out.data(), buf.ptr, buf.bytes);
  else if (buf.bytes)
    std::memcpy(out.data(), buf.ptr, buf.bytes);
  return out;
}

void write_buffer(const Buf& buf, const std::vector<std::byte>& data) {
  const size_t n = std::min(buf.bytes, data.size());
  if (buf.mem == Mem::Cuda)
    gpu::copy(buf.ptr, data.data(), n);
  else if (n)
    std::memcpy(buf.ptr, data.data(), n);
}

uint8_t pattern_byte(uint32_t seed, size_t index) {  // one formula for host and device
  return values::pattern_byte(seed, index);
}

namespace {
void write_pattern(const Buf& buf, uint32_t seed, uint8_t flip) {
  std::vector<std::byte> data(buf.bytes);
  for (size_t i = 0; i < data.size(); ++i)
    data[i] = static_cast<std::byte>(pattern_byte(seed, i) ^ flip);
  write_buffer(buf, data);
}
}  // namespace

void fill_pattern(const Buf& buf, uint32_t seed) {
  write_pattern(buf, seed, 0);
}
void poison_pattern(const Buf& buf, uint32_t seed) {
  write_pattern(buf, seed, 0xFF);
}

size_t count_pattern_errors(const Buf& buf, uint32_t seed) {
  if (buf.mem == Mem::Cuda) return gpu::count_pattern_errors(buf.ptr, buf.bytes, seed, nullptr);
  const auto data = read_buffer(buf);
  size_t wrong = 0;
  for (size_t i = 0; i < data.size(); ++i)
    wrong += static_cast<uint8_t>(data[i]) != pattern_byte(seed, i);
  return wrong;
}

}  // namespace cb
