// A small MPI application for the recorder test (tests/integration/test_replay.py): it
// issues a known sequence of the collectives libcb_record.so intercepts, with known
// sizes, types, ops and roots. The test records it and compares the trace with the list
// it expects; keep the two in step. Runs on any number of ranks >= 2.
#include <mpi.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <vector>

namespace {

void check(int rc, const char* what) {
  if (rc != MPI_SUCCESS) {
    std::fprintf(stderr, "record_app: %s failed\n", what);
    MPI_Abort(MPI_COMM_WORLD, 3);
  }
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const size_t n = static_cast<size_t>(size);
  MPI_Request req;

  std::vector<float> f(1000, 1.0f), g(1000);
  check(MPI_Allreduce(f.data(), g.data(), 1000, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD), "1");

  usleep(3000);  // "compute": the next op's compute_us is at least 3000
  std::vector<double> d(256, rank);
  check(MPI_Iallreduce(MPI_IN_PLACE, d.data(), 256, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD, &req),
        "2");
  MPI_Wait(&req, MPI_STATUS_IGNORE);

  std::vector<long> l(10, rank);
  check(MPI_Bcast(l.data(), 10, MPI_LONG, 1, MPI_COMM_WORLD), "3");

  std::vector<char> c(33, 'x');
  check(MPI_Ibcast(c.data(), 33, MPI_CHAR, 0, MPI_COMM_WORLD, &req), "4");
  MPI_Wait(&req, MPI_STATUS_IGNORE);

  std::vector<int> is(8 * n, rank), ir(8 * n);
  check(MPI_Alltoall(is.data(), 8, MPI_INT, ir.data(), 8, MPI_INT, MPI_COMM_WORLD), "5");

  std::vector<float> fs(4 * n, 1.0f), fr(4 * n);
  check(MPI_Ialltoall(fs.data(), 4, MPI_FLOAT, fr.data(), 4, MPI_FLOAT, MPI_COMM_WORLD, &req), "6");
  MPI_Wait(&req, MPI_STATUS_IGNORE);

  std::vector<double> rs(16, rank), rr(16);
  check(MPI_Reduce(rs.data(), rr.data(), 16, MPI_DOUBLE, MPI_MIN, 0, MPI_COMM_WORLD), "7");

  std::vector<int> gs(5, rank), gr(5 * n);
  check(MPI_Allgather(gs.data(), 5, MPI_INT, gr.data(), 5, MPI_INT, MPI_COMM_WORLD), "8");

  std::vector<short> s(6, 1), sr(6);  // no collbench dtype: recorded as 12 bytes
  check(MPI_Allreduce(s.data(), sr.data(), 6, MPI_SHORT, MPI_SUM, MPI_COMM_WORLD), "9");

  MPI_Comm self;  // a communicator of one rank: comm_size 1 in the trace
  MPI_Comm_split(MPI_COMM_WORLD, rank, 0, &self);
  std::vector<int64_t> q(3, 1), qr(3);
  check(MPI_Allreduce(q.data(), qr.data(), 3, MPI_INT64_T, MPI_SUM, self), "10");
  MPI_Comm_free(&self);

  std::vector<int> b(4, 7), br(4);  // a predefined op without a collbench equivalent
  check(MPI_Allreduce(b.data(), br.data(), 4, MPI_INT, MPI_BAND, MPI_COMM_WORLD), "11");

  check(MPI_Allreduce(f.data(), g.data(), 0, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD), "12");  // no data

  check(MPI_Barrier(MPI_COMM_WORLD), "13");
  std::vector<float> rsb(8 * n, 1.0f), rsr(8);
  check(MPI_Reduce_scatter_block(rsb.data(), rsr.data(), 8, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD),
        "14");
  check(MPI_Iallgather(gs.data(), 5, MPI_INT, gr.data(), 5, MPI_INT, MPI_COMM_WORLD, &req), "15");
  MPI_Wait(&req, MPI_STATUS_IGNORE);
  std::vector<int> vs(7 * n, 1), vr(7 * n), vc(n, 7), vd(n);
  for (int i = 0; i < size; ++i) vd[size_t(i)] = 7 * i;
  check(MPI_Alltoallv(vs.data(), vc.data(), vd.data(), MPI_INT, vr.data(), vc.data(), vd.data(),
                      MPI_INT, MPI_COMM_WORLD),
        "16");
  std::vector<int> ga(3 * n, rank), gb(3 * n);
  check(MPI_Gather(ga.data(), 3, MPI_INT, gb.data(), 3, MPI_INT, 1, MPI_COMM_WORLD), "17");
  check(MPI_Iscatter(gb.data(), 2, MPI_INT, ga.data(), 2, MPI_INT, 0, MPI_COMM_WORLD, &req), "18");
  MPI_Wait(&req, MPI_STATUS_IGNORE);

  MPI_Finalize();
  return 0;
}
