"""nccl-tests' options on the blocking collectives (MPI backend): -a picks the per-rank
figure, --agg_iters and --blocking change the loop, -I/-K write every iteration's time, -S
stamps rows, --memory reports the buffers, -R is the nccl backend's; the loop's own cost
(harness_overhead_us); scripts/omb_fidelity.sh end to end with tiny counts."""
import os
import re
import subprocess

from cbtest import REPO, case, check, check_refused, finite_positive, load_json

LABELS = ('release', 'mpi')  # tests/labels.md (why not asan: there)

QUICK = ["-m", "8:64", "-i", "20", "-x", "2"]


@case
def nccl_tests_average_picks_the_figure(env):
    for a, key, column in ((0, "rank0", "Rank0 Latency(us)"), (1, "avg", "Avg Latency(us)"),
                           (2, "min", "Min Latency(us)"), (3, "max", "Max Latency(us)")):
        out = env.path(f"avg{a}.json")
        r = env.ok(2, "allreduce", [*QUICK, "-a", a, "-f", "-J", out])
        header = next(line for line in r.out.splitlines() if line.startswith("# Size"))
        check(header.split()[2] == column.split()[0], f"-a {a}: first column {column}:\n{r.out}")
        doc = load_json(out)
        check(doc["options"]["average"] == a, f"options.average {doc['options']}")
        for res in doc["results"]:
            lat = res["latency_us"]
            shown = lat[key]
            check(("shown" in lat) == (a != 1) and lat.get("shown", shown) == shown,
                  f"-a {a}: latency_us {lat}")
            moved = res["bytes"] / (shown * 1e-6) / 1e9
            check(abs(res["algbw_GBps"] - moved) <= 1e-9 * max(1.0, moved),
                  f"-a {a}: algbw from the {key} figure: {res}")
            check(lat["min"] <= lat["rank0"] <= lat["max"], f"rank 0's among the ranks': {lat}")


@case
def nccl_tests_agg_iters_and_blocking_modes(env):
    for extra, mode, samples in ((["--agg_iters", "3"], 3, 20), (["--blocking", "0"], 0, 1),
                                 (["--blocking", "1", "--agg_iters", "2"], 1, 1),
                                 (["--blocking", "2"], 2, 1)):
        out = env.path("blk.json")
        env.ok(2, "bcast", [*QUICK, "-c", "-k", "rotate", *extra, "-J", out])
        doc = load_json(out)
        check(doc["options"]["blocking"] == mode, f"{extra}: options {doc['options']['blocking']}")
        for res in doc["results"]:
            check(res["validation"]["passed"], f"{extra}: validation {res['validation']}")
            check(res["slowest_rank_us"]["n"] == samples, f"{extra}: samples {res['slowest_rank_us']}")
            check(finite_positive(res["latency_us"]["avg"]), f"{extra}: latency {res}")
            agg = doc["options"]["agg_iters"]
            check(res.get("agg_iters", 1) == agg, f"{extra}: record's agg_iters {res}")


@case
def nccl_tests_per_iteration_json(env):
    out = env.path("iter.json")
    r = env.ok(2, "alltoall", [*QUICK, "-I", "1", "-K", "3", "-J", out])
    for col in ("i_min(us)", "i_max(us)", "i_p99(us)", "i_cv(%)"):
        check(col in r.out, f"column {col}:\n{r.out}")
    for res in load_json(out)["results"]:
        p = res["per_iter"]
        times, ranks = p["times_us"], p["per_rank_times_us"]
        check(len(times) == res["iterations"] == 20 and len(ranks) == 2 and
              all(len(row) == 20 for row in ranks), f"per_iter lengths: {p}")
        check(all(t == max(row[i] for row in ranks) for i, t in enumerate(times)),
              "times_us is the slowest rank's per iteration")
        rest = times[3:]
        check(p["skipped_iterations"] == 3 and p["min_us"] == min(rest) and
              p["max_us"] == max(rest), f"-K 3 leaves the first 3 out of the summary: {p}")
        check(p["min_us"] <= p["p50_us"] <= p["p95_us"] <= p["p99_us"] <= p["max_us"],
              f"percentiles in order: {p}")
        check(abs(p["avg_us"] - sum(rest) / len(rest)) <= 1e-9 * p["avg_us"], f"mean {p}")


