"""Legal MPI programs under libcb_engine_preload.so (issue 25): each behaves as on plain MPI.

tests/preload/legal_programs.cpp (build/tests/cb_legal_programs) holds one program per
pattern: many operations pending, several communicators, threads, NBX, progress through
calls the preload does not own, reductions whose value depends on the order of
contributions, the MPI-4 large-count bindings, a small /dev/shm. Each case runs it without
the preload, then with it, under a timeout (a hang is a failure, "HANG"), and compares:
both exit 0; every rank's "own" lines (a hash of the result bits of every result, floating-
point ones included: the programs give them inputs whose sums are exact in any order) are
the same in both runs; every rank's "xrank" lines (order-dependent floating-point sums,
whose bits may differ between MPI libraries but never between ranks) are the same on every
rank of each run. Where the engine should take the calls, CB_PRELOAD_VERBOSE's counts must
show it did (more than 0, or exactly the calls made where the case knows them)."""
import itertools
import json
import os
import re
import signal
import subprocess
import time

from cbtest import TUNING_TABLE, Failure, case, check
from test_preload import preload_vars

LABELS = ('release', 'other_mpis', 'mpi')  # tests/labels.md

TUNING = TUNING_TABLE
TIMEOUT = 45  # seconds per run; every program takes a few seconds at most
_files = itertools.count()
LOG_LINE = re.compile(r"^cb_engine_preload: rank (\d+): (MPI_\w+): (\d+) engine, "
                      r"(\d+) passed through")


def table(env, library_rules=()):
    """A tuning file: the default table without its "mpi" rules (so that the engine takes
    small sizes too), with `library_rules` first (rules that hand calls to the library)."""
    with open(TUNING) as f:
        t = json.load(f)
    t["rules"] = list(library_rules) + [r for r in t["rules"] if r.get("algo") != "mpi"]
    path = env.path(f"tuning{next(_files)}.json")
    with open(path, "w") as f:
        json.dump(t, f)
    return path


def to_library(coll, max_bytes=None):
    rule = {"coll": coll, "mem": "host", "algo": "mpi", "buffers": "private"}
    if max_bytes is not None:
        rule["max_bytes"] = max_bytes
    return rule


def tail(text, n=3000):
    text = text or ""
    if isinstance(text, bytes):
        text = text.decode(errors="replace")
    return text[-n:]


class Outcome:
    def __init__(self, label, ranks, log):
        self.label, self.ranks, self.log = label, ranks, log  # ranks: {rank: [lines]}


def launch(env, label, np, program, args, run_env, wrap=None, timeout=TIMEOUT):
    """Runs `mpirun -n NP cb_legal_programs PROGRAM PREFIX ARGS` (inside `wrap`, a function
    of the command line, where given); returns each rank's result lines."""
    app = os.path.join(env.bindir, "tests", "cb_legal_programs")
    check(os.path.exists(app), f"missing {app}")
    prefix = env.path(label.replace(" ", "_").replace("=", ""))
    cmd = [env.mpirun, "-n", str(np), app, program, prefix, *map(str, args)]
    what = f"{' '.join([program, *map(str, args)])} at {np} ranks"
    if wrap:
        cmd = wrap(cmd)
    start = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env=run_env, start_new_session=True)
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)  # mpirun, its proxies and the ranks
        try:
            out, err = p.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            out, err = "", "(no output: the ranks held the pipes after the kill)"
        raise Failure(f"HANG: {label}: {what} did not finish in {timeout} s\n--- stdout\n"
                      f"{tail(out)}\n--- stderr\n{tail(err)}")
    seconds = time.monotonic() - start
    check(p.returncode == 0,
          f"{label}: {what}: expected exit 0, got "
          f"{p.returncode} after {seconds:.1f} s\n--- stdout\n{tail(out)}\n--- stderr\n"
          f"{tail(err)}")
    ranks = {}
    for r in range(np):
        path = f"{prefix}.{r}"
        check(os.path.exists(path), f"{label}: rank {r} wrote no {path}\n{tail(err)}")
        with open(path) as f:
            ranks[r] = f.read().splitlines()
        check(ranks[r] and ranks[r][-1] == "ok", f"{label}: rank {r} did not finish: {ranks[r]}")
    log = []
    log_file = run_env.get("CB_PRELOAD_LOG")
    if log_file and os.path.exists(log_file):
        with open(log_file) as f:
            log = [l.rstrip("\n") for l in f if LOG_LINE.match(l)]
    return Outcome(label, ranks, log)


def base_env():
    e = dict(os.environ)
    for k in list(e):
        if k == "LD_PRELOAD" or k.startswith("CB_"):
            del e[k]
    return e


