#include "core/settings.hpp"

#include <charconv>
#include <cstdint>
#include <cstdlib>

#include "core/errors.hpp"

namespace cb {
namespace {

constexpr const char* kBytesExpected = "expected a byte size such as 4096, 256K, 8G";

enum class Parsed { Ok, Malformed, TooLarge };

char lower(char c) {
  return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}

std::string lowered(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = lower(c);
  return out;
}

// digits [K|M|G|T] [B|iB] (suffix letters in any case; "iB" only after K/M/G/T).
Parsed parse_bytes(std::string_view text, size_t& out) {
  size_t i = 0, value = 0;
  bool overflow = false;
  for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i) {
    const auto digit = static_cast<size_t>(text[i] - '0');
    if (value > (SIZE_MAX - digit) / 10) overflow = true;
    value = value * 10 + digit;
  }
  if (i == 0) return Parsed::Malformed;
  std::string unit = lowered(text.substr(i));
  unsigned shift = 0;
  if (!unit.empty()) {
    switch (unit.front()) {
      case 'k':
        shift = 10;
        break;
      case 'm':
        shift = 20;
        break;
      case 'g':
        shift = 30;
        break;
      case 't':
        shift = 40;
        break;
      default:
        break;
    }
  }
  if (shift != 0) unit.erase(0, 1);
  if (!(unit.empty() || unit == "b" || (shift != 0 && unit == "ib"))) return Parsed::Malformed;
  if (overflow || value > (SIZE_MAX >> shift)) return Parsed::TooLarge;
  out = value << shift;
  return Parsed::Ok;
}

std::string assignment(const char* name, const std::string& text) {
  return std::string(name) + "=" + text + ": ";
}

}  // namespace

std::optional<std::string> setting_text(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return std::nullopt;
  return std::string(v);
}

size_t parse_byte_size(std::string_view text) {
  size_t bytes = 0;
  switch (parse_bytes(text, bytes)) {
    case Parsed::Ok:
      return bytes;
    case Parsed::Malformed:
      throw UsageError(std::string(text) + ": " + kBytesExpected);
    case Parsed::TooLarge:
      break;
  }
  throw UsageError(std::string(text) + ": too large for a byte size (at most " +
                   std::to_string(SIZE_MAX) + ")");
}

std::string format_byte_size(size_t bytes) {
  static constexpr struct {
    unsigned shift;
    char suffix;
  } kUnits[] = {{40, 'T'}, {30, 'G'}, {20, 'M'}, {10, 'K'}};
  if (bytes != 0)
    for (const auto& u : kUnits)
      if (bytes % (size_t{1} << u.shift) == 0) return std::to_string(bytes >> u.shift) + u.suffix;
  return std::to_string(bytes);
}

size_t setting_bytes(const char* name, size_t fallback, size_t min, size_t max) {
  const auto text = setting_text(name);
  if (!text) return fallback;
  size_t bytes = 0;
  const Parsed p = parse_bytes(*text, bytes);
  if (p == Parsed::Malformed) throw UsageError(assignment(name, *text) + kBytesExpected);
  if (p == Parsed::TooLarge || bytes < min || bytes > max)
    throw UsageError(assignment(name, *text) + "must be between " + format_byte_size(min) +
                     " and " + format_byte_size(max));
  return bytes;
}

long long setting_int(const char* name, long long fallback, long long min, long long max) {
  const auto text = setting_text(name);
  if (!text) return fallback;
  long long value = 0;
  const char* end = text->data() + text->size();
  const auto [ptr, ec] = std::from_chars(text->data(), end, value);
  if (ptr != end || (ec != std::errc() && ec != std::errc::result_out_of_range))
    throw UsageError(assignment(name, *text) + "expected an integer");
  if (ec == std::errc::result_out_of_range || value < min || value > max)
    throw UsageError(assignment(name, *text) + "must be between " + std::to_string(min) + " and " +
                     std::to_string(max));
  return value;
}

bool setting_flag(const char* name, bool fallback) {
  const auto text = setting_text(name);
  if (!text) return fallback;
  const std::string v = lowered(*text);
  if (v == "1" || v == "on" || v == "yes" || v == "true") return true;
  if (v == "0" || v == "off" || v == "no" || v == "false") return false;
  throw UsageError(assignment(name, *text) + "expected 0/1, on/off, yes/no or true/false");
}

}  // namespace cb
