// What the MPI library collbench runs on is: its version line and CUDA-awareness.
#pragma once

#include <string>

#include <nlohmann/json_fwd.hpp>

namespace cb {

std::string mpi_library_version();  // first line of MPI_Get_library_version

// What the library says it is: {"implementation": "MPICH"|"Open MPI"|its first line,
// "version": "5.0.2" (null where unknown), "abi": what this program was compiled for
// ("MPICH", "Open MPI", "standard"), "device": MPICH's device ("ch4:ucx") or null,
// "device_detail": where it comes from or why it is unknown}.
void describe_mpi_library(nlohmann::json& out);

// Whether the MPI library takes device pointers: {"cuda_aware": true|false|null,
// "cuda_aware_detail": how that was found out}.
void describe_mpi_cuda_awareness(nlohmann::json& out);
bool mpi_is_cuda_aware();

}  // namespace cb
