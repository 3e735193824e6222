"""Faults: a rank killed inside an engine shared-memory collective while the launcher
leaves the others running, SIGINT and SIGTERM, -J on an unwritable path or a full
filesystem, and two jobs at once on one node. Each checks the message, the exit status,
the JSON document and /dev/shm."""
import json
import os
import shutil
import signal
import subprocess
import sys
import time

from cbtest import Failure, Run, case, check, load_json

LABELS = ('release', 'mpi')  # tests/labels.md


def leftovers():
    try:
        return {f for f in os.listdir("/dev/shm") if f.startswith("collbench.")}
    except FileNotFoundError:
        return set()


def new_leftovers(before):
    """Segments that appeared since `before` and whose creator ("collbench.PID.N.RANDOM")
    has exited: left behind. Other jobs running meanwhile have live creators."""
    def dead(name):
        try:
            return not os.path.exists(f"/proc/{int(name.split('.')[1])}")
        except (IndexError, ValueError):
            return True
    return {n for n in leftovers() - before if dead(n)}


def is_hydra(env):
    try:
        p = subprocess.run([env.mpirun, "--version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return "HYDRA" in p.stdout


def run_cmd(cmd, env_vars=None, timeout=60):
    full_env = dict(os.environ)
    full_env.update(env_vars or {})
    start = time.monotonic()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=full_env)
    except subprocess.TimeoutExpired as e:
        raise Failure(f"HANG: {' '.join(cmd)} did not finish in {timeout} s\n"
                      f"stdout: {e.stdout}\nstderr: {e.stderr}")
    return Run(p.returncode, p.stdout, p.stderr, time.monotonic() - start)


# Runs one rank as its child and exits with its status (137 when it was killed). The rank
# dies with this wrapper (PR_SET_PDEATHSIG), so the launcher's kills still reach it, but
# it does not get the SIGUSR1 by which hydra tells the survivors that a rank failed.
RANK_WRAPPER = r"""
import ctypes, signal, subprocess, sys
libc = ctypes.CDLL(None)
signal.signal(signal.SIGUSR1, signal.SIG_IGN)
child = subprocess.Popen(sys.argv[1:], close_fds=False,  # the PMI socket
                         preexec_fn=lambda: libc.prctl(1, signal.SIGKILL))
rc = child.wait()
sys.exit(128 - rc if rc < 0 else rc)
"""


def run_without_cleanup(env, np, bench, args, env_vars, timeout=60):
    """A launcher that does not end the job when one rank dies (as `srun
    --kill-on-bad-exit=0`): hydra's -disable-auto-cleanup, each rank under a wrapper. Even
    with -disable-auto-cleanup hydra ends the whole job when a rank dies of a signal, and
    sends the others SIGUSR1; through the wrapper it sees exit status 137 instead, and the
    wrapper ignores SIGUSR1, so the survivors are on their own."""
    cmd = [env.mpirun, "-disable-auto-cleanup", "-n", str(np), sys.executable, "-c",
           RANK_WRAPPER, env.exe(bench), *map(str, args)]
    return run_cmd(cmd, env_vars, timeout)


LIMIT = 30  # --time-limit of the killed-rank runs: detection must come well before it


def killed_rank(env, np, bench, algo, victim, detector=0, extra=(), env_vars=None,
                sizes=(65536, 1 << 20)):
    """Kills `victim` (SIGKILL) inside the timed loop of the second size (128 KiB) and checks
    that the others end the job themselves: a message naming the lost rank, the operation
    and the size; a non-zero status that is not the time limit's; the first size kept in a
    valid JSON document that names the error (when rank 0 is the rank that saw it); nothing
    left in /dev/shm."""
    before = leftovers()
    out = env.path(f"killed-{bench}-{algo}-{np}.json")
    r = run_without_cleanup(
        env, np, bench, ["--backend", "engine", "--algo", algo, "-m", f"{sizes[0]}:{sizes[1]}", "-i", "40",
                         "--time-limit", LIMIT, "-J", out, *extra],
        {"CB_TEST_FAULT": f"die:{victim}", **(env_vars or {})})
    what = f"{bench} --algo {algo} np={np}, rank {victim} killed: {r}"
    check(r.rc not in (0, 4), f"the job must fail, not pass or hit the time limit: {what}")
    check(r.seconds < LIMIT / 2, f"the dead rank must be noticed, not waited for: {what}")
    lost = f"rank {victim} (pid "
    check(f"collbench: error (rank {detector})" in r.err and lost in r.err and
          f"exited while this rank waited in {bench}" in r.err and
          f"engine algorithm {algo}, message size" in r.err,
          f"a message naming the lost rank, the operation and the size: {what}")
    doc = load_json(out)
    check([x["bytes"] for x in doc["results"]] == [sizes[0]], f"the first size kept: {what}")
    if detector == 0:
        check(doc["status"] == "error" and lost in doc.get("status_detail", ""),
              f"the JSON names the error: {doc['status']} {doc.get('status_detail')}")
    check(not new_leftovers(before), f"/dev/shm leftovers: {new_leftovers(before)}")
    return r


def needs_hydra(env):
    if not is_hydra(env):
        return f"SKIP: {env.mpirun} is not MPICH's hydra (needs -disable-auto-cleanup)"
    return None


@case
def faults_killed_rank_allreduce_2_ranks(env):
    if skip := needs_hydra(env):
        return skip
    for bench, algo in (("allreduce", "shm"), ("allreduce", "shm_flat"), ("iallreduce", "shm")):
        killed_rank(env, 2, bench, algo, victim=1)
    # The small-message slots (issue 30), blocking (no schedule). Not iallreduce: its
    # victim dies just after starting, and a small operation whose peer is already there
    # completes inside the start, so the survivor finishes it and then waits in MPI's
    # barrier, which the launcher here does not end.
    killed_rank(env, 2, "allreduce", "small", victim=1, sizes=(4096, 8192))


@case
def faults_killed_rank_bcast_alltoall_2_ranks(env):
    if skip := needs_hydra(env):
        return skip
    killed_rank(env, 2, "bcast", "shm", victim=1)
    killed_rank(env, 2, "alltoall", "shm", victim=0, detector=1)  # rank 0 itself lost


@case
def faults_killed_rank_3_4_ranks_yield(env):
    if skip := needs_hydra(env):
        return skip
    yield_ = ["--wait", "yield"]  # more busy-polling ranks than cores
    killed_rank(env, 4, "allreduce", "shm", victim=2, extra=yield_)
    killed_rank(env, 3, "allreduce", "shm_flat", victim=1, extra=yield_)
    killed_rank(env, 3, "bcast", "shm", victim=2, extra=yield_)
    killed_rank(env, 4, "alltoall", "shm", victim=3, extra=yield_)


@case
def faults_killed_rank_hierarchical(env):
    if skip := needs_hydra(env):
        return skip
    nodes = {"CB_RANKS_PER_NODE": "2"}  # virtual nodes {0,1} and {2,3}
    yield_ = ["--wait", "yield"]
    killed_rank(env, 4, "allreduce", "hierarchical", victim=1, extra=yield_, env_vars=nodes)
    killed_rank(env, 4, "bcast", "hierarchical", victim=1, extra=yield_, env_vars=nodes)
    # A rank on the other node: its node-mate sees it; rank 0 ends with the job.
    killed_rank(env, 4, "allreduce", "hierarchical", victim=3, detector=2, extra=yield_,
                env_vars=nodes)


# ----------------------------------------------------------------------------- signals

def rank_pids(launcher_pid, exe):
    """{rank: pid} of the processes running `exe` below the launcher (hydra: mpiexec >
    proxy > rank), the rank from the PMI_RANK its launcher gave it."""
    target = os.path.realpath(exe)
    parent, ranks = {}, {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                parent[int(d)] = int(f.read().rsplit(")", 1)[1].split()[1])
            if os.readlink(f"/proc/{d}/exe") != target:
                continue
            with open(f"/proc/{d}/environ", "rb") as f:
                env = dict(v.split(b"=", 1) for v in f.read().split(b"\0") if b"=" in v)
            ranks[int(d)] = int(env.get(b"PMI_RANK", b"-1"))
        except (OSError, ValueError):
            continue
    found = {}
    for pid, rank in ranks.items():
        p = parent.get(pid)
        while p and p != launcher_pid:
            p = parent.get(p)
        if p == launcher_pid:
            found[rank] = pid
    return found


def start_job(env, np, bench, args):
    cmd = [env.mpirun, "-n", str(np), env.exe(bench), *map(str, args)]
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def results_so_far(path):
    try:
        return load_json(path)["results"]
    except (OSError, ValueError, KeyError):
        return []


def wait_for_results(job, path, count, timeout=60):
    """Polls the JSON document until it holds `count` results."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if len(results_so_far(path)) >= count:
            return
        if job.poll() is not None:
            out, err = job.communicate()
            raise Failure(f"the job ended (rc={job.returncode}) before {count} results\n{out}{err}")
        time.sleep(0.02)
    job.kill()
    raise Failure(f"no {count} results in {path} after {timeout} s")


def finish(job, timeout=30):
    try:
        out, err = job.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        job.kill()
        out, err = job.communicate()
        raise Failure(f"HANG: the job did not end {timeout} s after the signal\n{out}{err}")
    return Run(job.returncode, out, err, 0)


# Long enough to be interrupted: the sizes to 4 MiB at 3000 iterations take many seconds.
LONG_RUN = ["-m", "4:4M", "-i", "3000", "-x", "10", "--time-limit", "60"]


def interrupted(env, np, backend, sig, target, workdir_name):
    """Starts a job, waits for two finished sizes, sends `sig` to `target` ("mpirun",
    "ranks": every rank, "rank0"), and checks the JSON document, the status and /dev/shm."""
    before = leftovers()
    folder = env.path(workdir_name)
    os.mkdir(folder)
    out = os.path.join(folder, "out.json")
    job = start_job(env, np, "allreduce", ["--backend", backend, *LONG_RUN, "-J", out])
    wait_for_results(job, out, 2)
    seen = len(results_so_far(out))
    if target == "mpirun":
        job.send_signal(sig)
    else:
        pids = rank_pids(job.pid, env.exe("allreduce"))
        check(sorted(pids) == list(range(np)), f"rank processes found: {pids}")
        for rank, pid in pids.items():
            if target == "ranks" or rank == 0:
                os.kill(pid, sig)
    r = finish(job)
    name = signal.Signals(sig).name
    what = f"{name} to {target} ({backend}, np={np}): {r}"
    # mpirun's own status is hydra's summary of the ranks', and it varies: 128 + signal
    # mostly, but also 1 (signals to the ranks, under load) and even 0 (a signal to mpirun,
    # which forwards it; twice in a row once, in CI). What collbench decides is each rank's
    # status, which rank 0's message states (checked below), and the JSON.
    if target != "mpirun":
        check(r.rc != 0, f"a non-zero exit status: {what}")
    check(f"exit status {128 + sig}" in r.err, f"rank 0 exits with 128 + {int(sig)}: {what}")
    check(f"interrupted by {name}" in r.err and "marked interrupted" in r.err,
          f"rank 0 says it was interrupted and what happened to the JSON: {what}")
    doc = load_json(out)  # valid JSON
    check(doc["status"] == "interrupted" and doc["complete"] is False and
          f"interrupted by {name}" in doc["status_detail"] and "end_time" in doc,
          f"the document says it was interrupted: {doc['status']} {doc.get('status_detail')}")
    check(len(doc["results"]) >= seen and all("latency_us" in x for x in doc["results"]),
          f"every finished size kept ({len(doc['results'])} of at least {seen}): {what}")
    check(os.listdir(folder) == ["out.json"], f"temporary files left: {os.listdir(folder)}")
    check(not new_leftovers(before), f"/dev/shm leftovers: {new_leftovers(before)}")


@case
def faults_sigterm_sigint_to_mpirun(env):
    interrupted(env, 2, "engine", signal.SIGTERM, "mpirun", "term")
    interrupted(env, 2, "engine", signal.SIGINT, "mpirun", "int")


@case
def faults_sigint_sigterm_to_ranks(env):
    interrupted(env, 2, "engine", signal.SIGINT, "ranks", "int")
    interrupted(env, 2, "mpi", signal.SIGTERM, "rank0", "term")


# --------------------------------------------------------------------------- -J faults

PREVIOUS = json.dumps({"schema": "collbench.result/1", "note": "the previous document"}) + "\n"
QUICK = ["--backend", "engine", "-m", "4:64", "-i", "5"]


def check_previous_kept(folder, path, what):
    with open(path) as f:
        check(f.read() == PREVIOUS, f"the previous document changed: {what}")
    names = sorted(os.listdir(folder))
    check(all(".tmp" not in n for n in names), f"temporary files left in {folder}: {names}")


class Tmpfs:
    """A tiny tmpfs (root only); None from mount() with the reason when it cannot be had."""

    def __init__(self, path, size="512k"):  # room for a document and its temporary copy
        self.path, self.size, self.mounted = path, size, False

    def mount(self):
        if os.geteuid() != 0:
            return "needs root to mount a tmpfs"
        os.makedirs(self.path, exist_ok=True)
        p = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={self.size}", "tmpfs", self.path],
                           capture_output=True, text=True)
        if p.returncode != 0:
            return f"mount -t tmpfs failed: {p.stderr.strip()}"
        self.mounted = True
        return None

    def remount_ro(self):
        subprocess.run(["mount", "-o", "remount,ro", self.path], check=True)

    def umount(self):
        if self.mounted:
            subprocess.run(["umount", "-l", self.path], capture_output=True)
            self.mounted = False


def fill(folder):
    """Writes a file until the filesystem is full."""
    with open(os.path.join(folder, "filler"), "wb", buffering=0) as f:
        try:
            while True:
                f.write(b"x" * 1024)
        except OSError:
            pass


@case
def faults_json_unwritable_path(env):
    # A folder that does not exist: refused before the run with exit 2.
    missing = env.path("no/such/folder/out.json")
    r = env.run(2, "allreduce", [*QUICK, "-J", missing], timeout=60)
    check(r.rc == 2 and "cannot write JSON file '" + missing in r.err and
          "No such file or directory" in r.err, f"missing folder: {r}")
    # A folder that cannot be written, holding a previous document: kept as it was.
    folder = env.path("readonly")
    os.mkdir(folder)
    path = os.path.join(folder, "out.json")
    with open(path, "w") as f:
        f.write(PREVIOUS)
    fs = Tmpfs(folder, "1m")
    try:
        if os.geteuid() == 0:  # root writes through permissions: a read-only mount instead
            if why := fs.mount():
                return f"SKIP: a read-only folder needs a mount: {why}"
            with open(path, "w") as f:
                f.write(PREVIOUS)
            fs.remount_ro()
        else:
            os.chmod(folder, 0o555)
        r = env.run(2, "allreduce", [*QUICK, "-J", path], timeout=60)
        check(r.rc == 2 and f"cannot write JSON file '{path}'" in r.err and
              ("Read-only file system" in r.err or "Permission denied" in r.err) and
              "the previous document there is unchanged" in r.err, f"read-only folder: {r}")
        check(r.err.count("collbench: error") == 1, f"one message: {r}")
        check_previous_kept(folder, path, str(r))
    finally:
        fs.umount()
        os.chmod(folder, 0o755)


@case
def faults_json_full_filesystem(env):
    folder = env.path("tiny")
    fs = Tmpfs(folder)
    if why := fs.mount():
        return f"SKIP: {why}"
    try:
        # Full before the run: the first write fails; the previous document stays.
        path = os.path.join(folder, "out.json")
        with open(path, "w") as f:
            f.write(PREVIOUS)
        fill(folder)
        r = env.run(2, "allreduce", [*QUICK, "-J", path], timeout=60)
        check(r.rc == 3 and f"cannot write JSON file '{path}'" in r.err and
              "No space left on device" in r.err and
              "the previous document there is unchanged" in r.err, f"full filesystem: {r}")
        check_previous_kept(folder, path, str(r))
        os.remove(os.path.join(folder, "filler"))
        os.remove(path)
        # Full in the middle of the run: the error ends it; the finished sizes stay.
        job = start_job(env, 2, "allreduce", ["--backend", "engine", *LONG_RUN, "-J", path])
        wait_for_results(job, path, 1)
        fill(folder)
        r = finish(job)
        check(r.rc == 3 and "No space left on device" in r.err and
              f"cannot write JSON file '{path}'" in r.err, f"filesystem full mid-run: {r}")
        doc = load_json(path)
        check(len(doc["results"]) >= 1, f"the finished sizes kept: {doc['results']}")
        names = sorted(os.listdir(folder))
        check(names == ["filler", "out.json"], f"files left: {names}")
    finally:
        fs.umount()


# ------------------------------------------------------------------ two jobs at once

@case
def faults_two_jobs_at_once(env):
    before = leftovers()
    for round_ in range(3):
        jobs = []
        for j in range(2):  # 4 ranks on 2 cores: yield
            out = env.path(f"job{round_}{j}.json")
            args = ["--backend", "engine", "--algo", "shm", "--wait", "yield", "-m", "4:256K",
                    "-i", "10", "-x", "1", "-c", "-J", out]
            jobs.append((start_job(env, 2, "allreduce", args), out))
        for job, out in jobs:
            r = finish(job, timeout=120)
            check(r.rc == 0, f"round {round_}: both jobs must succeed: {r}")
            doc = load_json(out)
            check(doc["status"] == "complete" and
                  all(x["validation"]["passed"] for x in doc["results"]), f"validation: {out}")
    check(not new_leftovers(before), f"/dev/shm leftovers: {new_leftovers(before)}")
