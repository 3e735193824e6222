"""GPU and NCCL: refusals that must say why (these run everywhere), and NCCL runs with
validation that need a GPU (these skip with the machine's reason where there is none).
On a one-GPU host NCCL runs with one rank: NCCL refuses two ranks on one GPU."""
import os
import subprocess

from cbtest import case, check, load_json
from test_collectives import check_overlap

LABELS = ('release', 'gpu')  # tests/labels.md

NCCL_MISSING = "collbench was built without NCCL"


class Machine:
    """What this build has and which GPUs it can use, from cb_info -J (or, without cb_info,
    from how a -d cuda run ends)."""

    def __init__(self, cuda, nccl, devices, reason):
        self.cuda, self.nccl, self.devices, self.reason = cuda, nccl, devices, reason

    def skip_without_gpu(self, need=1, nccl=True):
        """A "SKIP: ..." line when the case cannot run here, else None."""
        if nccl and not self.nccl:
            return f"SKIP: {NCCL_MISSING}"
        if self.devices == 0:
            return f"SKIP: {self.reason}"
        if self.devices < need:
            return (f"SKIP: needs {need} GPUs (NCCL refuses two ranks on one GPU); "
                    f"this machine has {self.devices}")
        return None


def machine(env):
    info = os.path.join(env.bindir, "cb_info")
    if os.path.exists(info):
        out = env.path("machine.json")
        p = subprocess.run([info, "--floors", "off", "-J", out], capture_output=True, text=True,
                           timeout=120)
        if p.returncode == 0:
            e = load_json(out)["environment"]
            features, gpu = e["collbench"]["features"], e["gpu"]
            devices = len(gpu.get("devices", []))
            return Machine(features["cuda"], features["nccl"], devices,
                           gpu.get("unavailable", "no usable GPU"))
    r = env.run(1, "allreduce", ["-d", "cuda", "-m", "4:4", "-i", "1", "-x", "0"])
    reason = r.err.strip().splitlines()[-1] if r.err.strip() else "no usable GPU"
    n = env.run(1, "allreduce", ["--backend", "nccl", "-m", "4:4", "-i", "1", "-x", "0"])
    return Machine(True, NCCL_MISSING not in n.err, 1 if r.rc == 0 else 0, reason)


def refused(r, needle, what):
    """Exit 2 with the reason printed once, whatever the number of ranks."""
    check(r.rc == 2, f"{what}: must exit 2: {r}")
    check(r.err.count(needle) == 1, f"{what}: '{needle}' must be printed once: {r}")


@case
def gpu_nccl_refuses_host_buffers(env):
    m = machine(env)
    if not m.nccl:
        return f"SKIP: {NCCL_MISSING}"
    for bench, args in (("allreduce", []), ("bcast", []), ("iallreduce", []), ("latency", []),
                        ("bw", ["H", "H"])):
        r = env.run(2, bench, ["--backend", "nccl", "-m", "4:64", *args], timeout=60)
        refused(r, "NCCL needs device buffers", f"cb_{bench} --backend nccl on host buffers")
    # One device side selects a GPU first: without one, that is what the run says.
    r = env.run(2, "latency", ["--backend", "nccl", "-m", "4:64", "H", "D"], timeout=60)
    refused(r, "NCCL needs device buffers (-d cuda, or D D for point-to-point benchmarks) on "
               "both sides; got H D" if m.devices else "no usable GPU",
            "cb_latency --backend nccl H D")


@case
def gpu_nccl_not_built_says_so(env):
    if machine(env).nccl:
        return "SKIP: this build has NCCL"
    r = env.run(2, "allreduce", ["--backend", "nccl", "-m", "4:64"], timeout=60)
    refused(r, NCCL_MISSING, "--backend nccl without NCCL")


@case
def gpu_device_buffers_without_gpu_exit_2_with_reason(env):
    m = machine(env)
    if m.devices:
        return f"SKIP: {m.devices} GPU(s) usable here"
    backends = ["mpi", "engine"] + (["nccl"] if m.nccl else [])
    for backend in backends:
        for bench, args in (("allreduce", ["-d", "cuda"]), ("alltoall", ["-d", "cuda"]),
                            ("iallreduce", ["-d", "cuda"]), ("latency", ["D", "D"])):
            r = env.run(2, bench, ["--backend", backend, "-m", "4:64", *args], timeout=60)
            refused(r, "no usable GPU", f"cb_{bench} --backend {backend} {' '.join(args)}")
            check(m.reason in r.err, f"the reason cb_info gives ({m.reason}) is the one printed: {r}")


