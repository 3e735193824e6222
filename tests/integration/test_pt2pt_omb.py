"""OMB's one-sided benchmarks (cb_put_latency ... cb_cas_latency) under mpirun -n 2: every
window creation and synchronisation OMB offers, -c on the target's window, JSON, bad input;
OMB's further two-sided ones (multi_lat, latency_mt, latency_mp, the persistent ones,
partitioned_latency, bw_fan_in, bw_fan_out), the start-up ones and nccl-tests' exchanges."""
import math
import os

from cbtest import (case, check, check_document, check_refused, check_summary, doubling,
                    finite_positive, load_json)
from test_launch import virtual_nodes, virtual_nodes_unavailable

LABELS = ('release', 'mpi')  # tests/labels.md (why not asan: there)

# name: (default sync, is bandwidth, active synchronisation only, sizes swept)
RMA = {
    "put_latency": ("flush", False, False, True),
    "put_bw": ("flush", True, False, True),
    "put_bibw": ("pscw", True, True, True),
    "get_latency": ("flush", False, False, True),
    "get_bw": ("flush", True, False, True),
    "acc_latency": ("flush", False, False, True),
    "get_acc_latency": ("flush", False, False, True),
    "fop_latency": ("flush", False, False, False),
    "cas_latency": ("flush", False, False, False),
}
OPERATION = {"put_latency": "MPI_Put", "put_bw": "MPI_Put", "put_bibw": "MPI_Put",
             "get_latency": "MPI_Get", "get_bw": "MPI_Get", "acc_latency": "MPI_Accumulate",
             "get_acc_latency": "MPI_Get_accumulate", "fop_latency": "MPI_Fetch_and_op",
             "cas_latency": "MPI_Compare_and_swap"}
PASSIVE = ["lock", "flush", "flush_local", "lock_all"]
ACTIVE = ["pscw", "fence"]
WINDOWS = ["create", "allocate", "dynamic"]


def rma_args(bench, extra=()):
    _, bw, _, sized = RMA[bench]
    args = ["-i", "20", "-x", "3", "-c"]
    if sized:  # every fourth size: the synchronisation, not the size, is what varies here
        args += ["-m", "1:1K", "--stepfactor", "4"]
    if bw:
        args += ["-W", "8"]
    return args + list(extra)


def check_rma_doc(doc, bench, window, sync):
    _, bw, _, sized = RMA[bench]
    check_document(doc, bench, 2, [4 ** k for k in range(6)] if sized else [8])  # 1 B-1 KiB
    one = doc["one_sided"]
    check(one["window"] == window and one["sync"] == sync, f"one_sided {one}")
    check(one["operation"] == OPERATION[bench], f"operation {one}")
    active = sync in ACTIVE
    both = bench == "put_bibw" or (active and not bw)
    check(one["both_ranks_operate"] is both, f"both_ranks_operate {one}")
    check("line_rate" not in doc, "no line rate for one-sided benchmarks")
    for res in doc["results"]:
        where = f"{bench} -w {window} -s {sync} at {res['bytes']} B"
        v = res["validation"]
        check(v["enabled"] and v["wrong_elements"] == 0 and v["passed"], f"{where}: {v}")
        check(res["iterations"] == 20 and res["warmup"] == 3, f"{where}: iterations")
        check_summary(res["iteration_us"], where)
        if bw:
            check(res["window"] == 8 and res["pairs"] == 1, f"{where}: window {res}")
            check(finite_positive(res["bandwidth_MBps"]), f"{where}: bandwidth")
            dirs = 2 if bench == "put_bibw" else 1
            at_p50 = res["bytes"] * 8 * dirs / res["iteration_us"]["p50"]
            got = res["bandwidth_MBps_at_iteration_percentile"]["p50"]
            check(abs(got - at_p50) <= 1e-9 * at_p50, f"{where}: p50 bandwidth {got} != {at_p50}")
            check("latency_us" not in res, f"{where}: no latency figure")
        else:
            lat = res["latency_us"]
            check_summary(lat, where)
            # OMB: an operation each way per iteration under fence and pscw (time / 2).
            per_op = 2 if active else 1
            check(abs(res["iteration_us"]["p50"] / per_op - lat["p50"]) < 1e-9,
                  f"{where}: latency = iteration / {per_op}")
            check("bandwidth_MBps" not in res, f"{where}: no bandwidth figure")


