"""Collective benchmarks on the MPI backend: JSON, every dtype and op, in place, roots,
non-power-of-two rank counts (yield mode), overlap figures, bad input."""
from cbtest import case, check, check_document, doubling, finite_positive, load_json

LABELS = ('release', 'other_mpis', 'asan', 'mpi')  # tests/labels.md

REDUCIBLE = ["char", "int32", "int64", "float", "double"]  # 16-bit: test_reduce_barrier_alltoallv
OPS = ["sum", "prod", "max", "min"]


def check_collective(res, nranks, factor):
    lat = res["latency_us"]
    check(all(finite_positive(lat[k]) for k in ("avg", "min", "max")), f"latency {lat}")
    check(lat["min"] <= lat["avg"] <= lat["max"], f"OMB avg between min and max: {lat}")
    s = res["slowest_rank_us"]
    check(s["min"] <= s["p50"] <= s["p90"] <= s["p99"] <= s["max"], f"slowest {s}")
    check(abs(res["busbw_GBps"] - res["algbw_GBps"] * factor) <= 1e-9 + 1e-9 * res["busbw_GBps"],
          "busbw = algbw x factor")
    check(res["validation"]["passed"], f"validation at {res['bytes']}: {res['validation']}")


@case
def coll_allreduce_json(env):
    out = env.path("ar.json")
    r = env.ok(2, "allreduce", ["-m", "4:64K", "-c", "-i", "20", "-x", "2", "-J", out, "-f", "-z"])
    for col in ("Avg Latency(us)", "Bus BW(GB/s)", "Slowest P99(us)", "P90 Tail Lat(us)"):
        check(col in r.out, f"column {col}:\n{r.out}")
    doc = load_json(out)
    check_document(doc, "allreduce", 2, doubling(4, 65536))
    for res in doc["results"]:
        check_collective(res, 2, 1.0)  # 2(n-1)/n = 1 at n = 2
        check(res["count"] * 4 == res["bytes"] and res["dtype"] == "float" and res["op"] == "sum",
              "count, dtype, op recorded")
        moved = res["bytes"] / (res["latency_us"]["avg"] * 1e-6) / 1e9
        check(abs(res["algbw_GBps"] - moved) <= 1e-9 + 1e-9 * moved, "algbw = bytes / avg time")


@case('-other_mpis', '-asan')
def coll_allreduce_every_dtype_and_op(env):
    for dtype in REDUCIBLE:
        for op in OPS:
            for inplace in ([], ["-l"]):
                env.ok(2, "allreduce", ["-m", "1:4K", "-c", "-i", "2", "-x", "1", "--dtype",
                                        dtype, "--op", op, *inplace])


@case('-other_mpis')
def coll_bcast_and_alltoall_dtypes(env):
    for dtype in ["char", "int64", "double", "half", "bfloat16"]:
        env.ok(2, "bcast", ["-m", "2:64K", "-c", "-i", "3", "--dtype", dtype, "-k", "1"])
        for inplace in ([], ["-l"]):
            env.ok(2, "alltoall", ["-m", "2:16K", "-c", "-i", "3", "--dtype", dtype, *inplace])


@case
def coll_bcast_json_and_rotating_root(env):
    out = env.path("bc.json")
    env.ok(2, "bcast", ["-m", "4:32K", "-c", "-i", "10", "-k", "rotate", "-J", out])
    doc = load_json(out)
    check_document(doc, "bcast", 2, doubling(4, 32768))
    for res in doc["results"]:
        check_collective(res, 2, 1.0)
        check(res["root"] == "rotate", "root recorded")


@case('-other_mpis')
def coll_alltoall_json(env):
    out = env.path("a2a.json")
    env.ok(2, "alltoall", ["-m", "4:64K", "-c", "-i", "10", "-J", out])
    doc = load_json(out)
    check_document(doc, "alltoall", 2, doubling(4, 65536))
    for res in doc["results"]:
        check_collective(res, 2, 0.5)  # (n-1)/n
        moved = 2 * res["bytes"] / (res["latency_us"]["avg"] * 1e-6) / 1e9  # per peer x n
        check(abs(res["algbw_GBps"] - moved) <= 1e-9 + 1e-9 * moved, "alltoall algbw counts n blocks")


