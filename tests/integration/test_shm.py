"""The engine's shared-memory path: no /dev/shm leftovers (normal run, killed rank),
shared heap and plain buffers, cross-memory attach (single copy) on plain buffers and its
fallback, virtual nodes for the hierarchical algorithms, shm off, the CB_SHM_MAX_BYTES
budget, and a /dev/shm too small (a private 64 MiB tmpfs, as in a default container)."""
import os
import subprocess
import time

from cbtest import Failure, Run, case, check, load_json

LABELS = ('release', 'asan', 'mpi')  # tests/labels.md


def leftovers():
    try:
        return {f for f in os.listdir("/dev/shm") if f.startswith("collbench.")}
    except FileNotFoundError:
        return set()


@case
def shm_no_leftovers_after_normal_and_killed_runs(env):
    before = leftovers()
    env.ok(2, "allreduce", ["--backend", "engine", "-m", "4:1M", "-c", "-i", "5"])
    check(leftovers() == before, f"/dev/shm leftovers after a normal run: {leftovers() - before}")
    out = env.path("die.json")
    r = env.run(2, "allreduce", ["--backend", "engine", "--algo", "shm", "-m", "64K:1M", "-i", "40",
                                 "--time-limit", "20", "-J", out],
                env={"CB_TEST_FAULT": "die"}, timeout=60)
    check(r.rc != 0 and r.seconds < 20, f"a killed rank must end the job quickly: {r}")
    check("Killed" in r.out + r.err or "exited while this rank waited" in r.err, str(r))
    check(leftovers() == before, f"/dev/shm leftovers after a killed rank: {leftovers() - before}")
    check([x["bytes"] for x in load_json(out)["results"]] == [65536], "the first size was kept")


@case('other_mpis')
def shm_collectives_on_shared_and_plain_buffers(env):
    for alloc in ("backend", "plain"):
        for bench, algo in (("allreduce", "shm"), ("allreduce", "shm_flat"), ("bcast", "shm"),
                            ("alltoall", "shm"), ("iallreduce", "shm")):
            for extra in ([], ["-k", "1"] if bench == "bcast" else ["-l"]):
                out = env.path(f"{bench}.json")
                env.ok(2, bench, ["--backend", "engine", "--algo", algo, "--alloc", alloc,
                                  "-m", "4:2M", "-c", "-i", "3", "-x", "1", "-J", out, *extra])
                doc = load_json(out)
                check(doc["options"]["alloc"] == alloc, "alloc recorded")
                check(all(x["algo"] == algo and x["validation"]["passed"] for x in doc["results"]),
                      f"{bench} {algo} --alloc {alloc} {extra}")
        out = env.path("bw.json")
        env.ok(2, "bw", ["--backend", "engine", "--alloc", alloc, "-m", "1:4M", "-c", "-i", "5",
                         "-J", out])
        check(all(x["validation"]["passed"] for x in load_json(out)["results"]), f"bw {alloc}")


@case
def shm_cma_single_copy_on_plain_buffers(env):
    """The cma algorithms read peers' private buffers with process_vm_readv: odd and even
    counts, in and out of place, roots other than 0, 2 ranks and 3 (yield)."""
    for np, wait in ((2, []), (3, ["--wait", "yield"])):
        for bench, extras in (("allreduce", ([], ["-l"])), ("reduce", ([], ["-l", "-k", "1"])),
                              ("bcast", ([], ["-k", "1"])), ("iallreduce", ([],))):
            for extra in extras:
                out = env.path(f"cma{np}{bench}.json")
                env.ok(np, bench, ["--backend", "engine", "--algo", "cma", "--alloc", "plain",
                                   "-m", "4:1M", "-c", "-i", "3", "-x", "1", "-J", out,
                                   *wait, *extra], timeout=120)
                doc = load_json(out)
                check(doc["backend"]["cross_memory_attach"].startswith("process_vm_readv"),
                      doc["backend"]["cross_memory_attach"])
                check(all(x["algo"] == "cma" and x["validation"]["passed"] for x in doc["results"]),
                      f"{bench} cma {extra} np={np}")
                # odd element counts: sizes that are not powers of two
                env.ok(np, bench, ["--backend", "engine", "--algo", "cma", "--alloc", "plain",
                                   "-m", "12:12", "-c", "-i", "2", *wait, *extra], timeout=60)
                env.ok(np, bench, ["--backend", "engine", "--algo", "cma", "--alloc", "plain",
                                   "-m", "1000012:1000012", "-c", "-i", "2", *wait, *extra],
                       timeout=60)
    # On the engine's own (shared) buffers cma declines, naming shm.
    r = env.run(2, "allreduce", ["--backend", "engine", "--algo", "cma", "-m", "8"], timeout=30)
    check(r.rc == 2 and "private buffers" in r.err, str(r))