def run_rma(env, bench, window, sync, extra=()):
    out = env.path(f"{bench}-{window}-{sync}.json")
    args = rma_args(bench, ["-w", window, "-s", sync, "-J", out, *extra])
    r = env.ok(2, bench, args, timeout=120)
    check_rma_doc(load_json(out), bench, window, sync)
    return r


def _defaults_case(bench):
    def fn(env):
        out = env.path(f"{bench}.json")
        r = env.ok(2, bench, rma_args(bench, ["-J", out]), timeout=120)
        sync = RMA[bench][0]
        check("# Window creation: MPI_Win_allocate" in r.out, f"window header:\n{r.out}")
        check("# Synchronization: MPI_Win_" in r.out, f"sync header:\n{r.out}")
        check("Validation" in r.out and "Pass" in r.out, f"validation column:\n{r.out}")
        check(("Bandwidth (MB/s)" if RMA[bench][1] else "Latency (us)") in r.out, r.out)
        check_rma_doc(load_json(out), bench, "allocate", sync)
    fn.__name__ = f"rma_{bench}_validates"
    return case(fn)


for _bench in RMA:
    _defaults_case(_bench)


def _window_case(window):
    """Every synchronisation each benchmark allows, on one window kind."""
    def fn(env):
        for sync in PASSIVE + ACTIVE:
            run_rma(env, "put_latency", window, sync)
            run_rma(env, "acc_latency", window, sync)
        for sync in ("lock", "fence"):
            run_rma(env, "get_bw", window, sync)
            run_rma(env, "cas_latency", window, sync)
        for sync in ACTIVE:
            run_rma(env, "put_bibw", window, sync)
    fn.__name__ = f"rma_every_sync_{window}_window"
    return case(fn)


for _window in WINDOWS:
    _window_case(_window)


@case
def rma_every_sync_fetching_ops(env):
    """The fetching operations under every synchronisation (their results are checked too)."""
    for sync in PASSIVE + ACTIVE:
        run_rma(env, "get_latency", "allocate", sync)
        run_rma(env, "get_acc_latency", "create", sync)
        run_rma(env, "fop_latency", "dynamic", sync)
        run_rma(env, "put_bw", "allocate", sync)


@case
def rma_options_and_help(env):
    r = env.ok(2, "put_latency", ["--help"])
    for opt in ("--win-options", "--sync-option", "--warmup"):
        check(opt in r.out, f"--help lacks {opt}:\n{r.out}")
    # -w is the window here (OMB), not nccl-tests' warmup; -x is the warmup.
    out = env.path("w.json")
    env.ok(2, "put_latency", ["-m", "4:8", "-i", "10", "-x", "7", "-w", "create", "-J", out])
    doc = load_json(out)
    check(doc["one_sided"]["window"] == "create" and doc["options"]["warmup"] == 7, "-w / -x")
    r = env.ok(2, "put_bw", ["-m", "8:8", "-i", "5", "-f", "-z", "50"])
    check("Min BW(MB/s)" in r.out and "P50 Tail BW(MB/s)" in r.out and "window size: 64" in r.out,
          r.out)
    r = env.ok(2, "cas_latency", ["-i", "10", "-f"])
    check("Min Latency(us)" in r.out and "\n8 " in r.out, f"one 8-byte row:\n{r.out}")


