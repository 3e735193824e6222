/* The timing loops of OSU Micro-Benchmarks 7.x, alone: what scripts/omb_fidelity.sh runs
 * beside cb_latency, cb_bcast, cb_allreduce and cb_alltoall (--backend mpi) to show what
 * collbench's harness adds to a measurement (there is no OMB build on this machine).
 *
 *   mpirun -n 2 omb_loop latency|bcast|allreduce|alltoall MIN MAX [ITERS SKIP] [--two-comms]
 *
 * Sizes double from MIN to MAX (bytes; allreduce: multiples of 4, MPI_FLOAT as OMB).
 * Iterations and skip default to OMB's (latency 10000/100, collectives 1000/100; above
 * 8 KiB 1000/10 and 100/10); given, they hold for every size, as OMB's -i and -x.
 * Timed as OMB times (osu_latency.c, osu_bcast.c, osu_allreduce.c, osu_alltoall.c):
 *  - latency: rank 0 reads MPI_Wtime before and after each send + receive after the skip
 *    iterations; latency = sum / (2 x iterations), rank 0's;
 *  - collectives: a barrier, then per iteration MPI_Wtime, the call, MPI_Wtime (summed
 *    after the skip iterations), MPI_Barrier; each rank's mean, then the average over ranks
 *    (MPI_Reduce SUM / ranks), as OMB's Avg Latency.
 * --two-comms runs the collective on one duplicate of MPI_COMM_WORLD and the barrier on
 * another, as collbench did before its mpi backend's barrier moved onto the collective's
 * own communicator: the difference isolates that effect.
 * Prints "SIZE LATENCY_US" per size on rank 0. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { kLargeMessage = 8192 };

static MPI_Comm comm_op, comm_barrier;
static int rank, nranks;

enum Coll { kBcast, kAllreduce, kAlltoall };

/* One collective call with OMB's arguments; inlined into the loop, so the switch is all it
 * adds to OMB's loop (which names its one collective directly). */
static inline void collective(enum Coll coll, char* in, char* out, int size) {
  switch (coll) {
    case kBcast:
      MPI_Bcast(out, size, MPI_CHAR, 0, comm_op);
      break;
    case kAllreduce:
      MPI_Allreduce(in, out, size / 4, MPI_FLOAT, MPI_SUM, comm_op);
      break;
    case kAlltoall:
      MPI_Alltoall(in, size, MPI_CHAR, out, size, MPI_CHAR, comm_op);
      break;
  }
}

/* The loop in a function of its own, so that an instruction profile (callgrind) can tell
 * its instructions from the rest. */
__attribute__((noinline)) static double collective_loop(enum Coll coll, char* in, char* out,
                                                        int size, int iters, int skip) {
  double timer = 0;
  MPI_Barrier(comm_barrier);
  for (int i = 0; i < iters + skip; ++i) {
    const double t_start = MPI_Wtime();
    collective(coll, in, out, size);
    const double t_stop = MPI_Wtime();
    if (i >= skip) timer += t_stop - t_start;
    MPI_Barrier(comm_barrier);
  }
  return timer * 1e6 / iters;
}

__attribute__((noinline)) static double latency_loop(char* s_buf, char* r_buf, int size, int iters,
                                                     int skip) {
  double total = 0;
  MPI_Barrier(comm_op);
  for (int i = 0; i < iters + skip; ++i) {
    if (rank == 0) {
      const double t_start = MPI_Wtime();
      MPI_Send(s_buf, size, MPI_CHAR, 1, 1, comm_op);
      MPI_Recv(r_buf, size, MPI_CHAR, 1, 1, comm_op, MPI_STATUS_IGNORE);
      const double t_end = MPI_Wtime();
      if (i >= skip) total += t_end - t_start;
    } else if (rank == 1) {
      MPI_Recv(r_buf, size, MPI_CHAR, 0, 1, comm_op, MPI_STATUS_IGNORE);
      MPI_Send(s_buf, size, MPI_CHAR, 0, 1, comm_op);
    }
  }
  return total * 1e6 / (2.0 * iters);
}

static int usage(void) {
  if (rank == 0)
    fprintf(stderr,
            "usage: omb_loop latency|bcast|allreduce|alltoall MIN MAX [ITERS SKIP] "
            "[--two-comms]\n");
  MPI_Finalize();
  return 2;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  int two_comms = 0;
  if (argc > 1 && strcmp(argv[argc - 1], "--two-comms") == 0) {
    two_comms = 1;
    --argc;
  }
  if (argc != 4 && argc != 6) return usage();
  const char* bench = argv[1];
  const int latency = strcmp(bench, "latency") == 0;
  const enum Coll coll = strcmp(bench, "allreduce") == 0  ? kAllreduce
                         : strcmp(bench, "alltoall") == 0 ? kAlltoall
                                                          : kBcast;
  if (!latency && coll == kBcast && strcmp(bench, "bcast") != 0) return usage();
  const long min = atol(argv[2]), max = atol(argv[3]);
  const int given = argc == 6;
  const int fixed_iters = given ? atoi(argv[4]) : 0, fixed_skip = given ? atoi(argv[5]) : 0;
  if (min < 1 || max < min || max > (1L << 26) || (given && (fixed_iters < 1 || fixed_skip < 0)) ||
      (latency && nranks != 2))
    return usage();

  comm_op = comm_barrier = MPI_COMM_WORLD;
  if (two_comms) {
    MPI_Comm_dup(MPI_COMM_WORLD, &comm_op);
    MPI_Comm_dup(MPI_COMM_WORLD, &comm_barrier);
  }
  const size_t bytes = (size_t)max * (latency ? 1 : (size_t)nranks);
  char* in = malloc(bytes);
  char* out = malloc(bytes);
  if (!in || !out) return usage();
  memset(in, 1, bytes);
  memset(out, 0, bytes);

  for (long size = min; size <= max; size *= 2) {
    if (coll == kAllreduce && size % 4 != 0) continue;
    const int large = size > kLargeMessage;
    const int iters = given ? fixed_iters : latency ? (large ? 1000 : 10000) : (large ? 100 : 1000);
    const int skip = given ? fixed_skip : latency ? (large ? 10 : 100) : (large ? 10 : 100);
    double mine = latency ? latency_loop(in, out, (int)size, iters, skip)
                          : collective_loop(coll, in, out, (int)size, iters, skip);
    double sum = mine;
    if (!latency) MPI_Reduce(&mine, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) printf("%ld %.4f\n", size, latency ? mine : sum / nranks);
    MPI_Barrier(MPI_COMM_WORLD);
  }
  free(in);
  free(out);
  if (two_comms) {
    MPI_Comm_free(&comm_op);
    MPI_Comm_free(&comm_barrier);
  }
  MPI_Finalize();
  return 0;
}
