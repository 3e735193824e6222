// libcb_engine_preload.so, the MPI functions it interposes besides the routed collectives
// (preload.cpp): where communicators are made (MPI_COMM_WORLD's engine at MPI_Init; the
// others' at their first routed blocking collective, or here with CB_PRELOAD_ENGINES=eager),
// and every call in which an application
// may wait while an engine operation of this process is pending (MPI's progress rule: a
// rank blocked in one call must not stall a peer that waits for another of its pending
// operations). See docs/preload.md, "Progress".
#include <mpi.h>

#include <cstdint>

#include "preload/comm_engine.hpp"
#include "preload/guard.hpp"

#define CB_EXPORT __attribute__((visibility("default")))

using namespace cb::preload;

namespace {

// Engine operations pending, and the caller is not the engine itself.
bool engine_busy() {
  return !inside_engine() && operations_in_flight() > 0;
}

// A wait as a loop of tests that advances the engine between them (MPICH's own progress
// loop never calls back into the engine).
template <typename Test>
int wait_testing(Test&& test) {
  const cb::WaitMode mode = settings().wait == 1 ? cb::WaitMode::Yield : cb::WaitMode::Spin;
  for (uint64_t polls = 0;;) {
    bool done = false;
    if (const int rc = test(&done); rc != MPI_SUCCESS || done) return rc;
    progress_all();
    pause(++polls, mode);
  }
}

// A communicator just made by the application: its engine too (collective over it, as the
// call that made it) where `now` (MPI_Init) or CB_PRELOAD_ENGINES=eager; otherwise nothing
// (docs/preload.md, "The engine per communicator": the engine comes with the first routed
// blocking collective). Intercommunicators and MPI_COMM_NULL have none.
int with_engine(int rc, MPI_Comm comm, bool now = false) {
  if (rc != MPI_SUCCESS || inside_engine() || !settings().enabled || comm == MPI_COMM_NULL ||
      !(now || settings().eager))
    return rc;
  int inter = 0;
  if (PMPI_Comm_test_inter(comm, &inter) == MPI_SUCCESS && !inter) create_engine(comm);
  return rc;
}

}  // namespace

extern "C" {

// init_mpi: PMPI_Init or PMPI_Init_thread, or MPI_THREAD_MULTIPLE for the progress thread
// (CB_PRELOAD_PROGRESS=thread, preload_blocking.cpp).
CB_EXPORT int MPI_Init(int* argc, char*** argv) {
  return with_engine(init_mpi(argc, argv, -1, nullptr), MPI_COMM_WORLD, true);
}

CB_EXPORT int MPI_Init_thread(int* argc, char*** argv, int required, int* provided) {
  return with_engine(init_mpi(argc, argv, required, provided), MPI_COMM_WORLD, true);
}

// Communicator constructors: blocking (BlockedProgress), then (CB_PRELOAD_ENGINES=eager) the
// engine of the result.
#define CB_CONSTRUCTOR(NAME, PARAMS, ARGS, RESULT) \
  CB_EXPORT int MPI_##NAME PARAMS {                \
    int rc;                                        \
    {                                              \
      BlockedProgress progress;                    \
      rc = PMPI_##NAME ARGS;                       \
    }                                              \
    return with_engine(rc, *(RESULT));             \
  }
CB_CONSTRUCTOR(Comm_dup, (MPI_Comm comm, MPI_Comm* out), (comm, out), out)
CB_CONSTRUCTOR(Comm_dup_with_info, (MPI_Comm comm, MPI_Info info, MPI_Comm* out), (comm, info, out),
               out)
CB_CONSTRUCTOR(Comm_split, (MPI_Comm comm, int color, int key, MPI_Comm* out),
               (comm, color, key, out), out)
CB_CONSTRUCTOR(Comm_split_type, (MPI_Comm comm, int type, int key, MPI_Info info, MPI_Comm* out),
               (comm, type, key, info, out), out)
CB_CONSTRUCTOR(Comm_create, (MPI_Comm comm, MPI_Group group, MPI_Comm* out), (comm, group, out),
               out)
CB_CONSTRUCTOR(Comm_create_group, (MPI_Comm comm, MPI_Group group, int tag, MPI_Comm* out),
               (comm, group, tag, out), out)
CB_CONSTRUCTOR(Cart_create,
               (MPI_Comm comm, int ndims, const int dims[], const int periods[], int reorder,
                MPI_Comm* out),
               (comm, ndims, dims, periods, reorder, out), out)
CB_CONSTRUCTOR(Cart_sub, (MPI_Comm comm, const int remain_dims[], MPI_Comm* out),
               (comm, remain_dims, out), out)
CB_CONSTRUCTOR(Graph_create,
               (MPI_Comm comm, int nnodes, const int index[], const int edges[], int reorder,
                MPI_Comm* out),
               (comm, nnodes, index, edges, reorder, out), out)
