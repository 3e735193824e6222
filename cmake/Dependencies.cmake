# Every dependency comes from Debian packages or the machine's CUDA toolkit
# (see docs/development.md, "Building"); nothing is vendored.
# -DCOLLBENCH_MPI_ABI=ON: compile against the MPI 5.0 standard ABI (mpi_abi.h, every handle
# a pointer) with the implementation's ABI wrapper (MPICH >= 4.3: mpicxx_abi, which adds
# -DMPI_ABI and links libmpi_abi.so); the binary then runs on any library of that ABI.
option(COLLBENCH_MPI_ABI "Build against the MPI 5.0 standard ABI (mpicxx_abi, libmpi_abi.so)" OFF)
if(COLLBENCH_MPI_ABI AND NOT MPI_CXX_COMPILER)
  find_program(_cb_mpicxx_abi NAMES mpicxx_abi mpic++_abi)
  if(NOT _cb_mpicxx_abi)
    message(FATAL_ERROR "COLLBENCH_MPI_ABI=ON needs an MPI ABI compiler wrapper (mpicxx_abi, from "
                        "MPICH >= 4.3: scripts/install_mpi.sh mpich5) on PATH or as -DMPI_CXX_COMPILER")
  endif()
  set(MPI_CXX_COMPILER ${_cb_mpicxx_abi} CACHE FILEPATH "MPI C++ compiler wrapper (standard ABI)")
  get_filename_component(_cb_abi_dir ${_cb_mpicxx_abi} DIRECTORY)
  if(NOT MPI_C_COMPILER AND EXISTS ${_cb_abi_dir}/mpicc_abi)
    set(MPI_C_COMPILER ${_cb_abi_dir}/mpicc_abi CACHE FILEPATH "MPI C compiler wrapper (standard ABI)")
  endif()
endif()
find_package(MPI REQUIRED COMPONENTS CXX)
# Open MPI's wrapper puts -pthread in MPI::MPI_CXX's compile options, MPICH's does not: every
# build gets it from the one place below instead, so that an object that does not depend on
# the MPI is compiled by the same command under every MPI, and ccache shares it between the
# build folders of one test run (scripts/build.sh).
foreach(_cb_mpi_target MPI::MPI_CXX MPI::MPI_C)
  if(TARGET ${_cb_mpi_target})
    get_target_property(_cb_opts ${_cb_mpi_target} INTERFACE_COMPILE_OPTIONS)
    if(_cb_opts)
      list(REMOVE_ITEM _cb_opts -pthread)
      set_property(TARGET ${_cb_mpi_target} PROPERTY INTERFACE_COMPILE_OPTIONS "${_cb_opts}")
    endif()
  endif()
endforeach()
add_compile_options($<$<COMPILE_LANGUAGE:C,CXX>:-pthread>)

# Whether the MPI library can say if it is CUDA-aware: MPICH >= 4.0 declares
# MPIX_Query_cuda_support in mpi.h, Open MPI in mpi-ext.h.
include(CheckCXXSymbolExists)
set(CMAKE_REQUIRED_LIBRARIES MPI::MPI_CXX)
set(CMAKE_REQUIRED_QUIET ON)
check_cxx_symbol_exists(MPIX_Query_cuda_support "mpi.h" CB_MPI_HAS_CUDA_QUERY)
if(NOT CB_MPI_HAS_CUDA_QUERY)
  check_cxx_symbol_exists(MPIX_Query_cuda_support "mpi.h;mpi-ext.h" CB_MPI_EXT_HAS_CUDA_QUERY)
