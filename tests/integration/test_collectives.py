"""Collective benchmarks on the MPI backend: JSON, every dtype and op, in place, roots,
non-power-of-two rank counts (yield mode), overlap figures, bad input."""
from cbtest import case, check, check_document, doubling, finite_positive, load_json

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


@case
def coll_allreduce_every_dtype_and_op(env):
    for dtype in REDUCIBLE:
        for op in OPS:
            for inplace in ([], ["-l"]):
                env.ok(2, "allreduce", ["-m", "1:4K", "-c", "-i", "2", "-x", "1", "--dtype",
                                        dtype, "--op", op, *inplace])


@case
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


@case
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


def check_overlap(res):
    for key in ("overall_us", "compute_us", "init_us", "wait_us", "compute_target_us"):
        check(res[key] >= 0 and res[key] == res[key], f"{key}={res[key]}")
    for key in ("overlap_pct", "overlap_pct_imb"):
        check(0 <= res[key] <= 100, f"{key}={res[key]} outside [0, 100]")
    check(res["compute_us"] >= 0.9 * res["compute_target_us"], "compute reaches its target")
    p = res["pure_comm_us"]
    check(p["min"] <= p["avg"] <= p["max"] and p["max"] == res["compute_target_us"],
          "target = slowest rank's pure time")
    check(res["validation"]["passed"], "validation")


@case
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


@case
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


@case
def coll_memory_limit_skips_large_sizes(env):
    r = env.ok(2, "alltoall", ["-m", "1M:4M", "-M", "8M", "-i", "2"])
    check("exceed -M 8 MiB" in r.out and "4194304" in r.out.split("exceed")[1], r.out)