RMA_BAD_INPUT = [
    ("put_bibw", ["-s", "lock"], "pscw or fence"),
    ("put_bibw", ["-s", "flush"], "pscw or fence"),
    ("put_latency", ["-s", "bogus"], "'bogus'"),
    ("get_bw", ["-w", "shared"], "'shared'"),
    ("fop_latency", ["-m", "64"], "8-byte"),
    ("put_latency", ["--backend", "engine"], "--backend mpi"),
    ("put_latency", ["-p", "1"], "-p/--pairs"),
    ("get_latency", ["-d", "cuda"], ""),
]


@case
def rma_bad_input(env):
    for bench, args, needle in RMA_BAD_INPUT:
        check_refused(env.run(2, bench, ["-i", "5", *args], timeout=30), f"cb_{bench} {args}",
                      needle)


@case
def rma_wrong_rank_count(env):
    for bench in ("put_latency", "put_bibw", "cas_latency"):
        for np in (1, 3):
            r = env.run(np, bench, ["-i", "5", "--wait", "yield"], timeout=30)
            check(r.rc == 2 and "exactly 2 ranks" in r.err, f"cb_{bench} on {np} ranks: {r}")


@case
def rma_validation_failure_is_reported(env):
    """A corrupted window byte is found: one target under flush, both under fence."""
    for bench, sync, wrong in (("put_latency", "flush", 1), ("put_latency", "fence", 2),
                               ("acc_latency", "lock", 1), ("fop_latency", "pscw", 2),
                               ("put_bibw", "fence", 2)):
        out = env.path(f"bad-{bench}-{sync}.json")
        args = ["-i", "10", "-c", "-s", sync, "-J", out]
        if bench != "fop_latency":
            args += ["-m", "8:32"]
        r = env.run(2, bench, args, env={"CB_TEST_FAULT": "corrupt"}, timeout=60)
        check(r.rc == 1, f"cb_{bench} -s {sync}: validation failure must exit 1: {r}")
        check("DATA VALIDATION ERROR" in r.err and "Fail" in r.out, f"{r}")
        doc = load_json(out)
        check(doc["status"] == "validation_failed", doc["status"])
        got = [x["validation"]["wrong_elements"] for x in doc["results"]]
        check(all(w == wrong for w in got), f"cb_{bench} -s {sync}: wrong {got}, expected {wrong}")


@case
def rma_time_limit_aborts(env):
    out = env.path("hang.json")
    r = env.run(2, "put_latency", ["-m", "8:64", "-i", "5", "--time-limit", "2", "-J", out],
                env={"CB_TEST_FAULT": "hang"}, timeout=60)
    check(r.rc == 4, f"time limit must exit 4: {r}")
    doc = load_json(out)
    check(doc["status"] == "aborted" and [x["bytes"] for x in doc["results"]] == [8], doc["status"])


# --- OMB's further two-sided benchmarks -------------------------------------------------

@case
def pt2pt_multi_lat_two_and_four_ranks(env):
    """osu_multi_lat: pairs r <-> r + N/2 ping-pong at once; 4 ranks on 2 cores: yield."""
    for np, extra in ((2, []), (4, ["--wait", "yield"])):
        out = env.path(f"multi{np}.json")
        r = env.ok(np, "multi_lat", ["-m", "0:4K", "-i", "50", "-x", "5", "-c", "-J", out, *extra],
                   timeout=120)
        pairs = np // 2
        check(f"[ pairs: {pairs} ]" in r.out and "Latency (us)" in r.out, r.out)
        doc = load_json(out)
        check_document(doc, "multi_lat", np, doubling(0, 4096))
        for res in doc["results"]:
            where = f"multi_lat on {np} ranks at {res['bytes']} B"
            check(res["pairs"] == pairs and res["validation"]["passed"], f"{where}: {res}")
            check_summary(res["latency_us"], where)
    r = env.run(3, "multi_lat", ["-m", "8", "--wait", "yield"], timeout=30)
    check(r.rc == 2 and "even number of ranks" in r.err, f"3 ranks: {r}")


