/* What a communicator costs (issue 39), with and without libcb_engine_preload.so: a plain
 * MPI program, no collbench headers (scripts/preload_comm_cost.py runs it both ways).
 *
 *   cb_comm_cost MODE ROUNDS
 *
 * One round makes a communicator, maybe runs one 8-byte MPI_Allreduce on it, and frees it:
 *   dup            MPI_Comm_dup + MPI_Comm_free
 *   dup_sum        ... + MPI_Allreduce(1 double, MPI_SUM): a call the engine takes
 *   dup_bor        ... + MPI_Allreduce(1 long, MPI_BOR): a call the preload passes to MPI
 *   split, split_sum, split_bor   the same with MPI_Comm_split, colour (rank / 2 + round) % 2
 *                  (2-rank communicators whose members change from round to round at 4 ranks)
 * Five rounds first (not timed), then ROUNDS timed between barriers; then ROUNDS / 10 (at
 * least 5) more rounds, in which every rank lists the /dev/shm files it maps
 * (/proc/self/maps) after the round's allreduce and rank 0 sums the distinct ones over the
 * ranks: the high-water mark of the node's /dev/shm mapped by the program (MPI's own
 * segments included). Rank 0 prints one JSON object:
 *   {"mode": ..., "ranks": N, "rounds": R, "us_per_comm": slowest rank's time / R,
 *    "shm_high_water_bytes": ..., "shm_start_bytes": the same before the first round}
 * Exit status 1 on a wrong allreduce result. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_FILES 256

struct shm_file {
  unsigned long long inode, bytes;
};

/* This rank's mapped /dev/shm files (one entry per file: the largest mapping's end). */
static int my_shm(struct shm_file* out) {
  FILE* f = fopen("/proc/self/maps", "r");
  char line[512];
  int n = 0;
  if (!f) return 0;
  while (fgets(line, sizeof line, f)) {
    unsigned long long lo, hi, off, inode;
    char path[400] = "";
    if (sscanf(line, "%llx-%llx %*s %llx %*s %llu %399[^\n]", &lo, &hi, &off, &inode, path) < 4)
      continue;
    if (!strstr(path, "/dev/shm/")) continue;
    int i = 0;
    while (i < n && out[i].inode != inode) ++i;
    if (i == n) {
      if (n == MAX_FILES) continue;
      out[n].inode = inode;
      out[n].bytes = 0;
      ++n;
    }
    if (off + (hi - lo) > out[i].bytes) out[i].bytes = off + (hi - lo);
  }
  fclose(f);
  return n;
}

/* The distinct /dev/shm files mapped by every rank of MPI_COMM_WORLD, summed (rank 0). */
static unsigned long long node_shm(int rank, int size) {
  struct shm_file mine[MAX_FILES];
  struct shm_file* all = malloc(sizeof(struct shm_file) * MAX_FILES * (size_t)size);
  int n = my_shm(mine);
  for (int i = n; i < MAX_FILES; ++i) mine[i].inode = mine[i].bytes = 0;
  PMPI_Gather(mine, 2 * MAX_FILES, MPI_UNSIGNED_LONG_LONG, all, 2 * MAX_FILES,
              MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
  unsigned long long total = 0;
  if (rank == 0)
    for (int i = 0; i < MAX_FILES * size; ++i) {
      if (!all[i].bytes) continue;
      int seen = 0;
      for (int j = 0; j < i && !seen; ++j) seen = all[j].inode == all[i].inode && all[j].bytes;
      if (!seen) total += all[i].bytes;
    }
  free(all);
  return total;
}

static int g_errors = 0;

/* One round: make, maybe reduce, free. */
static void round_(const char* mode, int round, int rank, int size) {
  MPI_Comm c;
  if (!strncmp(mode, "dup", 3))
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
  else
    MPI_Comm_split(MPI_COMM_WORLD, (rank / 2 + round) % 2, rank, &c);
  int n = 0;
  MPI_Comm_size(c, &n);
  if (strstr(mode, "_sum")) {
    double in = rank + 1.0, out = 0;
    MPI_Allreduce(&in, &out, 1, MPI_DOUBLE, MPI_SUM, c);
    if (out < n || out > (double)n * size) ++g_errors; /* n ranks' rank + 1 */
  } else if (strstr(mode, "_bor")) {
    long in = 1L << (rank % 63), out = 0;
    MPI_Allreduce(&in, &out, 1, MPI_LONG, MPI_BOR, c);
    if (!(out & in)) ++g_errors;
  }
  MPI_Comm_free(&c);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const char* modes[] = {"dup", "dup_sum", "dup_bor", "split", "split_sum", "split_bor"};
  int known = 0;
  for (size_t i = 0; argc == 3 && i < sizeof modes / sizeof *modes; ++i)
    known |= !strcmp(argv[1], modes[i]);
  const int rounds = argc == 3 ? atoi(argv[2]) : 0;
  if (!known || rounds <= 0) {
    if (rank == 0)
      fprintf(stderr,
              "usage: %s dup|dup_sum|dup_bor|split|split_sum|split_bor ROUNDS (ROUNDS > 0)\n",
              argv[0]);
    MPI_Finalize();
    return 2;
  }
  const char* mode = argv[1];
  const unsigned long long shm_start = node_shm(rank, size);
  for (int r = 0; r < 5; ++r) round_(mode, r, rank, size);
  PMPI_Barrier(MPI_COMM_WORLD);
  const double t0 = MPI_Wtime();
  for (int r = 0; r < rounds; ++r) round_(mode, r, rank, size);
  double mine = MPI_Wtime() - t0, slowest = 0;
  PMPI_Reduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  unsigned long long high = shm_start;
  const int sampled = rounds / 10 > 5 ? rounds / 10 : 5;
  for (int r = 0; r < sampled; ++r) {
    MPI_Comm c;
    if (!strncmp(mode, "dup", 3))
      MPI_Comm_dup(MPI_COMM_WORLD, &c);
    else
      MPI_Comm_split(MPI_COMM_WORLD, (rank / 2 + r) % 2, rank, &c);
    if (strstr(mode, "_sum")) {
      double in = 1, out = 0;
      MPI_Allreduce(&in, &out, 1, MPI_DOUBLE, MPI_SUM, c);
    } else if (strstr(mode, "_bor")) {
      long in = 1, out = 0;
      MPI_Allreduce(&in, &out, 1, MPI_LONG, MPI_BOR, c);
    }
    const unsigned long long now = node_shm(rank, size);
    if (now > high) high = now;
    MPI_Comm_free(&c);
  }
  int errors = 0;
  PMPI_Reduce(&g_errors, &errors, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0)
    printf(
        "{\"mode\": \"%s\", \"ranks\": %d, \"rounds\": %d, \"us_per_comm\": %.3f, "
        "\"shm_high_water_bytes\": %llu, \"shm_start_bytes\": %llu, \"errors\": %d}\n",
        mode, size, rounds, slowest / rounds * 1e6, high, shm_start, errors);
  MPI_Finalize();
  return errors ? 1 : 0;
}
