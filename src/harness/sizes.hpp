// Message-size parsing ("64K", "4M", "[MIN:]MAX") and the sweep they describe.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace cb {

struct SizeRange {
  size_t min = 0;
  size_t max = 0;
  size_t factor = 2;      // --stepfactor: each size is the previous one times this (0 -> 1)
  size_t step_bytes = 0;  // --stepbytes: > 0 steps by this many bytes instead (factor unused)
};

// "4096", "64K", "4M", "1G" (binary multiples; "KiB"/"KB" spellings accepted). Throws UsageError.
size_t parse_bytes(std::string_view text);

// OMB's -m: "MAX", "MIN:MAX" or "MIN:" (MIN with the default MAX). Throws UsageError.
SizeRange parse_size_range(std::string_view text, SizeRange defaults);

// min, then multiplied by factor (0 is followed by 1), or with step_bytes > 0 increased by
// step_bytes, up to and including max.
std::vector<size_t> size_sweep(SizeRange range);
// How many sizes size_sweep(range) has, without building them.
size_t size_sweep_count(SizeRange range);

// "8 B", "64 KiB", "4 MiB": for messages and titles.
std::string format_bytes(size_t bytes);

}  // namespace cb