CB_CONSTRUCTOR(Dist_graph_create,
               (MPI_Comm comm, int n, const int sources[], const int degrees[],
                const int destinations[], const int weights[], MPI_Info info, int reorder,
                MPI_Comm* out),
               (comm, n, sources, degrees, destinations, weights, info, reorder, out), out)
CB_CONSTRUCTOR(Dist_graph_create_adjacent,
               (MPI_Comm comm, int indegree, const int sources[], const int sourceweights[],
                int outdegree, const int destinations[], const int destweights[], MPI_Info info,
                int reorder, MPI_Comm* out),
               (comm, indegree, sources, sourceweights, outdegree, destinations, destweights, info,
                reorder, out),
               out)
CB_CONSTRUCTOR(Intercomm_merge, (MPI_Comm inter, int high, MPI_Comm* out), (inter, high, out), out)
#if MPI_VERSION >= 4
CB_CONSTRUCTOR(Comm_create_from_group,
               (MPI_Group group, const char* tag, MPI_Info info, MPI_Errhandler errh,
                MPI_Comm* out),
               (group, tag, info, errh, out), out)
#endif
#undef CB_CONSTRUCTOR

// Blocking calls that do not advance the engine themselves: the background helper of
// BlockedProgress does while they last (one atomic load when nothing is pending).
#define CB_BLOCKING(NAME, PARAMS, ARGS) \
  CB_EXPORT int MPI_##NAME PARAMS {     \
    BlockedProgress progress;           \
    return PMPI_##NAME ARGS;            \
  }
// Point to point, with both count types where MPI 4 has the large-count form.
#define CB_P2P(SFX, C)                                                                          \
  CB_BLOCKING(Send##SFX, (const void* b, C n, MPI_Datatype t, int dest, int tag, MPI_Comm c),   \
              (b, n, t, dest, tag, c))                                                          \
  CB_BLOCKING(Ssend##SFX, (const void* b, C n, MPI_Datatype t, int dest, int tag, MPI_Comm c),  \
              (b, n, t, dest, tag, c))                                                          \
  CB_BLOCKING(Bsend##SFX, (const void* b, C n, MPI_Datatype t, int dest, int tag, MPI_Comm c),  \
              (b, n, t, dest, tag, c))                                                          \
  CB_BLOCKING(Rsend##SFX, (const void* b, C n, MPI_Datatype t, int dest, int tag, MPI_Comm c),  \
              (b, n, t, dest, tag, c))                                                          \
  CB_BLOCKING(Recv##SFX,                                                                        \
              (void* b, C n, MPI_Datatype t, int src, int tag, MPI_Comm c, MPI_Status* st),     \
              (b, n, t, src, tag, c, st))                                                       \
  CB_BLOCKING(Sendrecv##SFX,                                                                    \
              (const void* sb, C sn, MPI_Datatype st, int dest, int stag, void* rb, C rn,       \
               MPI_Datatype rt, int src, int rtag, MPI_Comm c, MPI_Status* status),             \
              (sb, sn, st, dest, stag, rb, rn, rt, src, rtag, c, status))                       \
  CB_BLOCKING(Sendrecv_replace##SFX,                                                            \
              (void* b, C n, MPI_Datatype t, int dest, int stag, int src, int rtag, MPI_Comm c, \
               MPI_Status* st),                                                                 \
              (b, n, t, dest, stag, src, rtag, c, st))                                          \
  CB_BLOCKING(Mrecv##SFX, (void* b, C n, MPI_Datatype t, MPI_Message* m, MPI_Status* st),       \
              (b, n, t, m, st))                                                                 \
  CB_BLOCKING(Scan##SFX, (const void* s, void* r, C n, MPI_Datatype t, MPI_Op o, MPI_Comm c),   \
              (s, r, n, t, o, c))                                                               \
  CB_BLOCKING(Exscan##SFX, (const void* s, void* r, C n, MPI_Datatype t, MPI_Op o, MPI_Comm c), \
              (s, r, n, t, o, c))
CB_P2P(, int)
#if MPI_VERSION >= 4
CB_P2P(_c, MPI_Count)
#endif
#undef CB_P2P
// The vector collectives: their count and displacement arrays change type with _c.
#define CB_VECTOR(SFX, C, D)                                                                      \
  CB_BLOCKING(Gatherv##SFX,                                                                       \
              (const void* s, C sn, MPI_Datatype st, void* r, const C rn[], const D d[],          \
               MPI_Datatype rt, int root, MPI_Comm c),                                            \
              (s, sn, st, r, rn, d, rt, root, c))                                                 \
  CB_BLOCKING(Scatterv##SFX,                                                                      \
              (const void* s, const C sn[], const D d[], MPI_Datatype st, void* r, C rn,          \
               MPI_Datatype rt, int root, MPI_Comm c),                                            \
              (s, sn, d, st, r, rn, rt, root, c))                                                 \
  CB_BLOCKING(Alltoallv##SFX,                                                                     \
              (const void* s, const C sn[], const D sd[], MPI_Datatype st, void* r, const C rn[], \
               const D rd[], MPI_Datatype rt, MPI_Comm c),                                        \
              (s, sn, sd, st, r, rn, rd, rt, c))                                                  \
  CB_BLOCKING(Alltoallw##SFX,                                                                     \
              (const void* s, const C sn[], const D sd[], const MPI_Datatype st[], void* r,       \
               const C rn[], const D rd[], const MPI_Datatype rt[], MPI_Comm c),                  \
              (s, sn, sd, st, r, rn, rd, rt, c))                                                  \
  CB_BLOCKING(Reduce_scatter##SFX,                                                                \
              (const void* s, void* r, const C rn[], MPI_Datatype t, MPI_Op o, MPI_Comm c),       \
              (s, r, rn, t, o, c))
