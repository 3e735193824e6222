#include <climits>
#include <cstring>
#include <type_traits>

#include "core/mpi_check.hpp"
#include "engine/transport_mpi.hpp"

namespace cb::engine {
namespace {

// The request lives in the step's transport-owned token, so that Step (and with it every
// algorithm) knows nothing of MPI. MPICH's MPI_Request is an int, Open MPI's a pointer.
static_assert(sizeof(MPI_Request) <= sizeof(Step::token) &&
              std::is_trivially_copyable_v<MPI_Request>);

MPI_Request request_of(const Step& s) {
  MPI_Request r;
  std::memcpy(&r, &s.token, sizeof r);
  return r;
}

void keep_request(Step& s, MPI_Request r) {
  s.token = 0;
  std::memcpy(&s.token, &r, sizeof r);
}

}  // namespace

void MpiTransport::post(Step& s, int tag) {
  if (s.bytes > static_cast<size_t>(INT_MAX))
    throw RuntimeError("engine: a single message of " + std::to_string(s.bytes) +
                       " bytes exceeds MPI's int count");
  const int n = static_cast<int>(s.bytes);
  MPI_Request r = MPI_REQUEST_NULL;
  if (s.kind == StepKind::Send)
    CB_MPI(MPI_Isend(s.src, n, MPI_BYTE, s.peer, tag, comm_, &r));
  else
    CB_MPI(MPI_Irecv(s.dst, n, MPI_BYTE, s.peer, tag, comm_, &r));
  keep_request(s, r);
}

bool MpiTransport::test(Step& s) {
  int done = 0;
  MPI_Request r = request_of(s);
  CB_MPI(MPI_Test(&r, &done, MPI_STATUS_IGNORE));
  keep_request(s, r);
  return done != 0;
}

}  // namespace cb::engine
