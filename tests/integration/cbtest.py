"""Helpers for collbench's integration tests: run a benchmark under mpirun with a
timeout, read its JSON, and assert with messages that say what was expected."""
import json
import math
import os
import re
import shlex
import shutil
import subprocess
import sys
import time

CASES = {}
LABELS = {}  # case name -> its ctest labels (tests/labels.md)

# tests/labels.md: the stages a case runs in, and what kind of test it is (exactly one).
STAGE_LABELS = ("release", "other_mpis", "tsan", "asan", "fuzz")
KIND_LABELS = ("unit", "mpi", "script", "static", "gpu", "install", "fuzz_replay")
OTHER_LABELS = ("threads", "slow")


def labels_of(name, module_labels, changes):
    """The module's LABELS with `changes` applied ("x" adds x, "-x" removes it); refuses an
    unknown label, no stage or a kind count other than one."""
    labels = list(module_labels)
    for c in changes:
        if c.startswith("-"):
            if c[1:] not in labels:
                raise ValueError(f"case {name}: removes {c[1:]!r}, which its module does not give")
            labels.remove(c[1:])
        elif c not in labels:
            labels.append(c)
    known = STAGE_LABELS + KIND_LABELS + OTHER_LABELS
    unknown = [l for l in labels if l not in known]
    if unknown:
        raise ValueError(f"case {name}: unknown labels {unknown} (tests/labels.md lists {known})")
    if not any(l in STAGE_LABELS for l in labels):
        raise ValueError(f"case {name}: no stage label (one of {STAGE_LABELS})")
    kinds = [l for l in labels if l in KIND_LABELS]
    if len(kinds) != 1:
        raise ValueError(f"case {name}: expected exactly one kind label of {KIND_LABELS}, "
                         f"got {kinds}")
    return labels


def case(*changes):
    """Registers a test case under its function name, with its labels: those its module
    declares in LABELS, changed by `changes` ("tsan" adds one, "-asan" removes one).
    Used as @case or @case("tsan", "-other_mpis")."""
    def register(fn):
        module = sys.modules[fn.__module__]
        if not hasattr(module, "LABELS"):
            raise ValueError(f"{fn.__module__}: declares no LABELS for its cases")
        LABELS[fn.__name__] = labels_of(fn.__name__, module.LABELS, changes)
        CASES[fn.__name__] = fn
        return fn
    if len(changes) == 1 and callable(changes[0]):
        fn, changes = changes[0], ()
        return register(fn)
    return register


class Failure(Exception):
    pass


def check(cond, message):
    if not cond:
        raise Failure(message)


class Run:
    def __init__(self, rc, out, err, seconds):
        self.rc, self.out, self.err, self.seconds = rc, out, err, seconds

    def __str__(self):
        return f"rc={self.rc} ({self.seconds:.1f} s)\n--- stdout\n{self.out}\n--- stderr\n{self.err}"


REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# The engine's tuning table, which cases read where the route depends on its thresholds.
TUNING_TABLE = os.path.join(REPO, "src", "engine", "tuning", "default.json")
_FLAVOURS = {}


def mpirun_flavour(mpirun):
    """'openmpi', 'hydra' or 'other': which launcher `mpirun` is (from its --version)."""
    if mpirun not in _FLAVOURS:
        try:
            p = subprocess.run([mpirun, "--version"], capture_output=True, text=True, timeout=30)
            text = p.stdout + p.stderr
        except (OSError, subprocess.TimeoutExpired):
            text = ""
        _FLAVOURS[mpirun] = ("openmpi" if any(w in text for w in ("Open MPI", "OpenRTE", "PRRTE"))
                             else "hydra" if "HYDRA" in text else "other")
    return _FLAVOURS[mpirun]


