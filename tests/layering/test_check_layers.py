#!/usr/bin/env python3
"""Self-test of check_layers.py: small fake src/ trees it must pass or fail.

Run: python3 -m unittest tests/layering/test_check_layers.py -v   (or run this file)
"""

import os
import subprocess
import sys
import tempfile
import textwrap
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
CHECKER = os.path.join(HERE, "check_layers.py")

# A small tree that follows every rule: each layer includes the one below it, MPI only in
# the allowed places, a foreach() of executables, config.hpp included bare.
CLEAN = {
    "src/config.hpp.in": "#pragma once\n#define CB_HAVE_CUDA @CB_HAVE_CUDA@\n",
    "src/CMakeLists.txt": """\
        add_library(cb_core STATIC core/types.cpp)
        # a comment naming cb_harness must not count
        target_link_libraries(cb_core PUBLIC cb_flags MPI::MPI_CXX)
        foreach(area gpu engine backends harness collective pt2pt)
          add_subdirectory(${area})
        endforeach()
        """,
    "src/core/types.hpp": '#pragma once\n#include <cstddef>\n#include "config.hpp"\n',
    "src/core/types.cpp": '#include "core/types.hpp"\n',
    "src/core/mpi_check.hpp": "#pragma once\n#include <mpi.h>\n",
    "src/gpu/CMakeLists.txt": "add_library(cb_gpu STATIC memory.cpp)\n"
                              "target_link_libraries(cb_gpu PUBLIC cb_core)\n",
    "src/gpu/memory.hpp": '#pragma once\n#include "core/types.hpp"\n',
    "src/gpu/memory.cpp": '#include "gpu/memory.hpp"\n#include <cuda_runtime_api.h>\n',
    "src/engine/CMakeLists.txt": """\
        add_library(cb_reduce_host STATIC reduce_host.cpp)
        target_link_libraries(cb_reduce_host PUBLIC cb_core)
        add_library(cb_engine STATIC comm.cpp algos/allreduce_ring.cpp)
        target_link_libraries(cb_engine PUBLIC cb_reduce_host cb_gpu
                                               cb_core Threads::Threads)
        """,
    "src/engine/comm.hpp": '#pragma once\n#include <mpi.h>\n#include "gpu/memory.hpp"\n',
    "src/engine/comm.cpp": '#include "engine/comm.hpp"\n',
    "src/engine/executor_cuda.cpp": "#include <cuda_runtime_api.h>\n",
    "src/engine/algos/allreduce_ring.cpp": """\
        #include "engine/comm.hpp"
        // #include <mpi.h> in a line comment
        /* and in a block comment:
        #include "harness/options.hpp"
        */
        """,
    "src/backends/CMakeLists.txt": "add_library(cb_backends STATIC backend.cpp)\n"
                                   "target_link_libraries(cb_backends PUBLIC cb_engine)\n",
    "src/backends/backend.hpp": '#pragma once\n#include <mpi.h>\n#include <nccl.h>\n'
                                '#include "engine/comm.hpp"\n',
    "src/backends/backend.cpp": '#include "backends/backend.hpp"\n',
    "src/harness/CMakeLists.txt": "add_library(cb_harness STATIC options.cpp)\n"
                                  "target_link_libraries(cb_harness PUBLIC cb_backends)\n",
    "src/harness/options.hpp": '#pragma once\n#include "backends/backend.hpp"\n',
    "src/harness/options.cpp": '#include "harness/options.hpp"\n',
    "src/collective/CMakeLists.txt": """\
        add_library(cb_collectives STATIC benches.cpp)
        target_link_libraries(cb_collectives PUBLIC cb_harness)
        foreach(bench allreduce bcast)
          add_executable(cb_${bench} main.cpp)
          target_link_libraries(cb_${bench} PRIVATE cb_collectives)
        endforeach()
        """,
    "src/collective/benches.hpp": '#pragma once\n#include "harness/options.hpp"\n',
    "src/collective/benches.cpp": '#include "collective/benches.hpp"\n',
    "src/collective/main.cpp": '#include "collective/benches.hpp"\n#include "config.hpp"\n',
    "src/pt2pt/CMakeLists.txt": "add_executable(cb_bw bw.cpp)\n"
                                "target_link_libraries(cb_bw PRIVATE cb_harness)\n",
    "src/pt2pt/bw.cpp": '#include "harness/options.hpp"\n#include "pt2pt/bw.hpp"\n',
    "src/pt2pt/bw.hpp": "#pragma once\n",
}


