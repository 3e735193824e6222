// An unmodified MPI program for libcb_engine_preload.so (tests/integration/test_preload.py):
// every collective the preload routes, blocking and non-blocking, in place and not, on
// several element types and ops, on MPI_COMM_WORLD, a split (ranks reversed) and a dup
// that is freed; plus calls that must pass through to MPI (a derived datatype, a user op,
// an unsigned max, a type the engine does not reduce (long double), an empty call). Every element
// of every result is checked; the exit status is 1 on any wrong element.
//
// For each call it states the outcome it expects from the preload (engine, or passed
// through with a reason); at the end every rank appends those counts, in the format of
// CB_PRELOAD_VERBOSE prefixed "expect: ", to the file named by its argument (stdout
// without one), for the test to compare.
// Plain MPI: no collbench headers, no collbench flags.
#include <fcntl.h>
#include <mpi.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

namespace {

int g_errors = 0;

void fail(const char* what, const char* where, size_t i, double got, double want) {
  if (++g_errors <= 20)
    std::fprintf(stderr, "preload_app: %s (%s): element %zu is %g, expected %g\n", what, where, i,
                 got, want);
}

// Expected outcome of each call, per function.
struct Expect {
  long engine = 0, passed = 0;
  std::map<std::string, long> reasons;
};
std::map<std::string, Expect> g_expect;

void expect(const char* fn, const char* reason) {
  Expect& e = g_expect[fn];
  if (!reason) {
    ++e.engine;
  } else {
    ++e.passed;
    ++e.reasons[reason];
  }
}

template <typename T>
MPI_Datatype mpi_type();
// One line per type: the table it is.
// clang-format off
template <> MPI_Datatype mpi_type<int>() { return MPI_INT; }
template <> MPI_Datatype mpi_type<float>() { return MPI_FLOAT; }
template <> MPI_Datatype mpi_type<double>() { return MPI_DOUBLE; }
template <> MPI_Datatype mpi_type<long long>() { return MPI_LONG_LONG; }
template <> MPI_Datatype mpi_type<signed char>() { return MPI_SIGNED_CHAR; }
template <> MPI_Datatype mpi_type<unsigned>() { return MPI_UNSIGNED; }
template <> MPI_Datatype mpi_type<short>() { return MPI_SHORT; }
// clang-format on

// Rank r's input element i: small integers, exact in every type and under every op.
template <typename T>
T value(int rank, size_t i) {
  return static_cast<T>(1 + (rank + static_cast<int>(i)) % 5);
}

template <typename T>
T combine(MPI_Op op, int nranks, size_t i, const std::vector<int>& ranks_of) {
  (void)ranks_of;
  T acc = value<T>(0, i);
  for (int r = 1; r < nranks; ++r) {
    const T v = value<T>(r, i);
    if (op == MPI_SUM)
      acc = static_cast<T>(acc + v);
    else if (op == MPI_PROD)
      acc = static_cast<T>(acc * v);
    else if (op == MPI_MAX)
      acc = v > acc ? v : acc;
    else
      acc = v < acc ? v : acc;
  }
  return acc;
}

const char* op_name(MPI_Op op) {
  return op == MPI_SUM ? "sum" : op == MPI_PROD ? "prod" : op == MPI_MAX ? "max" : "min";
}

// What the preload should do with a reduction of T under op.
template <typename T>
const char* reduction_reason(MPI_Op op) {
  if (mpi_type<T>() == MPI_UNSIGNED && (op == MPI_MAX || op == MPI_MIN)) return "unsigned max/min";
  return nullptr;
}

struct Comm {
  MPI_Comm comm;
  const char* name;
  int rank, size;
};

// Completes a request one of three ways, so that Wait, Test and Waitall all drive it.
void complete(MPI_Request* req, int how) {
  if (how == 0) {
    MPI_Wait(req, MPI_STATUS_IGNORE);
  } else if (how == 1) {
    int done = 0;
    while (!done) MPI_Test(req, &done, MPI_STATUS_IGNORE);
  } else {
    MPI_Waitall(1, req, MPI_STATUSES_IGNORE);
  }
}

template <typename T>
void allreduce(const Comm& c, MPI_Op op, size_t count, bool in_place, bool nb, int how) {
  std::vector<T> in(count), out(count, T(-1));
  for (size_t i = 0; i < count; ++i) in[i] = value<T>(c.rank, i);
  if (in_place) out = in;
  const void* send = in_place ? MPI_IN_PLACE : in.data();
  const int n = static_cast<int>(count);
  if (nb) {
    MPI_Request req;
    MPI_Iallreduce(send, out.data(), n, mpi_type<T>(), op, c.comm, &req);
    complete(&req, how);
    expect("MPI_Iallreduce", reduction_reason<T>(op));
  } else {
    MPI_Allreduce(send, out.data(), n, mpi_type<T>(), op, c.comm);
    expect("MPI_Allreduce", reduction_reason<T>(op));
  }
  for (size_t i = 0; i < count; ++i) {
    const T want = combine<T>(op, c.size, i, {});
    if (out[i] != want)
      fail(nb ? "iallreduce" : "allreduce", op_name(op), i, double(out[i]), double(want));
  }
}

template <typename T>
void reduce(const Comm& c, MPI_Op op, size_t count, int root, bool in_place, bool nb) {
  std::vector<T> in(count), out(count, T(-1));
  for (size_t i = 0; i < count; ++i) in[i] = value<T>(c.rank, i);
  const bool root_in_place = in_place && c.rank == root;
  if (root_in_place) out = in;
  const void* send = root_in_place ? MPI_IN_PLACE : in.data();
  // Off the root recvbuf is not significant: null in the in-place variant of one element
  // (MPICH 4.0.2's own reduce reads it for larger counts: a segfault with null).
  void* recv = c.rank != root && in_place && count == 1 ? nullptr : out.data();
  const int n = static_cast<int>(count);
  if (nb) {
    MPI_Request req;
    MPI_Ireduce(send, recv, n, mpi_type<T>(), op, root, c.comm, &req);
    complete(&req, 0);
    expect("MPI_Ireduce", reduction_reason<T>(op));
  } else {
    MPI_Reduce(send, recv, n, mpi_type<T>(), op, root, c.comm);
    expect("MPI_Reduce", reduction_reason<T>(op));
  }
  for (size_t i = 0; i < count; ++i) {
    if (c.rank == root) {
      const T want = combine<T>(op, c.size, i, {});
      if (out[i] != want) fail("reduce", op_name(op), i, double(out[i]), double(want));
    }
    if (in[i] != value<T>(c.rank, i))
      fail("reduce: input changed", op_name(op), i, double(in[i]), 0);
  }
}

template <typename T>
void reduce_scatter_block(const Comm& c, MPI_Op op, size_t count, bool in_place, bool nb) {
  const size_t total = count * static_cast<size_t>(c.size);
  std::vector<T> in(total), out(in_place ? total : count, T(-1));
  for (size_t i = 0; i < total; ++i) in[i] = value<T>(c.rank, i);
  if (in_place) out = in;
  const void* send = in_place ? MPI_IN_PLACE : in.data();
  const int n = static_cast<int>(count);
  if (nb) {
    MPI_Request req;
    MPI_Ireduce_scatter_block(send, out.data(), n, mpi_type<T>(), op, c.comm, &req);
    complete(&req, 2);
    expect("MPI_Ireduce_scatter_block", reduction_reason<T>(op));
  } else {
    MPI_Reduce_scatter_block(send, out.data(), n, mpi_type<T>(), op, c.comm);
    expect("MPI_Reduce_scatter_block", reduction_reason<T>(op));
  }
  for (size_t i = 0; i < count; ++i) {
    const size_t g = static_cast<size_t>(c.rank) * count + i;
    const T want = combine<T>(op, c.size, g, {});
    if (out[i] != want) fail("reduce_scatter_block", op_name(op), i, double(out[i]), double(want));
  }
}

template <typename T>
void reductions(const Comm& c) {
  const MPI_Op ops[] = {MPI_SUM, MPI_PROD, MPI_MAX, MPI_MIN};
  int how = 0;
  for (MPI_Op op : ops)
    for (size_t count : {size_t{1}, size_t{1000}, size_t{70000}})
      for (bool in_place : {false, true}) {
        allreduce<T>(c, op, count, in_place, false, 0);
        allreduce<T>(c, op, count, in_place, true, how++ % 3);
        for (int root : {0, c.size - 1}) {
          // MPICH 4.0.2's own MPI_Reduce segfaults in place at a root other than 0 from
          // some hundreds of elements (2 ranks, 1000 ints): at most 100 there.
          const size_t n = in_place && root != 0 && count > 100 ? 100 : count;
          reduce<T>(c, op, n, root, in_place, false);
          reduce<T>(c, op, n, root, in_place, true);
        }
        reduce_scatter_block<T>(c, op, count, in_place, false);
        reduce_scatter_block<T>(c, op, count, in_place, true);
      }
}

unsigned char byte_at(int rank, size_t i) {
  return static_cast<unsigned char>((rank * 131 + i * 7) & 0xff);
}

void bcast(const Comm& c, MPI_Datatype type, size_t count, int root, bool nb) {
  int width = 0;
  MPI_Type_size(type, &width);
  const size_t bytes = count * static_cast<size_t>(width);
  std::vector<unsigned char> buf(bytes);
  for (size_t i = 0; i < bytes; ++i) buf[i] = c.rank == root ? byte_at(root, i) : 0xee;
  if (nb) {
    MPI_Request req;
    MPI_Ibcast(buf.data(), static_cast<int>(count), type, root, c.comm, &req);
    complete(&req, 1);
    expect("MPI_Ibcast", nullptr);
  } else {
    MPI_Bcast(buf.data(), static_cast<int>(count), type, root, c.comm);
    expect("MPI_Bcast", nullptr);
  }
  for (size_t i = 0; i < bytes; ++i)
    if (buf[i] != byte_at(root, i))
      fail(nb ? "ibcast" : "bcast", c.name, i, buf[i], byte_at(root, i));
}

// Alltoall: rank r's block for peer p is byte_at(r * 64 + p, i); allgather: byte_at(r, i).
void alltoall(const Comm& c, MPI_Datatype type, size_t count, bool in_place, bool nb) {
  int width = 0;
  MPI_Type_size(type, &width);
  const size_t block = count * static_cast<size_t>(width), n = static_cast<size_t>(c.size);
  std::vector<unsigned char> in(n * block), out(n * block, 0xee);
  for (size_t p = 0; p < n; ++p)
    for (size_t i = 0; i < block; ++i)
      in[p * block + i] = byte_at(c.rank * 64 + static_cast<int>(p), i);
  if (in_place) out = in;
  const void* send = in_place ? MPI_IN_PLACE : in.data();
  const int k = static_cast<int>(count);
  if (nb) {
    MPI_Request req;
    MPI_Ialltoall(send, k, type, out.data(), k, type, c.comm, &req);
    complete(&req, 2);
    expect("MPI_Ialltoall", nullptr);
  } else {
    MPI_Alltoall(send, k, type, out.data(), k, type, c.comm);
    expect("MPI_Alltoall", nullptr);
  }
  for (size_t p = 0; p < n; ++p)
    for (size_t i = 0; i < block; ++i) {
      const unsigned char want = byte_at(static_cast<int>(p) * 64 + c.rank, i);
      if (out[p * block + i] != want)
        fail("alltoall", c.name, p * block + i, out[p * block + i], want);
    }
}

void allgather(const Comm& c, MPI_Datatype type, size_t count, bool in_place, bool nb) {
  int width = 0;
  MPI_Type_size(type, &width);
  const size_t block = count * static_cast<size_t>(width), n = static_cast<size_t>(c.size);
  std::vector<unsigned char> in(block), out(n * block, 0xee);
  for (size_t i = 0; i < block; ++i) in[i] = byte_at(c.rank, i);
  if (in_place) std::memcpy(out.data() + static_cast<size_t>(c.rank) * block, in.data(), block);
  const void* send = in_place ? MPI_IN_PLACE : in.data();
  const int k = static_cast<int>(count);
  if (nb) {
    MPI_Request req;
    MPI_Iallgather(send, k, type, out.data(), k, type, c.comm, &req);
    complete(&req, 0);
    expect("MPI_Iallgather", nullptr);
  } else {
    MPI_Allgather(send, k, type, out.data(), k, type, c.comm);
    expect("MPI_Allgather", nullptr);
  }
  for (size_t p = 0; p < n; ++p)
    for (size_t i = 0; i < block; ++i)
      if (out[p * block + i] != byte_at(static_cast<int>(p), i))
        fail("allgather", c.name, p * block + i, out[p * block + i],
             byte_at(static_cast<int>(p), i));
}

void data_movement(const Comm& c) {
  for (MPI_Datatype type : {MPI_INT, MPI_DOUBLE, MPI_BYTE, MPI_CHAR})
    for (size_t count : {size_t{1}, size_t{1000}, size_t{40000}}) {
      for (bool nb : {false, true}) {
        for (int root : {0, c.size - 1}) bcast(c, type, count, root, nb);
        for (bool in_place : {false, true}) {
          alltoall(c, type, count, in_place, nb);
          allgather(c, type, count, in_place, nb);
        }
      }
    }
  MPI_Barrier(c.comm);
  expect("MPI_Barrier", nullptr);
  MPI_Request req;
  MPI_Ibarrier(c.comm, &req);
  complete(&req, 1);
  expect("MPI_Ibarrier", nullptr);
}

// Element-wise sum of int pairs, a user op on a derived type.
void pair_sum(void* in, void* inout, int* len, MPI_Datatype*) {
  const int* a = static_cast<const int*>(in);
  int* b = static_cast<int*>(inout);
  for (int i = 0; i < 2 * *len; ++i) b[i] += a[i];
}

// Element-wise int sum, a user op on a predefined type.
void int_sum(void* in, void* inout, int* len, MPI_Datatype*) {
  const int* a = static_cast<const int*>(in);
  int* b = static_cast<int*>(inout);
  for (int i = 0; i < *len; ++i) b[i] += a[i];
}

// Calls the preload must pass through to MPI, each still checked (and a derived bcast,
// which it no longer passes).
void passed_through(const Comm& c) {
  MPI_Datatype pair;
  MPI_Type_contiguous(2, MPI_INT, &pair);
  MPI_Type_commit(&pair);
  MPI_Op user, user_int;
  MPI_Op_create(pair_sum, 1, &user);
  MPI_Op_create(int_sum, 1, &user_int);
  const int count = 100;
  std::vector<int> in(2 * count), out(2 * count, -1);
  for (int i = 0; i < 2 * count; ++i)
    in[static_cast<size_t>(i)] = value<int>(c.rank, static_cast<size_t>(i));

  // A derived datatype (and a user op): MPI's.
  MPI_Allreduce(in.data(), out.data(), count, pair, user, c.comm);
  expect("MPI_Allreduce", "derived datatype");
  for (size_t i = 0; i < out.size(); ++i)
    if (out[i] != combine<int>(MPI_SUM, c.size, i, {}))
      fail("allreduce pair", c.name, i, out[i], 0);
  // A user op on a predefined type, blocking and not.
  MPI_Allreduce(in.data(), out.data(), 2 * count, MPI_INT, user_int, c.comm);
  expect("MPI_Allreduce", "user op");
  for (size_t i = 0; i < out.size(); ++i)
    if (out[i] != combine<int>(MPI_SUM, c.size, i, {}))
      fail("allreduce user op", c.name, i, out[i], 0);
  MPI_Request req;
  std::vector<int> out2(2 * count, -1);
  MPI_Iallreduce(in.data(), out2.data(), count, pair, user, c.comm, &req);
  MPI_Wait(&req, MPI_STATUS_IGNORE);
  expect("MPI_Iallreduce", "derived datatype");
  for (size_t i = 0; i < out.size(); ++i) {
    const int want = combine<int>(MPI_SUM, c.size, i, {});
    if (out2[i] != want) fail("iallreduce pair", c.name, i, out2[i], want);
  }
  // A derived datatype in a bcast: the engine moves its bytes (issue 39).
  std::vector<int> b(2 * count, c.rank == 0 ? 7 : -1);
  MPI_Bcast(b.data(), count, pair, 0, c.comm);
  expect("MPI_Bcast", nullptr);
  for (size_t i = 0; i < b.size(); ++i)
    if (b[i] != 7) fail("bcast pair", c.name, i, b[i], 7);
  // An operator other than sum/prod/max/min, and an empty allreduce.
  int land = 1, land_out = 0;
  MPI_Allreduce(&land, &land_out, 1, MPI_INT, MPI_LAND, c.comm);
  expect("MPI_Allreduce", "op other than sum/prod/max/min");
  if (land_out != 1) fail("allreduce land", c.name, 0, land_out, 1);
  MPI_Allreduce(in.data(), out.data(), 0, MPI_INT, MPI_SUM, c.comm);
  expect("MPI_Allreduce", "empty");
  MPI_Op_free(&user);
  MPI_Op_free(&user_int);
  MPI_Type_free(&pair);
}

// Several engine operations in flight at once, completed together, with a passed-through
// blocking collective made while they are in flight.
void overlapped(const Comm& c) {
  const size_t count = 50000;
  std::vector<double> in(count), out(count, -1);
  for (size_t i = 0; i < count; ++i) in[i] = value<double>(c.rank, i);
  std::vector<unsigned char> b(100000, c.rank == 0 ? 3 : 0);
  std::vector<int> a_in(static_cast<size_t>(c.size) * 1000), a_out(a_in.size(), -1);
  for (size_t i = 0; i < a_in.size(); ++i) a_in[i] = c.rank * 100000 + static_cast<int>(i);
  MPI_Request reqs[3];
  MPI_Iallreduce(in.data(), out.data(), static_cast<int>(count), MPI_DOUBLE, MPI_SUM, c.comm,
                 &reqs[0]);
  MPI_Ibcast(b.data(), static_cast<int>(b.size()), MPI_BYTE, 0, c.comm, &reqs[1]);
  MPI_Ialltoall(a_in.data(), 1000, MPI_INT, a_out.data(), 1000, MPI_INT, c.comm, &reqs[2]);
  expect("MPI_Iallreduce", nullptr);
  expect("MPI_Ibcast", nullptr);
  expect("MPI_Ialltoall", nullptr);
  // Passed through while engine operations are in flight.
  long double l_in = c.rank + 1, l_out = 0;
  MPI_Allreduce(&l_in, &l_out, 1, MPI_LONG_DOUBLE, MPI_SUM, c.comm);
  expect("MPI_Allreduce", "datatype not reduced by the engine");
  if (l_out != c.size * (c.size + 1) / 2)
    fail("allreduce long double", c.name, 0, static_cast<double>(l_out),
         c.size * (c.size + 1) / 2.0);
  MPI_Waitall(3, reqs, MPI_STATUSES_IGNORE);
  for (size_t i = 0; i < count; ++i) {
    const double want = combine<double>(MPI_SUM, c.size, i, {});
    if (out[i] != want) fail("overlapped iallreduce", c.name, i, out[i], want);
  }
  for (size_t i = 0; i < b.size(); ++i)
    if (b[i] != 3) fail("overlapped ibcast", c.name, i, b[i], 3);
  for (int p = 0; p < c.size; ++p)
    for (int i = 0; i < 1000; ++i) {
      const int want = p * 100000 + c.rank * 1000 + i;
      const size_t at = static_cast<size_t>(p * 1000 + i);
      if (a_out[at] != want) fail("overlapped ialltoall", c.name, at, a_out[at], want);
    }
}

void run_all(const Comm& c) {
  reductions<int>(c);
  reductions<float>(c);
  reductions<double>(c);
  reductions<long long>(c);
  reductions<signed char>(c);
  reductions<unsigned>(c);                            // max and min pass through
  allreduce<short>(c, MPI_SUM, 10, false, false, 0);  // the engine's since issue 39
  data_movement(c);
  passed_through(c);
  overlapped(c);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  run_all({MPI_COMM_WORLD, "world", rank, size});

  MPI_Comm split;  // every rank, ranks reversed: a new engine on another numbering
  MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &split);
  Comm s{split, "split", 0, 0};
  MPI_Comm_rank(split, &s.rank);
  MPI_Comm_size(split, &s.size);
  run_all(s);

