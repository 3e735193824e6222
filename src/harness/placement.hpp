// Where each iteration's buffers lie, for the measurement-honesty options (docs/usage.md,
// the options table): --off-cache (IMB's -off_cache: every iteration uses the next
// buffer of a ring larger than the last-level cache, so its data is not cache-warm),
// -u/--misalign (send and receive pointers BYTES past the allocation's alignment) and
// --vary-data (the data changes every iteration: one store per 64-byte line before each
// iteration, values::varied_index()). Plain arithmetic and sysfs reading; the runners
// (collective/coll_base.cpp, pt2pt/runner.cpp) allocate and point.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace cb {

inline constexpr size_t kMaxMisalign = 4095;  // -u: below a page, the largest alignment asked of
                                              // a buffer (allocations are page-aligned)
inline constexpr size_t kRingLine = 64;       // ring slots are whole lines apart (IMB's line)
// --off-cache with device buffers and no BYTES: twice the largest GPU L2 of the devices
// collbench runs on (H100 and H200: 50 MB; B200: 126 MB), as collbench cannot ask the device.
inline constexpr size_t kDefaultDeviceOffCache = size_t{256} << 20;
// --off-cache without BYTES on a host whose sysfs lists no cache: 2 x 32 MiB.
inline constexpr size_t kFallbackOffCache = size_t{64} << 20;

// A cache's size as sysfs writes it ("32768K", "8M", "512"), in bytes; 0 when unreadable.
size_t parse_cache_size(const std::string& text);

// The last-level cache of cpu0 under `dir` (index*/level and index*/size): level 3 when
// listed, else the highest level listed; bytes 0 when nothing is readable.
struct CacheInfo {
  size_t bytes = 0;
  int level = 0;
};
CacheInfo last_level_cache(const std::string& dir = "/sys/devices/system/cpu/cpu0/cache");

// What --off-cache's ring covers when no BYTES is given, and where that came from.
struct OffCacheTarget {
  size_t bytes = 0;
  std::string source;  // "2 x L3 (sysfs)", "--off-cache BYTES", "device default (2 x 128 MiB)" ...
  CacheInfo llc;       // what sysfs said (host buffers)
};
// `given`: --off-cache BYTES (0: none given); `device`: the buffers are on a GPU.
OffCacheTarget off_cache_target(size_t given, bool device, const CacheInfo& llc);

// One buffer's ring at one message size: `slots` buffers of the message, `stride` bytes
// apart (the message rounded up to whole lines, plus a line, as IMB's offset), so that
// consecutive iterations share no line; as many as cover `target` bytes (IMB:
// ceil(2 x cache / offset)), at least 1. target 0 (--off-cache off): one slot.
struct Ring {
  size_t stride = 0;
  size_t slots = 1;
};
Ring ring_for(size_t bytes, size_t target);

// Byte offset from the allocation's start of iteration `iteration`'s buffer: slot
// iteration % slots, then -u's misalignment.
inline size_t ring_offset(const Ring& r, uint64_t iteration, size_t misalign) {
  return static_cast<size_t>(iteration % r.slots) * r.stride + misalign;
}

// Bytes the allocation needs for the ring of a `bytes` message: the last slot's end.
inline size_t ring_footprint(const Ring& r, size_t bytes, size_t misalign) {
  return (r.slots - 1) * r.stride + misalign + bytes;
}

// -u/--misalign BYTES: a whole number from 0 to kMaxMisalign. Throws UsageError naming
// the option.
size_t parse_misalign(const std::string& text);

// --off-cache BYTES (K/M/G): at least 1 KiB and at most half the machine's memory
// (`physical`, bytes; 0: unknown, no upper bound). Throws UsageError naming the option.
size_t parse_off_cache(const std::string& text, size_t physical);

// The machine's memory (sysconf), bytes; 0 when unknown.
size_t physical_memory_bytes();

// The document's `buffer_placement` object (schemas/collbench.result-1.schema.json), shared by
// the collective and point-to-point runners: -u's bytes, --vary-data's stores (`timed`: inside
// the timed loop; `device_copy`: written through a host image) and --off-cache's rings.
struct PlacementRecord {
  size_t misalign = 0;
  bool vary_data = false, vary_timed = false, vary_device_copy = false;
  const OffCacheTarget* off_cache = nullptr;  // nullptr: --off-cache off
  size_t send_ring_bytes = 0, recv_ring_bytes = 0;
};
nlohmann::json placement_json(const PlacementRecord& r);

// --vary-data in point to point (byte data, gpu/memory.hpp's pattern): byte `index` of
// sender `seed`'s data in generation `generation` (0: the plain pattern_byte; else the
// first byte of every 64-byte line differs, values::varied_index()).
uint8_t varied_pattern_byte(uint32_t seed, size_t index, uint32_t generation);
// Stores generation `generation`'s byte at every line start of the host buffer `data`.
void stamp_pattern(std::byte* data, size_t bytes, uint32_t seed, uint32_t generation);
// Bytes of `data` that differ from varied_pattern_byte(seed, i, generation).
size_t count_varied_errors(const std::vector<std::byte>& data, uint32_t seed, uint32_t generation);

}  // namespace cb
