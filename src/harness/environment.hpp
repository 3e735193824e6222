// The "environment" block of every result: where and with what a run was measured.
#pragma once

#include <string>

#include <nlohmann/json_fwd.hpp>

#include "harness/control.hpp"

namespace cb {

// Collective over ctl (hostnames are gathered). Describes hosts and ranks, MPI library,
// collbench build, CPU, memory, OS, timer and GPUs.
void describe_environment(const Control& ctl, nlohmann::json& out);

std::string mpi_library_version();  // first line of MPI_Get_library_version
std::string cpu_model();            // /proc/cpuinfo "model name"

// Whether the MPI library takes device pointers: {"cuda_aware": true|false|null,
// "cuda_aware_detail": how that was found out}.
void describe_mpi_cuda_awareness(nlohmann::json& out);
bool mpi_is_cuda_aware();

}  // namespace cb