def preload_env(env, np, label, extra=None, threads=False):
    lib = os.path.join(env.bindir, "libcb_engine_preload.so")
    check(os.path.exists(lib), f"missing {lib}")
    e = base_env()
    e.update(preload_vars(env, lib))  # LD_PRELOAD, a sanitizer build's runtimes first
    e.update(CB_PRELOAD_VERBOSE="1",
             CB_PRELOAD_LOG=env.path(label.replace(" ", "_").replace("=", "") + ".log"),
             CB_TUNING_FILE=table(env))
    if np > 2 or threads:  # busy-polling ranks beyond the cores are very slow
        e["CB_PRELOAD_WAIT"] = "yield"
    e.update(extra or {})
    return e


def kinds(lines, kind):
    return [l[len(kind) + 1:] for l in lines if l.startswith(kind + " ")]


def check_xrank(o):
    """"xrank" lines: the same on every rank of one run."""
    first = kinds(o.ranks[0], "xrank")
    for r, lines in o.ranks.items():
        mine = kinds(lines, "xrank")
        check(len(mine) == len(first), f"{o.label}: rank {r} has {len(mine)} xrank lines, rank 0 "
                                       f"{len(first)}")
        differ = [f"{a.rsplit(' ', 1)[0]}: rank 0 {a.rsplit(' ', 1)[1]}, rank {r} "
                  f"{b.rsplit(' ', 1)[1]}" for a, b in zip(first, mine) if a != b]
        check(not differ, f"{o.label}: expected bit-identical results on every rank; rank {r} "
                          f"differs from rank 0 in {len(differ)} of {len(first)}:\n" +
              "\n".join(differ[:10]))


def check_same(plain, pre):
    """"own" lines: the same bits with and without the preload, rank by rank."""
    for r in plain.ranks:
        a, b = kinds(plain.ranks[r], "own"), kinds(pre.ranks[r], "own")
        check(a, f"{plain.label}: rank {r} wrote no results to compare")
        check(len(a) == len(b), f"rank {r}: {len(a)} results without the preload, {len(b)} "
                                f"with it")
        differ = [f"{x.rsplit(' ', 1)[0]}: {x.rsplit(' ', 1)[1]} plain, "
                  f"{y.rsplit(' ', 1)[1]} preloaded" for x, y in zip(a, b) if x != y]
        check(not differ, f"{pre.label}: rank {r}: {len(differ)} of {len(a)} results differ "
                          f"from plain MPI's bits:\n" + "\n".join(differ[:10]))
        xa = [l.rsplit(" ", 1)[0] for l in kinds(plain.ranks[r], "xrank")]
        xb = [l.rsplit(" ", 1)[0] for l in kinds(pre.ranks[r], "xrank")]
        check(xa == xb, f"rank {r}: different floating-point results: {xa} / {xb}")


def engine_counts(log):
    """{function without a "_c" suffix: (engine, passed)} summed over the ranks."""
    out = {}
    for l in log:
        m = LOG_LINE.match(l)
        fn = re.sub(r"_c$", "", m.group(2))
        e, p = out.get(fn, (0, 0))
        out[fn] = (e + int(m.group(3)), p + int(m.group(4)))
    return out


def check_engine(o, functions):
    counts = engine_counts(o.log)
    missing = [fn for fn in functions if counts.get(fn, (0, 0))[0] == 0]
    check(not missing, f"{o.label}: expected the engine to take calls of {missing}; the "
                       f"preload's counts:\n" + "\n".join(o.log))


def check_counts(o, expected, reason=None):
    """The preload's counts summed over the ranks are exactly `expected` ({function: (engine,
    passed through)}); with `reason`, every call passed through was for that reason."""
    counts = engine_counts(o.log)
    check(counts == expected, f"{o.label}: expected the preload's counts (engine, passed "
                              f"through) {expected}, got {counts}:\n" + "\n".join(o.log))
    if reason:
        other = [l for l in o.log if int(LOG_LINE.match(l).group(4)) and
                 not l.endswith(f" passed through ({reason}: {LOG_LINE.match(l).group(4)})")]
        check(not other, f"{o.label}: expected every call passed through for {reason!r}:\n" +
              "\n".join(other))