endif()
# MPICH's extended generalized requests (a poll and a wait function); Open MPI and the
# standard ABI have none (the preload then advances its operations in its own waits).
check_cxx_symbol_exists(PMPIX_Grequest_start "mpi.h" CB_MPI_HAS_GREQUESTX)
# The standard ABI: mpi.h (with -DMPI_ABI) or mpi_abi.h defines MPI_ABI_VERSION.
check_cxx_symbol_exists(MPI_ABI_VERSION "mpi.h" CB_MPI_ABI)
unset(CMAKE_REQUIRED_LIBRARIES)
unset(CMAKE_REQUIRED_QUIET)
if(COLLBENCH_MPI_ABI AND NOT CB_MPI_ABI)
  message(FATAL_ERROR "COLLBENCH_MPI_ABI=ON, but ${MPI_CXX_COMPILER}'s mpi.h does not define "
                      "MPI_ABI_VERSION: not a standard-ABI wrapper (use mpicxx_abi)")
endif()
foreach(v CB_MPI_HAS_CUDA_QUERY CB_MPI_EXT_HAS_CUDA_QUERY CB_MPI_HAS_GREQUESTX CB_MPI_ABI)
  if(${v})
    set(${v} 1)
  else()
    set(${v} 0)
  endif()
endforeach()
find_package(CLI11 CONFIG REQUIRED)
find_package(nlohmann_json 3.2 REQUIRED)
find_package(PkgConfig REQUIRED)
find_package(Threads REQUIRED)

find_package(GTest)
option(COLLBENCH_BUILD_TESTS "Build the test suite" ${GTest_FOUND})

# Resolve an AUTO/ON/OFF switch: ON makes a missing dependency fatal.
function(cb_feature var switch found what)
  if(switch STREQUAL "OFF")
    set(${var} 0 PARENT_SCOPE)
  elseif(found)
    set(${var} 1 PARENT_SCOPE)
  elseif(switch STREQUAL "ON")
    message(FATAL_ERROR "${what} was requested (=ON) but not found")
  else()
    set(${var} 0 PARENT_SCOPE)
  endif()
endfunction()

# CUDA: the toolkit (nvcc + cudart) builds the kernels even where no GPU exists.
set(_cuda_found FALSE)
if(NOT COLLBENCH_CUDA STREQUAL "OFF")
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    enable_language(CUDA)
    find_package(CUDAToolkit)
    set(_cuda_found ${CUDAToolkit_FOUND})
  endif()
endif()
cb_feature(CB_HAVE_CUDA "${COLLBENCH_CUDA}" "${_cuda_found}" "CUDA toolkit")

# NCCL ships no CMake config; find it beside the CUDA toolkit or under NCCL_ROOT.
set(_nccl_found FALSE)
if(CB_HAVE_CUDA AND NOT COLLBENCH_NCCL STREQUAL "OFF")
  find_path(NCCL_INCLUDE_DIR nccl.h
            HINTS ${NCCL_ROOT} $ENV{NCCL_ROOT} ${CUDAToolkit_INCLUDE_DIRS} PATH_SUFFIXES include)
  find_library(NCCL_LIBRARY nccl
               HINTS ${NCCL_ROOT} $ENV{NCCL_ROOT} ${CUDAToolkit_LIBRARY_DIR} PATH_SUFFIXES lib lib64)
  if(NCCL_INCLUDE_DIR AND NCCL_LIBRARY)
    set(_nccl_found TRUE)
    add_library(NCCL::NCCL INTERFACE IMPORTED)
    target_include_directories(NCCL::NCCL INTERFACE ${NCCL_INCLUDE_DIR})
    target_link_libraries(NCCL::NCCL INTERFACE ${NCCL_LIBRARY})
  endif()
endif()
cb_feature(CB_HAVE_NCCL "${COLLBENCH_NCCL}" "${_nccl_found}" "NCCL")

set(_verbs_found FALSE)
if(NOT COLLBENCH_VERBS STREQUAL "OFF")
  pkg_check_modules(IBVERBS IMPORTED_TARGET libibverbs)
  set(_verbs_found ${IBVERBS_FOUND})
endif()
cb_feature(CB_HAVE_VERBS "${COLLBENCH_VERBS}" "${_verbs_found}" "libibverbs")
