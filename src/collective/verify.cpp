#include "collective/verify.hpp"

#include <algorithm>
#include <cstring>

#include "core/half.hpp"

namespace cb {
namespace {

template <typename T>
T load_as(const std::byte* base, size_t index) {
  T v;
  std::memcpy(&v, base + index * sizeof(T), sizeof(T));
  return v;
}

template <typename T>
void store_as(std::byte* base, size_t index, T v) {
  std::memcpy(base + index * sizeof(T), &v, sizeof(T));
}

uint32_t mix(int rank, uint64_t index) {
  uint64_t x =
      index * 0x9E3779B97F4A7C15ull + static_cast<uint64_t>(rank + 1) * 0xC2B2AE3D27D4EB4Full;
  x ^= x >> 31;
  x *= 0xBF58476D1CE4E5B9ull;
  x ^= x >> 29;
  return static_cast<uint32_t>(x);
}

// Largest integer magnitude every partial result may reach and still be exact in dt.
double exact_limit(Dtype dt) {
  switch (dt) {
    case Dtype::Char:
      return 127;  // int8
    case Dtype::BFloat16:
      return 256;  // 8-bit significand
    case Dtype::Half:
      return 2048;  // 11-bit significand
    default:
      return 1 << 20;  // far inside float's 24 bits and the integers
  }
}

// Most factors of 2 a product may collect: 2^6 fits int8, 2^14 half's range.
int max_doublings(Dtype dt) {
  switch (dt) {
    case Dtype::Char:
      return 6;
    case Dtype::Half:
      return 14;
    default:
      return 30;
  }
}

}  // namespace

double load_element(const std::byte* base, size_t index, Dtype dt) {
  switch (dt) {
    case Dtype::Char:
      return load_as<int8_t>(base, index);
    case Dtype::Int32:
      return load_as<int32_t>(base, index);
    case Dtype::Int64:
      return static_cast<double>(load_as<int64_t>(base, index));
    case Dtype::Float:
      return load_as<float>(base, index);
    case Dtype::Double:
      return load_as<double>(base, index);
    case Dtype::Half:
      return half_to_float(load_as<uint16_t>(base, index));
    case Dtype::BFloat16:
      return bf16_to_float(load_as<uint16_t>(base, index));
  }
  return 0;
}

void store_element(std::byte* base, size_t index, Dtype dt, double v) {
  switch (dt) {
    case Dtype::Char:
      store_as(base, index, static_cast<int8_t>(v));
      break;
    case Dtype::Int32:
      store_as(base, index, static_cast<int32_t>(v));
      break;
    case Dtype::Int64:
      store_as(base, index, static_cast<int64_t>(v));
      break;
    case Dtype::Float:
      store_as(base, index, static_cast<float>(v));
      break;
    case Dtype::Double:
      store_as(base, index, v);
      break;
    case Dtype::Half:
      store_as(base, index, float_to_half(static_cast<float>(v)));
      break;
    case Dtype::BFloat16:
      store_as(base, index, float_to_bf16(static_cast<float>(v)));
      break;
  }
}

double input_value(Dtype dt, Op op, int rank, int nranks, uint64_t index) {
  const uint32_t h = mix(rank, index);
  switch (op) {
    case Op::Sum: {  // |v| <= limit / nranks: any partial sum stays within the limit
      const auto r = static_cast<uint32_t>(std::max(1.0, exact_limit(dt) / std::max(nranks, 1)));
      return static_cast<double>(h % (2 * r + 1)) - r;
    }
    case Op::Prod: {  // +-1 or +-2, with 2 only on the first ranks: |product| <= 2^k
      const double magnitude = (rank < max_doublings(dt) && (h & 1)) ? 2.0 : 1.0;
      return (h & 2) ? -magnitude : magnitude;
    }
    case Op::Max:
    case Op::Min: {
      const auto r = static_cast<uint32_t>(exact_limit(dt));
      return static_cast<double>(h % (2 * r + 1)) - r;
    }
  }
  return 0;
}

double apply_op(Op op, double a, double b) {
  switch (op) {
    case Op::Sum:
      return a + b;
    case Op::Prod:
      return a * b;
    case Op::Max:
      return std::max(a, b);
    case Op::Min:
      return std::min(a, b);
  }
  return a;
}

void store_poison(std::byte* base, size_t index, Dtype dt, double expected) {
  const size_t width = dtype_size(dt);
  store_element(base, index, dt, expected);
  for (size_t b = 0; b < width; ++b) base[index * width + b] = ~base[index * width + b];
}

}  // namespace cb
