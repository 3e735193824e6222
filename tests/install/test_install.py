#!/usr/bin/env python3
"""ctest install_package: installs a build into a temporary prefix and uses it from there.

1. `cmake --install BUILD --prefix P`: every program, the preloadable libraries, the engine's
   static libraries, headers, CMake package, tuning table, schemas, docs, script commands;
   nothing installed points back into the build or source tree.
2. `mpirun -n 2 P/bin/cb_allreduce -m 4:1K -i 5 -x 1 -c -J x.json`: a complete, validated
   document.
3. P/bin/collbench-compare x.json y.json (a copy: every ratio 1), P/bin/collbench-tune
   --help and P/bin/collbench-plot (PNG figures), run from the prefix.
4. A consumer project (tests/install/consumer): find_package(collbench) from P, links
   collbench::engine, lists the algorithms and loads the installed tuning table.
5. `cpack -G DEB` of the build (without building first): a .deb with the programs, stripped,
   the CMake package and the Debian dependencies.

  test_install.py --build BUILD [--cmake C] [--cpack C] [--mpirun M] [--cxx CXX] [--keep]
"""
import argparse
import json
import os
import re
import pathlib
import shutil
import subprocess
import sys
import tempfile
import time

HERE = pathlib.Path(__file__).resolve().parent
SOURCE = HERE.parents[1]

BENCHMARKS = [
    "allreduce", "iallreduce", "bcast", "ibcast", "alltoall", "ialltoall", "allgather",
    "iallgather", "reduce_scatter", "ireduce_scatter", "reduce", "ireduce", "barrier",
    "alltoallv", "ialltoallv", "gather", "igatherv", "scatter_persistent", "alltoallw",
    "reduce_scatterv", "allgatherv", "ibarrier", "latency", "bw", "bibw", "mbw_mr",
    "put_latency", "put_bw", "put_bibw", "get_latency", "get_bw", "acc_latency",
    "get_acc_latency", "fop_latency", "cas_latency", "multi_lat", "latency_mt", "latency_mp",
    "bw_fan_in", "bw_fan_out", "latency_persistent",
    "bw_persistent", "bibw_persistent", "partitioned_latency", "init", "hello", "sendrecv",
    "hypercube", "replay", "info", "copybw",
]
# Benchmarks without an OMB counterpart: no osu_ name (-DCOLLBENCH_OMB_NAMES=ON).
COLLBENCH_ONLY = {"replay", "info", "copybw", "sendrecv", "hypercube"}  # (nccl-tests' two)
# Executables at the top of the build tree that are development tools, not installed.
NOT_INSTALLED = {"cb_gpu_bench"}
COMMANDS = ["collbench-plot", "collbench-compare", "collbench-replay-table", "collbench-model",
            "collbench-plots", "collbench-tune"]
ENGINE_LIBRARIES = ["libcb_engine.a", "libcb_reduce_host.a", "libcb_gpu.a", "libcb_core.a"]
HEADERS = ["config.hpp", "engine/select.hpp", "engine/algorithm.hpp", "engine/schedule.hpp",
           "core/types.hpp", "core/args.hpp", "gpu/memory.hpp"]


class Failure(Exception):
    pass


def check(cond, message):
    if not cond:
        raise Failure(message)


class Steps:
    def __init__(self, env):
        self.env = env
        self.start = time.monotonic()

    def run(self, cmd, what, cwd=None, env=None, timeout=120, rc=0):
        """Runs `cmd`; fails with its output unless it exits with `rc`."""
        t = time.monotonic()
        full_env = dict(self.env)
        full_env.update(env or {})
        try:
            p = subprocess.run([str(c) for c in cmd], cwd=cwd, env=full_env, text=True,
                               capture_output=True, timeout=timeout)
        except subprocess.TimeoutExpired as e:
            raise Failure(f"{what}: no answer in {timeout} s: {' '.join(map(str, cmd))}\n"
                          f"--- stdout\n{e.stdout}\n--- stderr\n{e.stderr}")
        print(f"[{time.monotonic() - self.start:5.1f} s] {what} ({time.monotonic() - t:.1f} s)",
              flush=True)
        check(p.returncode == rc, f"{what}: exit {p.returncode} (expected {rc}): "
                                  f"{' '.join(map(str, cmd))}\n--- stdout\n{p.stdout}\n"
                                  f"--- stderr\n{p.stderr}")
        return p


