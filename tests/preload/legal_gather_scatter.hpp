// Legal programs of MPI_Gather and MPI_Scatter (legal_gather_scatter.cpp), run by
// cb_legal_programs (legal_programs.cpp) like its own cases.
#pragma once

#include <string>

// Runs case `name` when it is one of legal_gather_scatter.cpp's: appends its result lines
// ("own NAME HASH", "calls FUNCTION N") to legal::g_lines and counts its wrong elements in
// legal::g_errors (legal_common.hpp). False for any other name.
bool run_gather_scatter_case(const std::string& name);
