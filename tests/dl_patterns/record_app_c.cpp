// The recorder's MPI-4 large-count bindings (tests/integration/test_record.py): every "_c"
// collective libcb_record.so intercepts (the ones mpi4py 4 calls), with known sizes, types,
// ops and roots, each result checked; then counts the int forms cannot express: a bcast of
// 3e9 chars on MPI_COMM_SELF (recorded) and two of more than 1 TiB, one _c and one int
// count of a large derived type (more than a trace holds per operation: not recorded). The
// test compares the trace with the list it expects; keep the two in step. Runs on any
// number of ranks >= 2. Without the large-count bindings (MPI_VERSION < 4) it says so and
// exits 0 without calling any collective.
#include <mpi.h>
#include <sys/mman.h>

#include <cstdint>
#include <cstdio>
#include <vector>

#if MPI_VERSION >= 4

namespace {

int wrong = 0;

void check(int rc, const char* what) {
  if (rc != MPI_SUCCESS) {
    std::fprintf(stderr, "record_app_c: %s failed\n", what);
    MPI_Abort(MPI_COMM_WORLD, 3);
  }
}

template <typename T>
void expect(const std::vector<T>& got, T want, const char* what) {
  for (const T& v : got)
    if (v != want) {
      std::fprintf(stderr, "record_app_c: %s: wrong element\n", what);
      ++wrong;
      return;
    }
}

// Address space for the counts no buffer of this machine holds: never touched (a bcast on
// a communicator of one rank moves nothing), so no memory is committed.
void* reserve(size_t bytes, int prot) {
  void* p = mmap(nullptr, bytes, prot, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) {
    std::perror("record_app_c: mmap");
    MPI_Abort(MPI_COMM_WORLD, 3);
  }
  return p;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const size_t n = static_cast<size_t>(size);
  const MPI_Comm world = MPI_COMM_WORLD;
  MPI_Request req;

  std::vector<float> f(1000, 1.0f), g(1000);
  check(MPI_Allreduce_c(f.data(), g.data(), 1000, MPI_FLOAT, MPI_SUM, world), "1");
  expect(g, float(size), "MPI_Allreduce_c");

  std::vector<double> d(256, rank);
  check(MPI_Iallreduce_c(MPI_IN_PLACE, d.data(), 256, MPI_DOUBLE, MPI_MAX, world, &req), "2");
  MPI_Wait(&req, MPI_STATUS_IGNORE);
  expect(d, double(size - 1), "MPI_Iallreduce_c");

  std::vector<double> rs(16, rank + 1), rr(16);
  check(MPI_Reduce_c(rs.data(), rr.data(), 16, MPI_DOUBLE, MPI_MIN, 0, world), "3");
  if (rank == 0) expect(rr, 1.0, "MPI_Reduce_c");

  std::vector<int> is(8, 2), ir(8);
  check(MPI_Ireduce_c(is.data(), ir.data(), 8, MPI_INT, MPI_SUM, size - 1, world, &req), "4");
  MPI_Wait(&req, MPI_STATUS_IGNORE);
  if (rank == size - 1) expect(ir, 2 * size, "MPI_Ireduce_c");

  std::vector<long> l(10, rank);
  check(MPI_Bcast_c(l.data(), 10, MPI_LONG, 1, world), "5");
  expect(l, 1L, "MPI_Bcast_c");

  std::vector<char> c(33, rank == 0 ? 'x' : 'y');
  check(MPI_Ibcast_c(c.data(), 33, MPI_CHAR, 0, world, &req), "6");
  MPI_Wait(&req, MPI_STATUS_IGNORE);
  expect(c, 'x', "MPI_Ibcast_c");

  std::vector<int> as(8 * n, rank), ar(8 * n);
  check(MPI_Alltoall_c(as.data(), 8, MPI_INT, ar.data(), 8, MPI_INT, world), "7");
  for (size_t i = 0; i < ar.size(); ++i) wrong += ar[i] != int(i / 8);

  std::vector<float> fs(4 * n, 1.0f), fr(4 * n);
  check(MPI_Ialltoall_c(fs.data(), 4, MPI_FLOAT, fr.data(), 4, MPI_FLOAT, world, &req), "8");
  MPI_Wait(&req, MPI_STATUS_IGNORE);
  expect(fr, 1.0f, "MPI_Ialltoall_c");

  std::vector<int> gs(5, rank), gr(5 * n);
  check(MPI_Allgather_c(gs.data(), 5, MPI_INT, gr.data(), 5, MPI_INT, world), "9");
  for (size_t i = 0; i < gr.size(); ++i) wrong += gr[i] != int(i / 5);

  std::vector<double> ip(3 * n, rank);  // in place: the receive side's count and type
  check(MPI_Iallgather_c(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, ip.data(), 3, MPI_DOUBLE, world, &req),
        "10");
  MPI_Wait(&req, MPI_STATUS_IGNORE);
  for (size_t i = 0; i < ip.size(); ++i) wrong += ip[i] != double(i / 3);

  std::vector<float> rsb(8 * n, 1.0f), rsr(8);
  check(MPI_Reduce_scatter_block_c(rsb.data(), rsr.data(), 8, MPI_FLOAT, MPI_SUM, world), "11");
  expect(rsr, float(size), "MPI_Reduce_scatter_block_c");

  std::vector<int64_t> qs(2 * n, 3), qr(2);
  check(MPI_Ireduce_scatter_block_c(qs.data(), qr.data(), 2, MPI_INT64_T, MPI_SUM, world, &req),
        "12");
  MPI_Wait(&req, MPI_STATUS_IGNORE);
  expect(qr, int64_t{3} * size, "MPI_Ireduce_scatter_block_c");

  std::vector<int> vs(7 * n, rank), vr(7 * n);
  std::vector<MPI_Count> vc(n, 7);
  std::vector<MPI_Aint> vd(n);
  for (size_t i = 0; i < n; ++i) vd[i] = MPI_Aint(7 * i);
  check(MPI_Alltoallv_c(vs.data(), vc.data(), vd.data(), MPI_INT, vr.data(), vc.data(), vd.data(),
                        MPI_INT, world),
        "13");
  for (size_t i = 0; i < vr.size(); ++i) wrong += vr[i] != int(i / 7);

  std::vector<short> s(6, 1), sr(6);  // no collbench dtype: recorded as 12 bytes
  check(MPI_Allreduce_c(s.data(), sr.data(), 6, MPI_SHORT, MPI_SUM, world), "14");
  expect(sr, short(size), "MPI_Allreduce_c of MPI_SHORT");

  // Counts above 2^31-1, on a communicator of one rank (no data moves).
  const MPI_Count big = 3'000'000'000;
  check(MPI_Bcast_c(reserve(size_t(big), PROT_READ | PROT_WRITE), big, MPI_CHAR, 0, MPI_COMM_SELF),
        "15");
  const MPI_Count huge = MPI_Count{1} << 41;  // 2 TiB: over the trace's 1 TiB per operation
  void* nowhere = reserve(size_t(huge), PROT_NONE);
  check(MPI_Bcast_c(nowhere, huge, MPI_CHAR, 0, MPI_COMM_SELF), "16");
  MPI_Datatype mib;  // and 2 TiB with an int count: 2^21 elements of 1 MiB
  MPI_Type_contiguous(1 << 20, MPI_CHAR, &mib);
  MPI_Type_commit(&mib);
  check(MPI_Bcast(nowhere, 1 << 21, mib, 0, MPI_COMM_SELF), "17");
  MPI_Type_free(&mib);

  check(MPI_Barrier(world), "18");
  if (rank == 0) std::printf("record_app_c: %d ranks, %d wrong results\n", size, wrong);
  MPI_Finalize();
  return wrong ? 1 : 0;
}

#else

int main() {
  std::printf("record_app_c: no MPI-4 large-count bindings in this MPI (MPI_VERSION %d)\n",
              MPI_VERSION);
  return 0;
}

#endif
