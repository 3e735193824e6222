// SIGINT, SIGTERM and SIGHUP end a run at once, inside the signal handler: ranks may be
// busy-polling in a collective (where a flag would not be seen) and cannot agree on where
// to stop. The handler does only async-signal-safe work: it unlinks shared-memory
// segments still being set up (attached ones are unlinked already), rank 0 replaces the
// JSON document with the last one it wrote marked "interrupted" (rendered beforehand by
// Report, after every write), and the process exits with status 128 + signal (the
// other ranks 0.5 s later: a launcher ends the job at the first non-zero exit).
#pragma once

#include <string>

namespace cb {

// Installs the handlers; `rank` goes into the message ("collbench: rank R: ...").
void install_interrupt_handlers(int rank);

// Placeholders in the document handed to set_interrupted_document(), filled in by the
// handler: the signal's name ("SIGTERM") and the UTC time it arrived (ISO 8601).
inline constexpr const char* kSignalPlaceholder = "@CB_SIGNAL@";
inline constexpr const char* kTimePlaceholder = "@CB_SIGNAL_TIME@";

// What the handler writes to `path` (through a temporary file and rename) if a signal
// arrives now; `text` holds each placeholder at most once. `partial` is the temporary
// file a normal write may be filling: the handler removes it. Not thread-safe among
// callers (Report calls it under its lock).
void set_interrupted_document(const std::string& path, const std::string& partial,
                              const std::string& text);
void clear_interrupted_document();  // the run finished: a signal writes nothing

}  // namespace cb
