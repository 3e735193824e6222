#include "core/types.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <utility>

#include "core/reduce_ops.hpp"

namespace cb {
namespace {

template <typename E, size_t N>
using NameTable = std::array<std::pair<E, std::string_view>, N>;

constexpr NameTable<Dtype, 7> kDtypeNames{{{Dtype::Char, "char"},
                                           {Dtype::Int32, "int32"},
                                           {Dtype::Int64, "int64"},
                                           {Dtype::Float, "float"},
                                           {Dtype::Double, "double"},
                                           {Dtype::Half, "half"},
                                           {Dtype::BFloat16, "bfloat16"}}};
constexpr NameTable<Dtype, 9> kDtypeAliases{{{Dtype::Char, "int8"},
                                             {Dtype::Char, "mpi_char"},
                                             {Dtype::Int32, "int"},
                                             {Dtype::Int32, "mpi_int"},
                                             {Dtype::Float, "float32"},
                                             {Dtype::Float, "mpi_float"},
                                             {Dtype::Double, "float64"},
                                             {Dtype::Half, "fp16"},
                                             {Dtype::BFloat16, "bf16"}}};
// The engine's own element types (not parsed: no benchmark fills them).
constexpr NameTable<Dtype, 9> kEngineDtypeNames{{{Dtype::Int16, "int16"},
                                                 {Dtype::ComplexFloat, "complex_float"},
                                                 {Dtype::ComplexDouble, "complex_double"},
                                                 {Dtype::FloatInt, "float_int"},
                                                 {Dtype::DoubleInt, "double_int"},
                                                 {Dtype::LongInt, "long_int"},
                                                 {Dtype::IntInt, "2int"},
                                                 {Dtype::ShortInt, "short_int"},
                                                 {Dtype::LongDoubleInt, "long_double_int"}}};
constexpr NameTable<Op, 4> kOpNames{
    {{Op::Sum, "sum"}, {Op::Prod, "prod"}, {Op::Max, "max"}, {Op::Min, "min"}}};
constexpr NameTable<Op, 2> kEngineOpNames{{{Op::MaxLoc, "maxloc"}, {Op::MinLoc, "minloc"}}};
constexpr NameTable<Mem, 2> kMemNames{{{Mem::Host, "host"}, {Mem::Cuda, "cuda"}}};
constexpr NameTable<Mem, 4> kMemAliases{
    {{Mem::Host, "h"}, {Mem::Cuda, "d"}, {Mem::Cuda, "device"}, {Mem::Cuda, "gpu"}}};
constexpr NameTable<Coll, 21> kCollNames{{{Coll::None, "none"},
                                          {Coll::Allreduce, "allreduce"},
                                          {Coll::Bcast, "bcast"},
                                          {Coll::Alltoall, "alltoall"},
                                          {Coll::Allgather, "allgather"},
                                          {Coll::ReduceScatter, "reduce_scatter"},
                                          {Coll::Reduce, "reduce"},
                                          {Coll::Barrier, "barrier"},
                                          {Coll::Alltoallv, "alltoallv"},
                                          {Coll::Gather, "gather"},
                                          {Coll::Scatter, "scatter"},
                                          {Coll::Gatherv, "gatherv"},
                                          {Coll::Scatterv, "scatterv"},
                                          {Coll::Allgatherv, "allgatherv"},
                                          {Coll::ReduceScatterV, "reduce_scatterv"},
                                          {Coll::Alltoallw, "alltoallw"},
                                          {Coll::NeighborAllgather, "neighbor_allgather"},
                                          {Coll::NeighborAllgatherv, "neighbor_allgatherv"},
                                          {Coll::NeighborAlltoall, "neighbor_alltoall"},
                                          {Coll::NeighborAlltoallv, "neighbor_alltoallv"},
                                          {Coll::NeighborAlltoallw, "neighbor_alltoallw"}}};

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

template <typename E, size_t N>
std::string_view name_of(const NameTable<E, N>& table, E value) {
  for (const auto& [e, name] : table)
    if (e == value) return name;
  return "?";
}

template <typename E, size_t N>
std::optional<E> lookup(const NameTable<E, N>& table, std::string_view name) {
  for (const auto& [e, n] : table)
    if (n == name) return e;
  return std::nullopt;
}

template <typename E, size_t N>
std::string choices(const NameTable<E, N>& table) {
  std::string out;
  for (const auto& entry : table) out += (out.empty() ? "" : ", ") + std::string(entry.second);
  return out;
}

}  // namespace

size_t dtype_size(Dtype dt) {
  switch (dt) {
    case Dtype::Char:
      return 1;
    case Dtype::Int32:
      return 4;
    case Dtype::Int64:
      return 8;
    case Dtype::Float:
      return 4;
    case Dtype::Double:
      return 8;
    case Dtype::Half:
      return 2;
    case Dtype::BFloat16:
      return 2;
    case Dtype::Int16:
      return 2;
    case Dtype::ComplexFloat:
      return sizeof(reduce_ops::Complex<float>);
    case Dtype::ComplexDouble:
      return sizeof(reduce_ops::Complex<double>);
    case Dtype::FloatInt:
      return sizeof(reduce_ops::LocPair<float>);
    case Dtype::DoubleInt:
      return sizeof(reduce_ops::LocPair<double>);
    case Dtype::LongInt:
      return sizeof(reduce_ops::LocPair<long>);
    case Dtype::IntInt:
      return sizeof(reduce_ops::LocPair<int>);
    case Dtype::ShortInt:
      return sizeof(reduce_ops::LocPair<short>);
    case Dtype::LongDoubleInt:
      return sizeof(reduce_ops::LocPair<long double>);
  }
  return 1;
}

bool dtype_is_integer(Dtype dt) {
  return dt == Dtype::Char || dt == Dtype::Int16 || dt == Dtype::Int32 || dt == Dtype::Int64;
}

bool op_applies(Dtype dt, Op op) {
  switch (dt) {
    case Dtype::ComplexFloat:
    case Dtype::ComplexDouble:
      return op == Op::Sum || op == Op::Prod;
    case Dtype::FloatInt:
    case Dtype::DoubleInt:
    case Dtype::LongInt:
    case Dtype::IntInt:
    case Dtype::ShortInt:
    case Dtype::LongDoubleInt:
      return op == Op::MaxLoc || op == Op::MinLoc;
    default:
      return op == Op::Sum || op == Op::Prod || op == Op::Max || op == Op::Min;
  }
}

std::string_view to_string(Mem m) {
  return name_of(kMemNames, m);
}
std::string_view to_string(Dtype dt) {
  const std::string_view name = name_of(kDtypeNames, dt);
  return name == "?" ? name_of(kEngineDtypeNames, dt) : name;
}
std::string_view to_string(Op op) {
  const std::string_view name = name_of(kOpNames, op);
  return name == "?" ? name_of(kEngineOpNames, op) : name;
}
std::string_view to_string(Coll c) {
  return name_of(kCollNames, c);
}

std::optional<Mem> parse_mem(std::string_view s) {
  const std::string l = lower(s);
  if (auto m = lookup(kMemNames, l)) return m;
  return lookup(kMemAliases, l);
}
std::optional<Dtype> parse_dtype(std::string_view s) {
  const std::string l = lower(s);
  if (auto d = lookup(kDtypeNames, l)) return d;
  return lookup(kDtypeAliases, l);
}
std::optional<Op> parse_op(std::string_view s) {
  return lookup(kOpNames, lower(s));
}
std::optional<Coll> parse_coll(std::string_view s) {
  return lookup(kCollNames, lower(s));
}

std::string dtype_choices() {
  return choices(kDtypeNames);
}
std::string op_choices() {
  return choices(kOpNames);
}

}  // namespace cb
