// The "environment" block of every result: where and with what a run was measured.
#pragma once

#include <string>

#include <nlohmann/json_fwd.hpp>

#include "backends/control.hpp"
#include "backends/mpi_library.hpp"

namespace cb {

// Collective over ctl (hostnames are gathered). Describes hosts and ranks, MPI library,
// collbench build, CPU, memory, OS, timer and GPUs.
void describe_environment(const Control& ctl, nlohmann::json& out);

std::string cpu_model();  // /proc/cpuinfo "model name"

}  // namespace cb
