#include "core/verify.hpp"

#include <cstring>

#include "core/half.hpp"
#include "core/verify_values.hpp"

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

// The formulas are written once, for host and device, in core/verify_values.hpp.
double input_value(Dtype dt, Op op, int rank, int nranks, uint64_t index) {
  return values::input_value(dt, op, rank, nranks, index);
}

double apply_op(Op op, double a, double b) {
  return values::apply_op(op, a, b);
}

void store_poison(std::byte* base, size_t index, Dtype dt, double expected) {
  const size_t width = dtype_size(dt);
  store_element(base, index, dt, expected);
  for (size_t b = 0; b < width; ++b) base[index * width + b] = ~base[index * width + b];
}

}  // namespace cb
