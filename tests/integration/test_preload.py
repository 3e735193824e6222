"""libcb_engine_preload.so (docs/preload.md): the engine under unmodified MPI programs.

tests/preload/preload_app.cpp calls every routed collective and some that must pass
through, checks every element, and prints per rank the counts it expects in the format of
CB_PRELOAD_VERBOSE ("expect: cb_engine_preload: rank R: MPI_X: E engine, P passed
through (reason: n, ...)"); the cases compare them with the library's own lines. The last
case runs a fixed subset of MPICH's collective tests through the library."""
import json
import os
import re
import subprocess

import cbtest
from cbtest import Failure, case, check

LABELS = ('release', 'other_mpis', 'mpi')  # tests/labels.md

# MPICH 4.0.2's collective tests: where scripts/install_deps.sh fetches them (git-ignored; see
# scripts/preload_mpich_tests.sh), else the project's shared copy beside the repository.
_REPO = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
MPICH_TESTS_AT = [os.path.join(_REPO, ".peer", "mpich-coll-tests"),
                  os.path.normpath(os.path.join(_REPO, "..", "shared", "peer", "mpich-coll-tests"))]
MPICH_TESTS = next((d for d in MPICH_TESTS_AT
                    if os.path.isfile(os.path.join(d, "coll", "testlist"))), MPICH_TESTS_AT[0])
LINE = re.compile(r"^cb_engine_preload: rank \d+: MPI_\w+: \d+ engine, \d+ passed through")
TUNING = cbtest.TUNING_TABLE


def tuning(env, to_library=()):
    """{"CB_TUNING_FILE": ...}: the default table without its own "mpi" rules (the sizes it
    hands to the MPI library, whatever the table measured here has), so that the cases see
    the engine take every call it can run; with `to_library`, rules first that hand every
    size of those collectives on private buffers to the library, as tune.py writes where
    MPICH wins."""
    with open(TUNING) as f:
        table = json.load(f)
    table["rules"] = [{"coll": c, "mem": "host", "algo": "mpi", "buffers": "private"}
                      for c in to_library] + [r for r in table["rules"] if r.get("algo") != "mpi"]
    path = env.path("tuning.json")
    with open(path, "w") as f:
        json.dump(table, f)
    return {"CB_TUNING_FILE": path}


# The runtime library of each sanitizer COLLBENCH_SANITIZE may name (GCC's).
SANITIZER_RUNTIMES = {"address": "libasan.so", "undefined": "libubsan.so",
                      "thread": "libtsan.so"}


def sanitizers(env):
    """The sanitizers the build in env.bindir was made with (its generated/config.hpp's
    CB_SANITIZE, from COLLBENCH_SANITIZE): [] for a plain build."""
    m = re.search(r'#define CB_SANITIZE "([^"]*)"', env.config())
    return [s for s in m.group(1).split(",") if s] if m else []


def preload_first(env):
    """The libraries LD_PRELOAD names before a preloaded library of this build: those of
    CB_TEST_PRELOAD_FIRST (paths separated by ':') where it is set, else in a sanitizer
    build the sanitizers' runtimes, which must be the first libraries of a process (the
    preloaded library is instrumented; the programs it goes into are not), found by the
    compiler that made the build."""
    first = os.environ.get("CB_TEST_PRELOAD_FIRST")
    if first is not None:
        return [p for p in first.split(":") if p]
    sans = sanitizers(env)
    if not sans:
        return []
    cxx = "c++"
    try:
        with open(os.path.join(env.bindir, "CMakeCache.txt")) as f:
            m = re.search(r"^CMAKE_CXX_COMPILER:\w+=(.+)$", f.read(), re.M)
            cxx = m.group(1).strip() if m else cxx
    except OSError:
        pass
    out = []
    for san in sans:
        name = SANITIZER_RUNTIMES.get(san)
        check(name, f"no runtime known for -fsanitize={san} (SANITIZER_RUNTIMES)")
        p = subprocess.run([cxx, f"-print-file-name={name}"], capture_output=True, text=True)
        path = p.stdout.strip()
        check(p.returncode == 0 and os.path.isabs(path) and os.path.exists(path),
              f"{cxx} -print-file-name={name} found no {name}: {path} {p.stderr}; set "
              f"CB_TEST_PRELOAD_FIRST to the sanitizer runtimes")
        out.append(os.path.realpath(path))
    return out


