"""mpi4py's own collective tests through libcb_engine_preload.so (docs/preload.md): a short
subset of scripts/preload_mpi4py_tests.sh at 2 ranks, on the MPI library the build's preload
library links (Debian's MPICH, Open MPI 5, MPICH 5 through the MPI 5.0 standard ABI). The
preloaded run must count as many passed, failed and skipped tests as the plain library, and
the engine must have taken collectives other than barriers (mpi4py 4 calls the MPI-4
large-count bindings, MPI_Allreduce_c ...). Skipped where mpi4py for that MPI or its tests
are not installed, with the script's reason: scripts/install_deps.sh installs them into
.venv-mpi4py/ (PyPI's wheel, for MPICH's and Open MPI's ABI), and for the standard ABI
`MPI4PY_INSTALL=only CB_PRELOAD_LIB=<build>/libcb_engine_preload.so
scripts/preload_mpi4py_tests.sh` (a source build, scripts/test.sh's other-MPIs stage)."""
import os
import re
import subprocess

from cbtest import Failure, case, check
from test_preload import preload_first, preload_vars

LABELS = ('release', 'other_mpis', 'mpi')  # tests/labels.md

REPO = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
SCRIPT = os.path.join(REPO, "scripts", "preload_mpi4py_tests.sh")
# The blocking and non-blocking buffer collectives on intracommunicators; unittest's -k
# keeps the calls the preload routes (and their in-place variants), a few seconds per run.
# -f (failfast): mpi4py's main.py then aborts the job at the first failure, where the ranks
# would otherwise wait for each other in different tests until the timeout.
MODULES = "^test_cco_(buf|nb_buf)$"
SELECT = ["-f", "-k", "Allreduce", "-k", "Bcast", "-k", "Reduce", "-k", "Allgather", "-k", "Alltoall",
          "-k", "Barrier"]
RUN = re.compile(r" (plain|preload) (\d+) (\d+) (\d+) rc=(\d+)")


@case('asan')
def preload_mpi4py_cco_subset(env):
    lib = os.path.join(env.bindir, "libcb_engine_preload.so")
    check(os.path.exists(lib), f"missing {lib}")
    out = env.path("mpi4py")
    # mpi4py runs with the MPI library `lib` links (the script finds it), mpicc for the probe
    # where the library is missing is the build's, and MPI4PY_INSTALL=0: no install here.
    sanitized = preload_vars(env, lib)  # a sanitizer build's runtimes go first
    sanitized.pop("LD_PRELOAD")
    run_env = dict(os.environ, MPI4PY_INSTALL="0", NPS="2", T="60", CB_PRELOAD_LIB=lib,
                   MPIRUN=env.mpirun, MPI4PY_ARGS=" ".join(SELECT), PATH=env.mpi_path(),
                   **sanitized, CB_TEST_PRELOAD_FIRST=":".join(preload_first(env)))
    try:
        p = subprocess.run(["bash", SCRIPT, out, MODULES], env=run_env, capture_output=True,
                           text=True, timeout=280)
    except subprocess.TimeoutExpired as e:
        raise Failure(f"HANG: {SCRIPT}: {e}")
    if p.returncode == 3:
        return f"SKIP: {p.stderr.strip()}"
    with open(os.path.join(out, "summary.txt")) as f:
        lines = [l.rstrip("\n") for l in f if l.startswith("test_cco_")]
    check(len(lines) == 2, f"rc={p.returncode}, summary:\n{lines}\n{p.stdout}\n{p.stderr}")
    took = 0
    for line in lines:
        runs = {m[0]: tuple(map(int, m[1:4])) for m in RUN.findall(line)}
        check(set(runs) == {"plain", "preload"}, f"a run did not finish: {line}\n{p.stdout}")
        plain, preload = runs["plain"], runs["preload"]
        check(plain[0] > 0 and plain[1] == 0, f"plain MPI: {plain} (passed failed skipped)")
        check(preload == plain, f"through the preload {preload}, plain {plain}: {line}")
        check(line.endswith(" same"), line)
        m = re.search(r"ENGINE \d+ engine \((\d+) not barriers\)", line)
        check(m, f"no preload counts: {line}")
        took += int(m[1])
    check(took > 0, f"the engine took no collective but barriers:\n" + "\n".join(lines))
    check(p.returncode == 0, f"rc={p.returncode}\n{p.stdout}\n{p.stderr}")