def compare(env, np, program, args=(), extra=None, engine=(), threads=False, wrap=None,
            tag="", timeout=TIMEOUT, counts=None, reason=None):
    """Runs the program without, then with the preload, and compares (module docstring);
    with `counts` (or `counts(plain run)`), the preload's counts must be exactly those
    (check_counts)."""
    label = f"{program}{tag} np={np}"
    plain = launch(env, label + " plain", np, program, args, base_env(), wrap, timeout)
    if any(l.startswith("skip ") for l in plain.ranks[0]):
        return next(l for l in plain.ranks[0] if l.startswith("skip "))
    check_xrank(plain)
    pre_label = label + " preloaded"
    pre = launch(env, pre_label, np, program, args,
                 preload_env(env, np, pre_label, extra, threads), wrap, timeout)
    check_xrank(pre)
    check_same(plain, pre)
    check_engine(pre, engine)
    if counts is not None:
        check_counts(pre, counts(plain) if callable(counts) else counts, reason)
    return None


def all_of(results):
    skips = [r for r in results if r]
    return f"SKIP: {skips[0]}" if skips else None


NBC_MIXED = ["MPI_Ibcast", "MPI_Iallgather", "MPI_Ialltoall", "MPI_Ireduce", "MPI_Iallreduce"]


@case('asan')
def legal_many_pending(env):
    """40 operations pending on one communicator, then one MPI_Waitall (the engine had 16
    shared-memory slots and aborted past them)."""
    compare(env, 3, "many_pending", ["allreduce", 40], engine=["MPI_Iallreduce"])
    compare(env, 4, "many_pending", ["allreduce", 40], engine=["MPI_Iallreduce"])
    compare(env, 4, "many_pending", ["mixed", 40], engine=NBC_MIXED, tag=" mixed")
    compare(env, 2, "many_pending", ["mixed", 40], engine=NBC_MIXED, tag=" mixed")


@case('asan')
def legal_order_dependent_sum(env):
    """Sums of 1, 1e-16 and -1 over 3 ranks: every rank must get the same bits (1 to 64
    elements take the shared-memory flat path; 100000 a larger one)."""
    functions = ["MPI_Allreduce", "MPI_Iallreduce", "MPI_Reduce_scatter_block"]
    compare(env, 3, "order_dependent_sum", engine=functions)
    compare(env, 4, "order_dependent_sum", engine=functions)


NO_ENGINE_YET = "no engine on this communicator yet"  # src/preload/preload.cpp
EAGER = {"CB_PRELOAD_ENGINES": "eager"}  # engines made by the constructors (docs/preload.md)


@case('asan')
def legal_cross_comm_order(env):
    """Rank 0 starts an operation on A then B, rank 1 on B then A, then MPI_Waitall: the
    first collectives on A and B ("fresh"), and after a blocking one on each ("warm").
    Fresh, with engines made at the first routed blocking collective (the default), they
    are MPI's, every one for NO_ENGINE_YET; with CB_PRELOAD_ENGINES=eager the engine's."""
    functions = ["MPI_Iallreduce", "MPI_Ibcast"]
    compare(env, 2, "cross_comm_order", ["fresh"], tag=" fresh",
            counts={"MPI_Iallreduce": (0, 12), "MPI_Ibcast": (0, 4), "MPI_Allgather": (2, 0)},
            reason=NO_ENGINE_YET)
    compare(env, 2, "cross_comm_order", ["fresh"], extra=EAGER, engine=functions,
            tag=" fresh eager")
    compare(env, 2, "cross_comm_order", ["warm"], engine=functions, tag=" warm")
    compare(env, 3, "cross_comm_order", ["fresh"], extra=EAGER, engine=functions,
            tag=" fresh eager")


@case('asan', 'tsan', 'threads')
def legal_thread_exits(env):
    """MPI_THREAD_MULTIPLE: the first collectives on a communicator run in a thread that
    exits; the main thread goes on with that communicator."""
    return all_of([compare(env, 2, "thread_exits", threads=True,
                           engine=["MPI_Allreduce", "MPI_Bcast", "MPI_Iallreduce"])])


@case('asan', 'tsan', 'threads')
def legal_threads_distinct_comms(env):
    """Two threads per process, each on its own communicator, whose engines are created in
    opposite orders on the two processes."""
    return all_of([compare(env, 2, "threads_distinct_comms", threads=True,
                           engine=["MPI_Allreduce", "MPI_Iallreduce"])])


@case('asan', 'tsan', 'threads')
def legal_threads_comm_free(env):
    """Two threads per process: one frees communicators (MPI_Comm_free calls the engine's
    attribute delete function with MPI's lock held) while the other starts and waits for
    engine operations, calling MPI with the engine's lock held (a lock-order deadlock)."""
    # Its communicators see only non-blocking collectives: engines made by the constructors.
    return all_of([compare(env, 2, "threads_comm_free", threads=True, extra=EAGER,
                           engine=["MPI_Iallreduce"])])