def _workers_doc(env, bench, spec, want, extra=(), wait="yield"):
    """One -c run of latency_mt or latency_mp with -t SPEC (None: the default); `want` the
    (sender, receiver) counts the header and every record must show; latency_mt's threads
    wait as `wait` says (--wait auto when None)."""
    out = env.path(f"{bench}-{spec}-{wait}.json")
    args = ["-m", "0:4K", "-i", "40", "-x", "4", "-c", "-J", out, *extra]
    if wait:
        args += ["--wait", wait]
    if spec:
        args += ["-t", spec]
    r = env.ok(2, bench, args, timeout=120)
    what = "threads" if bench == "latency_mt" else "forked_processes"
    lines = ([f"# Number of Sender threads: {want[0]}", f"# Number of Receiver threads: {want[1]}"]
             if bench == "latency_mt" else
             [f"# Number of forked processes in sender: {want[0]}",
              f"# Number of forked processes in receiver: {want[1]}"])
    check(all(line in r.out.splitlines() for line in lines), f"OMB's header lines {lines}:\n{r.out}")
    doc = load_json(out)
    check_document(doc, bench, 2, doubling(0, 4096))
    for res in doc["results"]:
        where = f"{bench} -t {spec} at {res['bytes']} B"
        counts = {"sender": want[0], "receiver": want[1]}
        if bench == "latency_mt":  # the threads' wait: as --wait says, or (auto) checked after
            counts["wait"] = wait or res[what].get("wait")
        check(res[what] == counts, f"{where}: {res.get(what)}")
        check(res["validation"]["passed"] and res["validation"]["wrong_elements"] == 0, where)
        check_summary(res["latency_us"], where)
        check(abs(res["iteration_us"]["p50"] / 2 - res["latency_us"]["p50"]) < 1e-9,
              f"{where}: latency = round trip / 2")
    return r


