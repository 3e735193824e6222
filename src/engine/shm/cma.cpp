#include "engine/shm/cma.hpp"

#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

namespace cb::engine {

bool cma_read(pid_t pid, void* dst, uint64_t address, size_t bytes) {
  auto* out = static_cast<std::byte*>(dst);
  while (bytes) {
    iovec local{out, bytes}, remote{reinterpret_cast<void*>(address), bytes};
    const ssize_t got = process_vm_readv(pid, &local, 1, &remote, 1, 0);
    if (got <= 0) {
      if (got == 0) errno = EFAULT;
      return false;
    }
    out += got;
    address += static_cast<uint64_t>(got);
    bytes -= static_cast<size_t>(got);
  }
  return true;
}

std::string ptrace_scope_text() {
  std::ifstream in("/proc/sys/kernel/yama/ptrace_scope");
  int scope = -1;
  if (!(in >> scope)) return {};
  static const char* const meaning[] = {"classic: same user", "restricted: descendants only",
                                        "admin only", "no attach"};
  return "kernel.yama.ptrace_scope = " + std::to_string(scope) +
         (scope >= 0 && scope <= 3 ? std::string(" (") + meaning[scope] + ")" : "");
}

CmaVerdict cma_check(pid_t pid, uint64_t address, uint64_t expected) {
  uint64_t seen = 0;
  if (!cma_read(pid, &seen, address, sizeof seen)) {
    std::string why = std::string("process_vm_readv: ") + std::strerror(errno);
    if (errno == EPERM) {
      const std::string scope = ptrace_scope_text();
      why += scope.empty() ? " (ptrace not permitted between these processes)"
                           : " (ptrace not permitted: " + scope + ")";
    } else if (errno == ENOSYS) {
      why += " (system call not available, e.g. filtered by seccomp)";
    }
    return {false, why};
  }
  if (seen != expected)  // another process with that PID: ranks in different PID namespaces
    return {false, "process_vm_readv read another process (ranks in different PID namespaces?)"};
  return {true, "process_vm_readv between ranks works"};
}

namespace {
volatile uint64_t probe_word = 0;
}

CmaVerdict cma_probe_siblings() {
  probe_word = 0x636d612070726f62;  // same address in both children: they are forks of us
  int hold[2], verdict[2];
  if (pipe(hold) != 0) return {false, std::string("probe: pipe: ") + std::strerror(errno)};
  if (pipe(verdict) != 0) {
    close(hold[0]);
    close(hold[1]);
    return {false, std::string("probe: pipe: ") + std::strerror(errno)};
  }
  const pid_t target = fork();
  if (target == 0) {  // waits until the reader is done (the pipe closes)
    close(hold[1]);
    close(verdict[0]);
    close(verdict[1]);  // else the parent would wait for this end too
    char c;
    while (read(hold[0], &c, 1) < 0 && errno == EINTR) {
    }
    _exit(0);
  }
  close(hold[0]);
  CmaVerdict out{false, std::string("probe: fork: ") + std::strerror(errno)};
  if (target > 0) {
    const pid_t reader = fork();
    if (reader == 0) {
      const CmaVerdict v = cma_check(target, reinterpret_cast<uint64_t>(&probe_word), probe_word);
      const std::string text = (v.available ? "1" : "0") + v.detail;
      const ssize_t ignored = write(verdict[1], text.data(), text.size());
      (void)ignored;
      _exit(0);
    }
    close(verdict[1]);
    verdict[1] = -1;
    std::string text;
    char buf[256];
    for (ssize_t got; (got = read(verdict[0], buf, sizeof buf)) != 0;) {
      if (got < 0 && errno == EINTR) continue;
      if (got < 0) break;
      text.append(buf, static_cast<size_t>(got));
    }
    if (reader > 0) waitpid(reader, nullptr, 0);
    if (!text.empty())
      out = {text[0] == '1', text.substr(1) + " (probed between two sibling processes)"};
    else if (reader < 0)
      out = {false, std::string("probe: fork: ") + std::strerror(errno)};
  }
  close(hold[1]);
  if (verdict[1] >= 0) close(verdict[1]);
  close(verdict[0]);
  if (target > 0) waitpid(target, nullptr, 0);
  return out;
}

}  // namespace cb::engine
