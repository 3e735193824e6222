# What `cmake --install BUILD --prefix P` puts under P, the CMake package it exports and the
# Debian package `cpack -G DEB` makes (docs/development.md, "Install"):
#   bin/                         every benchmark (cb_*), cb_info, cb_copybw, cb_replay, and the
#                                scripts as commands (collbench-plot, collbench-compare, ...)
#   lib/                         libcb_record.so, libcb_engine_preload.so, and the static
#                                libraries of the engine (libcb_engine.a and what it links)
#   lib/cmake/collbench/         collbenchConfig.cmake: find_package(collbench), collbench::engine
#   include/collbench/           the headers of core/, gpu/ and engine/, and config.hpp
#   share/collbench/scripts/     the Python scripts and their shared modules (cbjson.py,
#                                cbfloors.py, cbstats.py, compare_mpis.py)
#   share/collbench/tuning/      the engine's tuning table (also compiled in; CB_TUNING_FILE)
#   share/collbench/schemas/     the JSON Schemas of every document collbench writes
#   share/doc/collbench/         README.md and docs/
include(CMakePackageConfigHelpers)

# --- programs and preloadable libraries ------------------------------------------------
# Every executable and shared library the benchmark folders define (as cb_benchmarks in
# src/CMakeLists.txt), so that a new benchmark is installed without an edit here.
set(_cb_programs)
set(_cb_preloads)
foreach(area collective pt2pt dl_patterns info preload)
  get_property(_targets DIRECTORY ${PROJECT_SOURCE_DIR}/src/${area} PROPERTY BUILDSYSTEM_TARGETS)
  foreach(t ${_targets})
    get_target_property(_type ${t} TYPE)
    if(_type STREQUAL "EXECUTABLE")
      list(APPEND _cb_programs ${t})
    elseif(_type STREQUAL "SHARED_LIBRARY")
      list(APPEND _cb_preloads ${t})  # libcb_record.so, libcb_engine_preload.so
    endif()
  endforeach()
endforeach()
install(TARGETS ${_cb_programs} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

# --- OMB's names: -DCOLLBENCH_OMB_NAMES=ON --------------------------------------------
# bin/osu_<name> -> cb_<name> (a relative symbolic link) for every OMB 7.4/7.5 executable
# that has a counterpart here, so that a script written for OMB runs unchanged. The list
# names OMB's executables, not collbench's: a collbench-only program (cb_replay, cb_info,
# cb_copybw) gets no osu_ name, and a name whose cb_ program this build lacks is skipped.
# The choice is also read when the install script runs, so that
#   cmake -DCOLLBENCH_OMB_NAMES=ON -DCMAKE_INSTALL_PREFIX=P -P BUILD/cmake_install.cmake
# installs the links from a build configured without them (tests/install does).
# The OMB names come from docs/benchmarks.md, the table of counterparts: each row
# "| `osu_<name>` | `cb_<ours>` ..." links osu_<name> to cb_<ours> (osu_reduce_scatter is
# cb_reduce_scatterv, osu_reduce_scatter_block cb_reduce_scatter). One list to keep.
file(STRINGS ${PROJECT_SOURCE_DIR}/docs/benchmarks.md _cb_table_rows REGEX "^\\| `osu_[a-z_]+` \\| `cb_")
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS
                                      ${PROJECT_SOURCE_DIR}/docs/benchmarks.md)
set(_cb_omb_links)
foreach(row ${_cb_table_rows})
  string(REGEX MATCH "^\\| `osu_([a-z_]+)` \\| `cb_([a-z_]+)`" _m "${row}")
  set(_osu ${CMAKE_MATCH_1})
  set(_cb ${CMAKE_MATCH_2})
  if(TARGET cb_${_cb} AND cb_${_cb} IN_LIST _cb_programs)
    list(APPEND _cb_omb_links "${_osu}=${_cb}")
  endif()