class CheckLayersTest(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory(prefix="layering_")
        self.root = self._tmp.name
        for path, text in CLEAN.items():
            self.write(path, text)

    def tearDown(self):
        self._tmp.cleanup()

    def write(self, path, text):
        full = os.path.join(self.root, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w", encoding="utf-8") as f:
            f.write(textwrap.dedent(text))

    def append(self, path, text):
        with open(os.path.join(self.root, path), "a", encoding="utf-8") as f:
            f.write(text)

    def run_checker(self):
        proc = subprocess.run([sys.executable, CHECKER, self.root],
                              capture_output=True, text=True, timeout=60)
        self.assertEqual(proc.stderr, "")
        return proc.returncode, proc.stdout.splitlines()

    def assert_fails(self, *fragments):
        """Exit 1 and exactly one violation line (plus the summary) with all fragments."""
        rc, lines = self.run_checker()
        self.assertEqual(rc, 1, "\n".join(lines))
        self.assertTrue(lines[-1].startswith("check_layers: FAILED: 1 violation"), lines)
        violation = lines[0]
        for fragment in fragments:
            self.assertIn(fragment, violation)
        return violation

    def test_clean_tree_passes(self):
        rc, lines = self.run_checker()
        self.assertEqual(rc, 0, "\n".join(lines))
        self.assertEqual(len(lines), 1, lines)
        self.assertTrue(lines[0].startswith("check_layers: OK: "), lines)
        self.assertIn(f"{len([p for p in CLEAN if not p.endswith('.txt')])} files", lines[0])

    def test_upward_include(self):
        self.append("src/engine/comm.cpp", '#include "harness/options.hpp"\n')
        self.assert_fails("src/engine/comm.cpp:2:", '"harness/options.hpp"',
                          "layer 'harness'", "'engine'", "core, gpu, engine")

    def test_upward_include_from_core_to_gpu(self):
        self.append("src/core/types.cpp", '#include "gpu/memory.hpp"\n')
        self.assert_fails("src/core/types.cpp:2:", "layer 'gpu'", "'core'")

    def test_sibling_benchmark_include(self):
        self.append("src/pt2pt/bw.cpp", '#include "collective/benches.hpp"\n')
        self.assert_fails("src/pt2pt/bw.cpp:3:", '"collective/benches.hpp"', "sibling",
                          "src/collective/", "src/pt2pt/")

    def test_mpi_in_engine_algorithm(self):
        self.append("src/engine/algos/allreduce_ring.cpp", "#include <mpi.h>\n")
        self.assert_fails("src/engine/algos/allreduce_ring.cpp:6:", "<mpi.h>", "MPI",
                          "src/engine/comm.cpp")

    def test_mpi_ext_in_core(self):
        self.append("src/core/types.hpp", "#include <mpi-ext.h>\n")
        self.assert_fails("src/core/types.hpp:4:", "<mpi-ext.h>", "src/core/mpi_check.hpp")

    def test_cuda_runtime_in_engine(self):
        self.append("src/engine/comm.cpp", "#include <cuda_runtime.h>\n")
        self.assert_fails("src/engine/comm.cpp:2:", "<cuda_runtime.h>", "CUDA",
                          "src/engine/executor_cuda.cpp")

    def test_nccl_in_gpu(self):
        self.append("src/gpu/memory.cpp", "#include <nccl.h>\n")
        self.assert_fails("src/gpu/memory.cpp:3:", "<nccl.h>", "nowhere")

    def test_cmake_cycle(self):
        self.write("src/gpu/CMakeLists.txt",
                   "add_library(cb_gpu STATIC memory.cpp)\n"
                   "target_link_libraries(cb_gpu PUBLIC cb_core cb_gpu_extra)\n"
                   "target_link_libraries(cb_gpu_extra PRIVATE\n  cb_gpu)\n")
        rc, lines = self.run_checker()
        self.assertEqual(rc, 1, "\n".join(lines))
        cycles = [line for line in lines if "CMake link cycle" in line]
        self.assertEqual(len(cycles), 1, lines)
        self.assertIn("cb_gpu -> cb_gpu_extra -> cb_gpu", cycles[0])
        self.assertIn("src/gpu/CMakeLists.txt:2", cycles[0])
        self.assertIn("src/gpu/CMakeLists.txt:3", cycles[0])

    def test_cmake_cycle_across_files(self):
        self.append("src/engine/CMakeLists.txt",
                    "target_link_libraries(cb_reduce_host PRIVATE cb_engine)\n")
        self.assert_fails("CMake link cycle", "cb_engine -> cb_reduce_host -> cb_engine")

    def test_cmake_upward_link(self):
        # cb_tool is no layer's library: a benchmark-level one (and it links nothing back).
        self.append("src/CMakeLists.txt", "target_link_libraries(cb_core PRIVATE cb_tool)\n")
        self.assert_fails("src/CMakeLists.txt:7:", "cb_tool", "layer 'top'",
                          "cb_core's 'core'")

    def test_unresolved_include(self):
        self.append("src/harness/options.cpp", '#include "harness/missing.hpp"\n')
        self.assert_fails("src/harness/options.cpp:2:", '"harness/missing.hpp"',
                          "does not resolve")

    def test_include_relative_to_the_file_is_unresolved(self):
        self.append("src/pt2pt/bw.cpp", '#include "bw.hpp"\n')
        self.assert_fails("src/pt2pt/bw.cpp:3:", '"bw.hpp"', '"pt2pt/bw.hpp"')

    def test_unknown_folder(self):
        self.write("src/extra/x.cpp", '#include "core/types.hpp"\n')
        self.assert_fails("src/extra/x.cpp:1:", "src/extra/", "layer table")

    def test_default_root_is_two_folders_up(self):
        # Run a copy of the checker placed at <root>/tests/layering/ without arguments.
        self.append("src/engine/comm.cpp", '#include "harness/options.hpp"\n')
        os.makedirs(os.path.join(self.root, "tests", "layering"))
        copy = os.path.join(self.root, "tests", "layering", "check_layers.py")
        with open(CHECKER, encoding="utf-8") as src, open(copy, "w", encoding="utf-8") as dst:
            dst.write(src.read())
        proc = subprocess.run([sys.executable, copy], capture_output=True, text=True,
                              timeout=60, cwd=HERE)
        self.assertEqual(proc.returncode, 1, proc.stdout)
        self.assertIn("src/engine/comm.cpp:2:", proc.stdout)


if __name__ == "__main__":
    unittest.main()
