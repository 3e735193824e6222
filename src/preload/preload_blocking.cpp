// libcb_engine_preload.so: the blocking MPI calls that can wait for another process and
// that neither preload.cpp (the routed collectives) nor preload_progress.cpp (point to
// point, probes, the unrouted collectives, communicator constructors, waits and tests)
// interposes: one-sided synchronisation and window constructors, file I/O, neighbourhood
// collectives, the persistent collectives' initialisation, intercommunicator constructors,
// MPI_Buffer_detach. Each runs as MPI's own under BlockedProgress (comm_engine.hpp), so
// that a peer waiting for one of this process's engine operations is not stalled by it;
// one atomic load when nothing is in flight. Also MPI_Init's side of the progress thread
// (CB_PRELOAD_PROGRESS=thread) and MPI_Query_thread. docs/preload.md, "Progress".
#include <mpi.h>

#include <algorithm>
#include <cstdio>

#include "preload/comm_engine.hpp"
#include "preload/guard.hpp"

#define CB_EXPORT __attribute__((visibility("default")))

namespace cb::preload {
namespace {
// The thread level the program was told (-1: MPI's own answer).
int g_reported_level = -1;
}  // namespace

int init_mpi(int* argc, char*** argv, int required, int* provided) {
  if (!settings().progress_thread || !settings().enabled)
    return required < 0 ? PMPI_Init(argc, argv) : PMPI_Init_thread(argc, argv, required, provided);
  // The program's level: what it asked for (MPI_Init: single), never more than provided.
  const int asked = required < 0 ? MPI_THREAD_SINGLE : required;
  int got = MPI_THREAD_SINGLE;
  const int rc = PMPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &got);
  if (rc != MPI_SUCCESS) return rc;
  g_reported_level = std::min(asked, got);
  if (provided) *provided = g_reported_level;
  if (got == MPI_THREAD_MULTIPLE) {
    enable_progress_thread();
  } else {
    int rank = 0;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0)
      std::fprintf(stderr,
                   "cb_engine_preload: CB_PRELOAD_PROGRESS=thread needs MPI_THREAD_MULTIPLE, "
                   "which the MPI library does not provide (it gave %d): no progress thread\n",
                   got);
  }
  return rc;
}

}  // namespace cb::preload

using namespace cb::preload;

extern "C" {

CB_EXPORT int MPI_Query_thread(int* provided) {
  if (g_reported_level < 0) return PMPI_Query_thread(provided);
  *provided = g_reported_level;
  return MPI_SUCCESS;
}

// A local test that an application may loop on: advances the engine once first.
CB_EXPORT int MPI_Win_test(MPI_Win win, int* flag) {
  if (!inside_engine() && operations_in_flight() > 0) progress_all();
  return PMPI_Win_test(win, flag);
}

#define CB_BLOCKING(NAME, PARAMS, ARGS) \
  CB_EXPORT int MPI_##NAME PARAMS {     \
    BlockedProgress progress;           \
    return PMPI_##NAME ARGS;            \
  }

// ---- one-sided: synchronisation, and the collective window constructors and destructor.
CB_BLOCKING(Win_fence, (int a, MPI_Win w), (a, w))
CB_BLOCKING(Win_start, (MPI_Group g, int a, MPI_Win w), (g, a, w))
CB_BLOCKING(Win_complete, (MPI_Win w), (w))
CB_BLOCKING(Win_wait, (MPI_Win w), (w))
CB_BLOCKING(Win_lock, (int type, int rank, int a, MPI_Win w), (type, rank, a, w))
CB_BLOCKING(Win_unlock, (int rank, MPI_Win w), (rank, w))
CB_BLOCKING(Win_lock_all, (int a, MPI_Win w), (a, w))
CB_BLOCKING(Win_unlock_all, (MPI_Win w), (w))
CB_BLOCKING(Win_flush, (int rank, MPI_Win w), (rank, w))
CB_BLOCKING(Win_flush_all, (MPI_Win w), (w))
CB_BLOCKING(Win_flush_local, (int rank, MPI_Win w), (rank, w))
CB_BLOCKING(Win_flush_local_all, (MPI_Win w), (w))
CB_BLOCKING(Win_create_dynamic, (MPI_Info i, MPI_Comm c, MPI_Win* w), (i, c, w))
CB_BLOCKING(Win_free, (MPI_Win * w), (w))
// The large-count forms differ in the displacement unit's type.
#define CB_WIN(SFX, U)                                                                           \
  CB_BLOCKING(Win_create##SFX, (void* b, MPI_Aint n, U u, MPI_Info i, MPI_Comm c, MPI_Win* w),   \
              (b, n, u, i, c, w))                                                                \
  CB_BLOCKING(Win_allocate##SFX, (MPI_Aint n, U u, MPI_Info i, MPI_Comm c, void* b, MPI_Win* w), \
              (n, u, i, c, b, w))                                                                \
  CB_BLOCKING(Win_allocate_shared##SFX,                                                          \
              (MPI_Aint n, U u, MPI_Info i, MPI_Comm c, void* b, MPI_Win* w), (n, u, i, c, b, w))