@case('asan', 'tsan', 'threads')
def legal_threads_race(env):
    """Two threads per process: small blocking allreduces on A in one, MPI_Iallreduce and
    MPI_Wait on B in the other, 200 times (issue 37: the blocking call's wait loop read the
    operations in flight without the engine's lock; ThreadSanitizer reports such a race)."""
    # B sees only non-blocking collectives: engines made by the constructors.
    return all_of([compare(env, 2, "threads_race", [200], threads=True, extra=EAGER,
                           engine=["MPI_Allreduce", "MPI_Iallreduce"], timeout=120)])


@case('asan')
def legal_reused_handle(env):
    """The same allreduce and bcast (same buffers, count, type) on a communicator freed and
    made again with other members, so that MPI may reuse its handle: the preload's memory of
    the last route (EngineRoute) must not run a call on a freed communicator's engine."""
    compare(env, 2, "reused_handle", engine=["MPI_Allreduce", "MPI_Bcast"])
    compare(env, 3, "reused_handle", engine=["MPI_Allreduce", "MPI_Bcast"])


@case('asan')
def legal_nbx(env):
    """The NBX pattern (MPI_Issend, MPI_Iprobe/MPI_Recv, MPI_Ibarrier once the sends are
    done), the MPI_Ibarrier being the first collective on its communicator; rank 1 sends
    late, so its peers are in their MPI_Ibarrier while its messages are still to come."""
    compare(env, 2, "nbx", ["dup"], extra=EAGER, engine=["MPI_Ibarrier"], tag=" dup eager")
    compare(env, 2, "nbx", ["world"], engine=["MPI_Ibarrier"], tag=" world")
    compare(env, 3, "nbx", ["dup"], extra=EAGER, engine=["MPI_Ibarrier"], tag=" dup eager")
    # Made lazily, the dup has no engine at its MPI_Ibarrier, which MPI runs.
    compare(env, 2, "nbx", ["dup"], engine=["MPI_Allreduce"], tag=" dup")


@case('asan')
def legal_first_nonblocking(env):
    """The first collective on a communicator is non-blocking; its peer first waits for a
    message the starting rank sends after starting it (the start must be local). Then the
    same with MPI_Comm_idup, which must stay local too."""
    compare(env, 2, "first_nonblocking", ["dup"], extra=EAGER,
            engine=["MPI_Iallreduce", "MPI_Ibcast"], tag=" dup eager")
    compare(env, 2, "first_nonblocking", ["dup"], engine=["MPI_Allreduce"], tag=" dup")
    # On MPI_COMM_WORLD, whose engine MPI_Init makes; its Ibcast is on a fresh dup.
    compare(env, 2, "first_nonblocking", ["world"], engine=["MPI_Iallreduce"], tag=" world")


@case('asan')
def legal_comm_free_pending(env):
    """MPI_Comm_free while operations on the communicator are pending, then MPI_Waitall."""
    compare(env, 2, "comm_free_pending", engine=["MPI_Iallreduce", "MPI_Ibcast"])
    compare(env, 3, "comm_free_pending", engine=["MPI_Iallreduce", "MPI_Ibcast"])


@case('asan')
def legal_get_status_loop(env):
    """Operations completed by MPI_Request_get_status loops (then MPI_Wait or
    MPI_Request_free), and an MPI_Iprobe loop for a message the peer sends once its own
    operation completed."""
    compare(env, 2, "get_status_loop", ["get_status"], engine=["MPI_Ibcast", "MPI_Iallreduce"],
            tag=" get_status")
    compare(env, 2, "get_status_loop", ["iprobe"], engine=["MPI_Iallreduce"], tag=" iprobe")


@case('asan', 'tsan')
def legal_cross_comm_progress(env):
    """A rank blocked in an 8 B MPI_Allreduce (handed to the library) or MPI_Recv on B
    must progress its 4 MiB MPI_Ibcast/MPI_Iallreduce on A, which its peer waits for."""
    extra = {"CB_TUNING_FILE": table(env, [to_library("allreduce", 8)])}
    for blocker in ("allreduce", "recv"):
        compare(env, 2, "cross_comm_progress", [blocker], extra=extra,
                engine=["MPI_Ibcast", "MPI_Iallreduce"], tag=" " + blocker)


