#include "engine/mpi_half_op.hpp"

#include <array>
#include <mutex>

#include "core/mpi_check.hpp"
#include "engine/reduce_host.hpp"

namespace cb {
namespace {

MPI_Datatype predefined_type(Dtype dt) {
  switch (dt) {
    case Dtype::Char:
      return MPI_SIGNED_CHAR;  // MPI_CHAR is not valid in reductions
    case Dtype::Int32:
      return MPI_INT32_T;
    case Dtype::Int64:
      return MPI_INT64_T;
    case Dtype::Float:
      return MPI_FLOAT;
    case Dtype::Double:
      return MPI_DOUBLE;
    case Dtype::Half:
    case Dtype::BFloat16:
      return MPI_DATATYPE_NULL;
    case Dtype::Int16:
      return MPI_INT16_T;
    case Dtype::ComplexFloat:
      return MPI_C_FLOAT_COMPLEX;
    case Dtype::ComplexDouble:
      return MPI_C_DOUBLE_COMPLEX;
    case Dtype::FloatInt:
      return MPI_FLOAT_INT;
    case Dtype::DoubleInt:
      return MPI_DOUBLE_INT;
    case Dtype::LongInt:
      return MPI_LONG_INT;
    case Dtype::IntInt:
      return MPI_2INT;
    case Dtype::ShortInt:
      return MPI_SHORT_INT;
    case Dtype::LongDoubleInt:
      return MPI_LONG_DOUBLE_INT;
  }
  return MPI_DATATYPE_NULL;
}

MPI_Op predefined_op(Op op) {
  switch (op) {
    case Op::Sum:
      return MPI_SUM;
    case Op::Prod:
      return MPI_PROD;
    case Op::Max:
      return MPI_MAX;
    case Op::Min:
      return MPI_MIN;
    case Op::MaxLoc:
      return MPI_MAXLOC;
    case Op::MinLoc:
      return MPI_MINLOC;
  }
  return MPI_OP_NULL;
}

const char* predefined_op_name(Op op) {
  switch (op) {
    case Op::Sum:
      return "MPI_SUM";
    case Op::Prod:
      return "MPI_PROD";
    case Op::Max:
      return "MPI_MAX";
    case Op::Min:
      return "MPI_MIN";
    case Op::MaxLoc:
      return "MPI_MAXLOC";
    case Op::MinLoc:
      return "MPI_MINLOC";
  }
  return "?";
}

const char* predefined_type_name(Dtype dt) {
  switch (dt) {
    case Dtype::Char:
      return "MPI_SIGNED_CHAR";
    case Dtype::Int32:
      return "MPI_INT32_T";
    case Dtype::Int64:
      return "MPI_INT64_T";
    case Dtype::Float:
      return "MPI_FLOAT";
    case Dtype::Double:
      return "MPI_DOUBLE";
    case Dtype::Int16:
      return "MPI_INT16_T";
    case Dtype::ComplexFloat:
      return "MPI_C_FLOAT_COMPLEX";
    case Dtype::ComplexDouble:
      return "MPI_C_DOUBLE_COMPLEX";
    case Dtype::FloatInt:
      return "MPI_FLOAT_INT";
    case Dtype::DoubleInt:
      return "MPI_DOUBLE_INT";
    case Dtype::LongInt:
      return "MPI_LONG_INT";
    case Dtype::IntInt:
      return "MPI_2INT";
    case Dtype::ShortInt:
      return "MPI_SHORT_INT";
    case Dtype::LongDoubleInt:
      return "MPI_LONG_DOUBLE_INT";
    default:
      return "?";
  }
}

bool is_16bit_float(Dtype dt) {
  return dt == Dtype::Half || dt == Dtype::BFloat16;
}

// MPI_User_function: inout[i] = in[i] op inout[i] (the ops are commutative).
template <Dtype D, Op O>
void user_reduce(void* in, void* inout, int* len, MPI_Datatype*) {
  engine::reduce_host(inout, in, static_cast<size_t>(*len), D, O);
}

template <Dtype D>
constexpr std::array<MPI_User_function*, 4> kFunctions = {
    user_reduce<D, Op::Sum>, user_reduce<D, Op::Prod>, user_reduce<D, Op::Max>,
    user_reduce<D, Op::Min>};

struct HalfTypes {
  MPI_Datatype type = MPI_DATATYPE_NULL;
  std::array<MPI_Op, 4> half{}, bf16{};
};

HalfTypes g_types;
std::once_flag g_once;

// Deleted with MPI_COMM_SELF's attributes, first thing in MPI_Finalize.
int free_types(MPI_Comm, int, void*, void*) {
  for (MPI_Op& op : g_types.half) MPI_Op_free(&op);
  for (MPI_Op& op : g_types.bf16) MPI_Op_free(&op);
  MPI_Type_free(&g_types.type);
  return MPI_SUCCESS;
}

const HalfTypes& half_types() {
  std::call_once(g_once, [] {
    CB_MPI(MPI_Type_contiguous(2, MPI_BYTE, &g_types.type));
    CB_MPI(MPI_Type_commit(&g_types.type));
    for (size_t i = 0; i < 4; ++i) {
      CB_MPI(MPI_Op_create(kFunctions<Dtype::Half>[i], 1, &g_types.half[i]));
      CB_MPI(MPI_Op_create(kFunctions<Dtype::BFloat16>[i], 1, &g_types.bf16[i]));
    }
    int key = MPI_KEYVAL_INVALID;
    CB_MPI(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, free_types, &key, nullptr));
    CB_MPI(MPI_Comm_set_attr(MPI_COMM_SELF, key, nullptr));
  });
  return g_types;
}

}  // namespace

MpiReduction mpi_datatype_and_op(Dtype dt, Op op) {
  // An operator MPI does not define on dt (data movement's default Sum on a pair type):
  // the type alone.
  const bool applies = op_applies(dt, op);
  if (!is_16bit_float(dt))
    return {predefined_type(dt), applies ? predefined_op(op) : MPI_OP_NULL, false};
  const HalfTypes& t = half_types();
  if (!applies) return {t.type, MPI_OP_NULL, true};
  const auto i = static_cast<size_t>(op);
  return {t.type, dt == Dtype::Half ? t.half[i] : t.bf16[i], true};
}

std::string mpi_reduction_description(Dtype dt, Op op) {
  if (!is_16bit_float(dt))
    return std::string(predefined_op_name(op)) + " on " + predefined_type_name(dt);
  return std::string("user-defined (") + (dt == Dtype::Half ? "fp16" : "bf16") + " " +
         std::string(to_string(op)) + ", collbench) on MPI_Type_contiguous(2, MPI_BYTE)";
}

}  // namespace cb