def installed_files(prefix, build, source):
    """Step 1: what the prefix must hold, and that none of it leads back to the trees."""
    missing = []

    def need(rel, executable=False):
        p = prefix / rel
        if not p.is_file() or (executable and not os.access(p, os.X_OK)):
            missing.append(rel + (" (executable)" if executable else ""))
        return p

    for b in BENCHMARKS:
        need(f"bin/cb_{b}", executable=True)
    # Every benchmark the build made (RUNTIME_OUTPUT_DIRECTORY is the build's top).
    for p in sorted(build.glob("cb_*")):
        if p.is_file() and os.access(p, os.X_OK) and p.name not in NOT_INSTALLED:
            need(f"bin/{p.name}", executable=True)
    for c in COMMANDS:
        need(f"bin/{c}", executable=True)
    need("lib/libcb_record.so")
    if (build / "libcb_engine_preload.so").exists():
        need("lib/libcb_engine_preload.so")
    for lib in ENGINE_LIBRARIES:
        need(f"lib/{lib}")
    for f in ("collbenchConfig.cmake", "collbenchConfigVersion.cmake", "collbenchTargets.cmake"):
        need(f"lib/cmake/collbench/{f}")
    for h in HEADERS:
        need(f"include/collbench/{h}")
    need("share/collbench/tuning/default.json")
    for s in sorted((source / "schemas").glob("*.schema.json")):
        need(f"share/collbench/schemas/{s.name}")
    need("share/doc/collbench/README.md")
    for d in sorted((source / "docs").glob("*.md")):
        need(f"share/doc/collbench/{d.name}")
    for s in ("cbjson.py", "plot.py", "compare.py", "model.py", "replay_table.py", "tune.py",
              "plots.sh"):
        need(f"share/collbench/scripts/{s}")
    check(not missing, "not installed: " + ", ".join(missing))

    # The exported targets carry no build-only flags and no path into the trees.
    trees = [str(build.resolve()), str(source.resolve())]
    for f in (prefix / "lib/cmake/collbench").glob("*.cmake"):
        text = f.read_text()
        for bad in trees + ["-Werror", "-Wall"]:
            check(bad not in text, f"{f.name} mentions '{bad}'")
    # Installed binaries find their libraries without the build tree (RUNPATH/RPATH).
    readelf = shutil.which("readelf")
    if readelf:
        binaries = [prefix / "bin/cb_allreduce", prefix / "bin/cb_info",
                    *sorted((prefix / "lib").glob("*.so"))]
        for b in binaries:
            dyn = subprocess.run([readelf, "-d", str(b)], capture_output=True, text=True).stdout
            for line in dyn.splitlines():
                if "RPATH" in line or "RUNPATH" in line:
                    check(not any(t in line for t in trees),
                          f"{b.relative_to(prefix)} has a run path into the build: {line.strip()}")


def omb_table():
    """(OMB name, collbench name) of every docs/benchmarks.md row with a counterpart:
    osu_reduce_scatter is cb_reduce_scatterv, osu_reduce_scatter_block cb_reduce_scatter."""
    pairs = []
    for line in (SOURCE / "docs" / "benchmarks.md").read_text().splitlines():
        m = re.match(r"^\| `osu_([a-z_]+)` \| `cb_([a-z_]+)`", line)
        if m:
            pairs.append((m.group(1), m.group(2)))
    return pairs