@case('asan')
def legal_many_comms(env):
    """64 communicators (32 at 3 ranks) from every constructor (dup, split, create,
    create_group, idup, dup_with_info, split_type, a merged intercommunicator), some freed
    in the middle, then one operation pending on each of the others."""
    functions = ["MPI_Allreduce", "MPI_Bcast", "MPI_Allgather", "MPI_Iallreduce"]
    # Today's engine needs 0.2-0.6 s to create each communicator's shared memory here.
    compare(env, 2, "many_comms", [64], engine=functions, timeout=60)
    # 32 at 3 ranks: three ranks on two cores take 4-8 s for 64 even on plain MPICH.
    compare(env, 3, "many_comms", [32], engine=functions, timeout=60)


@case('asan')
def legal_split_type_subcomms(env):
    """Communicators from MPI_Comm_split_type(SHARED) and MPI_Comm_split (parity, halves)
    at 4 ranks, used interleaved with MPI_COMM_WORLD, operations pending on all four."""
    compare(env, 4, "split_type_subcomms",
            engine=["MPI_Allreduce", "MPI_Iallreduce", "MPI_Bcast", "MPI_Reduce"])


@case('asan')
def legal_comm_self(env):
    """Collectives on MPI_COMM_SELF and on a one-rank split."""
    compare(env, 2, "comm_self", engine=["MPI_Allreduce"])


def reduce_roots_calls(np, engine_only=False):
    """reduce_roots' MPI_Reduce calls summed over the ranks: each rank makes one per size,
    root and in place or not, in place at a root other than 0 at the smallest size only.
    engine_only: those above 2 KiB at a root other than 0, which the preload gives the
    engine even where the library is chosen on MPICH 4.0 (every rank chooses as if in
    place, and the library's in-place reduce there crashes: CommEngine::choose)."""
    roots = {np - 1, 1, 0}
    return np * sum(1 for n in (128, 1024, 8192) for root in roots for in_place in (0, 1)
                    if not (in_place and root != 0 and n > 128)
                    and (not engine_only or (root != 0 and n * 8 > 2048)))


def reduce_to_library(np):
    """The split of reduce_roots' calls with reduce handed to the library (module doc)."""
    def split(plain):
        library = kinds(plain.ranks[0], "library")
        check(library, f"{plain.label}: no library line")
        engine = reduce_roots_calls(np, True) if "MPICH Version: 4.0" in library[0] else 0
        return {"MPI_Reduce": (engine, reduce_roots_calls(np) - engine)}
    return split


TUNED = "tuned to the MPI library"  # src/preload/comm_engine.hpp, kTunedToLibrary


@case('asan')
def legal_reduce_root_nonzero(env):
    """MPI_Reduce at roots size-1, 1 and 0 (in place at the root too), with the table or
    CB_REDUCE_ALGO handing reduce to the library: root and non-roots must decide alike, so
    the counts are exactly the expected split (reduce_to_library; a rank that took one to
    the engine while its peers gave theirs to MPI would hang or count it). Then with the
    engine taking reduce: every call the engine's, at every root."""
    by_table = {"CB_TUNING_FILE": table(env, [to_library("reduce")])}
    for np in (2, 3):
        library = reduce_to_library(np)
        compare(env, np, "reduce_roots", extra=by_table, tag=" table", counts=library,
                reason=TUNED)
        # Forced to the library, the engine refuses MPICH 4.0's crashing case (passed
        # through as "engine refuses"): every call passes through.
        compare(env, np, "reduce_roots", extra={"CB_REDUCE_ALGO": "mpi"}, tag=" CB_REDUCE_ALGO",
                counts={"MPI_Reduce": (0, reduce_roots_calls(np))})
        compare(env, np, "reduce_roots", tag=" engine",
                counts={"MPI_Reduce": (reduce_roots_calls(np), 0)})


@case('asan')
def legal_large_count(env):
    """The MPI-4 large-count bindings (MPI_Allreduce_c ...): right results, and the engine
    takes them (the program calls no other collective). Skipped where the library has none
    (Open MPI 5.0: MPI 3.1)."""
    return all_of([compare(env, 2, "large_count",
                           engine=["MPI_Allreduce", "MPI_Iallreduce", "MPI_Bcast", "MPI_Ibcast",
                                   "MPI_Reduce", "MPI_Alltoall", "MPI_Allgather",
                                   "MPI_Reduce_scatter_block"])])