@case
def coll_three_and_four_ranks_yield(env):
    """Non-power-of-two and power-of-two rank counts; yield mode on two cores."""
    for np in (3, 4):
        for bench, extra in (("allreduce", ["--op", "sum"]), ("allreduce", ["--op", "max", "-l"]),
                             ("bcast", ["-k", "rotate"]), ("alltoall", []), ("alltoall", ["-l"])):
            out = env.path(f"{bench}{np}.json")
            r = env.ok(np, bench, ["-m", "4:4K", "-c", "-i", "3", "-x", "1", "-J", out, *extra],
                       timeout=120)
            check("wait: yield" in r.out, "auto wait mode picks yield with more ranks than cores")
            doc = load_json(out)
            factor = {"allreduce": 2 * (np - 1) / np, "bcast": 1.0, "alltoall": (np - 1) / np}[bench]
            for res in doc["results"]:
                check_collective(res, np, factor)


def check_overlap(res, compute="cpu"):
    """An overlap record; `compute`: which compute it must say ran ("gpu-kernel": -d cuda)."""
    check(res["compute"] == compute, f"compute {res['compute']}, expected {compute}")
    if compute == "cpu":
        check("device_time_us" not in res, "no device time without device buffers")
    for key in ("overall_us", "compute_us", "init_us", "wait_us", "compute_target_us"):
        check(res[key] >= 0 and res[key] == res[key], f"{key}={res[key]}")
    for key in ("overlap_pct", "overlap_pct_imb"):
        check(0 <= res[key] <= 100, f"{key}={res[key]} outside [0, 100]")
    check(res["compute_us"] >= 0.9 * res["compute_target_us"], "compute reaches its target")
    p = res["pure_comm_us"]
    check(p["min"] <= p["avg"] <= p["max"] and p["max"] == res["compute_target_us"],
          "target = slowest rank's pure time")
    check(res["validation"]["passed"], "validation")


@case('tsan', '-other_mpis')
def nbc_overlap_json(env):
    for bench in ("iallreduce", "ibcast", "ialltoall"):
        for tests in ("0", "4"):
            out = env.path(f"{bench}{tests}.json")
            r = env.ok(2, bench, ["-m", "4:64K", "-c", "-i", "20", "-x", "2", "-t", tests,
                                  "-J", out])
            for col in ("Overall(us)", "Compute(us)", "Coll. Init(us)", "Test(us)", "Wait(us)",
                        "Pure Comm.(us)", "Overlap(%)", "IMB Overlap(%)"):
                check(col in r.out, f"{bench}: column {col}")
            doc = load_json(out)
            check_document(doc, bench, 2, doubling(4, 65536))
            for res in doc["results"]:
                check_overlap(res)
                check(res["test_calls"] == int(tests), "test calls recorded")
                check(tests != "0" or res["test_us"] == 0, "no test calls with -t 0")


@case('tsan')
def nbc_four_ranks_yield(env):
    for bench in ("iallreduce", "ibcast", "ialltoall"):
        out = env.path(f"{bench}.json")
        env.ok(4, bench, ["-m", "4:1K", "-c", "-i", "3", "-x", "1", "-t", "2", "-J", out],
               timeout=120)
        for res in load_json(out)["results"]:
            check_overlap(res)


COLL_BAD_INPUT = [
    ("allreduce", ["--dtype", "complex"], "complex"),
    ("allreduce", ["--op", "xor"], "xor"),
    ("allreduce", ["--algo", "ring"], "--algo"),
    ("allreduce", ["-m", "1:2"], "no message size"),
    ("bcast", ["-k", "fixed:2"], "out of range"),
    ("bcast", ["-k", "sideways"], "-k/--root"),
    ("allreduce", ["-k", "fixed:7"], "allreduce has no root"),
    ("ialltoall", ["-k", "1"], "ialltoall has no root"),
    ("ibcast", ["-k", "fixed:7"], "out of range"),
    ("alltoall", ["-M", "12Q"], "12Q"),
    ("iallreduce", ["-t", "-1"], "-t/--num-test-calls"),
    ("alltoall", ["-d", "cuda"], "GPU"),
]


@case
def coll_bad_input(env):
    for bench, args, needle in COLL_BAD_INPUT:
        r = env.run(2, bench, args, timeout=30)
        check(r.rc == 2, f"{bench} {args}: expected exit 2: {r}")
        check(needle in r.err and r.err.count("collbench: error") == 1, f"{bench} {args}: {r}")


@case
def coll_validation_failure_is_reported(env):
    for bench in ("allreduce", "ibcast"):
        r = env.run(2, bench, ["-m", "8:16", "-i", "2", "-c"], env={"CB_TEST_FAULT": "corrupt"},
                    timeout=30)
        check(r.rc == 1 and "DATA VALIDATION ERROR" in r.err, f"{bench}: {r}")


