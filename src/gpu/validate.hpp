// -c on device buffers: fill inputs, poison outputs and count wrong elements on the GPU,
// with exactly the values the host validation uses (core/verify.cpp, the CollSpec
// fill/check functions, harness/memory.cpp's byte pattern), so that a device buffer
// never travels to the host to be checked. See verify_values.hpp for the shared formulas.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/types.hpp"
#include "core/verify_values.hpp"
#include "gpu/stream.hpp"

namespace cb::gpu {

// The buffers CollSpec::fill() writes, written on the device: this rank's input into
// `send` (into `recv` when in place, and for Bcast, where only the root's data counts) and
// the bitwise complement of the expected result into `recv` wherever it is an output.
// Sizes: as CollSpec (values::input_elements() and values::elements() say how many each
// kernel touches); send may be null when it is not used. Enqueued on `stream`; returns at once.
void fill_collective(const CollData& d, void* send, void* recv, StreamHandle stream);

// CollSpec::check(): the number of elements of `recv` whose value differs from the
// expected result (compared as values, as load_element() != expected). Counted on the
// device after the work already on `stream`; waits for the count.
size_t check_collective(const CollData& d, const void* recv, StreamHandle stream);

// Point-to-point validation (harness/memory.hpp): fill_pattern(), or poison_pattern()
// when `poison` (every byte complemented), and count_pattern_errors(), on the device.
void fill_pattern(void* buf, size_t bytes, uint32_t seed, bool poison, StreamHandle stream);
size_t count_pattern_errors(const void* buf, size_t bytes, uint32_t seed, StreamHandle stream);

}  // namespace cb::gpu