@case
def nccl_tests_timestamps_memory_and_overhead(env):
    out = env.path("stamp.json")
    r = env.ok(2, "allreduce", [*QUICK, "-S", "1", "--memory", "1", "-J", out])
    check("# Memory (--memory): buffers 128 B per rank" in r.out, f"memory line:\n{r.out}")
    doc = load_json(out)
    check(doc["memory"]["buffer_bytes"] == 128 and doc["memory"]["peak_resident_bytes"] > 0,
          f"memory {doc['memory']}")  # 64 B send + 64 B receive at the largest size
    for res in doc["results"]:
        check(re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d", res["timestamp"]), f"stamp {res}")
        check(res["timestamp"] in r.out, f"the row shows its time stamp:\n{r.out}")
        check(finite_positive(res["harness_overhead_us"]), f"harness_overhead_us {res}")
    plain = env.path("plain.json")
    env.ok(2, "allreduce", [*QUICK, "-J", plain])
    doc = load_json(plain)
    check("memory" not in doc and all("timestamp" not in x and "per_iter" not in x
                                      for x in doc["results"]), "nothing extra by default")
    check(all(finite_positive(x["harness_overhead_us"]) for x in doc["results"]),
          "harness_overhead_us in every blocking record")


@case
def nccl_tests_refusals(env):
    for bench, args, needle in (
            ("allreduce", ["-R", "1"], "needs --backend nccl and -d cuda"),
            ("latency", ["-R", "2"], "needs --backend nccl and -d cuda"),
            ("allreduce", ["-I", "1", "--blocking", "2"], "use --blocking 3"),
            ("allreduce", ["-K", "1"], "applies to -I/--per_iter_timing 1"),
            ("bcast", ["-a", "5"], "-a/--average must be a whole number from 0 to 3"),
            ("ibcast", ["--agg_iters", "2"], "--agg_iters"),
            ("latency", ["-S", "1"], "-S")):
        check_refused(env.run(2, bench, [*QUICK, *args], timeout=30), f"cb_{bench} {args}", needle)
    # -R 2 on NCCL without a GPU: the run says why it cannot (no hang, exit 2).
    r = env.run(2, "allreduce", [*QUICK, "--backend", "nccl", "-d", "cuda", "-R", "2"], timeout=60)
    check(r.rc == 2 and ("GPU" in r.err or "NCCL" in r.err), f"-R 2 without a GPU: {r}")
    check(env.ok(2, "latency", ["-m", "1:1", "-i", "5", "-x", "1", "-R", "0"]).rc == 0, "-R 0")


@case
def scripts_omb_fidelity_tiny(env):
    """scripts/omb_fidelity.sh end to end, one round of tiny counts (no timing judged)."""
    out = env.path("fidelity")
    ref = os.path.join(env.bindir, "tests", "fidelity", "cb_omb_loop")
    check(os.access(ref, os.X_OK), f"{ref} not built (COLLBENCH_BUILD_TESTS=ON builds it)")
    p = subprocess.run(["bash", os.path.join(REPO, "scripts", "omb_fidelity.sh"), "--bindir",
                        env.bindir, "--out", out, "--rounds", "1", "--sizes", "4:8", "--iters",
                        "5", "--warmup", "1"], capture_output=True, text=True, timeout=300,
                       env=dict(os.environ, MPIRUN=env.mpirun))
    check(p.returncode == 0, f"omb_fidelity.sh: {p.stdout}\n{p.stderr}")
    doc = load_json(os.path.join(out, "fidelity.json"))
    check(sorted(doc["benchmarks"]) == ["allreduce", "alltoall", "bcast", "latency"],
          f"benchmarks {sorted(doc['benchmarks'])}")
    for bench, b in doc["benchmarks"].items():
        check([s["bytes"] for s in b["sizes"]] == [4, 8], f"{bench} sizes {b['sizes']}")
        for s in b["sizes"]:
            check(finite_positive(s["collbench_us"]) and finite_positive(s["omb_method_us"]),
                  f"{bench}: {s}")
            check(("harness_overhead_us" in s) == (bench != "latency"), f"{bench}: {s}")
    bad = subprocess.run(["bash", os.path.join(REPO, "scripts", "omb_fidelity.sh"), "--rounds",
                          "0"], capture_output=True, text=True, timeout=30)
    check(bad.returncode == 2 and "--rounds" in bad.stderr, f"bad --rounds: {bad.stderr}")