def nccl_one_rank(env, bench, extra, name):
    """Runs cb_BENCH on one rank with NCCL and -c; checks the JSON. Returns the run and
    the document."""
    out = env.path(f"{name}.json")
    r = env.ok(1, bench, ["--backend", "nccl", "-d", "cuda", "-c", "-i", "20", "-x", "2",
                          *extra, "-J", out], timeout=180)
    doc = load_json(out)
    check(doc["status"] == "complete", f"{name}: status {doc['status']}")
    check(doc["backend"]["name"] == "nccl" and doc["backend"]["library"].startswith("NCCL 2."),
          f"{name}: backend {doc['backend']}")
    check(doc["results"], f"{name}: no results")
    for x in doc["results"]:
        check(x["validation"]["passed"], f"{name}: validation failed at {x['bytes']} B: {x}")
    check("Pass" in r.out, r.out)
    return r, doc


@case
def gpu_nccl_allreduce_one_rank(env):
    skip = machine(env).skip_without_gpu()
    if skip:
        return skip
    for dtype, op in (("float", "sum"), ("half", "max"), ("bfloat16", "min"), ("int64", "prod"),
                      ("char", "sum"), ("double", "sum")):
        nccl_one_rank(env, "allreduce", ["-m", "4:4M", "-T", dtype, "--op", op],
                      f"allreduce-{dtype}-{op}")
    nccl_one_rank(env, "allreduce", ["-m", "4:1M", "-l"], "allreduce-in-place")
    nccl_one_rank(env, "iallreduce", ["-m", "4:1M", "-t", "4"], "iallreduce")


@case
def gpu_nccl_bcast_one_rank(env):
    skip = machine(env).skip_without_gpu()
    if skip:
        return skip
    nccl_one_rank(env, "bcast", ["-m", "4:4M", "-T", "half"], "bcast")
    nccl_one_rank(env, "ibcast", ["-m", "4:1M"], "ibcast")


@case
def gpu_nccl_alltoall_one_rank(env):
    skip = machine(env).skip_without_gpu()
    if skip:
        return skip
    nccl_one_rank(env, "alltoall", ["-m", "4:1M", "-T", "int32"], "alltoall")
    nccl_one_rank(env, "ialltoall", ["-m", "4:256K"], "ialltoall")
    r = env.run(1, "alltoall", ["--backend", "nccl", "-d", "cuda", "-l", "-m", "4:64"])
    refused(r, "NCCL has no in-place alltoall", "in-place alltoall on NCCL")


@case
def gpu_nccl_two_ranks_on_one_gpu_refused(env):
    m = machine(env)
    skip = m.skip_without_gpu()
    if skip:
        return skip
    if m.devices != 1:
        return f"SKIP: needs exactly one GPU (this machine has {m.devices})"
    r = env.run(2, "allreduce", ["--backend", "nccl", "-d", "cuda", "-m", "4:64"], timeout=120)
    refused(r, "NCCL cannot run two ranks on one GPU", "two NCCL ranks on one GPU")


@case
def gpu_nccl_pt2pt_device_buffers(env):
    skip = machine(env).skip_without_gpu(need=2)
    if skip:
        return skip
    for bench in ("latency", "bw", "bibw"):
        out = env.path(f"{bench}.json")
        env.ok(2, bench, ["--backend", "nccl", "D", "D", "-c", "-m", "1:1M", "-i", "20",
                          "-x", "2", "-J", out], timeout=180)
        doc = load_json(out)
        check(all(x["validation"]["passed"] for x in doc["results"]), f"{bench}: {doc['results']}")
    # The time limit aborts the communicator rather than hanging in NCCL.
    r = env.run(2, "bw", ["--backend", "nccl", "D", "D", "-m", "8:64", "-i", "5",
                          "--time-limit", "2"], env={"CB_TEST_FAULT": "hang"}, timeout=120)
    check(r.rc == 4 and "time limit of 2 s exceeded" in r.err, f"time limit with NCCL: {r}")


# -G (nccl-tests' CUDA graph launch): the blocking collectives on NCCL with device buffers
# only. Everything else is refused before any GPU is touched, so these run everywhere.
GRAPH = "-G/--cuda-graph/--cudagraph (CUDA graph launch)"
GRAPH_NEEDS = f"{GRAPH} needs --backend nccl and -d cuda: "