  MPI_Comm dup;  // freed while MPI_COMM_WORLD's and the split's engines live on
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  run_all({dup, "dup", rank, size});
  MPI_Comm_free(&dup);
  allreduce<int>({MPI_COMM_WORLD, "world after free", rank, size}, MPI_SUM, 1000, false, false, 0);
  MPI_Comm_free(&split);

  int errors = 0;
  MPI_Allreduce(&g_errors, &errors, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  expect("MPI_Allreduce", nullptr);
  const int expect_fd = argc > 1 ? open(argv[1], O_WRONLY | O_CREAT | O_APPEND, 0644) : -1;
  for (const auto& [fn, e] : g_expect) {
    std::string line = "expect: cb_engine_preload: rank " + std::to_string(rank) + ": " + fn +
                       ": " + std::to_string(e.engine) + " engine, " + std::to_string(e.passed) +
                       " passed through";
    if (!e.reasons.empty()) {
      line += " (";
      bool first = true;
      for (const auto& [why, n] : e.reasons) {
        line += (first ? "" : ", ") + why + ": " + std::to_string(n);
        first = false;
      }
      line += ")";
    }
    line += "\n";
    // One write per line to a file opened for appending: the ranks' lines never mix
    // (mpirun's forwarding of stdout may join pieces of two ranks' lines).
    if (expect_fd < 0 || write(expect_fd, line.data(), line.size()) < 0)
      std::printf("%s", line.c_str());
  }
  if (expect_fd >= 0) close(expect_fd);
  if (rank == 0) std::printf("preload_app: %d ranks, %d wrong elements\n", size, errors);
  std::fflush(stdout);
  MPI_Finalize();
  return errors == 0 ? 0 : 1;
}
