// The "environment" block of every result: where and with what a run was measured.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "backends/control.hpp"
#include "engine/mpi_library_info.hpp"

namespace cb {

// Collective over ctl (hostnames are gathered). Describes hosts and ranks, the launcher,
// MPI library, collbench build, CPU, memory, OS, timer, GPUs, RDMA and the line rate.
// Throws ExitRequest (every rank alike) when CB_LINE_RATE_GBPS is not a positive number.
void describe_environment(const Control& ctl, nlohmann::json& out);

// Which launcher started this process, from the variables it put in the environment:
// name "mpirun (hydra)" (MPI_LOCALNRANKS: MPICH's and Intel MPI's hydra proxies),
// "mpirun (Open MPI)" (OMPI_COMM_WORLD_SIZE: Open MPI's mpirun/prterun), "srun"
// (SLURM_STEP_ID and SLURM_PROCID: a Slurm job step), "none" (one process and none of
// these, nor PMI_SIZE: a singleton started without a launcher) or "unknown"; `variable`
// is the one that decided ("" for none and unknown). Checked in that order: hydra and Open
// MPI's mpirun start their daemons with srun inside a Slurm allocation, so their ranks see
// SLURM_* too. `get` is getenv (a parameter for the tests).
struct LauncherGuess {
  std::string name;
  std::string variable;
};
LauncherGuess detect_launcher(const std::function<const char*(const char*)>& get, int nranks);

// ranks_per_node of environment.launcher: the count when every node has the same number
// of ranks, else the list (one count per node, in the order of `ranks_on_each_node`).
nlohmann::json ranks_per_node_json(const std::vector<int>& ranks_on_each_node);

std::string cpu_model();  // /proc/cpuinfo "model name"

}  // namespace cb
