"""Small hand-made collbench.result/1 documents for the tests of scripts/: collective,
non-blocking (overlap) and replay records that the benchmarks do not all write yet, with
numbers chosen so that ratios are exact in binary floating point."""
import json
import os
import pathlib
import subprocess
import sys

SCRIPTS = pathlib.Path(__file__).resolve().parents[2] / "scripts"
SYSTEM_PYTHON = "/usr/bin/python3"


def document(benchmark, backend, records, library="MPICH Version: 4.0.2", host="node1",
             nranks=4, status="complete", dtype="float", op="sum", algo="", options=None,
             backend_fields=None, revision="abc1234"):
    """`options`, `backend_fields`: more (or other) fields of `options` and `backend`
    (`{"alloc": "plain"}`, `{"shared_memory": "off (CB_ENGINE_SHM=0)"}`)."""
    return {
        "schema": "collbench.result/1",
        "benchmark": {"name": benchmark, "title": benchmark.title() + " Test",
                      "executable": "cb_" + benchmark},
        "backend": {"name": backend, "library": library, **(backend_fields or {})},
        "argv": ["cb_" + benchmark],
        "options": {"backend": backend, "dtype": dtype, "op": op, "buffers": ["host", "host"],
                    "accelerator": "host", "algo": algo, "alloc": "backend",
                    **(options or {})},
        "start_time": "2025-01-01T00:00:00Z", "end_time": "2025-01-01T00:01:00Z",
        "environment": {"hostname": host, "nranks": nranks, "nodes": 1,
                        "hosts": [{"name": host, "ranks": list(range(nranks))}],
                        "mpi": {"library": "MPICH Version: 4.0.2", "standard": "4.0"},
                        "collbench": {"version": "0.1.0", "git_revision": revision},
                        "wait_mode": "spin"},
        "results": records,
        "status": status,
        "complete": status in ("complete", "validation_failed"),
    }


ENGINE = "collbench engine 0.1.0, transport: shared memory + MPI point-to-point"

# A tuning table as the engine writes it (backend.tuning): for allreduce on host memory,
# recursive_doubling up to 4 KiB and ring above, at any rank count.
TUNING = {"origin": "test", "rules": [
    {"coll": "allreduce", "mem": "host", "ranks": [1, 1 << 30], "min_bytes": 0,
     "max_bytes": 4096, "algo": "recursive_doubling"},
    {"coll": "allreduce", "mem": "host", "ranks": [1, 1 << 30], "min_bytes": 4097,
     "max_bytes": None, "algo": "ring"}]}


def copy_bw_document(host="node1", rows=((1 << 20, 40.0, 60.0), (64 << 20, 10.0, 16.0)),
                     threads=4):
    """cb_copybw's result: (bytes, 1-thread GB/s, all-threads GB/s) per size."""
    doc = document("copy_bw", "memcpy", [], library="glibc memcpy", host=host, nranks=1)
    doc["benchmark"]["executable"] = "cb_copybw"
    doc["results"] = [{"bytes": b, "copy_GBps_1_thread": one, "copy_GBps_all_threads": every,
                       "threads": threads, "piece_bytes": 262144} for b, one, every in rows]
    return doc


def info_document(host="node1", one_way_ns=200.0,
                  rows=((4096, 100.0), (1 << 20, 50.0), (64 << 20, 10.0), (1 << 30, 20.0))):
    """cb_info's document with its floors: the hand-off (ns, one way) and one thread's
    memcpy rate per size, (bytes, GB/s copied); the collectives' counts as cb_info's."""
    counts = {"allreduce": (2, 1, 1), "bcast": (1, 1, 1), "alltoall": (2, 2, 2),
              "barrier": (2, 0, 0), "latency": (1, 1, 1)}
    return {
        "schema": "collbench.info/1",
        "environment": {"hostname": host, "nranks": 1, "nodes": 1},
        "floors": {
            "mode": "quick", "seconds": 0.5,
            "handoff": {"method": "test", "samples": 21, "round_trips_per_sample": 500,
                        "ranks_cpus": [0, 1], "ranks_cpus_from": "test", "pairs": [],
                        "one_way_ns": one_way_ns},
            "bandwidth": {"threads": 1, "rows": [
                {"bytes": b, "where": "L2", "trials": 5, "memcpy_GBps": r,
                 "read_write_GBps": 2 * r} for b, r in rows]},
            "collectives": [
                {"coll": c, "ranks": 2, "handoffs": k, "read_bytes_per_byte": rd,
                 "write_bytes_per_byte": wr, "why": "test",
                 "latency_floor_us": None if one_way_ns is None else k * one_way_ns / 1e3,
                 "points": []}
                for c, (k, rd, wr) in counts.items()]}}


def latency_record(size, avg):
    return {"bytes": size, "iterations": 100, "warmup": 10,
            "latency_us": {"avg": avg, "min": avg, "max": avg, "p50": avg, "p90": avg,
                           "p99": avg, "stddev": 0.0, "n": 100},
            "validation": {"enabled": False}}


