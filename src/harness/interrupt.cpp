#include "harness/interrupt.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <ctime>

#include "engine/shm/node_shm.hpp"

namespace cb {
namespace {

constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP};

const char* signal_name(int sig) {
  switch (sig) {
    case SIGINT:
      return "SIGINT";
    case SIGTERM:
      return "SIGTERM";
    case SIGHUP:
      return "SIGHUP";
    default:
      return "a signal";
  }
}

// The interrupted document, in pieces: part[0] fill[0] part[1] fill[1] part[2].
enum Fill : int { kNone, kSignal, kTime };
struct Pending {
  std::string path, tmp, partial;
  std::string part[3];
  Fill fill[2] = {kNone, kNone};
};
// Two slots: the handler reads the current one while the next is being filled.
Pending slots[2];
std::atomic<int> current{-1};
char rank_prefix[48] = "collbench: ";
bool is_root = true;

// Async-signal-safe helpers: no allocation, no locks, no stdio.
size_t put(char* out, size_t at, size_t cap, const char* s) {
  while (*s && at + 1 < cap) out[at++] = *s++;
  out[at] = '\0';
  return at;
}
size_t put_uint(char* out, size_t at, size_t cap, unsigned long v, int width = 0) {
  char digits[24];
  int n = 0;
  do {
    digits[n++] = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v);
  while (n < width) digits[n++] = '0';
  while (n && at + 1 < cap) out[at++] = digits[--n];
  out[at] = '\0';
  return at;
}
bool write_all(int fd, const char* p, size_t n) {
  while (n) {
    const ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}
void say(const char* s) {
  (void)write_all(STDERR_FILENO, s, std::strlen(s));
}

// UTC "YYYY-MM-DDTHH:MM:SSZ" from the realtime clock (days to civil date: H. Hinnant).
void utc_now(char* out, size_t cap) {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  const long secs = ts.tv_sec;
  long days = secs / 86400, rem = secs % 86400;
  days += 719468;
  const long era = days / 146097;
  const long doe = days - era * 146097;
  const long yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const long doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const long mp = (5 * doy + 2) / 153;
  const long d = doy - (153 * mp + 2) / 5 + 1;
  const long m = mp < 10 ? mp + 3 : mp - 9;
  const long y = yoe + era * 400 + (m <= 2);
  size_t at = put_uint(out, 0, cap, static_cast<unsigned long>(y), 4);
  at = put(out, at, cap, "-");
  at = put_uint(out, at, cap, static_cast<unsigned long>(m), 2);
  at = put(out, at, cap, "-");
  at = put_uint(out, at, cap, static_cast<unsigned long>(d), 2);
  at = put(out, at, cap, "T");
  at = put_uint(out, at, cap, static_cast<unsigned long>(rem / 3600), 2);
  at = put(out, at, cap, ":");
  at = put_uint(out, at, cap, static_cast<unsigned long>(rem / 60 % 60), 2);
  at = put(out, at, cap, ":");
  at = put_uint(out, at, cap, static_cast<unsigned long>(rem % 60), 2);
  put(out, at, cap, "Z");
}

// Writes the interrupted document through its temporary file; errno of the failure, or 0.
int write_document(const Pending& p, const char* sig) {
  char when[32];
  utc_now(when, sizeof when);
  const int fd = ::open(p.tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd < 0) return errno;
  bool ok = true;
  for (int i = 0; i < 3 && ok; ++i) {
    ok = write_all(fd, p.part[i].data(), p.part[i].size());
    if (ok && i < 2 && p.fill[i] != kNone) {
      const char* s = p.fill[i] == kSignal ? sig : when;
      ok = write_all(fd, s, std::strlen(s));
    }
  }
  if (ok) ok = ::fsync(fd) == 0 || errno == EINVAL;  // EINVAL: a file that cannot sync
  int err = ok ? 0 : errno;
  if (::close(fd) != 0 && ok) err = errno, ok = false;
  if (ok && ::rename(p.tmp.c_str(), p.path.c_str()) != 0) err = errno, ok = false;
  if (!ok) ::unlink(p.tmp.c_str());
  return ok ? 0 : (err ? err : EIO);
}

void on_signal(int sig) {
  engine::unlink_unattached_segments();
  const char* name = signal_name(sig);
  char line[1024];
  size_t at = put(line, 0, sizeof line, rank_prefix);
  at = put(line, at, sizeof line, "interrupted by ");
  at = put(line, at, sizeof line, name);
  const int c = current.load(std::memory_order_acquire);
  if (c >= 0) {
    const Pending& p = slots[c];
    if (!p.partial.empty()) ::unlink(p.partial.c_str());  // a normal write cut short
    const int err = write_document(p, name);
    at = put(line, at, sizeof line,
             err ? "; could not mark the JSON document '" : "; the JSON document '");
    at = put(line, at, sizeof line, p.path.c_str());
    if (err) {
      at = put(line, at, sizeof line, "' interrupted (errno ");
      at = put_uint(line, at, sizeof line, static_cast<unsigned long>(err));
      at = put(line, at, sizeof line, "); it holds the sizes finished before");
    } else {
      at = put(line, at, sizeof line, "' keeps the sizes finished before, marked interrupted");
    }
  }
  if (!is_root) {
    // Give rank 0 a head start: a launcher ends the whole job once a rank exits non-zero,
    // and rank 0 may still be writing the JSON document.
    const timespec pause{0, 500 * 1000 * 1000};
    ::nanosleep(&pause, nullptr);
  }
  at = put(line, at, sizeof line, "; exit status ");
  at = put_uint(line, at, sizeof line, static_cast<unsigned long>(128 + sig));
  put(line, at, sizeof line, "\n");
  say(line);
  ::_exit(128 + sig);
}

}  // namespace

void install_interrupt_handlers(int rank) {
  is_root = rank == 0;
  size_t at = put(rank_prefix, 0, sizeof rank_prefix, "collbench: rank ");
  at = put_uint(rank_prefix, at, sizeof rank_prefix, static_cast<unsigned long>(rank));
  put(rank_prefix, at, sizeof rank_prefix, ": ");
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  for (int s : kSignals) sigaddset(&sa.sa_mask, s);  // one handler at a time
  for (int s : kSignals) sigaction(s, &sa, nullptr);
}

void set_interrupted_document(const std::string& path, const std::string& partial,
                              const std::string& text) {
  const int next = current.load(std::memory_order_relaxed) == 0 ? 1 : 0;
  Pending& p = slots[next];
  p.path = path;
  p.tmp = path + ".tmp." + std::to_string(getpid()) + ".signal";
  p.partial = partial;
  // Split at the placeholders, in the order they appear.
  const std::string marks[2] = {kSignalPlaceholder, kTimePlaceholder};
  size_t from = 0;
  int k = 0;
  for (; k < 2; ++k) {
    size_t best = std::string::npos;
    Fill which = kNone;
    size_t len = 0;
    for (int m = 0; m < 2; ++m) {
      const size_t at = text.find(marks[m], from);
      if (at < best) best = at, which = m == 0 ? kSignal : kTime, len = marks[m].size();
    }
    if (best == std::string::npos) break;
    p.part[k] = text.substr(from, best - from);
    p.fill[k] = which;
    from = best + len;
  }
  p.part[k] = text.substr(from);
  for (int i = k + 1; i < 3; ++i) p.part[i].clear();
  for (int i = k; i < 2; ++i) p.fill[i] = kNone;
  current.store(next, std::memory_order_release);
}

void clear_interrupted_document() {
  current.store(-1, std::memory_order_release);
}

}  // namespace cb
