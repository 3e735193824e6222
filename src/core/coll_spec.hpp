// The registry of collectives: for each one, what it is (its buffers, the in-place rule,
// the bandwidth convention, exact validation data) and which backends run it. Backends,
// the benchmark list, the replay and validation ask here instead of keeping lists of
// their own (cf. nccl-tests' struct testColl). Adding a collective: its spec in one
// core/coll_<name>.cpp, one line in coll_registry.cpp, then its backend calls.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "core/args.hpp"

namespace cb {

// The backends the registry knows of, as bits of CollSpec::backends.
enum class BackendKind : uint8_t { Mpi, Nccl, Engine };
inline constexpr unsigned backend_bit(BackendKind k) {
  return 1u << static_cast<unsigned>(k);
}
inline constexpr unsigned kAllBackends =
    backend_bit(BackendKind::Mpi) | backend_bit(BackendKind::Nccl) | backend_bit(BackendKind::Engine);
std::string_view to_string(BackendKind k);  // "mpi", "nccl", "engine"

struct CollSpec {
  Coll coll;
  bool reduces;  // --dtype/--op select a reduction
  bool rooted;   // -k/--root applies
  // Elements in each buffer for `count` elements per rank (alltoall: per peer). A
  // collective without a send buffer (bcast) has send_elements 0 and works in recv.
  size_t (*send_elements)(size_t count, int nranks);
  size_t (*recv_elements)(size_t count, int nranks);
  // nccl-tests conventions: algbw = algbw_elements x dtype size / time; busbw = algbw x factor.
  size_t (*algbw_elements)(size_t count, int nranks);
  double (*bus_factor)(int nranks);
  // Host images of the buffers before the operation (inputs, and outputs poisoned), and
  // the number of wrong elements after it. `input` is the send image, or for in-place and
  // bcast the recv image itself; both have the sizes above. In place, recv holds the
  // input and receives the result (MPI_IN_PLACE on every rank).
  void (*fill)(const CollArgs& args, int rank, int nranks, std::byte* send, std::byte* recv);
  size_t (*check)(const CollArgs& args, int rank, int nranks, const std::byte* recv);
  unsigned backends;  // backend_bit()s of the backends that run it (0: none yet; then
                      // fill and check are null: only traces name it)

  std::string_view name() const;
  bool runs_on(BackendKind k) const { return (backends & backend_bit(k)) != 0; }
  // Elements of send and recv for `args` on `nranks` ranks: in place, there is no send
  // buffer (recv holds the input).
  size_t send_elements_of(const CollArgs& a, int nranks) const {
    return a.in_place ? 0 : send_elements(a.count, nranks);
  }
};

// Every collective collbench knows, benchmarked or only traced (backends == 0).
std::span<const CollSpec* const> coll_specs();
// The spec of `coll`; null only for Coll::None.
const CollSpec* find_coll_spec(Coll coll);
// Why `backend` cannot run `coll` (empty: it can), for error messages.
std::string coll_unsupported(Coll coll, BackendKind backend);
bool coll_is_rooted(Coll coll);  // false for Coll::None
bool coll_reduces(Coll coll);

extern const CollSpec kAllreduceSpec, kBcastSpec, kAlltoallSpec;
extern const CollSpec kAllgatherSpec, kReduceScatterSpec, kReduceSpec;

}  // namespace cb