CB_WIN(, int)
#if MPI_VERSION >= 4
CB_WIN(_c, MPI_Aint)
#endif
#undef CB_WIN

// ---- file I/O: the collective calls and those that may wait for another process (the
// shared file pointer, file locks).
CB_BLOCKING(File_open, (MPI_Comm c, const char* name, int amode, MPI_Info i, MPI_File* f),
            (c, name, amode, i, f))
CB_BLOCKING(File_close, (MPI_File * f), (f))
CB_BLOCKING(File_set_size, (MPI_File f, MPI_Offset n), (f, n))
CB_BLOCKING(File_preallocate, (MPI_File f, MPI_Offset n), (f, n))
CB_BLOCKING(File_set_view,
            (MPI_File f, MPI_Offset d, MPI_Datatype e, MPI_Datatype t, const char* rep, MPI_Info i),
            (f, d, e, t, rep, i))
CB_BLOCKING(File_set_info, (MPI_File f, MPI_Info i), (f, i))
CB_BLOCKING(File_set_atomicity, (MPI_File f, int flag), (f, flag))
CB_BLOCKING(File_sync, (MPI_File f), (f))
CB_BLOCKING(File_seek_shared, (MPI_File f, MPI_Offset o, int whence), (f, o, whence))
CB_BLOCKING(File_read_all_end, (MPI_File f, void* b, MPI_Status* s), (f, b, s))
CB_BLOCKING(File_read_at_all_end, (MPI_File f, void* b, MPI_Status* s), (f, b, s))
CB_BLOCKING(File_read_ordered_end, (MPI_File f, void* b, MPI_Status* s), (f, b, s))
CB_BLOCKING(File_write_all_end, (MPI_File f, const void* b, MPI_Status* s), (f, b, s))
CB_BLOCKING(File_write_at_all_end, (MPI_File f, const void* b, MPI_Status* s), (f, b, s))
CB_BLOCKING(File_write_ordered_end, (MPI_File f, const void* b, MPI_Status* s), (f, b, s))
// Reads and writes, with both count types where MPI 4 has the large-count form.
#define CB_FILE_IO(SFX, C)                                                                        \
  CB_BLOCKING(File_read##SFX, (MPI_File f, void* b, C n, MPI_Datatype t, MPI_Status* s),          \
              (f, b, n, t, s))                                                                    \
  CB_BLOCKING(File_read_all##SFX, (MPI_File f, void* b, C n, MPI_Datatype t, MPI_Status* s),      \
              (f, b, n, t, s))                                                                    \
  CB_BLOCKING(File_read_shared##SFX, (MPI_File f, void* b, C n, MPI_Datatype t, MPI_Status* s),   \
              (f, b, n, t, s))                                                                    \
  CB_BLOCKING(File_read_ordered##SFX, (MPI_File f, void* b, C n, MPI_Datatype t, MPI_Status* s),  \
              (f, b, n, t, s))                                                                    \
  CB_BLOCKING(File_read_at##SFX,                                                                  \
              (MPI_File f, MPI_Offset o, void* b, C n, MPI_Datatype t, MPI_Status* s),            \
              (f, o, b, n, t, s))                                                                 \
  CB_BLOCKING(File_read_at_all##SFX,                                                              \
              (MPI_File f, MPI_Offset o, void* b, C n, MPI_Datatype t, MPI_Status* s),            \
              (f, o, b, n, t, s))                                                                 \
  CB_BLOCKING(File_write##SFX, (MPI_File f, const void* b, C n, MPI_Datatype t, MPI_Status* s),   \
              (f, b, n, t, s))                                                                    \
  CB_BLOCKING(File_write_all##SFX,                                                                \
              (MPI_File f, const void* b, C n, MPI_Datatype t, MPI_Status* s), (f, b, n, t, s))   \
  CB_BLOCKING(File_write_shared##SFX,                                                             \
              (MPI_File f, const void* b, C n, MPI_Datatype t, MPI_Status* s), (f, b, n, t, s))   \
  CB_BLOCKING(File_write_ordered##SFX,                                                            \
              (MPI_File f, const void* b, C n, MPI_Datatype t, MPI_Status* s), (f, b, n, t, s))   \
  CB_BLOCKING(File_write_at##SFX,                                                                 \
              (MPI_File f, MPI_Offset o, const void* b, C n, MPI_Datatype t, MPI_Status* s),      \
              (f, o, b, n, t, s))                                                                 \
  CB_BLOCKING(File_write_at_all##SFX,                                                             \
              (MPI_File f, MPI_Offset o, const void* b, C n, MPI_Datatype t, MPI_Status* s),      \
              (f, o, b, n, t, s))                                                                 \
  CB_BLOCKING(File_read_all_begin##SFX, (MPI_File f, void* b, C n, MPI_Datatype t), (f, b, n, t)) \
  CB_BLOCKING(File_read_ordered_begin##SFX, (MPI_File f, void* b, C n, MPI_Datatype t),           \
              (f, b, n, t))                                                                       \
  CB_BLOCKING(File_read_at_all_begin##SFX,                                                        \
              (MPI_File f, MPI_Offset o, void* b, C n, MPI_Datatype t), (f, o, b, n, t))          \
  CB_BLOCKING(File_write_all_begin##SFX, (MPI_File f, const void* b, C n, MPI_Datatype t),        \
              (f, b, n, t))                                                                       \
  CB_BLOCKING(File_write_ordered_begin##SFX, (MPI_File f, const void* b, C n, MPI_Datatype t),    \
              (f, b, n, t))                                                                       \
  CB_BLOCKING(File_write_at_all_begin##SFX,                                                       \
              (MPI_File f, MPI_Offset o, const void* b, C n, MPI_Datatype t), (f, o, b, n, t))
CB_FILE_IO(, int)
#if MPI_VERSION >= 4
CB_FILE_IO(_c, MPI_Count)
#endif
#undef CB_FILE_IO

// ---- neighbourhood collectives (blocking); the non-blocking ones complete in the waits.
#define CB_NEIGHBOR(SFX, C, D)                                                                     \
  CB_BLOCKING(Neighbor_allgather##SFX,                                                             \
              (const void* s, C sn, MPI_Datatype st, void* r, C rn, MPI_Datatype rt, MPI_Comm c),  \
              (s, sn, st, r, rn, rt, c))                                                           \
  CB_BLOCKING(Neighbor_alltoall##SFX,                                                              \
              (const void* s, C sn, MPI_Datatype st, void* r, C rn, MPI_Datatype rt, MPI_Comm c),  \
              (s, sn, st, r, rn, rt, c))                                                           \
  CB_BLOCKING(Neighbor_allgatherv##SFX,                                                            \
              (const void* s, C sn, MPI_Datatype st, void* r, const C rn[], const D d[],           \
               MPI_Datatype rt, MPI_Comm c),                                                       \
              (s, sn, st, r, rn, d, rt, c))                                                        \
  CB_BLOCKING(Neighbor_alltoallv##SFX,                                                             \
              (const void* s, const C sn[], const D sd[], MPI_Datatype st, void* r, const C rn[],  \
               const D rd[], MPI_Datatype rt, MPI_Comm c),                                         \
              (s, sn, sd, st, r, rn, rd, rt, c))                                                   \
  CB_BLOCKING(Neighbor_alltoallw##SFX,                                                             \
              (const void* s, const C sn[], const MPI_Aint sd[], const MPI_Datatype st[], void* r, \
               const C rn[], const MPI_Aint rd[], const MPI_Datatype rt[], MPI_Comm c),            \
              (s, sn, sd, st, r, rn, rd, rt, c))
CB_NEIGHBOR(, int, int)
#if MPI_VERSION >= 4
CB_NEIGHBOR(_c, MPI_Count, MPI_Aint)
#endif
#undef CB_NEIGHBOR

// ---- the persistent collectives' initialisation (MPI 4: non-local, it may synchronise);
// MPI_Start is local, and the waits and tests complete the requests (preload_progress.cpp).
// Open MPI 5.0 has them (int counts only) while it reports MPI 3.1.
#if MPI_VERSION >= 4 || (defined(OMPI_MAJOR_VERSION) && OMPI_MAJOR_VERSION >= 5)
#define CB_HAS_PERSISTENT_COLLECTIVES 1
#endif
#ifdef CB_HAS_PERSISTENT_COLLECTIVES
#define CB_PERSISTENT(SFX, C, D)                                                                   \
  CB_BLOCKING(Allreduce_init##SFX,                                                                 \
              (const void* s, void* r, C n, MPI_Datatype t, MPI_Op o, MPI_Comm c, MPI_Info i,      \
               MPI_Request* q),                                                                    \
              (s, r, n, t, o, c, i, q))                                                            \
  CB_BLOCKING(Reduce_init##SFX,                                                                    \
              (const void* s, void* r, C n, MPI_Datatype t, MPI_Op o, int root, MPI_Comm c,        \
               MPI_Info i, MPI_Request* q),                                                        \
              (s, r, n, t, o, root, c, i, q))                                                      \
  CB_BLOCKING(Reduce_scatter_block_init##SFX,                                                      \
              (const void* s, void* r, C n, MPI_Datatype t, MPI_Op o, MPI_Comm c, MPI_Info i,      \
               MPI_Request* q),                                                                    \
              (s, r, n, t, o, c, i, q))                                                            \
  CB_BLOCKING(Reduce_scatter_init##SFX,                                                            \
              (const void* s, void* r, const C rn[], MPI_Datatype t, MPI_Op o, MPI_Comm c,         \
               MPI_Info i, MPI_Request* q),                                                        \
              (s, r, rn, t, o, c, i, q))                                                           \
  CB_BLOCKING(Scan_init##SFX,                                                                      \
              (const void* s, void* r, C n, MPI_Datatype t, MPI_Op o, MPI_Comm c, MPI_Info i,      \
               MPI_Request* q),                                                                    \
              (s, r, n, t, o, c, i, q))                                                            \
  CB_BLOCKING(Exscan_init##SFX,                                                                    \
              (const void* s, void* r, C n, MPI_Datatype t, MPI_Op o, MPI_Comm c, MPI_Info i,      \
               MPI_Request* q),                                                                    \
              (s, r, n, t, o, c, i, q))                                                            \
  CB_BLOCKING(Bcast_init##SFX,                                                                     \
              (void* b, C n, MPI_Datatype t, int root, MPI_Comm c, MPI_Info i, MPI_Request* q),    \
              (b, n, t, root, c, i, q))                                                            \
  CB_BLOCKING(Allgather_init##SFX,                                                                 \
              (const void* s, C sn, MPI_Datatype st, void* r, C rn, MPI_Datatype rt, MPI_Comm c,   \
               MPI_Info i, MPI_Request* q),                                                        \
              (s, sn, st, r, rn, rt, c, i, q))                                                     \
  CB_BLOCKING(Alltoall_init##SFX,                                                                  \
              (const void* s, C sn, MPI_Datatype st, void* r, C rn, MPI_Datatype rt, MPI_Comm c,   \
               MPI_Info i, MPI_Request* q),                                                        \
              (s, sn, st, r, rn, rt, c, i, q))                                                     \
  CB_BLOCKING(Neighbor_allgather_init##SFX,                                                        \
              (const void* s, C sn, MPI_Datatype st, void* r, C rn, MPI_Datatype rt, MPI_Comm c,   \
               MPI_Info i, MPI_Request* q),                                                        \
              (s, sn, st, r, rn, rt, c, i, q))                                                     \
  CB_BLOCKING(Neighbor_alltoall_init##SFX,                                                         \
              (const void* s, C sn, MPI_Datatype st, void* r, C rn, MPI_Datatype rt, MPI_Comm c,   \
               MPI_Info i, MPI_Request* q),                                                        \
              (s, sn, st, r, rn, rt, c, i, q))                                                     \
  CB_BLOCKING(Gather_init##SFX,                                                                    \
              (const void* s, C sn, MPI_Datatype st, void* r, C rn, MPI_Datatype rt, int root,     \
               MPI_Comm c, MPI_Info i, MPI_Request* q),                                            \
              (s, sn, st, r, rn, rt, root, c, i, q))                                               \
  CB_BLOCKING(Scatter_init##SFX,                                                                   \
              (const void* s, C sn, MPI_Datatype st, void* r, C rn, MPI_Datatype rt, int root,     \
               MPI_Comm c, MPI_Info i, MPI_Request* q),                                            \
              (s, sn, st, r, rn, rt, root, c, i, q))                                               \
  CB_BLOCKING(Allgatherv_init##SFX,                                                                \
              (const void* s, C sn, MPI_Datatype st, void* r, const C rn[], const D d[],           \
               MPI_Datatype rt, MPI_Comm c, MPI_Info i, MPI_Request* q),                           \
              (s, sn, st, r, rn, d, rt, c, i, q))                                                  \
  CB_BLOCKING(Neighbor_allgatherv_init##SFX,                                                       \
              (const void* s, C sn, MPI_Datatype st, void* r, const C rn[], const D d[],           \
               MPI_Datatype rt, MPI_Comm c, MPI_Info i, MPI_Request* q),                           \
              (s, sn, st, r, rn, d, rt, c, i, q))                                                  \
  CB_BLOCKING(Gatherv_init##SFX,                                                                   \
              (const void* s, C sn, MPI_Datatype st, void* r, const C rn[], const D d[],           \
               MPI_Datatype rt, int root, MPI_Comm c, MPI_Info i, MPI_Request* q),                 \
              (s, sn, st, r, rn, d, rt, root, c, i, q))                                            \
  CB_BLOCKING(Scatterv_init##SFX,                                                                  \
              (const void* s, const C sn[], const D d[], MPI_Datatype st, void* r, C rn,           \
               MPI_Datatype rt, int root, MPI_Comm c, MPI_Info i, MPI_Request* q),                 \
              (s, sn, d, st, r, rn, rt, root, c, i, q))                                            \
  CB_BLOCKING(Alltoallv_init##SFX,                                                                 \
              (const void* s, const C sn[], const D sd[], MPI_Datatype st, void* r, const C rn[],  \
               const D rd[], MPI_Datatype rt, MPI_Comm c, MPI_Info i, MPI_Request* q),             \
              (s, sn, sd, st, r, rn, rd, rt, c, i, q))                                             \
  CB_BLOCKING(Neighbor_alltoallv_init##SFX,                                                        \
              (const void* s, const C sn[], const D sd[], MPI_Datatype st, void* r, const C rn[],  \
               const D rd[], MPI_Datatype rt, MPI_Comm c, MPI_Info i, MPI_Request* q),             \
              (s, sn, sd, st, r, rn, rd, rt, c, i, q))                                             \
  CB_BLOCKING(                                                                                     \
      Alltoallw_init##SFX,                                                                         \
      (const void* s, const C sn[], const D sd[], const MPI_Datatype st[], void* r, const C rn[],  \
       const D rd[], const MPI_Datatype rt[], MPI_Comm c, MPI_Info i, MPI_Request* q),             \
      (s, sn, sd, st, r, rn, rd, rt, c, i, q))                                                     \
  CB_BLOCKING(Neighbor_alltoallw_init##SFX,                                                        \
              (const void* s, const C sn[], const MPI_Aint sd[], const MPI_Datatype st[], void* r, \
               const C rn[], const MPI_Aint rd[], const MPI_Datatype rt[], MPI_Comm c, MPI_Info i, \
               MPI_Request* q),                                                                    \
              (s, sn, sd, st, r, rn, rd, rt, c, i, q))
CB_PERSISTENT(, int, int)
#if MPI_VERSION >= 4
CB_PERSISTENT(_c, MPI_Count, MPI_Aint)
#endif
#undef CB_PERSISTENT
CB_BLOCKING(Barrier_init, (MPI_Comm c, MPI_Info i, MPI_Request* q), (c, i, q))
#endif

// ---- intercommunicators (no engine: the engine runs on intracommunicators only), the
// dynamic-process connections, and MPI_Buffer_detach (waits until the buffered messages
// are delivered).
CB_BLOCKING(Intercomm_create,
            (MPI_Comm local, int local_leader, MPI_Comm peer, int remote_leader, int tag,
             MPI_Comm* out),
            (local, local_leader, peer, remote_leader, tag, out))
#if MPI_VERSION >= 4
CB_BLOCKING(Intercomm_create_from_groups,
            (MPI_Group local, int local_leader, MPI_Group remote, int remote_leader,
             const char* tag, MPI_Info i, MPI_Errhandler e, MPI_Comm* out),
            (local, local_leader, remote, remote_leader, tag, i, e, out))
#endif
CB_BLOCKING(Comm_accept, (const char* port, MPI_Info i, int root, MPI_Comm c, MPI_Comm* out),
            (port, i, root, c, out))
CB_BLOCKING(Comm_connect, (const char* port, MPI_Info i, int root, MPI_Comm c, MPI_Comm* out),
            (port, i, root, c, out))
CB_BLOCKING(Comm_disconnect, (MPI_Comm * c), (c))
CB_BLOCKING(Buffer_detach, (void* b, int* n), (b, n))
#if MPI_VERSION >= 4
CB_BLOCKING(Buffer_detach_c, (void* b, MPI_Count* n), (b, n))
#endif
#undef CB_BLOCKING

}  // extern "C"