@case
def gpu_cuda_graph_refused_off_nccl(env):
    for bench, args, why in (
            ("allreduce", [], "the mpi backend's calls are not stream operations"),
            ("allreduce", ["--backend", "mpi", "-d", "cuda"],
             "the mpi backend's calls are not stream operations"),
            ("bcast", ["--backend", "engine"],
             "the engine backend's calls are not stream operations"),
            ("alltoall", ["--backend", "engine", "-d", "cuda"],
             "the engine backend's calls are not stream operations"),
            ("allreduce", ["--backend", "nccl"],
             "NCCL's calls are stream operations on device buffers only (got -d host)")):
        r = env.run(2, bench, ["-m", "4:64", "-G", "2", *args], timeout=60)
        refused(r, GRAPH_NEEDS + why, f"cb_{bench} -G 2 {' '.join(args)}")
    # Benchmarks whose calls are not one stream of blocking collectives, on any backend.
    for bench, args, why in (
            ("latency", ["--backend", "nccl", "D", "D"], "cb_latency is point to point"),
            ("bw", [], "cb_bw is point to point"),
            ("iallreduce", ["--backend", "nccl", "-d", "cuda"],
             "cb_iallreduce times each call's start, test calls and wait on the host"),
            ("replay", ["--model", "resnet50", "--backend", "nccl", "-d", "cuda"],
             "cb_replay starts each message on the host")):
        r = env.run(2, bench, ["-G", "1", *args], timeout=60)
        refused(r, f"{GRAPH} applies to the blocking collectives", f"cb_{bench} -G 1")
        check(why in r.err, f"cb_{bench} -G 1: '{why}' expected: {r}")
    # Bad values, with the option by every name; 0 is off, and fine anywhere.
    for bench, bad in (("allreduce", "-1"), ("allreduce", "x"), ("allreduce", "1.5"),
                       ("allreduce", "100001"), ("latency", "x"), ("iallreduce", "-1")):
        r = env.run(2, bench, ["--backend", "nccl", "-d", "cuda", "-m", "4:4", "-G", bad],
                    timeout=60)
        refused(r, f"-G/--cuda-graph/--cudagraph must be a whole number from 0 (off) to 100000 "
                   f"(got '{bad}')", f"cb_{bench} -G {bad}")
    out = env.path("g0.json")
    env.ok(2, "allreduce", ["-m", "4:8", "-i", "2", "-x", "1", "-G", "0", "-J", out], timeout=60)
    doc = load_json(out)
    check(doc["options"]["cuda_graph"] == 0, f"options.cuda_graph: {doc['options']}")
    check(all("cuda_graph" not in x for x in doc["results"]), f"-G 0 records: {doc['results']}")


@case
def gpu_cuda_graph_without_gpu_says_so(env):
    m = machine(env)
    if m.devices:
        return f"SKIP: {m.devices} GPU(s) usable here"
    for np in (1, 2):
        r = env.run(np, "allreduce", ["--backend", "nccl", "-d", "cuda", "-m", "4:64", "-G", "2"],
                    timeout=60)
        refused(r, f"{GRAPH} cannot run here: no usable GPU", f"-G 2 on {np} rank(s) without a GPU")
        check(m.reason in r.err, f"the reason cb_info gives ({m.reason}) is the one printed: {r}")


@case
def gpu_nccl_cuda_graph_one_rank(env):
    skip = machine(env).skip_without_gpu()
    if skip:
        return skip
    for bench, extra in (("allreduce", ["-m", "4:4M"]),
                         ("allreduce", ["-m", "4:1M", "-l", "-T", "half", "--op", "max"]),
                         ("reduce_scatter", ["-m", "4:1M", "-l"]),
                         ("bcast", ["-m", "4:1M", "-k", "rotate"]),
                         ("alltoallv", ["-m", "4:256K", "--counts", "zipf:1"]),
                         ("barrier", [])):
        name = f"graph-{bench}-{len(extra)}"
        r, doc = nccl_one_rank(env, bench, [*extra, "-G", "2", "-f", "-z"], name)
        check(doc["options"]["cuda_graph"] == 2, f"{name}: options {doc['options']}")
        check("# CUDA graph (-G 2)" in r.out, f"{name}: no -G header line: {r.out}")
        for x in doc["results"]:
            g = x.get("cuda_graph")
            check(g is not None and g["launches"] == 2 and g["calls_per_graph"] == x["iterations"]
                  # on one rank NCCL enqueues nothing for bcast and in-place calls (seen
                  # on the H100 host): only an out-of-place allreduce must hold a node
                  and g["graph_nodes"] >= (1 if bench == "allreduce" and "-l" not in extra
                                           else 0),
                  f"{name}: cuda_graph at {x['bytes']} B: {g}")
            check(x["slowest_rank_us"]["n"] == 2, f"{name}: percentiles over the 2 launches: "
                                                  f"{x['slowest_rank_us']}")
            check(x["latency_us"]["avg"] > 0, f"{name}: latency {x['latency_us']}")
    # No warmup: the first calls NCCL sees at a size are the captured ones.
    out = env.path("graph-nowarmup.json")
    env.ok(1, "allreduce", ["--backend", "nccl", "-d", "cuda", "-m", "64K:64K", "-i", "5",
                            "-x", "0", "-G", "3", "-c", "-J", out], timeout=180)
    doc = load_json(out)
    check(doc["results"][0]["validation"]["passed"] and
          doc["results"][0]["cuda_graph"]["launches"] == 3, f"-x 0 -G 3: {doc['results']}")



