# Spack recipe for collbench (docs/development.md, "Install"). It is not in Spack's builtin
# repository:
# packaging/spack is a Spack repository (repo.yaml, namespace "collbench"); add it and
# build a checkout, e.g.
#
#   spack repo add packaging/spack
#   spack env create cb && spack -e cb add collbench@main +cuda cuda_arch=90 +nccl
#   spack -e cb develop --path "$PWD" collbench@main && spack -e cb install
#
# Written for Spack's Package API v1 (repo.yaml + packages/, `from spack.package import *`);
# `spack repo migrate packaging/spack` converts it to the v2 layout of Spack 1.x if needed.
#
# The variants map to collbench's CMake switches (cmake/Dependencies.cmake): cuda ->
# COLLBENCH_CUDA, nccl -> COLLBENCH_NCCL, verbs -> COLLBENCH_VERBS, each ON or OFF (never
# AUTO: Spack decides what is found).

from spack.package import *


class Collbench(CMakePackage, CudaPackage):
    """Benchmarks for how fast data moves between processes and GPUs: OMB-style
    point-to-point and collective benchmarks under mpirun, on host or CUDA buffers, over
    interchangeable backends (the MPI library, NCCL and collbench's own collective engine),
    with validation of every element and one JSON document per run. Installs the
    benchmarks, the PMPI recorder and engine preload libraries, the engine as a CMake
    package (collbench::engine) and the plotting and comparison scripts."""

    homepage = "https://example.invalid/collbench"  # placeholder: no public home yet
    git = "https://example.invalid/collbench.git"  # placeholder; use `spack develop`

    version("main", branch="main")  # project(collbench VERSION 0.1.0)

    variant("nccl", default=False, description="Build the NCCL backend (needs +cuda)")
    variant("verbs", default=True, description="RDMA device discovery through libibverbs")
    variant("plots", default=True, description="matplotlib for collbench-plot and the figures")

    depends_on("c", type="build")
    depends_on("cxx", type="build")
    depends_on("cmake@3.25:", type="build")
    depends_on("pkgconfig", type="build")

    # MPI: the benchmarks, the engine's bootstrap and transport. libcb_engine_preload.so
    # relies on MPICH's generalized requests (MPIX_Grequest_start); collbench is developed
    # and tested with MPICH.
    depends_on("mpi")
    # Header-only: CLI11 for the command lines; nlohmann-json also for the users of
    # collbench::engine (collbenchConfig.cmake finds it).
    depends_on("cli11", type="build")
    depends_on("nlohmann-json@3.2:", type=("build", "link"))
    depends_on("rdma-core", when="+verbs")
    depends_on("nccl", when="+nccl")
    # hwloc: not used by collbench itself, only through the MPI library.

    # The scripts installed as collbench-plot, collbench-compare, collbench-model, ...
    # (standard library only, apart from matplotlib for the figures).
    depends_on("python@3.9:", type="run")
    depends_on("py-matplotlib", type="run", when="+plots")

    depends_on("googletest", type="test")

    conflicts("+nccl", when="~cuda", msg="the NCCL backend needs CUDA (+cuda)")
    conflicts("%gcc@:10", msg="collbench is C++20")

    def cmake_args(self):
        spec = self.spec
        args = [
            self.define_from_variant("COLLBENCH_CUDA", "cuda"),
            self.define_from_variant("COLLBENCH_NCCL", "nccl"),
            self.define_from_variant("COLLBENCH_VERBS", "verbs"),
            self.define("COLLBENCH_BUILD_TESTS", self.run_tests),
            self.define("COLLBENCH_WERROR", False),
        ]
        if spec.satisfies("+cuda"):
            args.append(self.define("CMAKE_CUDA_COMPILER", spec["cuda"].prefix.bin.nvcc))
            if not spec.satisfies("cuda_arch=none"):
                args.append(self.define("CMAKE_CUDA_ARCHITECTURES",
                                        spec.variants["cuda_arch"].value))
        if spec.satisfies("+nccl"):
            args.append(self.define("NCCL_ROOT", spec["nccl"].prefix))
        return args