def launcher(mpirun, workdir):
    """The launcher the cases run: `mpirun` itself, or for Open MPI scripts/mpirun_compat.sh in
    front of it (the one place with each implementation's launch flags: --oversubscribe,
    --bind-to none, running as root), which every case's `[env.mpirun, "-n", ...]` and the
    scripts given MPIRUN then use alike: a script in `workdir` that names the real mpirun
    itself (cases clear CB_* from the environment of what they launch)."""
    if mpirun_flavour(mpirun) != "openmpi":
        return mpirun
    real = os.path.abspath(mpirun) if os.sep in mpirun else (shutil.which(mpirun) or mpirun)
    path = os.path.join(workdir, "mpirun")
    # Open MPI's libfabric BTL spends about a second of every MPI_Init discovering providers
    # (1.2 s against 0.2 s for a 2-rank job here) and carries no traffic between ranks of one
    # node, which take the sm BTL either way: the cases leave it out unless told otherwise.
    with open(path, "w") as f:
        f.write(f"#!/bin/sh\nexport OMPI_MCA_btl=\"${{OMPI_MCA_btl:-^ofi}}\"\n"
                f"CB_MPIRUN_REAL={shlex.quote(real)} "
                f"exec {shlex.quote(os.path.join(REPO, 'scripts', 'mpirun_compat.sh'))} \"$@\"\n")
    os.chmod(path, 0o755)
    return path


class Env:
    def __init__(self, bindir, mpirun, workdir):
        self.bindir, self.mpirun, self.workdir = bindir, launcher(mpirun, workdir), workdir
        self.real_mpirun = mpirun

    def config(self):
        """The build's generated/config.hpp (how it was configured), "" without one."""
        try:
            with open(os.path.join(self.bindir, "generated", "config.hpp")) as f:
                return f.read()
        except OSError:
            return ""

    def abi(self):
        """Whether the build uses the MPI 5.0 standard ABI (-DCOLLBENCH_MPI_ABI=ON): programs
        that run with its preloaded libraries must be compiled with the ABI wrappers too."""
        return "#define CB_MPI_ABI 1" in self.config()

    def sanitizer(self):
        """The build's sanitizers ("thread", "address,undefined"), "" for none."""
        m = re.search(r'#define CB_SANITIZE "([^"]*)"', self.config())
        return m.group(1) if m else ""

    def mpi_tool(self, name):
        """The MPI's own `name` (mpif90, mpicc; with the standard ABI `name`_abi): beside the
        mpirun the cases run with when that is a path (one MPI of several), else from PATH;
        None when it has none."""
        if self.abi():
            name += "_abi"
        if os.sep in self.real_mpirun:
            tool = os.path.join(os.path.dirname(self.real_mpirun), name)
            return tool if os.access(tool, os.X_OK) else None
        return shutil.which(name)

    def mpi_path(self):
        """PATH for scripts that call `mpicc` (MPICH's test suite): the build's MPI first; with
        the standard ABI a folder whose mpicc is mpicc_abi."""
        path = os.environ.get("PATH", "")
        mpicc = self.mpi_tool("mpicc")
        if not mpicc:
            return path
        if self.abi():
            shim = os.path.join(self.workdir, "abi-bin")
            os.makedirs(shim, exist_ok=True)
            cc = os.path.join(shim, "mpicc")
            if not os.path.exists(cc):  # a script, not a link: mpicc_abi finds its prefix by $0
                with open(cc, "w") as f:
                    f.write(f"#!/bin/sh\nexec {shlex.quote(mpicc)} \"$@\"\n")
                os.chmod(cc, 0o755)
            return shim + os.pathsep + path
        return os.path.dirname(mpicc) + os.pathsep + path

    def path(self, name):
        return os.path.join(self.workdir, name)

    def exe(self, bench):
        return os.path.join(self.bindir, "cb_" + bench)

    def run(self, np, bench, args=(), env=None, timeout=120, extra=None):
        """Runs `mpirun -n NP cb_BENCH ARGS` (`extra` appends an MPMD part)."""
        cmd = [self.mpirun, "-n", str(np), self.exe(bench), *map(str, args)]
        if extra:
            cmd += [":", *map(str, extra)]
        full_env = dict(os.environ)
        full_env.update(env or {})
        start = time.monotonic()
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=full_env)
        except subprocess.TimeoutExpired as e:
            raise Failure(f"HANG: {' '.join(cmd)} did not finish in {timeout} s\n"
                          f"stdout: {e.stdout}\nstderr: {e.stderr}")
        return Run(p.returncode, p.stdout, p.stderr, time.monotonic() - start)

    def ok(self, np, bench, args=(), **kw):
        r = self.run(np, bench, args, **kw)
        check(r.rc == 0, f"cb_{bench} {' '.join(map(str, args))} failed: {r}")
        return r