def preload_vars(env, lib):
    """The environment that preloads `lib`, a library of this build: LD_PRELOAD with
    preload_first() in front, and in a sanitizer build the sanitizers' options unless set
    (scripts/test.sh's): no leak reports (MPICH and UCX keep allocations until exit), a
    UBSan report fails the run, and UCX's memory hooks off (they crash under TSan)."""
    first = preload_first(env)
    out = {"LD_PRELOAD": ":".join([*first, lib])}
    if sanitizers(env):
        defaults = {"ASAN_OPTIONS": "detect_leaks=0",
                    "UBSAN_OPTIONS": "print_stacktrace=1:halt_on_error=1",
                    "TSAN_OPTIONS": "halt_on_error=1:second_deadlock_stack=1",
                    "UCX_MEM_EVENTS": "no"}
        out.update({k: v for k, v in defaults.items() if k not in os.environ})
    return out


def paths(env):
    lib = os.path.join(env.bindir, "libcb_engine_preload.so")
    app = os.path.join(env.bindir, "tests", "cb_preload_app")
    check(os.path.exists(lib) and os.path.exists(app), f"missing {lib} or {app}")
    return lib, app


def run_app(env, np, extra_env, timeout=120):
    """Runs the app under the preload; its expectations and the library's verbose lines go
    to files (one write per line: mpirun's stdout forwarding may join two ranks' lines)."""
    lib, app = paths(env)
    expect_file, log_file = env.path("expect.txt"), env.path("verbose.txt")
    run_env = dict(os.environ, **preload_vars(env, lib), CB_PRELOAD_VERBOSE="1",
                   CB_PRELOAD_LOG=log_file, **extra_env)
    try:
        p = subprocess.run([env.mpirun, "-n", str(np), app, expect_file], env=run_env,
                           capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as e:
        raise Failure(f"HANG: {app} under the preload ({extra_env}): {e}")
    check(p.returncode == 0, f"{app} under the preload failed (rc={p.returncode}):\n"
                             f"{p.stdout[-3000:]}\n{p.stderr[-3000:]}")
    check(f"{np} ranks, 0 wrong elements" in p.stdout, f"no result line:\n{p.stdout[-2000:]}")
    with open(expect_file) as f:
        expected = sorted(l[len("expect: "):].rstrip("\n") for l in f if l.startswith("expect: "))
    with open(log_file) as f:
        got = sorted(l.rstrip("\n") for l in f if LINE.match(l))
    return expected, got, p


def app_matches(env, np, extra_env=None):
    expected, got, p = run_app(env, np, {**tuning(env), **(extra_env or {})})
    check(len(expected) == 14 * np, f"{len(expected)} expectation lines:\n{p.stdout[-2000:]}")
    missing = sorted(set(expected) - set(got))
    extra = sorted(set(got) - set(expected))
    check(not missing and not extra,
          f"verbose counts differ from the app's expectations\nmissing: {missing}\n"
          f"unexpected: {extra}")


@case('asan')
def preload_app_two_ranks(env):
    app_matches(env, 2)


@case('asan')
def preload_app_three_ranks_yield(env):
    # Three ranks on two cores: the engine waits yielding (CB_PRELOAD_WAIT=auto would
    # choose it too on this machine; forced, so that it is tested on any machine).
    app_matches(env, 3, {"CB_PRELOAD_WAIT": "yield"})


@case('asan')
def preload_tuned_to_library(env):
    """Sizes the table hands to the MPI library ("mpi") pass through, remembered per
    signature, still with every element right; every call is counted once."""
    colls = {"bcast": "MPI_Bcast", "alltoall": "MPI_Alltoall", "allgather": "MPI_Allgather"}
    expected, got, p = run_app(env, 2, tuning(env, colls))
    tuned_lines = [l for l in got if "tuned to the MPI library" in l]
    for coll, fn in colls.items():
        check(any(f"{fn}:" in l or f"MPI_I{coll}:" in l for l in tuned_lines),
              f"{fn}: no call tuned to the library:\n{tuned_lines}")
    check(not any("MPI_Allreduce:" in l for l in tuned_lines),
          f"allreduce has no such rule, yet passed as tuned:\n{tuned_lines}")
    total = lambda lines: sum(int(x) for l in lines
                              for x in re.findall(r"(\d+) (?:engine|passed through)", l))
    check(total(got) == total(expected), f"calls: {total(got)} counted, {total(expected)} made")


@case('asan')
def preload_engine_off(env):
    expected, got, _ = run_app(env, 2, {"CB_ENGINE": "off"})
    check(len(got) == 28, f"{len(got)} verbose lines: {got}")
    for line in got:
        m = re.search(r": (\d+) engine, (\d+) passed through \(CB_ENGINE=off: (\d+)\)$", line)
        check(m and m.group(1) == "0" and m.group(2) == m.group(3), f"CB_ENGINE=off: {line}")
    # Every call still counted: the totals equal the app's.
    total = lambda lines: sum(int(x) for l in lines
                              for x in re.findall(r"(\d+) (?:engine|passed through)", l))
    check(total(got) == total(expected), f"calls: {total(got)} counted, {total(expected)} made")


# 37 of MPICH's tests (58 testlist entries; 14 s at 2 ranks on 2 quiet cores, 70 s on
# busy ones), each with the functions the engine must take calls of (besides MPI_Reduce:
# every test's MTest_Finalize reduces its error count). The others' collectives pass
# through.
NBC = ["MPI_Iallreduce", "MPI_Ibcast", "MPI_Ialltoall", "MPI_Ireduce", "MPI_Iallgather",
       "MPI_Ireduce_scatter_block", "MPI_Ibarrier"]
MPICH_SUBSET = {
    "allredmany": ["MPI_Allreduce"], "allred3": [], "allred4": [],  # user ops: MPI's
    "allred5": ["MPI_Allreduce"], "allred6": [],
    "reduce_local": [], "red3": [], "red4": [],
    "alltoall1": ["MPI_Alltoall"], "alltoallv": [], "alltoallw2": [],
    "allgather2": ["MPI_Allgather"], "allgather3": ["MPI_Allgather"], "allgather_struct": [],
    "bcasttest": ["MPI_Bcast"], "bcastzerotype": [],
    "red_scat_block": ["MPI_Reduce_scatter_block"], "red_scat_block2": [],
    "redscatblk3": ["MPI_Reduce_scatter_block"],
    "iallred": ["MPI_Allreduce", "MPI_Iallreduce"], "ibarrier": ["MPI_Ibarrier"],
    "nonblocking": NBC, "nonblocking2": NBC,
    # Only non-blocking collectives on communicators it makes: they get no engine (made at a
    # communicator's first routed blocking collective, docs/preload.md) ...
    "nonblocking3": [],
    "opsum": ["MPI_Reduce"], "opprod": ["MPI_Reduce"], "opmax": ["MPI_Reduce"],
    "opmin": ["MPI_Reduce"], "coll2": [], "coll13": ["MPI_Alltoall"],
    # Strided vector types on one side (packed), MPI_IN_PLACE at the root, the other
    # ranks' insignificant arguments NULL, -1 and MPI_DATATYPE_NULL (issue 39).
    "gather": ["MPI_Gather"], "gather2": ["MPI_Gather"], "scattern": ["MPI_Scatter"],
    "scatter2": ["MPI_Scatter"], "scatter3": ["MPI_Scatter"],
    # Allgatherv with MPI_IN_PLACE, counts and displacements in rank order (issue 39).
    "allgatherv2": ["MPI_Allgatherv"], "allgatherv3": ["MPI_Allgatherv"],
}


# ... unless the constructors make them (CB_PRELOAD_ENGINES=eager): run once more so.
EAGER_AGAIN = {"nonblocking3": NBC}


# MPICH's nonblocking2 and nonblocking3 keep MPI_Ialltoallw's datatypes in "int *" arrays
# (test: how many such declarations). A handle is an int in MPICH's own ABI; in Open MPI's
# and in the MPI 5.0 standard ABI's (MPICH 5's libmpi_abi.so) it is a pointer, which the
# array cuts to 32 bits (gcc: "assignment to 'int' from 'MPI_Datatype' makes integer from
# pointer"), and MPI_Ialltoallw reads garbage handles and segfaults, with or without the
# preload (NO_PRELOAD=1 scripts/preload_mpich_tests.sh). There they run from a copy of the
# suite whose arrays are MPI_Datatype *, which passes on plain MPI.
POINTER_HANDLES_FIX = {"nonblocking2": 2, "nonblocking3": 4}


def pointer_handles_suite(env):
    """A copy of MPICH's test suite (links to it) with POINTER_HANDLES_FIX's tests' datatype
    arrays declared MPI_Datatype *; fails where the sources no longer have the declarations
    that the fix is for (then see whether the copy is still needed)."""
    suite = env.path("mpich-coll-tests")
    os.makedirs(os.path.join(suite, "coll"))
    for name in ("run.sh", "include", "util", os.path.join("coll", "testlist")):
        os.symlink(os.path.join(MPICH_TESTS, name), os.path.join(suite, name))
    for name, declarations in POINTER_HANDLES_FIX.items():
        with open(os.path.join(MPICH_TESTS, "coll", name + ".c")) as f:
            src, n = re.subn(r"\bint \*((?:send|recv)types)\b", r"MPI_Datatype *\1", f.read())
        check(n == declarations, f"MPICH's {name}.c has {n} datatype arrays declared int *, "
                                 f"not the {declarations} POINTER_HANDLES_FIX is for")
        with open(os.path.join(suite, "coll", name + ".c"), "w") as f:
            f.write(src)
    return suite


@case('asan')
def preload_mpich_coll_subset(env):
    if not os.path.isfile(os.path.join(MPICH_TESTS, "coll", "testlist")):
        return (f"SKIP: MPICH's collective tests are in neither {' nor '.join(MPICH_TESTS_AT)} "
                "(scripts/install_deps.sh fetches them)")
    lib, _ = paths(env)
    script = os.path.join(os.path.dirname(__file__), "..", "..", "scripts",
                          "preload_mpich_tests.sh")
    # Built once per build folder; logs go there too (run.sh skips a test already built).
    out = os.path.join(env.bindir, "tests", "mpich-coll-tests")
    subset = dict(MPICH_SUBSET)
    # (suite, where its tests are built, the tests to run from it)
    runs = [(MPICH_TESTS, out, list(subset))]
    if cbtest.mpirun_flavour(env.real_mpirun) == "openmpi" or env.abi():  # pointer handles
        fixed = list(POINTER_HANDLES_FIX)
        runs = [(MPICH_TESTS, out, [n for n in subset if n not in fixed]),
                (pointer_handles_suite(env), out + "-pointer-handles", fixed)]
    sanitized = preload_vars(env, lib)
    sanitized.pop("LD_PRELOAD")
    run_env = dict(os.environ, MAXNP="2", T="60", CB_PRELOAD_LIB=lib, MPIEXEC=env.mpirun,
                   PATH=env.mpi_path(), **tuning(env), **sanitized,
                   CB_TEST_PRELOAD_FIRST=":".join(preload_first(env)))
    # EAGER_AGAIN once more with engines made by the constructors (CB_PRELOAD_ENGINES=eager).
    runs = [(*r, {}) for r in runs] + [
        (suite, where, [n for n in names if n in EAGER_AGAIN], {"CB_PRELOAD_ENGINES": "eager"})
        for suite, where, names in runs if set(names) & set(EAGER_AGAIN)]
    lines, eager_lines = [], []
    for suite, where, names, extra in runs:
        try:
            p = subprocess.run(["bash", script, where, "^(" + "|".join(names) + ")$"],
                               env=dict(run_env, MPICH_TESTS=suite, **extra), capture_output=True,
                               text=True, timeout=240)
        except subprocess.TimeoutExpired as e:
            raise Failure(f"HANG: {script}: {e}")
        failed = [l for l in p.stdout.splitlines() if l.startswith(("FAIL", "SKIP"))]
        check(p.returncode == 0 and not failed, f"MPICH tests ({suite}) failed under the "
                                                f"preload:\n{p.stdout[-4000:]}\n"
                                                f"{p.stderr[-2000:]}")
        (eager_lines if extra else lines).extend(p.stdout.splitlines())
    ran = {l.split()[1] for l in lines if l.startswith("PASS")}
    check(ran == set(subset), f"ran {sorted(ran)}, expected {sorted(subset)}")

    def engine_calls(lines):
        taken = {}
        for l in lines:
            m = re.match(r"^ENGINE (\S+): (\d+) engine, \d+ passed through(.*)$", l)
            if m:
                taken[m.group(1)] = dict(re.findall(r"(MPI_\w+)=(\d+)", m.group(3)))
        return taken
    taken = engine_calls(lines)
    eager = engine_calls(eager_lines)
    for name, functions in EAGER_AGAIN.items():
        for fn in functions:
            check(int(eager.get(name, {}).get(fn, 0)) > 0,
                  f"{name} (CB_PRELOAD_ENGINES=eager): the engine took no {fn} call: {eager}")
    for name, functions in subset.items():
        got = taken.get(name, {})
        check("MPI_Reduce" in got, f"{name}: the engine took no MPI_Reduce (MTest_Finalize): {got}")
        for fn in functions:
            check(int(got.get(fn, 0)) > 0, f"{name}: the engine took no {fn} call: {got}")
