// Benchmark buffers on the host or a GPU: allocation with pre-touch, staging copies, and
// the byte pattern that point-to-point validation checks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/args.hpp"

namespace cb {

// Page-aligned host memory or cudaMalloc, faulted in (a first touch faults the page in, far
// slower than steady state).
Buf alloc_buffer(size_t bytes, Mem mem);
void free_buffer(Buf& buf);

// Host copies of any buffer, for filling and checking outside the timed region.
std::vector<std::byte> read_buffer(const Buf& buf);
void write_buffer(const Buf& buf, const std::vector<std::byte>& data);

// A byte pattern that depends on the sender (seed) and on the index, so that shifted,
// truncated or foreign data is caught. poison() writes its complement: every byte then
// differs from the pattern until real data overwrites it.
uint8_t pattern_byte(uint32_t seed, size_t index);
void fill_pattern(const Buf& buf, uint32_t seed);
void poison_pattern(const Buf& buf, uint32_t seed);
size_t count_pattern_errors(const Buf& buf, uint32_t seed);

}  // namespace cb