@case('asan')
def legal_small_devshm(env):
    """A private mount namespace with a 64 MiB /dev/shm (a default container's): 9
    communicators, each with 20 operations pending, must still give right results."""
    mount = "mount -t tmpfs -o size=64m tmpfs /dev/shm"
    try:
        p = subprocess.run(["unshare", "-m", "sh", "-c", f"{mount} && df -k /dev/shm"],
                           capture_output=True, text=True, timeout=30)
        ok = p.returncode == 0 and " 65536 " in p.stdout
        why = f"rc={p.returncode}: {tail(p.stdout + p.stderr, 500)}"
    except (OSError, subprocess.TimeoutExpired) as e:
        ok, why = False, str(e)
    if not ok:
        return f"SKIP: cannot mount a 64 MiB /dev/shm in a private mount namespace ({why})"

    def wrap(cmd):
        # The preload goes into mpirun only (not unshare, sh or mount).
        script = (f'{mount} && if [ -n "$CB_LEGAL_PRELOAD" ]; then '
                  f'export LD_PRELOAD="$CB_LEGAL_PRELOAD"; fi && exec "$@"')
        return ["unshare", "-m", "sh", "-c", script, "sh", *cmd]

    def unwrap_preload(e):
        e = dict(e)
        e["CB_LEGAL_PRELOAD"] = e.pop("LD_PRELOAD")
        return e

    # Plain MPI in 64 MiB is the baseline: its failure is a failure (of the program, or of
    # the namespace that this case builds), not a reason to skip.
    label = "small_devshm np=2"
    plain = launch(env, label + " plain", 2, "small_devshm", [8], base_env(), wrap)
    pre_label = label + " preloaded"
    pre = launch(env, pre_label, 2, "small_devshm", [8],
                 unwrap_preload(preload_env(env, 2, pre_label)), wrap)
    check_same(plain, pre)
    # The engine took every call on all 9 communicators (its shared memory fits), not only
    # some with the rest passed through: per rank and communicator 1 MPI_Allreduce, 1
    # MPI_Bcast and 20 MPI_Iallreduce; MPI_Allgather is the program's members(), once on
    # world and once in each blocking_allreduce.
    comms = 9
    check_counts(pre, {"MPI_Allreduce": (2 * comms, 0), "MPI_Bcast": (2 * comms, 0),
                       "MPI_Iallreduce": (2 * 20 * comms, 0),
                       "MPI_Allgather": (2 * (comms + 1), 0)})
    return None


@case('asan')
def legal_small_interleaved(env):
    """Issue 30's small-message path through the preload: small operations back to back on
    two communicators, non-blocking ones left pending on A while every blocking small
    collective runs on B and a blocking one on A waits its turn behind A's pending ones;
    2 ranks spinning, 3 yielding."""
    functions = ["MPI_Iallreduce", "MPI_Ibcast", "MPI_Allreduce", "MPI_Bcast", "MPI_Allgather",
                 "MPI_Alltoall", "MPI_Reduce", "MPI_Reduce_scatter_block", "MPI_Barrier"]
    small = {f"CB_{c.upper()}_ALGO": "small" for c in ("allreduce", "bcast", "allgather",
                                                       "alltoall", "reduce", "reduce_scatter",
                                                       "barrier")}
    compare(env, 2, "small_interleaved", [40], extra=small, engine=functions)
    compare(env, 3, "small_interleaved", [24], extra=small, engine=functions)


@case('asan')
def legal_lazy_first_collective(env):
    """Engines made at a communicator's first routed collective (issue 39): before it, each
    rank makes a different number of calls that are no collective on the communicator and
    one collective that MPI runs; on two fresh communicators even ranks start an
    MPI_Iallreduce on A before B's first (blocking) collective, odd ranks after it. 2 and
    3 ranks."""
    functions = ["MPI_Allreduce", "MPI_Bcast", "MPI_Iallreduce", "MPI_Allgather"]
    compare(env, 2, "lazy_first_collective", engine=functions)
    compare(env, 3, "lazy_first_collective", engine=functions)


@case('asan')
def legal_mixed_types(env):
    """Issue 39: ranks describe the same bytes of a bcast, allgather or alltoall (blocking
    and non-blocking) with MPI_INT, a contiguous derived type or a strided vector (packed),
    one rank a struct of absolute addresses at MPI_BOTTOM, a receive type freed while its
    MPI_Iallgather runs: every call the engine's on every rank (a rank that passed its
    derived type to MPI while its peers took the engine hung). 2 and 3 ranks."""
    for np in (2, 3):
        compare(env, np, "mixed_types", engine=["MPI_Bcast", "MPI_Ibcast", "MPI_Allgather",
                                                "MPI_Iallgather", "MPI_Alltoall"])


BYTES_LINE = re.compile(r"^cb_engine_preload: rank (\d+): bytes (MPI_\w+|in all): (\d+) engine, "
                        r"(\d+) passed through")


