// Error kinds and the exit statuses they map to. Every rank exits with the same status.
#pragma once

#include <stdexcept>
#include <string>

namespace cb {

enum ExitStatus : int {
  kExitOk = 0,
  kExitValidationFailed = 1,  // -c found wrong elements
  kExitUsage = 2,             // bad option, value, rank count, unavailable feature
  kExitRuntime = 3,           // a library or system call failed
  kExitTimeLimit = 4,         // --time-limit expired (watchdog)
};

// Bad input from the user: wrong option, value, rank count, a feature this build or machine lacks.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A library or system call failed while running.
struct RuntimeError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Another rank of the job exited (killed, crashed) while this one waited for it.
struct PeerExited : RuntimeError {
  using RuntimeError::RuntimeError;
};

// Thrown to unwind to main with a status once the message has been printed (by one rank).
struct ExitRequest {
  int status;
};

}  // namespace cb
