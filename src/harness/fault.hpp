// Fault injection for collbench's own tests (environment CB_TEST_FAULT), so that the
// paths that catch real failures are exercised end to end:
//   corrupt  flip one received byte after timing: validation must report it (exit 1)
//   hang     the last rank stops at the second size: --time-limit must fire (exit 4)
//            and the JSON must keep the first size
//   die      the last rank kills itself (SIGKILL) inside the timed loop of the second
//            size of a collective (blocking: between two calls; non-blocking: once it
//            has started one): the others must notice and fail with a clear error;
//            die:R  the same, rank R instead of the last
//   diverge  the last rank flips the first byte of its result of -c's order-sensitive pass
//            (floating-point allreduce sum or prod, at least 2 ranks): no element check
//            can see it, the comparison of the ranks' bits must (exit 1)
#pragma once

#include <cstdint>

#include "backends/backend.hpp"

namespace cb {

enum class Fault : uint8_t { None, Corrupt, Hang, Die, Diverge };

Fault injected_fault();                   // read once from CB_TEST_FAULT
int fault_rank(int nranks);               // the rank that dies: die:R, else the last
void hang_forever();                      // sleeps, never returns
[[noreturn]] void die_now();              // SIGKILL to this process
void corrupt_first_byte(const Buf& buf);  // no-op on an empty buffer

}  // namespace cb