def bytes_counts(env, label):
    """CB_PRELOAD_VERBOSE's bytes lines of the run `label` ({function or "in all": (engine,
    passed through)}, summed over the ranks) and how many ranks wrote "in all"."""
    out, ranks = {}, 0
    with open(env.path(label.replace(" ", "_").replace("=", "") + ".log")) as f:
        for l in f:
            m = BYTES_LINE.match(l)
            if m:
                e, p = out.get(m.group(2), (0, 0))
                out[m.group(2)] = (e + int(m.group(3)), p + int(m.group(4)))
                ranks += m.group(2) == "in all"
    return out, ranks


@case('asan')
def legal_buffer_kinds(env):
    """Issue 39: allreduce and bcast buffers from MPI_Alloc_mem, a shared window
    (MPI_Win_allocate_shared) and the heap, a different kind on each rank. Also the bytes
    CB_PRELOAD_VERBOSE counts: per rank 3 allreduces and 3 bcasts of 4096 ints, one
    allgather of one int from each of the 3 ranks."""
    compare(env, 3, "buffer_kinds", engine=["MPI_Allreduce", "MPI_Bcast"])
    got, ranks = bytes_counts(env, "buffer_kinds np=3 preloaded")
    want = {"MPI_Allreduce": 3 * 3 * 4096 * 4, "MPI_Bcast": 3 * 3 * 4096 * 4,
            "MPI_Allgather": 3 * 3 * 4}
    check(ranks == 3, f"{ranks} ranks wrote the bytes in all, not 3: {got}")
    check({fn: sum(got.get(fn, (0, 0))) for fn in want} == want and
          got["MPI_Allreduce"][1] == 0 and got["MPI_Bcast"][1] == 0,
          f"bytes: expected {want} (allreduce and bcast all the engine's), got {got}")
    check(got["in all"] == tuple(map(sum, zip(*(got[fn] for fn in want)))),
          f"bytes in all {got['in all']} is not the functions' sum: {got}")


@case('asan')
def legal_reduction_types(env):
    """Issue 39: complex MPI_SUM/MPI_PROD (MPI_C_FLOAT_COMPLEX, MPI_C_DOUBLE_COMPLEX,
    MPI_COMPLEX, MPI_DOUBLE_COMPLEX, MPI_COMPLEX16), 16-bit integers (MPI_SHORT,
    MPI_UNSIGNED_SHORT, MPI_INT16_T, MPI_UINT16_T, MPI_INTEGER2) under sum, prod, max and
    min, MPI_MAXLOC/MPI_MINLOC on MPI_2INT, MPI_FLOAT_INT, MPI_DOUBLE_INT, MPI_LONG_INT,
    MPI_SHORT_INT and MPI_LONG_DOUBLE_INT with ties, in allreduce, reduce,
    reduce_scatter_block and iallreduce at 37 and 3000 elements, 3 ranks: the same bits as
    plain MPI, every call the engine's but unsigned max/min; with the default table and with
    ring/binomial forced."""
    counts = {"MPI_Allreduce": (228, 24), "MPI_Reduce": (120, 12), "MPI_Iallreduce": (102, 0),
              "MPI_Reduce_scatter_block": (66, 0)}
    compare(env, 3, "reduction_types", reason="unsigned max/min", counts=counts)
    # The MPI-transport algorithms, which cut buffers into pieces of whole elements.
    forced = {"CB_ALLREDUCE_ALGO": "ring", "CB_REDUCE_ALGO": "binomial",
              "CB_REDUCE_SCATTER_ALGO": "ring"}
    compare(env, 3, "reduction_types", extra=forced, tag=" forced", reason="unsigned max/min",
            counts=counts)


@case('asan')
def legal_vform_counts(env):
    """Issue 39: MPI_Allgatherv (the engine's, legal_allgatherv) and MPI_Alltoallv (passed
    to MPI) with counts that differ per rank (some zero), between collectives the engine
    takes."""
    compare(env, 3, "vform_counts", engine=["MPI_Allreduce", "MPI_Bcast"])


def every_call_the_engines(plain):
    """The calls the program made ("calls FUNCTION N" lines, summed over the ranks), each
    expected to be the engine's: {function: (calls, 0)} (check_counts)."""
    out = {}
    for lines in plain.ranks.values():
        for l in kinds(lines, "calls"):
            fn, n = l.split()
            out[fn] = (out.get(fn, (0, 0))[0] + int(n), 0)
    check(out, f"{plain.label}: no calls lines")
    return out


