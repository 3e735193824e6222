#include <climits>

#include "collective/engine/transport.hpp"
#include "harness/mpi_check.hpp"

namespace cb::engine {

void MpiTransport::post(Step& s, int tag) {
  if (s.bytes > static_cast<size_t>(INT_MAX))
    throw RuntimeError("engine: a single message of " + std::to_string(s.bytes) +
                       " bytes exceeds MPI's int count");
  const int n = static_cast<int>(s.bytes);
  if (s.kind == StepKind::Send)
    CB_MPI(MPI_Isend(s.src, n, MPI_BYTE, s.peer, tag, comm_, &s.request));
  else
    CB_MPI(MPI_Irecv(s.dst, n, MPI_BYTE, s.peer, tag, comm_, &s.request));
}

bool MpiTransport::test(Step& s) {
  int done = 0;
  CB_MPI(MPI_Test(&s.request, &done, MPI_STATUS_IGNORE));
  return done != 0;
}

}  // namespace cb::engine