def omb_names(steps, prefix, build, work, cmake, mpirun):
    """-DCOLLBENCH_OMB_NAMES=ON: bin/osu_<name> links to every OMB counterpart, none to the
    collbench-only programs; read at install time, so the install script of this build can
    be run with it (and without it, when the build was configured without it, no links)."""
    cache = (build / "CMakeCache.txt").read_text()
    if "COLLBENCH_OMB_NAMES:BOOL=ON" not in cache:
        extra = sorted(p.name for p in (prefix / "bin").glob("osu_*"))
        check(not extra, f"osu_ links installed without COLLBENCH_OMB_NAMES: {extra}")
    # Into the same prefix: every file is up to date there, so the script adds the links only.
    omb = prefix
    steps.run([cmake, "-DCOLLBENCH_OMB_NAMES=ON", f"-DCMAKE_INSTALL_PREFIX={omb}", "-P",
               build / "cmake_install.cmake"], "install script with COLLBENCH_OMB_NAMES=ON")
    bad = []
    pairs = omb_table()
    check(len(pairs) >= 70, f"docs/benchmarks.md names {len(pairs)} OMB counterparts")
    for osu, ours in pairs:
        link = omb / "bin" / f"osu_{osu}"
        if not link.is_symlink():
            bad.append(f"osu_{osu} is not a symbolic link")
        elif os.readlink(link) != f"cb_{ours}" or not os.access(link, os.X_OK):
            bad.append(f"osu_{osu} -> {os.readlink(link)}, not an executable cb_{ours}")
    for b in COLLBENCH_ONLY:
        if os.path.lexists(omb / "bin" / f"osu_{b}"):
            bad.append(f"osu_{b} exists (cb_{b} has no OMB counterpart)")
    check(not bad, "OMB names: " + "; ".join(bad))
    # A link runs the counterpart, which names itself as collbench.
    p = steps.run([mpirun, "-n", "1", omb / "bin/osu_put_latency", "--version"],
                  "osu_put_latency --version")
    check(p.stdout.startswith("collbench "), f"osu_put_latency --version: {p.stdout!r}")
    for link in (prefix / "bin").glob("osu_*"):  # the prefix as a plain install again
        link.unlink()


def benchmark(steps, prefix, work, mpirun):
    """Step 2: the installed cb_allreduce writes a complete, validated document."""
    out = work / "x.json"
    exe = prefix / "bin/cb_allreduce"
    steps.run([mpirun, "-n", "2", exe, "-m", "4:1K", "-i", "5", "-x", "1", "-c", "-J", out],
              "mpirun -n 2 <prefix>/bin/cb_allreduce", cwd=work, timeout=90)
    doc = json.loads(out.read_text())
    check(doc.get("schema") == "collbench.result/1", f"schema {doc.get('schema')}")
    check(doc.get("status") == "complete", f"status {doc.get('status')}")
    check(doc["benchmark"]["name"] == "allreduce", f"benchmark {doc['benchmark']}")
    check(doc["argv"][0] == str(exe), f"argv[0] {doc['argv'][0]}, expected {exe}")
    check(doc["environment"]["nranks"] == 2, f"nranks {doc['environment']['nranks']}")
    sizes = [r["bytes"] for r in doc["results"]]
    check(sizes == [4, 8, 16, 32, 64, 128, 256, 512, 1024], f"sizes {sizes}")
    for r in doc["results"]:
        v = r.get("validation", {})
        check(v.get("enabled") and v.get("passed") and v.get("wrong_elements") == 0,
              f"validation at {r['bytes']} B: {v}")
        check(r.get("iterations") == 5, f"iterations at {r['bytes']} B: {r.get('iterations')}")
    return out, doc


