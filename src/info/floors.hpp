// What the machine allows, measured: the floors cb_info records and prints, and
// the memory-copy measurement cb_copybw shares with it.
//
//   - one-way cache-line hand-off latency between two CPUs: a flag ping-pong in shared
//     memory between two threads pinned to the CPUs, as core-to-core latency tools do;
//   - single-thread memcpy and read+write (the engine's float-sum kernel) bandwidth per
//     size, from the L1 to beyond the last-level cache;
//   - the time floors of a 2-rank collective of N bytes: k hand-offs, and the bytes each
//     rank must read and write at memcpy's rate.
// docs/plots.md ("cb_info's floors") says what each field means and how it is measured.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace cb::info {

// GB/s (10^9 B/s of bytes copied) of each of `trials` timed batches: `threads` threads
// (each its own pre-touched source and destination of `bytes`) copy `bytes` with memcpy
// calls of `piece` bytes, each batch at least `batch_bytes` per thread (one copy at least).
std::vector<double> copy_rates(size_t bytes, int threads, size_t piece, int trials,
                               size_t batch_bytes);

// "0,2-3" -> {0, 2, 3} (the format of environment.binding.cpus_per_rank). Throws
// RuntimeError on text that is not such a list.
std::vector<int> parse_cpu_list(const std::string& text);

enum class FloorsMode { Off, Quick, Long };

// FloorsMode from the --floors text ("off", "quick", "long"); throws UsageError otherwise.
FloorsMode parse_floors_mode(const std::string& text);

// Where the ranks run: the CPUs measured (pairs among them) and the pair the 2-rank
// floors use, with how it was chosen.
struct FloorsCpus {
  std::vector<int> candidates;
  int first = -1, second = -1;
  std::string from;
};

// The CPUs of the ranks on this host from environment.binding (cpus_per_rank, the ranks
// of this host in `host_ranks`), else those this process may run on, else every online CPU.
FloorsCpus floors_cpus(const nlohmann::json& binding, const std::vector<int>& host_ranks);

// The "floors" block of collbench.info/1 (measured now, on this thread's host; takes
// about 1 s in Quick mode, 5 s in Long on a 2-core VM). Mode Off: {"mode": "off"}.
nlohmann::json measure_floors(FloorsMode mode, const FloorsCpus& cpus);

// The [floors] section of cb_info's text.
void print_floors(const nlohmann::json& floors);

}  // namespace cb::info
