// Legal programs of MPI_Allgatherv (legal_allgatherv.cpp), run by cb_legal_programs
// (legal_programs.cpp) like its own cases.
#pragma once

#include <string>

// Runs case `name` when it is one of legal_allgatherv.cpp's: appends its result lines
// ("own NAME HASH", "calls FUNCTION N") to legal::g_lines and counts its wrong elements in
// legal::g_errors (legal_common.hpp). False for any other name.
bool run_allgatherv_case(const std::string& name);