@case
def pt2pt_latency_mt_threads(env):
    """osu_latency_mt: ping-pong threads (MPI_THREAD_MULTIPLE) on both ranks, OMB's -t
    [SENDERS:]RECEIVERS; one sender thread (fixed tags, any receiver thread answers) and two
    (a tag per iteration); every thread's receive buffer checked. At most 2 x 2 threads,
    yielding where they outnumber the cores (--wait yield, or auto)."""
    for spec, want in ((None, (1, 2)), ("2:2", (2, 2)), ("2:1", (2, 1)), ("1", (1, 1))):
        _workers_doc(env, "latency_mt", spec, want)
    # --wait auto: threads yield when the node has more polling threads than cores, as ranks.
    cores = os.cpu_count()
    for spec, polling in (("1:1", 2), ("2:2", 4)):
        wait = "yield" if polling > cores else "spin"
        r = _workers_doc(env, "latency_mt", spec, (polling // 2, polling // 2), wait=None)
        doc = load_json(env.path(f"latency_mt-{spec}-None.json"))
        got = {res["threads"]["wait"] for res in doc["results"]}
        note = f"# Threads wait: yield ({polling} polling threads on {cores} cores"
        check(got == {wait} and (note in r.out) == (wait == "yield"), f"-t {spec}: {got}\n{r.out}")
    out = env.path("mt-bad.json")
    r = env.run(2, "latency_mt", ["-m", "8:16", "-i", "10", "-t", "2:2", "--wait", "yield", "-c",
                                  "-J", out], env={"CB_TEST_FAULT": "corrupt"}, timeout=60)
    check(r.rc == 1 and load_json(out)["status"] == "validation_failed", f"corrupt: {r}")
    for bad in ("0", "128", "1:2:3", "x", "2:"):
        r = env.run(2, "latency_mt", ["-m", "8", "-t", bad], timeout=30)
        check(r.rc == 2 and "-t" in r.err and "1 to 127" in r.err, f"-t {bad}: {r}")
    r = env.run(2, "latency", ["-m", "8", "-t", "2"], timeout=30)
    check(r.rc == 2 and "cb_latency_mt" in r.err, f"-t on cb_latency: {r}")
    r = env.run(2, "latency_mt", ["-m", "8", "--backend", "engine"], timeout=30)
    check(r.rc == 2 and "--backend mpi" in r.err, f"latency_mt on the engine: {r}")
    r = env.run(3, "latency_mt", ["-m", "8", "--wait", "yield"], timeout=30)
    check(r.rc == 2 and "exactly 2 ranks" in r.err, f"latency_mt on 3 ranks: {r}")


def _running(exe):
    """Processes whose command line starts with `exe` (this build's binary)."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if f.read().split(b"\0")[0] == exe.encode():
                    found.append(pid)
        except OSError:
            pass
    return found


@case
def pt2pt_latency_mp_forks(env):
    """osu_latency_mp: each rank fork()s -t [SENDERS:]RECEIVERS children (OMB: 0:2) that sleep
    while the ranks ping-pong; they end with their rank, none is left behind (a child still
    holding the launcher's output pipe would also keep mpirun from returning)."""
    for spec, want in ((None, (0, 2)), ("1:1", (1, 1)), ("3", (0, 3))):
        _workers_doc(env, "latency_mp", spec, want)
        left = _running(env.exe("latency_mp"))
        check(not left, f"-t {spec}: processes of cb_latency_mp left running: {left}")
    _workers_doc(env, "latency_mp", "1:1", (1, 1), extra=["--backend", "engine"])
    r = env.run(3, "latency_mp", ["-m", "8", "--wait", "yield"], timeout=30)
    check(r.rc == 2 and "exactly 2 ranks" in r.err, f"latency_mp on 3 ranks: {r}")


def _check_fan_doc(doc, bench, np, parents, window, one_host):
    children = (np - parents) // parents
    for res in doc["results"]:
        where = f"{bench} on {np} ranks at {res['bytes']} B"
        check(res["validation"]["passed"] and res["validation"]["wrong_elements"] == 0, where)
        check(res["fan"] == {"parents": parents, "children_per_parent": children,
                             "one_host": one_host}, f"{where}: fan {res['fan']}")
        check(res["window"] == window and res["pairs"] == parents * children, f"{where}: {res}")
        # bytes x window x flows per (mean parent) iteration
        at_p50 = res["bytes"] * window * parents * children / res["iteration_us"]["p50"]
        got = res["bandwidth_MBps_at_iteration_percentile"]["p50"]
        check(abs(got - at_p50) <= 1e-9 * at_p50, f"{where}: p50 bandwidth {got} != {at_p50}")
        check("latency_us" not in res, f"{where}: no latency figure")


@case
def pt2pt_bw_fan_in_and_out(env):
    """OMB 7.5's congestion benchmarks on one host: rank 0 is the parent of every other rank
    (2 ranks, and 4 yielding); the parent times; every received window checked, the parent's
    from each child in its own buffer (fan in); the mpi and engine backends."""
    for bench, word in (("bw_fan_in", "in"), ("bw_fan_out", "out")):
        for np, backend in ((2, "mpi"), (4, "mpi"), (2, "engine")):
            out = env.path(f"{bench}-{np}-{backend}.json")
            extra = ["--wait", "yield"] if np > 2 else []
            r = env.ok(np, bench, ["-m", "1:16K", "-i", "20", "-x", "2", "-W", "8", "-c",
                                   "--backend", backend, "-J", out, *extra], timeout=120)
            kids = "1 child" if np == 2 else f"{np - 1} children"
            check(f"# [ fan {word}: 1 parent x {kids} ]" in r.out and "one host" in r.out, r.out)
            doc = load_json(out)
            check_document(doc, bench, np, doubling(1, 16384))
            _check_fan_doc(doc, bench, np, 1, 8, True)
        out = env.path(f"{bench}-bad.json")
        r = env.run(4, bench, ["-m", "8:16", "-i", "5", "-W", "4", "-c", "--wait", "yield",
                               "-J", out], env={"CB_TEST_FAULT": "corrupt"}, timeout=60)
        check(r.rc == 1 and load_json(out)["status"] == "validation_failed", f"{bench}: {r}")
        got = [x["validation"]["wrong_elements"] for x in load_json(out)["results"]]
        receivers = 1 if word == "in" else 3  # a corrupted byte per receiving rank
        check(all(w == receivers for w in got), f"{bench}: {got} != {receivers} per size")
        r = env.run(1, bench, ["-m", "8"], timeout=30)
        check(r.rc == 2 and "at least 2 ranks" in r.err, f"{bench} on 1 rank: {r}")
        r = env.run(2, bench, ["-m", "8", "-t", "2"], timeout=30)
        check(r.rc == 2 and "-t applies" in r.err, f"-t on {bench}: {r}")
        r = env.run(2, bench, ["-m", "8", "-p", "1"], timeout=30)
        check(r.rc == 2 and "-p/--pairs" in r.err and "hosts" in r.err, f"-p on {bench}: {r}")


@case
def pt2pt_bw_fan_on_virtual_nodes(env):
    """OMB's layout over host names (one rank per UTS namespace): 2 ranks on each of 2 hosts
    are 2 parents of 1 child each, with a line rate a % Line column bounded by the parents'
    one link; hosts with different rank counts are refused, as OMB does."""
    why = virtual_nodes_unavailable()
    if why:
        return "SKIP: " + why
    for bench in ("bw_fan_in", "bw_fan_out"):
        out = env.path(f"{bench}-vnodes.json")
        r = virtual_nodes(env, bench, ["-m", "1K:4K", "-i", "10", "-x", "2", "-W", "4", "-c",
                                       "--wait", "yield", "-J", out],
                          names=("vnode-a", "vnode-a", "vnode-b", "vnode-b"),
                          extra_env={"CB_LINE_RATE_GBPS": "100"})
        check(r.rc == 0 and "2 parents x 1 child" in r.out and "nodes by host" in r.out,
              f"{bench} on 2 x 2 virtual nodes: {r}")
        doc = load_json(out)
        check_document(doc, bench, 4, doubling(1024, 4096))
        _check_fan_doc(doc, bench, 4, 2, 4, False)
        line = doc["line_rate"]
        check(line["percent_reported"] and line["bound_gbps"] == 100 and line["links"] == 1 and
              line["pairs"] == 2, f"{bench}: line_rate {line}")
        for res in doc["results"]:
            want = res["bandwidth_MBps"] * 8 / 1000 / 100 * 100
            check(abs(res["line_rate_percent"] - want) <= 1e-9 * want, f"% Line {res}")
        r = virtual_nodes(env, bench, ["-m", "8", "--wait", "yield"],
                          names=("vnode-a", "vnode-a", "vnode-b"))
        check(r.rc == 2 and "same number of ranks on every host" in r.err, f"2 + 1 ranks: {r}")


@case
def pt2pt_persistent_validate(env):
    """osu_latency_persistent, osu_bw_persistent, osu_bibw_persistent: MPI_Send_init /
    MPI_Recv_init once per size, MPI_Start(all) each iteration; -c on every receiver."""
    for bench, bw in (("latency_persistent", False), ("bw_persistent", True),
                      ("bibw_persistent", True)):
        out = env.path(f"{bench}.json")
        args = ["-m", "1:16K", "-i", "30", "-x", "3", "-c", "-J", out]
        if bw:
            args += ["-W", "16"]
        env.ok(2, bench, args, timeout=120)
        doc = load_json(out)
        check_document(doc, bench, 2, doubling(1, 16384))
        for res in doc["results"]:
            where = f"{bench} at {res['bytes']} B"
            check(res["validation"]["passed"] and res["validation"]["wrong_elements"] == 0, where)
            if bw:
                check(res["window"] == 16 and finite_positive(res["bandwidth_MBps"]), where)
                check("line_rate" in doc, f"{bench}: line_rate as cb_bw")
            else:
                check(abs(res["iteration_us"]["p50"] / 2 - res["latency_us"]["p50"]) < 1e-9,
                      f"{where}: latency = round trip / 2")
    for bench in ("latency_persistent", "bw_persistent"):
        r = env.run(2, bench, ["-m", "8", "--backend", "engine"], timeout=30)
        check(r.rc == 2 and "--backend mpi" in r.err, f"{bench} --backend engine: {r}")
        r = env.run(3, bench, ["-m", "8", "--wait", "yield"], timeout=30)
        check(r.rc == 2 and "exactly 2 ranks" in r.err, f"{bench} on 3 ranks: {r}")
    out = env.path("pbad.json")
    r = env.run(2, "latency_persistent", ["-m", "8:16", "-i", "10", "-c", "-J", out],
                env={"CB_TEST_FAULT": "corrupt"}, timeout=30)
    check(r.rc == 1 and load_json(out)["status"] == "validation_failed", f"corrupt: {r}")
    check(all(x["validation"]["wrong_elements"] == 2 for x in load_json(out)["results"]),
          "one corrupted byte on each of the two receiving ranks")


@case
def pt2pt_partitioned_latency(env):
    """OMB 7.5's osu_partitioned_latency: MPI 4.0 MPI_Psend_init / MPI_Precv_init / MPI_Pready
    (MPICH 4.0.2 has them); partitions = gcd(size, --partitions)."""
    for parts in (None, 3):
        out = env.path(f"part{parts}.json")
        args = ["-m", "0:1K", "-i", "30", "-x", "3", "-c", "-J", out]
        if parts:
            args += ["--partitions", str(parts)]
        r = env.ok(2, "partitioned_latency", args, timeout=120)
        check("partitions: up to" in r.out, r.out)
        doc = load_json(out)
        check_document(doc, "partitioned_latency", 2, doubling(0, 1024))
        for res in doc["results"]:
            b = res["bytes"]
            want = 1 if b == 0 else math.gcd(b, parts or 8)
            check(res["partitions"] == want, f"partitions at {b} B: {res['partitions']} != {want}")
            check(res["validation"]["passed"], f"validation at {b} B")
            check_summary(res["latency_us"], f"partitioned latency at {b} B")
    r = env.run(2, "latency", ["-m", "8", "--partitions", "4"], timeout=30)
    check(r.rc == 2 and "--partitions" in r.err, f"--partitions on cb_latency: {r}")
    r = env.run(2, "partitioned_latency", ["-m", "8", "--partitions", "0"], timeout=30)
    check(r.rc == 2 and "--partitions" in r.err, f"--partitions 0: {r}")


# --- start-up ---------------------------------------------------------------------------

def _init_times(out, nprocs):
    import re
    m = re.search(r"^nprocs: (\d+), min: (\d+) ms, max: (\d+) ms, avg: (\d+) ms$", out, re.M)
    check(m is not None, f"no 'nprocs: N, min: ... ms' line:\n{out}")
    n, lo, hi, avg = map(int, m.groups())
    check(n == nprocs and lo <= avg <= hi, f"init times out of order or wrong count: {m.group(0)}")
    return lo, hi, avg


@case
def startup_init_and_hello(env):
    """osu_init (MPI_Init; -I MPI_Session_init) and osu_hello counterparts."""
    r = env.ok(2, "hello")
    check("# collbench MPI Hello World Test v" in r.out and
          "This is a test with 2 processes" in r.out and r.out.count("This is a test") == 1, r.out)
    r = env.ok(2, "init")
    check("# collbench MPI Init Test v" in r.out and "Timed: MPI_Init" in r.out, r.out)
    _init_times(r.out, 2)
    r = env.ok(2, "init", ["-I"])
    check("Timed: MPI_Session_init" in r.out, r.out)
    _init_times(r.out, 2)
    r = env.ok(4, "init")
    _init_times(r.out, 4)
    for bench in ("init", "hello"):
        r = env.run(2, bench, ["--bogus"], timeout=30)
        check(r.rc == 2 and r.err.count("collbench: error") == 1 and "--bogus" in r.err, str(r))
    r = env.run(2, "hello", ["-I"], timeout=30)
    check(r.rc == 2 and "'-I'" in r.err, f"-I is cb_init's only: {r}")


# --- nccl-tests' sendrecv_perf and hypercube_perf -----------------------------------------

def _exchange_doc(env, bench, np, args, backend="mpi"):
    out = env.path(f"{bench}-{np}-{backend}.json")
    extra = ["--wait", "yield"] if np > 2 else []
    r = env.ok(np, bench, ["-m", "4:16K", "-i", "20", "-x", "2", "-c", "--backend", backend,
                           "-J", out, *extra, *args], timeout=180)
    check("Algbw (GB/s)" in r.out and "Busbw (GB/s)" in r.out, r.out)
    doc = load_json(out)
    check_document(doc, bench, np, doubling(4, 16384))
    for res in doc["results"]:
        where = f"{bench} on {np} ranks ({backend}) at {res['bytes']} B"
        check(res["validation"]["passed"] and res["validation"]["wrong_elements"] == 0, where)
        lat = res["latency_us"]
        check_summary(lat, where)
        moved = res["bytes"] if bench == "sendrecv" else res["bytes"] // np * (np - 1)
        want = moved / 1e3 / lat["avg"]  # bytes / 1e9 / (us / 1e6)
        check(abs(res["algbw_GBps"] - want) <= 1e-9 * max(want, 1e-12) and
              res["busbw_GBps"] == res["algbw_GBps"] and res["bus_factor"] == 1,
              f"{where}: algbw {res['algbw_GBps']} != moved / time {want}")
    return doc


@case
def nccltests_sendrecv_and_hypercube(env):
    """Ring send/receive (1, 2 and 3 ranks) and the hypercube allgather (2 and 4 ranks), on
    MPI and the engine, every received byte checked."""
    for np in (1, 2, 3):
        _exchange_doc(env, "sendrecv", np, [])
    for np in (2, 4):
        _exchange_doc(env, "hypercube", np, [])
    _exchange_doc(env, "sendrecv", 2, [], backend="engine")
    _exchange_doc(env, "hypercube", 2, [], backend="engine")
    r = env.run(3, "hypercube", ["-m", "8", "--wait", "yield"], timeout=30)
    check(r.rc == 2 and "power-of-two" in r.err, f"hypercube on 3 ranks: {r}")
    for bench, ranks in (("sendrecv", 2), ("hypercube", 4)):
        out = env.path(f"{bench}-bad.json")
        extra = ["--wait", "yield"] if ranks > 2 else []
        r = env.run(ranks, bench, ["-m", "8:16", "-i", "5", "-c", "-J", out, *extra],
                    env={"CB_TEST_FAULT": "corrupt"}, timeout=60)
        check(r.rc == 1 and load_json(out)["status"] == "validation_failed", f"{bench}: {r}")
        got = [x["validation"]["wrong_elements"] for x in load_json(out)["results"]]
        check(all(w == ranks for w in got), f"{bench}: a corrupted byte per rank, got {got}")


@case
def nccltests_on_nccl_need_a_gpu(env):
    """On the nccl backend both need a GPU: here without one they refuse (exit 2)."""
    for bench in ("sendrecv", "hypercube"):
        r = env.run(2, bench, ["-m", "8", "--backend", "nccl", "-d", "cuda"], timeout=60)
        if r.rc == 0:
            return "SKIP: a GPU is present and NCCL ran (the refusal is for machines without one)"
        check(r.rc == 2 and ("GPU" in r.err or "nccl" in r.err.lower()), f"{bench}: {r}")
        r = env.run(2, bench, ["-m", "8", "--backend", "nccl"], timeout=60)
        # a build without NCCL (the sanitizer stages) says that before anything else
        check(r.rc == 2 and ("device buffers" in r.err or "built without NCCL" in r.err),
              f"{bench} nccl on host buffers: {r}")