@case
def gpu_overlap_computes_on_the_gpu(env):
    """cb_i* with device buffers: the compute is a GPU kernel on a stream beside the
    collective's, its span reaching the target; NCCL's collectives get CUDA-event device
    times too, the engine's (not stream operations) do not."""
    m = machine(env)
    skip = m.skip_without_gpu(nccl=False)
    if skip:
        return skip
    header = "compute: a GPU kernel on every SM"
    if m.nccl:
        for tests in ("0", "4"):
            r, doc = nccl_one_rank(env, "iallreduce", ["-m", "4:4M", "-t", tests],
                                   f"gpu-compute-nccl-{tests}")
            check(header in r.out, f"no GPU compute header line: {r.out}")
            for x in doc["results"]:
                check_overlap(x, "gpu-kernel")
                d = x["device_time_us"]
                for key in ("pure_comm", "overlapped"):
                    check(0 <= d[key] <= x["overall_us"] + 1, f"device time at {x['bytes']} B: {d}")
            check(doc["results"][-1]["device_time_us"]["pure_comm"] > 0,
                  f"4 MiB took no device time: {doc['results'][-1]}")
    doc = engine_device(env, 2, "iallreduce", ["-m", "4:1M", "-t", "2"], "gpu-compute-engine")
    for x in doc["results"]:
        check_overlap(x, "gpu-kernel")
        check("device_time_us" not in x, f"engine: no stream, no device time: {x}")


def engine_device(env, np, bench, extra, name, iterations=10):
    """cb_BENCH --backend engine -d cuda -c -i ITERATIONS on NP ranks sharing the GPU(s);
    checks that every size validated (and, for allreduce and bcast, that the ranks' result
    bits agree: the harness compares them with -c). Returns the document. (EXTRA must not
    repeat -i: the harness refuses an option given twice.)"""
    out = env.path(f"{name}.json")
    env.ok(np, bench, ["--backend", "engine", "-d", "cuda", "-c", "-i", str(iterations),
                       "-x", "2", *extra, "-J", out], timeout=180)
    doc = load_json(out)
    check(doc["status"] == "complete" and doc["results"], f"{name}: {doc['status']}")
    for x in doc["results"]:
        check(x["validation"]["passed"], f"{name}: validation failed at {x['bytes']} B: {x}")
    return doc


@case
def gpu_engine_ipc_collectives(env):
    """The engine's CUDA IPC algorithms on ranks sharing one GPU: every dtype class, the
    float16 types (accumulated in float), in place, several chunks of the 32 MiB scratch,
    2 and 4 ranks; and the tuning table choosing them for device buffers."""
    skip = machine(env).skip_without_gpu(nccl=False)
    if skip:
        return skip
    for np in (2, 4):
        for algo in ("ipc_oneshot", "ipc_twoshot"):
            for dtype, op in (("float", "sum"), ("half", "sum"), ("bfloat16", "sum"),
                              ("int32", "max"), ("double", "prod"), ("char", "min")):
                engine_device(env, np, "allreduce",
                              ["--algo", algo, "-m", "1:1M", "-T", dtype, "--op", op],
                              f"ipc-{np}-{algo}-{dtype}")
            engine_device(env, np, "allreduce", ["--algo", algo, "-m", "4:4M", "-l"],
                          f"ipc-{np}-{algo}-in-place")
        engine_device(env, np, "bcast", ["--algo", "ipc", "-m", "1:4M", "-k", "rotate"],
                      f"ipc-{np}-bcast")
        engine_device(env, np, "alltoall", ["--algo", "ipc", "-m", "1:1M"], f"ipc-{np}-alltoall")
        engine_device(env, np, "alltoall", ["--algo", "ipc", "-m", "4:256K", "-l"],
                      f"ipc-{np}-alltoall-in-place")
    # Past one chunk of the scratch (32 MiB), with a size that is not a multiple of it.
    for algo in ("ipc_oneshot", "ipc_twoshot"):
        engine_device(env, 2, "allreduce", ["--algo", algo, "-m", "80M:80M"],
                      f"ipc-chunks-{algo}", iterations=3)
    engine_device(env, 2, "bcast", ["--algo", "ipc", "-m", "80M:80M"], "ipc-chunks-bcast",
                  iterations=3)
    engine_device(env, 3, "alltoall", ["--algo", "ipc", "-m", "12M:12M"], "ipc-chunks-alltoall",
                  iterations=3)
    # The default table picks them for device buffers.
    doc = engine_device(env, 2, "allreduce", ["-m", "4:4M"], "ipc-default")
    picked = {x["algo"] for x in doc["results"]}
    check(picked <= {"ipc_oneshot", "ipc_twoshot"} and picked, f"default device allreduce: {picked}")
