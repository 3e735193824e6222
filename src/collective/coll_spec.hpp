// What a collective benchmark supplies (cf. nccl-tests' struct testColl): buffer sizes,
// the bandwidth convention, and exact fill/check of its data. Shared by the blocking and
// the non-blocking executable of each collective.
#pragma once

#include <cstddef>

#include "harness/backend.hpp"

namespace cb {

struct CollSpec {
  Coll coll;
  bool reduces;  // --dtype/--op select a reduction
  bool rooted;   // -k/--root applies
  // Elements in each buffer for `count` elements per rank (alltoall: per peer).
  size_t (*send_elements)(size_t count, int nranks);
  size_t (*recv_elements)(size_t count, int nranks);
  // nccl-tests conventions: algbw = algbw_elements x dtype size / time; busbw = algbw x factor.
  size_t (*algbw_elements)(size_t count, int nranks);
  double (*bus_factor)(int nranks);
  // Host images of the buffers before the operation (inputs, and outputs poisoned), and
  // the number of wrong elements after it. `input` is the send image, or for in-place and
  // bcast the recv image itself; both have the sizes above.
  void (*fill)(const CollArgs& args, int rank, int nranks, std::byte* send, std::byte* recv);
  size_t (*check)(const CollArgs& args, int rank, int nranks, const std::byte* recv);
};

}  // namespace cb