@case('asan')
def legal_gather_scatter(env):
    """Issue 39: MPI_Gather, MPI_Scatter, MPI_Igather, MPI_Iscatter (and MPI_Gather_c,
    MPI_Scatter_c) at every root, MPI_IN_PLACE at the root, on MPI_COMM_WORLD, a reversed
    split and halves (one of one rank at 3 ranks), each rank describing the same bytes with
    MPI_INT, a contiguous type or a strided vector (packed), and the arguments MPI calls not
    significant null or real: the same bits as plain MPI and every call the engine's (a rank
    deciding from an insignificant argument would pass its call to MPI while its peers took
    the engine, and hang). 2 ranks, 3 yielding, and 2 with the MPI-transport algorithm
    (binomial) forced instead of shared memory (3 plain MPICH ranks busy-polling on 2 cores
    take 2.4 s, 2 ranks 0.2 s)."""
    compare(env, 2, "gather_scatter", counts=every_call_the_engines)
    compare(env, 3, "gather_scatter", counts=every_call_the_engines)
    compare(env, 2, "gather_scatter", tag=" binomial", counts=every_call_the_engines,
            extra={"CB_GATHER_ALGO": "binomial", "CB_SCATTER_ALGO": "binomial"})


@case('asan')
def legal_allgatherv(env):
    """Issue 39: MPI_Allgatherv and MPI_Iallgatherv (and their _c forms) on MPI_COMM_WORLD, a
    reversed split and halves (one of one rank at 3 ranks), uneven counts with an empty
    block, MPI_IN_PLACE, and on each rank its own layout of the receive blocks (packed in
    rank order, reversed, with gaps) and types (MPI_INT, a contiguous type, a strided vector
    that is packed; the send side another of the same size: Open MPI 5's own allgatherv
    hangs when they differ in size), which only the blocks' type signatures must match: the
    same bits as plain MPI, gaps left alone, and every call the engine's (a rank deciding
    from its own layout would pass its call to MPI while its peers took the engine, and
    hang). 2 ranks, 3 yielding, and 2 with the MPI-transport algorithm (binomial) forced
    instead of shared memory."""
    compare(env, 2, "allgatherv", counts=every_call_the_engines)
    compare(env, 3, "allgatherv", counts=every_call_the_engines)
    compare(env, 2, "allgatherv", tag=" binomial", counts=every_call_the_engines,
            extra={"CB_ALLGATHERV_ALGO": "binomial"})


PROGRESS_FAMILIES = "fence,pscw,lock,file,neighbor,persistent"  # legal_progress.cpp


@case('asan')
def legal_progress_families(env):
    """Issue 39, progress everywhere: rank 0 starts a 4 MiB MPI_Ibcast (from rank 0, then
    from rank 1) or MPI_Iallreduce that the engine runs, then blocks in a call of each family
    that completes only once rank 1, which first waits for the operation, has done its part:
    MPI_Win_fence, MPI_Win_wait (post/start/complete/wait), MPI_Win_lock/unlock against
    rank 1's exclusive lock, MPI_File_open, MPI_File_write_at_all and MPI_File_read_at_all,
    MPI_Neighbor_allgather/alltoall/allgatherv, a persistent MPI_Allreduce_init's MPI_Wait.
    Without the interposition (preload_blocking.cpp) the first five hang; the waits already
    covered the persistent one."""
    compare(env, 2, "progress_family", [PROGRESS_FAMILIES],
            engine=["MPI_Ibcast", "MPI_Iallreduce"])


@case('asan', 'tsan', 'threads')
def legal_progress_nodes(env):
    """Issue 39: engine operations spanning (virtual) nodes need MPI calls to move, which only
    the progress thread makes while their rank blocks (CB_PRELOAD_PROGRESS=thread, with
    MPI_THREAD_MULTIPLE asked for at MPI_Init). 4 ranks, CB_RANKS_PER_NODE=1 (a virtual node
    is a run of a communicator's consecutive ranks on a host, so only 1 makes the
    sub-communicators span nodes): on the even and the odd ranks' communicators rank 0
    blocks in MPI_Recv and in
    MPI_Win_wait while its 1 MiB MPI_Ibcast (chain: segment after segment) or MPI_Iallreduce
    (ring) is pending and its peer waits for it; without the thread the MPI_Win_wait round
    hangs. The program is told MPI_THREAD_SINGLE (what MPI_Init asks) by MPI_Query_thread."""
    extra = {"CB_RANKS_PER_NODE": "1", "CB_PRELOAD_PROGRESS": "thread",
             "CB_BCAST_ALGO": "chain", "CB_ALLREDUCE_ALGO": "ring"}
    compare(env, 4, "progress_nodes", [1 << 18], extra=extra, threads=True,
            engine=["MPI_Ibcast", "MPI_Iallreduce"])