CB_VECTOR(, int, int)
#if MPI_VERSION >= 4
CB_VECTOR(_c, MPI_Count, MPI_Aint)
#endif
#undef CB_VECTOR
CB_BLOCKING(Probe, (int src, int tag, MPI_Comm c, MPI_Status* st), (src, tag, c, st))
CB_BLOCKING(Mprobe, (int src, int tag, MPI_Comm c, MPI_Message* m, MPI_Status* st),
            (src, tag, c, m, st))
CB_BLOCKING(Comm_free, (MPI_Comm * c), (c))
#undef CB_BLOCKING

// Local queries an application may loop on while a peer waits for our operations: each
// advances the engine once first.
CB_EXPORT int MPI_Iprobe(int src, int tag, MPI_Comm c, int* flag, MPI_Status* st) {
  if (engine_busy()) progress_all();
  return PMPI_Iprobe(src, tag, c, flag, st);
}

CB_EXPORT int MPI_Improbe(int src, int tag, MPI_Comm c, int* flag, MPI_Message* m, MPI_Status* st) {
  if (engine_busy()) progress_all();
  return PMPI_Improbe(src, tag, c, flag, m, st);
}

CB_EXPORT int MPI_Request_get_status(MPI_Request request, int* flag, MPI_Status* status) {
  if (engine_busy()) progress_all();
  return PMPI_Request_get_status(request, flag, status);
}

// Waits and tests: while engine operations are in flight a wait becomes a loop of tests
// that advances them too, and a test advances them once first. Otherwise MPI's functions,
// unchanged.
CB_EXPORT int MPI_Wait(MPI_Request* request, MPI_Status* status) {
  if (!engine_busy()) return PMPI_Wait(request, status);
  return wait_testing([&](bool* done) {
    int flag = 0;
    const int rc = PMPI_Test(request, &flag, status);
    *done = flag != 0;
    return rc;
  });
}

CB_EXPORT int MPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[]) {
  if (!engine_busy()) return PMPI_Waitall(count, requests, statuses);
  return wait_testing([&](bool* done) {
    int flag = 0;
    const int rc = PMPI_Testall(count, requests, &flag, statuses);
    *done = flag != 0;
    return rc;
  });
}

CB_EXPORT int MPI_Waitany(int count, MPI_Request requests[], int* index, MPI_Status* status) {
  if (!engine_busy()) return PMPI_Waitany(count, requests, index, status);
  return wait_testing([&](bool* done) {
    int flag = 0;
    const int rc = PMPI_Testany(count, requests, index, &flag, status);
    *done = flag != 0;
    return rc;
  });
}

CB_EXPORT int MPI_Waitsome(int incount, MPI_Request requests[], int* outcount, int indices[],
                           MPI_Status statuses[]) {
  if (!engine_busy()) return PMPI_Waitsome(incount, requests, outcount, indices, statuses);
  return wait_testing([&](bool* done) {
    const int rc = PMPI_Testsome(incount, requests, outcount, indices, statuses);
    *done = *outcount != 0;  // some completed, or MPI_UNDEFINED: none active
    return rc;
  });
}

CB_EXPORT int MPI_Test(MPI_Request* request, int* flag, MPI_Status* status) {
  if (engine_busy()) progress_all();
  return PMPI_Test(request, flag, status);
}

CB_EXPORT int MPI_Testall(int count, MPI_Request requests[], int* flag, MPI_Status statuses[]) {
  if (engine_busy()) progress_all();
  return PMPI_Testall(count, requests, flag, statuses);
}

CB_EXPORT int MPI_Testany(int count, MPI_Request requests[], int* index, int* flag,
                          MPI_Status* status) {
  if (engine_busy()) progress_all();
  return PMPI_Testany(count, requests, index, flag, status);
}

CB_EXPORT int MPI_Testsome(int incount, MPI_Request requests[], int* outcount, int indices[],
                           MPI_Status statuses[]) {
  if (engine_busy()) progress_all();
  return PMPI_Testsome(incount, requests, outcount, indices, statuses);
}

}  // extern "C"