def scripts(steps, prefix, work, result):
    """Step 3: script commands from the prefix on the benchmark's document."""
    report, md = work / "compare.json", work / "compare.md"
    copy = work / "y.json"  # the same run under another name (a file is not compared to itself)
    shutil.copyfile(result, copy)
    steps.run([prefix / "bin/collbench-compare", result, copy, "--json", report, "--md", md],
              "collbench-compare x.json y.json", cwd=work)
    text = md.read_text()
    check("| 1K | " in text and "slower at 0 of 9" in text,
          f"collbench-compare's report lacks the 1K row or the summary:\n{text}")
    (c,) = json.loads(report.read_text())["comparisons"]
    ratios = {r["bytes"]: r["ratio"] for r in c["rows"]}
    check(sorted(ratios) == [4, 8, 16, 32, 64, 128, 256, 512, 1024], f"compared sizes {ratios}")
    check(all(x == 1.0 for x in ratios.values()), f"a run against itself: ratios {ratios}")
    check(c["slower_sizes"] == [], f"slower sizes {c['slower_sizes']}")

    p = steps.run([prefix / "bin/collbench-tune", "--help"], "collbench-tune --help", cwd=work)
    check("--build" in p.stdout, f"collbench-tune --help:\n{p.stdout}")

    python = steps.env.get("COLLBENCH_PYTHON", "python3")
    has_mpl = any(subprocess.run([py, "-c", "import matplotlib"], capture_output=True).returncode
                  == 0 for py in (python, "/usr/bin/python3") if shutil.which(py))
    if not has_mpl:
        print("collbench-plot: skipped, no python3 here has matplotlib")
        return
    plots = work / "plots"
    steps.run([prefix / "bin/collbench-plot", "-o", plots, result], "collbench-plot x.json",
              cwd=work)
    pngs = sorted(plots.glob("*.png"))
    check(pngs, f"collbench-plot wrote no PNG into {plots}: {sorted(os.listdir(plots))}")
    for png in pngs:
        check(png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", f"{png.name} is not a PNG")


def consumer(steps, prefix, work, cmake, cxx, version):
    """Step 4: find_package(collbench) and collbench::engine in a project of its own."""
    build = work / "consumer"
    configure = [cmake, "-S", HERE / "consumer", "-B", build, f"-DCMAKE_PREFIX_PATH={prefix}",
                 "-DCMAKE_BUILD_TYPE=Release", "-DCMAKE_FIND_PACKAGE_NO_PACKAGE_REGISTRY=ON"]
    if cxx:
        configure.append(f"-DCMAKE_CXX_COMPILER={cxx}")
    steps.run(configure, "consumer: configure with find_package(collbench)")
    cache = (build / "CMakeCache.txt").read_text()
    want = f"collbench_DIR:PATH={prefix / 'lib/cmake/collbench'}"
    check(want in cache, f"the consumer did not find the package in the prefix: no '{want}'")
    steps.run([cmake, "--build", build, "-j2"], "consumer: build", timeout=180)
    exe = build / "consumer"

    tuning = prefix / "share/collbench/tuning/default.json"
    rules = len(json.loads(tuning.read_text())["rules"])
    out = steps.run([exe], "consumer: run with CB_TUNING_FILE (installed table)",
                    env={"CB_TUNING_FILE": str(tuning)}).stdout
    facts = {}
    algos = set()
    for line in out.splitlines():
        key, _, rest = line.partition(" ")
        if key == "algorithm":
            algos.add(tuple(rest.split()))
        else:
            facts[key] = rest
    check(facts.get("version") == f"{version} package {version}",
          f"consumer's version line '{facts.get('version')}', expected {version} (config.hpp "
          f"and collbench_VERSION)")
    check(facts.get("tuning_file") == str(tuning),
          f"collbench_TUNING_FILE {facts.get('tuning_file')}, expected {tuning}")
    for coll in ("allreduce", "bcast", "alltoall", "allgather", "reduce_scatter", "reduce",
                 "barrier", "alltoallv"):
        check(any(c == coll for c, _ in algos), f"no engine algorithm listed for {coll}: {algos}")
    check(("allreduce", "ring") in algos, f"allreduce ring not listed: {sorted(algos)}")
    check(facts.get("origin") == str(tuning), f"tuning table origin {facts.get('origin')}")
    check(facts.get("rules") == str(rules), f"{facts.get('rules')} rules, {tuning} has {rules}")

    env = {k: v for k, v in steps.env.items() if k != "CB_TUNING_FILE"}
    p = subprocess.run([str(exe)], capture_output=True, text=True, env=env, timeout=60)
    check(p.returncode == 0, f"consumer without CB_TUNING_FILE: exit {p.returncode}\n{p.stderr}")
    check("origin built-in" in p.stdout and "rules 0\n" not in p.stdout,
          f"consumer without CB_TUNING_FILE should load the compiled-in table:\n{p.stdout}")


def debian_package(steps, build, work, cpack):
    """Step 5: `cpack -G DEB` of the build (the build is not rebuilt)."""
    dpkg_deb = shutil.which("dpkg-deb")
    if not cpack or not dpkg_deb:
        print("cpack -G DEB: skipped (no cpack or dpkg-deb)")
        return
    out = work / "deb"
    # As a user runs it, except for one thing: with the Makefile generator cpack first builds
    # the `preinstall` target, which would rebuild a tree whose sources changed since the
    # build (a test must not build what it tests). CPACK_CMAKE_GENERATOR=Ninja has no
    # preinstall target: cpack installs the build as it is (stripped, under /usr) and packs it.
    steps.run([cpack, "-G", "DEB", "--config", build / "CPackConfig.cmake", "-B", out,
               "-D", "CPACK_CMAKE_GENERATOR=Ninja"], "cpack -G DEB", cwd=work, timeout=240)
    debs = sorted(out.glob("*.deb"))
    check(len(debs) == 1, f"cpack made {[d.name for d in debs]}, expected one .deb")
    listing = subprocess.run([dpkg_deb, "-c", str(debs[0])], capture_output=True,
                             text=True).stdout
    sizes = {}
    for line in listing.splitlines():  # -rwxr-xr-x root/root 2413744 2026-11-25 01:45 ./usr/...
        fields = line.split()
        if len(fields) >= 6:
            sizes[fields[5]] = int(fields[2])
    for f in ("./usr/bin/cb_allreduce", "./usr/bin/cb_info", "./usr/bin/collbench-plot",
              "./usr/lib/libcb_record.so", "./usr/lib/cmake/collbench/collbenchConfig.cmake",
              "./usr/include/collbench/engine/select.hpp",
              "./usr/share/collbench/tuning/default.json"):
        check(f in sizes, f"{debs[0].name} lacks {f}")
    built = (build / "cb_allreduce").stat().st_size
    check(sizes["./usr/bin/cb_allreduce"] < built,
          f"cb_allreduce in the package ({sizes['./usr/bin/cb_allreduce']} B) is not stripped "
          f"(built: {built} B)")
    fields = subprocess.run([dpkg_deb, "-f", str(debs[0]), "Package", "Depends", "Maintainer"],
                            capture_output=True, text=True).stdout
    for want in ("Package: collbench", "mpich", "libmpich-dev", "Maintainer: "):
        check(want in fields, f"{debs[0].name} control lacks '{want}':\n{fields}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", required=True, type=pathlib.Path)
    ap.add_argument("--cmake", default="cmake")
    ap.add_argument("--cpack", default="cpack")
    ap.add_argument("--mpirun", default="mpirun")
    ap.add_argument("--cxx", default="")
    ap.add_argument("--keep", action="store_true", help="keep the temporary directory")
    a = ap.parse_args()
    build = a.build.resolve()
    work = pathlib.Path(tempfile.mkdtemp(prefix="cb_install_"))
    prefix = work / "prefix"
    steps = Steps(dict(os.environ))
    try:
        steps.run([a.cmake, "--install", build, "--prefix", prefix], "cmake --install")
        installed_files(prefix, build, SOURCE)
        omb_names(steps, prefix, build, work, a.cmake, a.mpirun)
        result, doc = benchmark(steps, prefix, work, a.mpirun)
        scripts(steps, prefix, work, result)
        consumer(steps, prefix, work, a.cmake, a.cxx, doc["environment"]["collbench"]["version"])
        debian_package(steps, build, work, a.cpack)
    except Failure as e:
        print(f"FAILED: {e}", file=sys.stderr)
        return 1
    finally:
        if a.keep:
            print(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    print(f"ok ({time.monotonic() - steps.start:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