def bandwidth_record(size, mbps):
    return {"bytes": size, "iterations": 20, "warmup": 2, "window": 64,
            "bandwidth_MBps": mbps, "bandwidth_GBps": mbps / 1000,
            "validation": {"enabled": False}}


def coll_record(size, avg_us, algo="", nranks=4):
    algbw = size / avg_us / 1e3
    return {"bytes": size, "count": size // 4, "dtype": "float", "op": "sum", "root": 0,
            "algo": algo, "iterations": 100, "warmup": 10,
            "latency_us": {"avg": avg_us, "min": avg_us * 0.9, "max": avg_us * 1.1},
            "slowest_rank_us": {"avg": avg_us * 1.1, "min": avg_us, "max": avg_us * 1.5,
                                "p50": avg_us * 1.1, "p90": avg_us * 1.2,
                                "p99": avg_us * 1.4, "stddev": 0.1, "n": 100},
            "algbw_GBps": algbw, "busbw_GBps": algbw * 2 * (nranks - 1) / nranks,
            "validation": {"enabled": True, "wrong_elements": 0, "passed": True},
            "some_future_field": {"ignored": True}}


def overlap_record(size, pure, compute, overall):
    return {"bytes": size, "count": size // 4, "dtype": "float", "algo": "",
            "pure_comm_us": {"avg": pure, "min": pure, "max": pure},
            "overall_us": overall, "compute_us": compute, "init_us": 1.0, "test_us": 0.5,
            "wait_us": overall - compute, "test_calls": 8,
            "overlap_pct": max(0.0, 100 * (1 - (overall - compute) / pure)),
            "overlap_pct_imb": max(0.0, 100 * (pure + compute - overall) / min(pure, compute))}


def replay_record(name, compute, exposed, other=0.0):
    step = compute + exposed + other
    # step_us as cb_replay writes it: a statistics block over the timed steps
    return {"name": name, "step_us": {"avg": step, "min": step, "max": step},
            "compute_us": compute, "exposed_comm_us": exposed,
            "overlap_pct": 100.0 * (1 - exposed / (exposed + 400.0))}


def with_repeat(record, figure, pass_us, reported):
    """The record as --repeat writes it: `pass_us` in run order, `reported` the median
    pass whose figures the record holds."""
    ordered = sorted(pass_us)
    n = len(ordered)
    median = ordered[n // 2] if n % 2 else (ordered[n // 2 - 1] + ordered[n // 2]) / 2
    record["repeat"] = {"passes": n, "figure": figure, "pass_us": list(pass_us),
                        "reported_pass": reported, "median_us": median,
                        "min_us": ordered[0], "max_us": ordered[-1],
                        "spread_pct": 100 * (ordered[-1] - ordered[0]) / median}
    return record


def collective_files(dirname):
    """allreduce on mpi, engine (two algorithms in one file, --algo all, with its tuning
    table) and nccl; iallreduce; replay."""
    sizes = [4 << k for k in range(0, 21, 2)]  # 4 B .. 4 MiB
    docs = {
        "allreduce.mpi.json": document("allreduce", "mpi",
                                       [coll_record(s, 2.0 + s / 5e3) for s in sizes]),
        "allreduce.engine.json": document(
            "allreduce", "engine",
            [coll_record(s, 3.0 + s / 6e3, "ring") for s in sizes]
            + [coll_record(s, 1.5 + s / 4e3, "recursive_doubling") for s in sizes],
            library=ENGINE, algo="all", backend_fields={"tuning": TUNING}),
        "allreduce.nccl.json": document("allreduce", "nccl",
                                        [coll_record(s, 20.0 + s / 2e4) for s in sizes],
                                        library="NCCL 2.28.9"),
        "iallreduce.mpi.json": document("iallreduce", "mpi",
                                        [overlap_record(s, 2.0 + s / 5e3, 3.0 + s / 5e3,
                                                        4.0 + s / 4e3) for s in sizes]),
        "replay.mpi.json": document("replay", "mpi", [
            replay_record("no fusion", 9000.0, 2500.0, 300.0),
            replay_record("horovod 64M", 9000.0, 900.0, 100.0),
            replay_record("ddp 25M", 9000.0, 600.0, 80.0)]),
    }
    return write_all(dirname, docs)


def write_all(dirname, docs):
    paths = {}
    for name, doc in docs.items():
        paths[name] = os.path.join(dirname, name)
        with open(paths[name], "w") as f:
            json.dump(doc, f, indent=1)
    return paths


def run_script(script, args, python=None, env=None):
    """Runs scripts/SCRIPT with ARGS; returns CompletedProcess (text)."""
    full_env = dict(os.environ, **(env or {}))
    cmd = [python or sys.executable, str(SCRIPTS / script), *map(str, args)]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=full_env)


def plotting_python():
    """An interpreter that has matplotlib (Debian's first), or None."""
    for py in (SYSTEM_PYTHON, sys.executable):
        if os.access(py, os.X_OK) and subprocess.run(
                [py, "-c", "import matplotlib"], capture_output=True).returncode == 0:
            return py
    return None