endforeach()
install(CODE "
  if(NOT DEFINED COLLBENCH_OMB_NAMES)
    set(COLLBENCH_OMB_NAMES ${COLLBENCH_OMB_NAMES})
  endif()
  if(COLLBENCH_OMB_NAMES)
    foreach(pair ${_cb_omb_links})
      string(REPLACE \"=\" \";\" pair \"\${pair}\")
      list(GET pair 0 osu)
      list(GET pair 1 ours)
      set(link \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_BINDIR}/osu_\${osu}\")
      message(STATUS \"Installing: \${link} -> cb_\${ours}\")
      file(CREATE_LINK \"cb_\${ours}\" \"\${link}\" SYMBOLIC)
    endforeach()
  endif()
")
install(TARGETS ${_cb_preloads} LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})

# --- the engine as a library: collbench::engine ----------------------------------------
# cb_engine and the collbench libraries it links (found by walking its link interface, so
# a library the engine starts to use is exported too), under the names the package gives
# them: collbench::engine, collbench::core, ... Consumers include headers as collbench does
# ("engine/select.hpp"), from include/collbench/ (cb_flags' INSTALL_INTERFACE).
function(cb_link_closure target out)
  set(_seen ${${out}})
  get_target_property(_libs ${target} INTERFACE_LINK_LIBRARIES)
  get_target_property(_type ${target} TYPE)
  if(NOT _type STREQUAL "INTERFACE_LIBRARY")
    get_target_property(_own ${target} LINK_LIBRARIES)
    list(APPEND _libs ${_own})
  endif()
  foreach(l ${_libs})
    string(REGEX REPLACE "^\\$<LINK_ONLY:(.*)>$" "\\1" l "${l}")
    if(TARGET "${l}" AND NOT l IN_LIST _seen)
      get_target_property(_imported ${l} IMPORTED)
      if(NOT _imported)
        list(APPEND _seen ${l})
        cb_link_closure(${l} _seen)
      endif()
    endif()
  endforeach()
  set(${out} ${_seen} PARENT_SCOPE)
endfunction()
set(_cb_exported cb_engine)
cb_link_closure(cb_engine _cb_exported)
foreach(t ${_cb_exported})
  string(REGEX REPLACE "^cb_" "" _name ${t})
  set_target_properties(${t} PROPERTIES EXPORT_NAME ${_name})
endforeach()
install(TARGETS ${_cb_exported} EXPORT collbenchTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
set(_cb_headers ${CMAKE_INSTALL_INCLUDEDIR}/collbench)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/src/core ${PROJECT_SOURCE_DIR}/src/gpu
                  ${PROJECT_SOURCE_DIR}/src/engine
        DESTINATION ${_cb_headers} FILES_MATCHING PATTERN "*.hpp" PATTERN "tuning" EXCLUDE)
install(FILES ${CMAKE_BINARY_DIR}/generated/config.hpp DESTINATION ${_cb_headers})

set(_cb_cmakedir ${CMAKE_INSTALL_LIBDIR}/cmake/collbench)
install(EXPORT collbenchTargets NAMESPACE collbench:: DESTINATION ${_cb_cmakedir})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/collbenchConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/collbenchConfig.cmake
                              INSTALL_DESTINATION ${_cb_cmakedir}
                              PATH_VARS CMAKE_INSTALL_INCLUDEDIR CMAKE_INSTALL_DATADIR)
# 0.x: a minor version may change the interface.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/collbenchConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/collbenchConfig.cmake
              ${PROJECT_BINARY_DIR}/collbenchConfigVersion.cmake
        DESTINATION ${_cb_cmakedir})

# --- data: tuning table, schemas, documentation ----------------------------------------
install(FILES ${PROJECT_SOURCE_DIR}/src/engine/tuning/default.json
        DESTINATION ${CMAKE_INSTALL_DATADIR}/collbench/tuning)
# The JSON Schemas of every document collbench writes (docs/json-schema.md).
install(DIRECTORY ${PROJECT_SOURCE_DIR}/schemas/
        DESTINATION ${CMAKE_INSTALL_DATADIR}/collbench/schemas
        FILES_MATCHING PATTERN "*.schema.json")
install(FILES ${PROJECT_SOURCE_DIR}/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR})

