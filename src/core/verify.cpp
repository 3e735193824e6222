#include "core/verify.hpp"

#include <bit>
#include <cmath>
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
    default:  // the engine's own types (core/types.hpp): never benchmarked
      break;
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
    default:  // the engine's own types (core/types.hpp): never benchmarked
      break;
  }
}

// The formulas are written once, for host and device, in core/verify_values.hpp.
double input_value(Dtype dt, Op op, int rank, int nranks, uint64_t index, uint32_t generation) {
  return values::input_value(dt, op, rank, nranks, index, generation);
}

double apply_op(Op op, double a, double b) {
  return values::apply_op(op, a, b);
}

void store_poison(std::byte* base, size_t index, Dtype dt, double expected) {
  const size_t width = dtype_size(dt);
  store_element(base, index, dt, expected);
  for (size_t b = 0; b < width; ++b) base[index * width + b] = ~base[index * width + b];
}

uint64_t bits_hash(const std::byte* data, size_t bytes) {
  // Eight bytes at a time, each word multiplied in and rotated (xxhash-like), then the
  // tail and the length; a final avalanche so that one flipped bit changes every bit.
  constexpr uint64_t kMul1 = 0x9E3779B185EBCA87ull, kMul2 = 0xC2B2AE3D27D4EB4Full;
  uint64_t h = 0x27D4EB2F165667C5ull ^ (bytes * kMul1);
  size_t i = 0;
  for (; i + 8 <= bytes; i += 8) {
    uint64_t w;
    std::memcpy(&w, data + i, 8);
    h = std::rotl(h ^ (w * kMul2), 31) * kMul1;
  }
  uint64_t tail = 0;
  for (size_t b = 0; i + b < bytes; ++b)
    tail |= static_cast<uint64_t>(std::to_integer<uint8_t>(data[i + b])) << (8 * b);
  h = std::rotl(h ^ (tail * kMul2), 31) * kMul1;
  h ^= h >> 33;
  h *= kMul2;
  h ^= h >> 29;
  h *= kMul1;
  h ^= h >> 32;
  return h;
}

std::vector<int> differing_ranks(std::span<const uint64_t> hashes) {
  std::vector<int> ranks;
  for (size_t r = 1; r < hashes.size(); ++r)
    if (hashes[r] != hashes[0]) ranks.push_back(static_cast<int>(r));
  return ranks;
}

std::string rank_list(const std::vector<int>& ranks, size_t shown) {
  std::string s;
  for (size_t i = 0; i < ranks.size() && i < shown; ++i)
    s += (i ? ", " : "") + std::to_string(ranks[i]);
  if (ranks.size() > shown) s += ", ... (" + std::to_string(ranks.size()) + " in all)";
  return s;
}

bool order_sensitive(Dtype dt, Op op) {
  const bool floating =
      dt == Dtype::Float || dt == Dtype::Double || dt == Dtype::Half || dt == Dtype::BFloat16;
  return floating && (op == Op::Sum || op == Op::Prod);
}

namespace {

// Explicit mantissa bits of a floating-point dtype.
int mantissa_bits(Dtype dt) {
  switch (dt) {
    case Dtype::Double:
      return 52;
    case Dtype::Half:
      return 10;
    case Dtype::BFloat16:
      return 7;
    default:
      return 23;  // float
  }
}

}  // namespace

double order_sensitive_value(Dtype dt, Op op, int rank, int nranks, uint64_t index) {
  // Salted, so that these inputs are not the exact fill's.
  const uint32_t h = values::mix(rank, index ^ 0x5EEDF00Dull);
  const int mant = mantissa_bits(dt);
  const double sign = (h & 1) ? -1.0 : 1.0;
  if (op == Op::Prod) {
    // 1 + m x 2^-mant, m in [0, 2^(mant - 2)): in [1, 1.25), every mantissa bit random, so
    // every product rounds (and n of them stay below 1.25^n: finite up to ~40 ranks in
    // half, far more in the others).
    const uint64_t wide = (static_cast<uint64_t>(values::mix(rank + 7919, index)) << 32) | h;
    const auto m = static_cast<double>((wide >> 1) & ((uint64_t{1} << (mant - 2)) - 1));
    return sign * (1.0 + std::ldexp(m, -mant));
  }
  // Sum: element `index` has +1 at rank p, -1 at rank q != p; everyone else is small.
  const int n = nranks < 1 ? 1 : nranks;
  const int p = static_cast<int>(index % static_cast<uint64_t>(n));
  const int q =
      n < 2
          ? p
          : (p + 1 +
             static_cast<int>((index / static_cast<uint64_t>(n)) % static_cast<uint64_t>(n - 1))) %
                n;
  if (rank == p) return 1.0;
  if (rank == q) return -1.0;
  // (1 + f/8) x 2^-(mant + 1 + k), f in [0, 8), k in [0, 3): at most 1's half ulp, at
  // least an eighth of it; three mantissa bits, exact in every dtype (half: normal).
  const double f = static_cast<double>((h >> 1) % 8);
  const int k = static_cast<int>((h >> 4) % 3);
  return sign * std::ldexp(1.0 + f / 8, -(mant + 1 + k));
}

void fill_order_sensitive(Dtype dt, Op op, int rank, int nranks, std::byte* in, size_t count) {
  for (size_t i = 0; i < count; ++i)
    store_element(in, i, dt, order_sensitive_value(dt, op, rank, nranks, i));
}

}  // namespace cb