def check_agreement(res, bits, order, where):
    """-c's comparison of the ranks' result bits: ran where expected, and every rank agreed."""
    v = res["validation"]
    check(v["bits_compared"] is bits and v["order_check"] is order, f"{where}: {v}")
    check(v.get("differing_ranks", []) == [] and v.get("order_differing_ranks", []) == [],
          f"{where}: ranks differ: {v}")
    check(("differing_ranks" in v) == bits and ("order_differing_ranks" in v) == order,
          f"{where}: rank lists present exactly when compared: {v}")


@case
def coll_result_bits_compared_across_ranks(env):
    """-c compares the ranks' result bits where the result is the same on every rank, and for
    a floating-point allreduce sum or prod runs inputs whose sum depends on the order of the
    contributions (MPI gives every rank the same bits): 3 ranks in yield mode, small and
    large sizes (MPICH's algorithms change with the size)."""
    for bench, extra, bits, order in (
            ("allreduce", ["--dtype", "double"], True, True),
            ("allreduce", ["--dtype", "float", "--op", "prod", "-l"], True, True),
            ("allreduce", ["--dtype", "int32"], True, False),
            ("allreduce", ["--dtype", "double", "--op", "max"], True, False),
            ("iallreduce", ["--dtype", "float"], True, True),
            ("bcast", ["-k", "rotate"], True, False),
            ("allgather", [], True, False),
            ("reduce_scatter", ["--dtype", "double"], False, False),
            ("alltoall", [], False, False)):
        out = env.path(f"{bench}.json")
        r = env.ok(3, bench, ["-m", "8:1M", "-c", "-i", "2", "-x", "1", "--wait", "yield",
                              "-J", out, *extra], timeout=180)
        where = f"{bench} {' '.join(extra)}"
        check("# Validation (-c): every element checked" in r.out, f"{where}: header\n{r.out}")
        check(("result bits compared across ranks" in r.out) == bits, f"{where}:\n{r.out}")
        check(("depends on the order of the contributions" in r.out) == order, f"{where}:\n{r.out}")
        doc = load_json(out)
        check(doc["status"] == "complete", f"{where}: {doc['status']}")
        for res in doc["results"]:
            check(res["validation"]["passed"] and res["validation"]["wrong_elements"] == 0,
                  f"{where}: {res['validation']}")
            check_agreement(res, bits, order, f"{where} at {res['bytes']} B")
    # One rank: nothing to compare.
    out = env.path("one.json")
    env.ok(1, "allreduce", ["-m", "8:64", "-c", "-i", "2", "-J", out])
    for res in load_json(out)["results"]:
        check_agreement(res, False, False, "one rank")


@case('-other_mpis')
def coll_rank_with_different_bits_is_named(env):
    """A backend that gives one rank other bits (CB_TEST_FAULT=diverge: the last rank's result
    of the order-sensitive pass changed, which no element check sees) fails validation, and
    the message and the JSON name that rank."""
    for np in (2, 3):
        out = env.path(f"diverge{np}.json")
        r = env.run(np, "allreduce", ["-m", "8:64", "-c", "-i", "2", "--wait", "yield",
                                      "--dtype", "double", "-J", out],
                    env={"CB_TEST_FAULT": "diverge"}, timeout=60)
        last = np - 1
        check(r.rc == 1, f"{np} ranks: exit 1 expected: {r}")
        check("result bits differ across ranks" in r.err and
              f"(order-sensitive inputs): rank {last} differs from rank 0" in r.err, str(r))
        check("wrong elements" not in r.err, f"no element is wrong: {r}")
        doc = load_json(out)
        check(doc["status"] == "validation_failed", doc["status"])
        for res in doc["results"]:
            v = res["validation"]
            check(v["wrong_elements"] == 0 and not v["passed"] and v["differing_ranks"] == [] and
                  v["order_differing_ranks"] == [last], f"{np} ranks: {v}")
        check("Fail" in r.out, f"the Validation column says Fail:\n{r.out}")
    # Without an order-sensitive pass (integers) the same fault has nothing to change.
    env.ok(2, "allreduce", ["-m", "8:64", "-c", "-i", "2", "--dtype", "int32"],
           env={"CB_TEST_FAULT": "diverge"})


@case('-other_mpis')
def coll_memory_limit_skips_large_sizes(env):
    r = env.ok(2, "alltoall", ["-m", "1M:4M", "-M", "8M", "-i", "2"])
    check("exceed -M 8 MiB" in r.out and "4194304" in r.out.split("exceed")[1], r.out)