@case
def shm_cma_off_falls_back(env):
    """Without cross-memory attach (CB_ENGINE_CMA=0 stands for a kernel that refuses it) the
    algorithms that read private buffers decline with the reason, and the table's next
    choice runs and validates."""
    off = {"CB_ENGINE_CMA": "0"}
    for bench in ("allgather", "alltoall", "reduce_scatter", "alltoallv", "allreduce", "bcast",
                  "reduce"):
        out = env.path(f"off{bench}.json")
        env.ok(2, bench, ["--backend", "engine", "--alloc", "plain", "-m", "4:1M", "-c", "-i", "3",
                          "-x", "1", "-J", out], env=off, timeout=120)
        doc = load_json(out)
        check(doc["backend"]["cross_memory_attach"] == "off (CB_ENGINE_CMA=0)",
              doc["backend"]["cross_memory_attach"])
        check(all(x["validation"]["passed"] for x in doc["results"]), f"{bench} without CMA")
        copy_only = bench in ("allgather", "alltoall", "reduce_scatter", "alltoallv")
        check(not any(x["algo"] == "cma" or (copy_only and x["algo"] == "shm")
                      for x in doc["results"]), f"{bench}: {[x['algo'] for x in doc['results']]}")
    for bench, algo in (("allgather", "shm"), ("allreduce", "cma")):
        r = env.run(2, bench, ["--backend", "engine", "--algo", algo, "--alloc", "plain", "-m", "8"],
                    env=off, timeout=30)
        check(r.rc == 2 and "cross-memory attach" in r.err and "CB_ENGINE_CMA=0" in r.err, str(r))
    # The engine's own buffers need no CMA: shm still runs there.
    env.ok(2, "allgather", ["--backend", "engine", "--algo", "shm", "-m", "4:64K", "-c", "-i", "2"],
           env=off)


