#include "harness/placement.hpp"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <limits>

#include <nlohmann/json.hpp>

#include "core/errors.hpp"
#include "core/verify_values.hpp"
#include "gpu/memory.hpp"
#include "harness/sizes.hpp"

namespace cb {
namespace {

std::string read_line(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  while (!line.empty() && std::isspace(static_cast<unsigned char>(line.back()))) line.pop_back();
  return line;
}

}  // namespace

size_t parse_cache_size(const std::string& text) {
  size_t value = 0;
  const char* begin = text.data();
  const char* end = begin + text.size();
  const auto [ptr, ec] = std::from_chars(begin, end, value);
  if (ec != std::errc() || ptr == begin) return 0;
  const std::string suffix(ptr, end);
  int shift = 0;
  if (suffix.empty() || suffix == "B")
    shift = 0;
  else if (suffix == "K" || suffix == "KB" || suffix == "KiB")
    shift = 10;
  else if (suffix == "M" || suffix == "MB" || suffix == "MiB")
    shift = 20;
  else if (suffix == "G" || suffix == "GB" || suffix == "GiB")
    shift = 30;
  else
    return 0;
  if (value > (std::numeric_limits<size_t>::max() >> shift)) return 0;
  return value << shift;
}

CacheInfo last_level_cache(const std::string& dir) {
  CacheInfo best;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("index", 0) != 0) continue;
    const std::string type = read_line(entry.path() / "type");
    if (type == "Instruction") continue;
    int level = 0;
    const std::string level_text = read_line(entry.path() / "level");
    const auto [ptr, err] =
        std::from_chars(level_text.data(), level_text.data() + level_text.size(), level);
    if (err != std::errc() || ptr != level_text.data() + level_text.size() || level <= 0) continue;
    const size_t bytes = parse_cache_size(read_line(entry.path() / "size"));
    if (bytes == 0) continue;
    // Level 3 wins; otherwise the highest level (and of one level, the largest).
    const bool better = best.level != 3 && (level == 3 || level > best.level ||
                                            (level == best.level && bytes > best.bytes));
    if (better) best = {bytes, level};
  }
  return best;
}

OffCacheTarget off_cache_target(size_t given, bool device, const CacheInfo& llc) {
  OffCacheTarget t;
  t.llc = llc;
  if (given > 0) {
    t.bytes = given;
    t.source = "--off-cache " + format_bytes(given);
  } else if (device) {
    t.bytes = kDefaultDeviceOffCache;
    t.source = "device default (" + format_bytes(kDefaultDeviceOffCache) +
               ": 2 x a GPU L2 of up to 128 MiB; collbench does not ask the device)";
  } else if (llc.bytes > 0) {
    t.bytes = 2 * llc.bytes;
    t.source = "2 x L" + std::to_string(llc.level) + " " + format_bytes(llc.bytes) + " (sysfs)";
  } else {
    t.bytes = kFallbackOffCache;
    t.source = "default " + format_bytes(kFallbackOffCache) + " (sysfs lists no cache)";
  }
  return t;
}

Ring ring_for(size_t bytes, size_t target) {
  Ring r;
  r.stride = (bytes + kRingLine - 1) / kRingLine * kRingLine + kRingLine;
  if (target > 0) r.slots = std::max<size_t>(1, (target + r.stride - 1) / r.stride);
  return r;
}

size_t parse_misalign(const std::string& text) {
  size_t value = 0;
  const char* begin = text.data();
  const char* end = begin + text.size();
  const auto [ptr, ec] = std::from_chars(begin, end, value);
  if (text.empty() || ec != std::errc() || ptr != end || value > kMaxMisalign)
    throw UsageError("-u/--misalign must be a whole number of bytes from 0 to " +
                     std::to_string(kMaxMisalign) + " (got '" + text + "')");
  return value;
}

size_t parse_off_cache(const std::string& text, size_t physical) {
  size_t bytes = 0;
  try {
    bytes = parse_bytes(text);
  } catch (const UsageError&) {
    throw UsageError("--off-cache must be a size in bytes (K, M, G), at least 1K (got '" + text +
                     "')");
  }
  if (bytes < 1024)
    throw UsageError("--off-cache must be a size in bytes (K, M, G), at least 1K (got '" + text +
                     "')");
  if (physical > 0 && bytes > physical / 2)
    throw UsageError("--off-cache " + text + ": a ring of " + format_bytes(bytes) +
                     " per buffer cannot fit this machine's memory (" + format_bytes(physical) +
                     "; at most half of it)");
  return bytes;
}

size_t physical_memory_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page <= 0) return 0;
  return static_cast<size_t>(pages) * static_cast<size_t>(page);
}

uint8_t varied_pattern_byte(uint32_t seed, size_t index, uint32_t generation) {
  return pattern_byte(seed, values::varied_index(Dtype::Char, index, generation));
}

void stamp_pattern(std::byte* data, size_t bytes, uint32_t seed, uint32_t generation) {
  for (size_t i = 0; i < bytes; i += values::kVaryLineBytes)
    data[i] = static_cast<std::byte>(varied_pattern_byte(seed, i, generation));
}

size_t count_varied_errors(const std::vector<std::byte>& data, uint32_t seed, uint32_t generation) {
  size_t wrong = 0;
  for (size_t i = 0; i < data.size(); ++i)
    wrong += static_cast<uint8_t>(data[i]) != varied_pattern_byte(seed, i, generation);
  return wrong;
}

nlohmann::json placement_json(const PlacementRecord& r) {
  nlohmann::json p;
  p["misalign_bytes"] = r.misalign;
  p["vary_data"] = r.vary_data ? nlohmann::json{{"line_bytes", values::kVaryLineBytes},
                                                {"timed", r.vary_timed},
                                                {"device_copy", r.vary_device_copy}}
                               : nlohmann::json(nullptr);
  p["off_cache"] = nullptr;
  if (const OffCacheTarget* t = r.off_cache)
    p["off_cache"] = {{"target_bytes", t->bytes},
                      {"source", t->source},
                      {"llc_bytes", t->llc.bytes},
                      {"llc_level", t->llc.level},
                      {"send_ring_bytes", r.send_ring_bytes},
                      {"recv_ring_bytes", r.recv_ring_bytes}};
  return p;
}

}  // namespace cb
