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

std::vector<size_t> size_sweep(SizeRange range) {
  std::vector<size_t> sizes;
  for (size_t s = range.min; s <= range.max; s = s ? s * 2 : 1) {
    sizes.push_back(s);
    if (s > std::numeric_limits<size_t>::max() / 2) break;
  }
  return sizes;
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