@case('-asan')
def shm_hierarchical_on_virtual_nodes(env):
    for np, per_node in ((4, 2), (5, 2)):
        for bench, extra in (("allreduce", []), ("allreduce", ["-l"]), ("bcast", ["-k", "rotate"]),
                             ("iallreduce", [])):
            out = env.path(f"h{np}{bench}.json")
            r = env.ok(np, bench, ["--backend", "engine", "--algo", "hierarchical", "-m", "4:1M",
                                   "-c", "-i", "3", "-x", "1", "-J", out, *extra],
                       env={"CB_RANKS_PER_NODE": str(per_node)}, timeout=120)
            doc = load_json(out)
            check(doc["backend"]["nodes"] == (np + per_node - 1) // per_node, "virtual nodes")
            check(all(x["validation"]["passed"] for x in doc["results"]), f"{bench} {extra} np={np}")
    r = env.run(2, "allreduce", ["--backend", "engine", "--algo", "hierarchical", "-m", "8"],
                timeout=30)
    check(r.rc == 2 and "needs ranks on at least two nodes" in r.err, str(r))


@case('other_mpis')
def shm_off(env):
    out = env.path("off.json")
    env.ok(2, "allreduce", ["--backend", "engine", "-m", "4:64K", "-c", "-i", "3", "-J", out],
           env={"CB_ENGINE_SHM": "0"})
    doc = load_json(out)
    check(doc["backend"]["shared_memory"].startswith("off"), doc["backend"]["shared_memory"])
    check(all(not x["algo"].startswith("shm") for x in doc["results"]), "no shm algorithm chosen")
    r = env.run(2, "allreduce", ["--backend", "engine", "--algo", "shm", "-m", "8"],
                env={"CB_ENGINE_SHM": "0"}, timeout=30)
    check(r.rc == 2 and "shared memory" in r.err and "CB_ENGINE_SHM=0" in r.err, str(r))


@case
def shm_budget_shrinks_staging_then_turns_shm_off(env):
    """Under CB_SHM_MAX_BYTES a segment's staging shrinks to what the budget leaves (whole
    MiB, the status says so); below 1 MiB of staging the engine runs without shared memory,
    says why, and validates."""
    out = env.path("budget.json")
    env.ok(2, "allreduce", ["--backend", "engine", "--alloc", "plain", "-m", "4:4M", "-c",
                            "-i", "3", "-J", out], env={"CB_SHM_MAX_BYTES": "7M"})
    doc = load_json(out)
    status = doc["backend"]["shared_memory"]
    check(status.startswith("on (staging 4.0 MiB per rank instead of 16.0 MiB"), status)
    check(all(x["validation"]["passed"] for x in doc["results"]), "validated with less staging")
    env.ok(2, "allreduce", ["--backend", "engine", "-m", "4:1M", "-c", "-i", "3", "-J", out],
           env={"CB_SHM_MAX_BYTES": "2M"})
    doc = load_json(out)
    status = doc["backend"]["shared_memory"]
    check(status.startswith("off") and "CB_SHM_MAX_BYTES" in status, status)
    check(all(x["validation"]["passed"] and not x["algo"].startswith("shm")
              for x in doc["results"]), "validated over MPI")


SMALL_DEV_SHM = "mount -t tmpfs -o size=64m tmpfs /dev/shm"


def small_dev_shm_refused():
    """Why a private mount namespace with its own /dev/shm cannot be had here, or None."""
    try:
        p = subprocess.run(["unshare", "-m", "sh", "-c", SMALL_DEV_SHM], capture_output=True,
                           text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"SKIP: unshare -m: {e}"
    if p.returncode != 0:
        return ("SKIP: a private /dev/shm needs unshare -m and mount (CAP_SYS_ADMIN): "
                f"{(p.stderr or p.stdout).strip()}")
    return None


def in_small_dev_shm(env, np, bench, args, env_vars=None, timeout=120):
    """`mpirun -n NP cb_BENCH ARGS` in a mount namespace whose /dev/shm is a 64 MiB tmpfs."""
    cmd = ["unshare", "-m", "sh", "-c", SMALL_DEV_SHM + ' && exec "$@"', "sh", env.mpirun,
           "-n", str(np), env.exe(bench), *map(str, args)]
    full_env = dict(os.environ)
    full_env.update(env_vars or {})
    start = time.monotonic()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=full_env)
    except subprocess.TimeoutExpired as e:
        raise Failure(f"HANG: {' '.join(cmd)} did not finish in {timeout} s\n"
                      f"stdout: {e.stdout}\nstderr: {e.stderr}")
    r = Run(p.returncode, p.stdout, p.stderr, time.monotonic() - start)
    check(r.rc == 0, f"cb_{bench} {' '.join(map(str, args))} in a 64 MiB /dev/shm: {r}")
    return r


@case
def shm_small_dev_shm_falls_back(env):
    """A 64 MiB /dev/shm (a default Docker container's). With the defaults shared memory is
    on at 2 ranks, the staging shrunk to the default budget (16 MiB per process). Segments
    that do not fit (48 MiB of staging per rank, the budget lifted) are refused by
    posix_fallocate at creation, not met by a SIGBUS at the first touch: shared memory is
    off on every rank, with the reason, and the run completes over MPI. Heap buffers that
    do not fit (--alloc backend, 32 MiB ones) are private memory instead."""
    if skip := small_dev_shm_refused():
        return skip
    for bench in ("allreduce", "bcast"):
        out = env.path(f"small-{bench}.json")
        in_small_dev_shm(env, 2, bench, ["--backend", "engine", "-m", "4:2M", "-c", "-i", "3",
                                         "-x", "1", "-J", out])
        doc = load_json(out)
        status = doc["backend"]["shared_memory"]
        check(status.startswith("on (staging ") and "CB_SHM_MAX_BYTES" in status,
              f"on, the staging shrunk to the default budget: {status}")
        check(all(x["validation"]["passed"] for x in doc["results"]), f"{bench}, default sizes")

        out = env.path(f"full-{bench}.json")
        in_small_dev_shm(env, 2, bench, ["--backend", "engine", "-m", "4:4M", "-c", "-i", "3",
                                         "-x", "1", "-J", out],
                         env_vars={"CB_SHM_STAGING_BYTES": "48M", "CB_SHM_MAX_BYTES": "1G"})
        doc = load_json(out)
        status = doc["backend"]["shared_memory"]
        check(status.startswith("off") and "No space left on device" in status and
              "/dev/shm" in status, f"off, and why: {status}")
        check(all(x["validation"]["passed"] and not x["algo"].startswith("shm")
                  for x in doc["results"]), f"{bench} over MPI")

        out = env.path(f"heap-{bench}.json")
        in_small_dev_shm(env, 2, bench, ["--backend", "engine", "--alloc", "backend",
                                         "-m", "32M:32M", "-c", "-i", "2", "-x", "1", "-J", out])
        doc = load_json(out)
        check(doc["backend"]["shared_memory"].startswith("on"), doc["backend"]["shared_memory"])
        check(all(x["validation"]["passed"] for x in doc["results"]), f"{bench}, heap full")
