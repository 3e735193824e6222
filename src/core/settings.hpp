// Settings read from the environment (CB_* variables): one strict reader, so that a value
// that is not understood is refused with a message naming the variable instead of being
// silently misread (atoi("8G") is 8). Every error is a UsageError (exit status 2).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace cb {

// The variable's text; nullopt when it is unset or empty (both mean "use the default").
std::optional<std::string> setting_text(const char* name);

// A byte count: a plain integer ("4096") or an integer with a binary suffix K, M, G or T
// (powers of 1024, any case), optionally followed by "B" or "iB": "256K", "256KiB",
// "8G", "1m", "16MB". A bare "B" is accepted too ("512B"). Anything else, negative or
// fractional numbers, trailing text, or a value above SIZE_MAX, throws UsageError.
size_t parse_byte_size(std::string_view text);

// Formats a byte count with the largest binary suffix that divides it exactly ("256K",
// "8G", "4097"): the form parse_byte_size reads back.
std::string format_byte_size(size_t bytes);

// The variable as a byte size within [min, max]; `fallback` (not range-checked) when unset.
size_t setting_bytes(const char* name, size_t fallback, size_t min, size_t max);

// The variable as a decimal integer within [min, max]; `fallback` when unset.
long long setting_int(const char* name, long long fallback, long long min, long long max);

// The variable as a switch: 0/1, on/off, yes/no, true/false (any case); `fallback` when unset.
bool setting_flag(const char* name, bool fallback);

}  // namespace cb
