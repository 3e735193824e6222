#include "harness/sizes.hpp"

#include <cctype>
#include <charconv>
#include <limits>
#include <string>

#include "core/errors.hpp"

namespace cb {

size_t parse_bytes(std::string_view text) {
  const std::string shown(text);
  size_t value = 0;
  const char* begin = text.data();
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(begin, end, value);
  if (ec == std::errc::result_out_of_range) throw UsageError("size '" + shown + "' is too large");
  if (ec != std::errc() || ptr == begin)
    throw UsageError("invalid size '" + shown + "' (expected e.g. 4096, 64K, 4M, 1G)");
  std::string suffix(ptr, end);
  for (auto& c : suffix) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  int shift = 0;
  if (suffix.empty() || suffix == "B") {
    shift = 0;
  } else if (suffix == "K" || suffix == "KB" || suffix == "KIB") {
    shift = 10;
  } else if (suffix == "M" || suffix == "MB" || suffix == "MIB") {
    shift = 20;
  } else if (suffix == "G" || suffix == "GB" || suffix == "GIB") {
    shift = 30;
  } else {
    throw UsageError("invalid size suffix in '" + shown + "' (use K, M or G)");
  }
  if (value > (std::numeric_limits<size_t>::max() >> shift))
    throw UsageError("size '" + shown + "' is too large");
  return value << shift;
}

SizeRange parse_size_range(std::string_view text, SizeRange defaults) {
  SizeRange r = defaults;
  const auto colon = text.find(':');
  if (text.empty()) throw UsageError("empty message size range");
  if (colon == std::string_view::npos) {
    r.max = parse_bytes(text);
    if (r.min > r.max) r.min = r.max;  // "-m 4" with default min 8 means just 4
  } else {
    if (text.find(':', colon + 1) != std::string_view::npos)
      throw UsageError("invalid message size range '" + std::string(text) + "' (use [MIN:]MAX)");
    if (colon == 0) throw UsageError("message size range ':' needs a MIN before it");
    r.min = parse_bytes(text.substr(0, colon));
    if (colon + 1 < text.size()) r.max = parse_bytes(text.substr(colon + 1));
  }
  if (r.min > r.max)
    throw UsageError("message size range '" + std::string(text) + "': MIN is larger than MAX");
  return r;
}

namespace {

// The size after s, or false when it would pass max (or overflow).
bool next_size(const SizeRange& range, size_t& s) {
  constexpr size_t kTop = std::numeric_limits<size_t>::max();
  if (range.step_bytes > 0) {
    if (s > kTop - range.step_bytes) return false;
    s += range.step_bytes;
  } else {
    const size_t factor = range.factor < 2 ? 2 : range.factor;
    if (s > kTop / factor) return false;
    s = s ? s * factor : 1;
  }
  return s <= range.max;
}

}  // namespace

std::vector<size_t> size_sweep(SizeRange range) {
  std::vector<size_t> sizes;
  if (range.min > range.max) return sizes;
  size_t s = range.min;
  do sizes.push_back(s);
  while (next_size(range, s));
  return sizes;
}

size_t size_sweep_count(SizeRange range) {
  if (range.min > range.max) return 0;
  if (range.step_bytes > 0) return (range.max - range.min) / range.step_bytes + 1;
  size_t n = 1;
  for (size_t s = range.min; next_size(range, s);) ++n;
  return n;
}

std::string format_bytes(size_t bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB"};
  int unit = 0;
  while (unit < 3 && bytes >= 1024 && bytes % 1024 == 0) {
    bytes /= 1024;
    ++unit;
  }
  return std::to_string(bytes) + " " + kUnits[unit];
}

}  // namespace cb