def check_refused(r, what, needle):
    """Bad input: exit status 2 and one error line that mentions `needle`, no table."""
    check(r.rc == 2, f"{what}: expected exit 2: {r}")
    check(needle in r.err, f"{what}: message should mention {needle!r}: {r}")
    check(r.err.count("collbench: error") == 1, f"{what}: one error line expected: {r}")
    check("# Size" not in r.out, f"{what}: no table after an error")


def load_json(path):
    with open(path) as f:
        return json.load(f)


def engine_algo_all(env, np, bench, args, out, algos, run_env=None):
    """cb_BENCH --backend engine --algo all -c (yield above 2 ranks): every algorithm of
    `algos` measured, every size (every fourth of the range) Pass. Returns the JSON
    document."""
    wait = ["--wait", "yield"] if np > 2 else []
    # Every fourth size of the range: the algorithms change path at thresholds (eager
    # limits, segment sizes, the small path), not at each doubling; sizes 4x apart still
    # fall on both sides of each, at half the launch's time.
    env.ok(np, bench, ["--backend", "engine", "--algo", "all", "-c", "-i", "3", "-x", "1",
                       "--stepfactor", "4", *wait, *args, "-J", out], timeout=240, env=run_env)
    doc = load_json(out)
    seen = {r["algo"] for r in doc["results"]}
    check(seen == set(algos), f"{bench} {args}: algorithms measured {seen}, expected {algos}")
    bad = [(r["bytes"], r["algo"]) for r in doc["results"] if not r["validation"]["passed"]]
    check(not bad, f"{bench} {args} at {np} ranks: not passed: {bad}")
    return doc


def check_corruption_caught(env, bench, args):
    """-c is not a formality: with one received byte flipped (CB_TEST_FAULT=corrupt) the run
    fails with exit 1 and says DATA VALIDATION ERROR."""
    r = env.run(2, bench, ["-m", "64:64", "-c", "-i", "3", "-x", "1", *args],
                env={"CB_TEST_FAULT": "corrupt"})
    check(r.rc == 1 and "DATA VALIDATION ERROR" in r.err,
          f"{bench} {args}: corruption not reported: {r}")


def finite_positive(x):
    return isinstance(x, (int, float)) and math.isfinite(x) and x > 0


def check_summary(s, where):
    """min <= p50 <= p90 <= p99 <= max, all finite and positive."""
    for key in ("avg", "min", "max", "p50", "p90", "p99"):
        check(finite_positive(s.get(key)), f"{where}: {key}={s.get(key)} not finite and > 0")
    check(s["min"] <= s["p50"] <= s["p90"] <= s["p99"] <= s["max"],
          f"{where}: percentiles out of order: {s}")
    check(s["stddev"] >= 0, f"{where}: negative stddev")


def check_document(doc, bench, nranks, sizes):
    """Fields every collbench.result/1 document must have."""
    check(doc["schema"] == "collbench.result/1", f"schema {doc.get('schema')}")
    check(doc["status"] == "complete" and doc["complete"] is True, f"status {doc['status']}")
    check(doc["benchmark"]["name"] == bench, f"benchmark {doc['benchmark']}")
    for key in ("argv", "options", "start_time", "end_time", "environment", "backend"):
        check(key in doc, f"missing '{key}'")
    env = doc["environment"]
    check(env["nranks"] == nranks, f"nranks {env['nranks']}")
    for key in ("hostname", "hosts", "mpi", "collbench", "cpu", "timer"):
        check(key in env, f"environment lacks '{key}'")
    check(env["mpi"]["library"], "empty MPI library version")
    check(env["collbench"]["version"] and env["collbench"]["git_revision"], "collbench version")
    got = [r["bytes"] for r in doc["results"]]
    check(got == sizes, f"sizes {got}, expected {sizes}")


def doubling(lo, hi):
    out, s = [], lo
    while s <= hi:
        out.append(s)
        s = s * 2 if s else 1
    return out
