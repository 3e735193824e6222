// Cross-memory attach (CMA: process_vm_readv), the kernel's single copy from another
// process's address space. The kernel allows it only where ptrace would be allowed:
// same user and, under Yama (kernel.yama.ptrace_scope >= 1), not between sibling
// processes such as two MPI ranks unless they hold CAP_SYS_PTRACE; containers and
// seccomp profiles often forbid it too. So it is probed, never assumed.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace cb::engine {

struct CmaVerdict {
  bool available = false;
  std::string detail;  // why not, or how it was found to work
};

// Reads `bytes` at `address` in process `pid` into `dst`, all of it; false (errno set)
// when the kernel refuses or the process is gone.
bool cma_read(pid_t pid, void* dst, uint64_t address, size_t bytes);

// Tries to read `expected` (8 bytes at `address` in `pid`) and names the outcome.
CmaVerdict cma_check(pid_t pid, uint64_t address, uint64_t expected);

// Two forked sibling processes, one reading the other's memory, as two ranks would: for
// cb_info, which runs as one process. Call before MPI_Init (forks).
CmaVerdict cma_probe_siblings();

// "kernel.yama.ptrace_scope = N (meaning)", or "" when there is no Yama.
std::string ptrace_scope_text();

}  // namespace cb::engine
