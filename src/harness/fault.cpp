#include "harness/fault.hpp"

#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "gpu/memory.hpp"

namespace cb {

Fault injected_fault() {
  static const Fault fault = [] {
    const char* env = std::getenv("CB_TEST_FAULT");
    const std::string v = env ? env : "";
    if (v == "corrupt") return Fault::Corrupt;
    if (v == "hang") return Fault::Hang;
    if (v == "diverge") return Fault::Diverge;
    if (v == "die" || v.rfind("die:", 0) == 0) return Fault::Die;
    if (!v.empty()) std::fprintf(stderr, "collbench: ignoring unknown CB_TEST_FAULT '%s'\n", env);
    return Fault::None;
  }();
  return fault;
}

int fault_rank(int nranks) {
  const char* env = std::getenv("CB_TEST_FAULT");
  const std::string v = env ? env : "";
  if (v.rfind("die:", 0) == 0) return std::atoi(v.c_str() + 4);
  return nranks - 1;
}

void corrupt_first_byte(const Buf& buf) {
  if (buf.bytes == 0) return;
  auto first = read_buffer(buf.slice(0, 1));
  first[0] = ~first[0];
  write_buffer(buf.slice(0, 1), first);
}

void die_now() {
  raise(SIGKILL);
  std::_Exit(137);
}

void hang_forever() {
  for (;;) pause();
}

}  // namespace cb