# --- scripts as commands ---------------------------------------------------------------
# The scripts import cbjson.py from their own directory, and plots.sh calls plot.py beside
# it: they stay together in share/collbench/scripts/, and bin/collbench-<name> runs one of
# them by a path relative to itself (the prefix can move, as in the .deb).
set(_cb_scriptdir ${CMAKE_INSTALL_DATADIR}/collbench/scripts)
# The modules the commands import (plot.py: cbfloors.py for the floor lines; compare.py:
# compare_mpis.py for the summary's size bands, which imports cbstats.py).
install(FILES ${PROJECT_SOURCE_DIR}/scripts/cbjson.py ${PROJECT_SOURCE_DIR}/scripts/cbfloors.py
              ${PROJECT_SOURCE_DIR}/scripts/compare_mpis.py ${PROJECT_SOURCE_DIR}/scripts/cbstats.py
        DESTINATION ${_cb_scriptdir})
file(RELATIVE_PATH _cb_bin_to_scripts ${CMAKE_INSTALL_FULL_BINDIR}
     ${CMAKE_INSTALL_PREFIX}/${_cb_scriptdir})
# command | script | interpreter | arguments before the user's
set(_cb_commands
  "collbench-plot|plot.py|python3|"
  "collbench-compare|compare.py|python3|"
  "collbench-replay-table|replay_table.py|python3|"
  "collbench-model|model.py|python3|"
  "collbench-plots|plots.sh|bash|"
  # tune.py runs cb_<coll> from --build (default build/): the installed ones here; a later
  # --build on the command line still wins.
  "collbench-tune|tune.py|python3|--build \"$here\"")
foreach(c ${_cb_commands})
  string(REPLACE "|" ";" c "${c}")
  list(GET c 0 _command)
  list(GET c 1 _script)
  list(GET c 2 _interpreter)
  list(GET c 3 _args)
  if(_interpreter STREQUAL "python3")
    set(_interpreter "\${COLLBENCH_PYTHON:-python3}")
  endif()
  if(_args)
    string(PREPEND _args " ")
  endif()
  install(PROGRAMS ${PROJECT_SOURCE_DIR}/scripts/${_script} DESTINATION ${_cb_scriptdir})
  file(CONFIGURE OUTPUT ${PROJECT_BINARY_DIR}/commands/${_command} @ONLY CONTENT [=[
#!/bin/sh
# @_command@: collbench's scripts/@_script@, installed in @_cb_scriptdir@.
here=$(dirname "$(readlink -f "$0")")
exec @_interpreter@ "$here/@_cb_bin_to_scripts@/@_script@"@_args@ "$@"
]=])
  install(PROGRAMS ${PROJECT_BINARY_DIR}/commands/${_command} DESTINATION ${CMAKE_INSTALL_BINDIR})
endforeach()

# --- cpack -G DEB ----------------------------------------------------------------------
set(CPACK_PACKAGE_NAME collbench)
set(CPACK_PACKAGE_VENDOR "collbench")
set(CPACK_PACKAGE_CONTACT
    "collbench maintainers <maintainers@users.noreply.a-seed-69399869.example>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "point-to-point and collective communication benchmarks: MPI, NCCL, own engine")
set(CPACK_PACKAGE_DESCRIPTION
    "OMB-style point-to-point and collective benchmarks run under mpirun, on host or CUDA buffers, \
over interchangeable backends (the MPI library, NCCL and collbench's own collective engine), with \
validation of every element and one JSON document per run; deep-learning pattern replay, a PMPI \
recorder (libcb_record.so), the engine under unmodified MPI programs \
(libcb_engine_preload.so), the engine as a CMake package (collbench::engine), and plotting, \
comparison and modelling scripts.")
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
# Programs without their debug information (`cmake --install --strip` does the same).
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "${CPACK_PACKAGE_CONTACT}")
# The programs link MPICH (mpich brings mpirun and libmpich12); libmpich-dev and
# nlohmann-json3-dev serve find_package(collbench) (mpi.h, <nlohmann/json_fwd.hpp>).
# CUDA and NCCL, when built in, come from NVIDIA's toolkit, not from Debian.
set(_cb_depends "mpich, libmpich12, libmpich-dev, nlohmann-json3-dev, libstdc++6, python3")
if(CB_HAVE_VERBS)
  string(APPEND _cb_depends ", libibverbs1")
endif()
set(CPACK_DEBIAN_PACKAGE_DEPENDS "${_cb_depends}")
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "python3-matplotlib, python3-jsonschema")
include(CPack)
