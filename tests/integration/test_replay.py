"""cb_replay and the recorder: models x fusion policies on the mpi and engine backends,
emulated compute and overlap, validation, JSON, bad input, export and recorder round trips."""
import json
import os
import subprocess

from cbtest import Failure, case, check, check_document, load_json

LABELS = ('release', 'asan', 'mpi')  # tests/labels.md

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "dl_patterns", "data")
FAST = ["-i", "2", "-x", "1"]
MODELS = {"resnet50": 102_228_128, "bert-base": 437_928_960, "gpt2": 497_759_232}
VGG16_BYTES = 553_430_176  # 553 MB: one case only
FUSIONS = {"none": 161, "horovod": 1, "ddp": 5}  # resnet50's messages, without compute


def replay(env, args, np=2, **kw):
    """Runs cb_replay with -J and returns (run, its one result record)."""
    out = env.path("replay.json")
    r = env.ok(np, "replay", [*args, "-J", out], **kw)
    doc = load_json(out)
    check(len(doc["results"]) == 1, f"one result per run: {doc['results']}")
    return r, doc["results"][0], doc


def check_record(res, nranks=2):
    """The figures every replay record has, and how they relate."""
    step, pure = res["step_us"], res["pure_comm_us"]
    for s, what in ((step, "step_us"), (pure, "pure_comm_us")):
        check(0 < s["min"] <= s["p50"] <= s["p99"] <= s["max"], f"{what} ordered: {s}")
        check(s["min"] <= s["avg"] <= s["max"], f"{what} avg within min/max: {s}")
    check(res["compute_us"] >= 0 and res["exposed_comm_us"] >= 0, "non-negative times")
    check(abs(res["exposed_comm_us"] - max(0.0, step["avg"] - res["compute_us"])) < 1e-6,
          "exposed = step - compute")
    check(0 <= res["overlap_pct"] <= 100, f"overlap {res['overlap_pct']} outside [0, 100]")
    check(step["avg"] >= res["compute_us"], "the step is at least its compute")
    bus = res["bus_bytes"] / (pure["avg"] * 1e-6) / 1e9
    check(abs(res["busbw_GBps"] - bus) <= 1e-9 + 1e-9 * bus, "busbw = bus bytes / pure time")
    check(len(res["messages"]) == res["message_count"] > 0, "one entry per message")
    check(sum(row["count"] for row in res["sizes"]) == res["message_count"],
          "the size table counts every message")
    check(sum(m["bytes"] for m in res["messages"]) == res["bytes"], "bytes = sum of messages")
    for m in res["messages"]:
        lat = m["latency_us"]
        check(0 < lat["min"] <= lat["avg"] <= lat["max"], f"message latency {m}")
    if nranks == 2:
        ar = sum(m["bytes"] for m in res["messages"] if m["coll"] == "allreduce")
        check(res["bus_bytes"] >= ar, "allreduce bus bytes at 2 ranks = bytes")


def models_on(env, backend):
    """Every fusion policy on resnet50 (whose message counts are known), one on the larger
    models: the same replay code at 4-5x the bytes per step, which the unit tests of each
    model's tensors and each policy's buckets (tests/dl_patterns) check without ranks."""
    for model, nbytes in MODELS.items():
        for fusion in FUSIONS if model == "resnet50" else ["ddp"]:
            r, res, _ = replay(env, ["--model", model, "--fusion", fusion, "--backend", backend,
                                     *FAST])
            check(res["bytes"] == nbytes, f"{model}: {res['bytes']} B per step")
            check(res["input"]["model"] == model and res["fusion"].startswith(fusion), "input")
            if model == "resnet50":
                check(res["message_count"] == FUSIONS[fusion], f"{fusion}: messages")
            check_record(res)
            for col in ("Step(us)", "Exposed(us)", "Pure Comm.(us)", "Overlap(%)",
                        "Bus BW(GB/s)", "Messages by size", "Avg Lat(us)"):
                check(col in r.out, f"{model} {fusion}: {col} missing:\n{r.out}")


@case('-asan')
def replay_models_mpi(env):
    models_on(env, "mpi")


@case('-asan')  # replay_parallel_modes and the others run the engine's replay under ASan
def replay_models_engine(env):
    models_on(env, "engine")


TORCH = os.path.join(DATA, "torch")  # made by real PyTorch: scripts/make_torch_traces.py


def torch_traces_on(env, backend):
    """The traces torch 2.15 wrote on CPU/Gloo (2 ranks, DDP and FSDP2), each format read
    from its folder of per-rank files, replay with validation; the DDP step's allreduces
    are the buckets DDP reported. Kineto's compute gaps are replayed (a few ms per step);
    the flight recorder's span the whole run (init, warmup), so it replays without."""
    for job in ("ddp-w2", "fsdp-w2"):
        with open(os.path.join(TORCH, job, "info.json")) as f:
            buckets = json.load(f).get("rebuilt_bucket_sizes")
        for fmt, compute in (("kineto", "trace"), ("et", "none"), ("fr", "none")):
            what = f"{job}/{fmt} on {backend}"
            r, res, _ = replay(env, ["--trace", os.path.join(TORCH, job, fmt), "--compute",
                                     compute, "--backend", backend, "-c", "-i", "1", "-x", "0"])
            check(res["validation"]["passed"], f"{what}: validation {res['validation']}")
            # The flight recorder keeps no root: its broadcasts (DDP's initial sync) are
            # replayed from rank 0, counted and said in the header.
            noted = {"broadcast: root not recorded, replayed from rank 0"} if fmt == "fr" else set()
            check(not res["skipped_ops"] and set(res["not_replayed"]) <= noted,
                  f"{what}: skipped {res['skipped_ops']}, not replayed {res['not_replayed']}")
            check(("# Import: " in r.out) == bool(res["not_replayed"]), f"{what}: header\n{r.out}")
            check("recorded on 2 ranks" in r.out, f"{what}: header\n{r.out}")
            check_record(res)
            if job == "ddp-w2" and fmt != "fr":
                sizes = [m["bytes"] for m in res["messages"] if m["coll"] == "allreduce"]
                check(sizes[:5] == buckets, f"{what}: buckets {sizes} vs DDP's {buckets}")
    # Chakra ET (for ASTRA-sim, et_replay): the FSDP step written by --export-trace, read
    # back and replayed. Only in builds with protobuf (docs/trace-format.md §10).
    et = env.path("fsdp.et")
    r = env.run(1, "replay", ["--trace", os.path.join(TORCH, "fsdp-w2", "kineto"), "--compute",
                              "trace", "--export-trace", et])
    if "writes no Chakra ET" in r.err:
        return
    check(r.rc == 0 and os.path.getsize(et) > 0, f"--export-trace fsdp.et: {r}")
    r, res, _ = replay(env, ["--trace", et, "--compute", "trace", "--backend", backend, "-c",
                             "-i", "1", "-x", "0"])
    check(res["validation"]["passed"] and res["message_count"] == 54,
          f"fsdp.et on {backend}: {res['message_count']} messages, {res['validation']}")
    check("chakra:" in r.out, f"fsdp.et: header\n{r.out}")
    groups_on(env, backend)


# Chakra's own reader (tests/dl_patterns/chakra): its et_def.proto compiled for Python and
# its protolib, as Chakra's jsonizer reads a file; collbench's coll -> Chakra's enum name.
CHAKRA_CHECK = os.path.join(DATA, "..", "chakra", "chakra_reader_check.py")
CHAKRA_TYPES = {"allreduce": "ALL_REDUCE", "allgather": "ALL_GATHER", "bcast": "BROADCAST",
                "reduce": "REDUCE", "reduce_scatter": "REDUCE_SCATTER", "alltoall": "ALL_TO_ALL",
                "barrier": "BARRIER", "gather": "GATHER", "scatter": "SCATTER"}


def chakra_python():
    """A python that imports protobuf (python3-protobuf, scripts/install_deps.sh)."""
    import sys
    for py in (sys.executable, "/usr/bin/python3"):
        if os.path.exists(py) and subprocess.run(
                [py, "-c", "import google.protobuf"], capture_output=True).returncode == 0:
            return py
    raise Failure("no python imports google.protobuf (Chakra's reader needs it): "
                  "scripts/install_deps.sh installs python3-protobuf")


@case('-asan')
def replay_chakra_reader(env):
    """cb_replay --export-trace FILE.et read by MLCommons Chakra's own Python reader, not
    collbench's: the nodes (a COMM_COLL_NODE per message, a COMP_NODE per compute gap,
    chained by ctrl_deps), comm types, comm sizes and process groups match collbench's JSON
    export of the same plan. FSDP2's step (compute) and HSDP's (groups of 2 of 4 ranks)."""
    py = chakra_python()
    for job, compute in (("fsdp-w2/kineto", "trace"), ("hsdp-w4/fr", "none")):
        et, js = env.path("x.et"), env.path("x.json")
        for out in (et, js):
            env.ok(1, "replay", ["--trace", os.path.join(TORCH, job), "--compute", compute,
                                 "--export-trace", out])
        r = subprocess.run([py, CHAKRA_CHECK, et], capture_output=True, text=True, timeout=60)
        check(r.returncode == 0, f"{job}: Chakra's reader failed: {r.stderr}")
        read = json.loads(r.stdout)
        ops = load_json(js)["ops"]
        world = load_json(js)["world_size"]
        meta = {a["name"]: a for a in read["metadata"].get("attr", [])}
        check(read["metadata"]["version"] == "0.0.4" and int(meta["world_size"]["int64Val"]) ==
              world, f"{job}: metadata {read['metadata']}")
        comm = [n for n in read["nodes"] if n["type"] == "COMM_COLL_NODE"]
        comp = [n for n in read["nodes"] if n.get("type") == "COMP_NODE"]
        check(len(comm) == len(ops) > 0, f"{job}: {len(comm)} COMM_COLL_NODEs, {len(ops)} ops")
        check(len(comp) == sum(1 for o in ops if o.get("compute_us", 0) > 0),
              f"{job}: {len(comp)} COMP_NODEs")
        check(len(read["nodes"]) == len(comm) + len(comp), f"{job}: other node types")
        for prev, n in zip(read["nodes"], read["nodes"][1:]):  # one chain of control deps
            check(n.get("ctrlDeps") == [prev["id"]], f"{job}: {n['id']} deps {n.get('ctrlDeps')}")
        for i, (n, o) in enumerate(zip(comm, ops)):
            attrs = {a["name"]: a for a in n["attr"]}
            check(n["comm_type_name"] == CHAKRA_TYPES[o["coll"]], f"{job} op {i}: {n} vs {o}")
            group = o.get("group")
            shares = len(group) if group else world
            width = {"float": 4, "char": 1, "double": 8, "half": 2, "bfloat16": 2, "int32": 4,
                     "int64": 8}[o.get("dtype", "float")]
            size = o.get("count", 0) * width
            if o["coll"] in ("reduce_scatter", "alltoall"):
                size *= shares
            check(int(attrs["comm_size"]["int64Val"]) == size, f"{job} op {i}: {n} vs {o}")
            ranks = [int(v) for v in attrs.get("pg_ranks", {}).get("int64List", {})
                     .get("values", [])]
            check(ranks == (group or []), f"{job} op {i}: pg_ranks {ranks} vs {group}")
        if job.startswith("hsdp"):
            check(all(n["attr"][2]["name"] == "pg_name" for n in comm), f"{job}: pg_name")


def groups_on(env, backend):
    """HSDP at 4 ranks (torch 2.15, FSDP2 on a 2x2 mesh; flight recorder dumps): every
    collective on a process group of 2 ranks, replayed on sub-communicators with validation,
    and the step's communication reported per group."""
    job = os.path.join(TORCH, "hsdp-w4", "fr")
    r, res, _ = replay(env, ["--trace", job, "--compute", "none", "--backend", backend, "-c",
                             "-i", "1", "-x", "0", "--wait", "yield"], np=4)
    what = f"hsdp-w4/fr on {backend}"
    check(res["validation"]["passed"], f"{what}: validation {res['validation']}")
    groups = res["process_groups"]
    check(sorted(g["ranks"] for g in groups) == [[0, 1], [0, 2], [1, 3], [2, 3]],
          f"{what}: groups {groups}")
    for g in groups:
        mine = [m for m in res["messages"] if m.get("group") == g["group"]]
        check(g["size"] == 2 and g["messages_per_step"] == len(mine) > 0, f"{what}: {g}")
        check(g["bytes_per_step"] == sum(m["bytes"] for m in mine), f"{what}: {g}")
        check(0 < g["comm_us"] <= g["latency_sum_us"] + 1e-6, f"{what}: {g}")
        check(f"# Process group {g['ranks']} (2 ranks)"
              in r.out, f"{what}: no line for {g['ranks']}\n{r.out}")
    check(all("group" in m for m in res["messages"]), f"{what}: a message on every rank")
    check("# Process groups: [0, 1], [2, 3], [0, 2], [1, 3]" in r.out, f"{what}:\n{r.out}")
    check_record(res, nranks=4)


@case('-asan')  # the importers run under ASan in replay_torch_traces_engine and the unit tests
def replay_torch_traces_mpi(env):
    torch_traces_on(env, "mpi")


@case
def replay_torch_traces_engine(env):
    torch_traces_on(env, "engine")


RESNET50_UNITS = 17  # --parallel fsdp: the root unit (conv1, bn1, fc) and 16 bottlenecks


@case('-asan')
def replay_parallel_modes(env):
    """--parallel fsdp and zero2 on both backends: the mode in the options, the header and
    the record; only allgathers and reduce_scatters, each pass adding up to the parameters."""
    params = MODELS["resnet50"]
    for backend in ("mpi", "engine"):
        for mode in ("fsdp", "zero2"):
            r, res, doc = replay(env, ["--model", "resnet50", "--parallel", mode, "--backend",
                                       backend, "-c", *FAST])
            what = f"{backend} {mode}"
            check(doc["options"]["parallel"] == mode, f"{what}: options {doc['options']}")
            check(res["parallel"].startswith(mode), f"{what}: record {res['parallel']}")
            check(f"# Parallel: {res['parallel']}:" in r.out, f"{what}: header\n{r.out}")
            check(res["validation"]["passed"], f"{what}: validation {res['validation']}")
            check_record(res)
            colls = [m["coll"] for m in res["messages"]]
            gathers, scatters = colls.count("allgather"), colls.count("reduce_scatter")
            check(gathers + scatters == len(colls), f"{what}: collectives {set(colls)}")
            if mode == "fsdp":
                check(gathers == 2 * RESNET50_UNITS and scatters == RESNET50_UNITS,
                      f"{what}: {gathers} allgathers, {scatters} reduce_scatters")
            else:
                check(gathers == scatters == 2, f"{what}: {gathers}, {scatters} (2 buckets)")
            # Per-rank bytes x 2 ranks: the parameters, padded to even counts per unit/bucket.
            ag = sum(m["bytes"] for m in res["messages"] if m["coll"] == "allgather") * 2
            rs = sum(m["bytes"] for m in res["messages"] if m["coll"] == "reduce_scatter") * 2
            passes = 2 if mode == "fsdp" else 1
            check(0 <= ag - passes * params <= passes * 4 * scatters, f"{what}: allgather {ag}")
            check(0 <= rs - params <= 4 * scatters, f"{what}: reduce_scatter {rs}")


@case('-asan')
def replay_moe_token_exchanges(env):
    """MoE layers: 4 alltoallv per layer, validated on both backends; the router's skew shows
    as imbalance in the JSON; every rank sends top_k x tokens x hidden elements per dispatch."""
    tokens, hidden = 32, 4096
    imbalance = {}
    for backend in ("mpi", "engine"):
        for router in ("uniform", "zipf:2,5"):
            r, res, doc = replay(env, ["--model", "mixtral-8x7b", "--tokens", str(tokens),
                                       "--counts", router, "--backend", backend, "-c", *FAST])
            what = f"{backend} {router}"
            moe = res["input"]["moe"]
            check(moe["layers"] == 32 and moe["top_k"] == 2 and moe["tokens"] == tokens and
                  moe["router"].startswith(router.split(",")[0]), f"{what}: {moe}")
            check(len(moe["per_layer"]) == 32, f"{what}: per-layer imbalance")
            check(res["validation"]["passed"], f"{what}: validation {res['validation']}")
            check_record(res)
            colls = {m["coll"] for m in res["messages"]}
            check(colls == {"alltoallv"} and res["message_count"] == 128, f"{what}: {colls}")
            # The mean per peer of each exchange: top-2 of 32 tokens of 4096 fp32 over 2 ranks.
            check(all(m["bytes"] == tokens * 2 * hidden * 4 // 2 for m in res["messages"]),
                  f"{what}: message bytes")
            check("# Model: mixtral-8x7b: " in r.out and "each exchange waits" in r.out, r.out)
            imbalance[router] = max(layer["imbalance"] for layer in moe["per_layer"])
    check(imbalance["zipf:2,5"] > imbalance["uniform"], f"zipf loads one rank more: {imbalance}")
    # Compute by tokens held: the rank with the hot experts computes longer; three ranks.
    r, res, _ = replay(env, ["--model", "switch-base-8", "--tokens", "64", "--counts",
                             "zipf:1.5", "--compute", "us-per-mb:200", "--backend", "engine",
                             "-c", "-i", "1", "-x", "0"], np=3, timeout=120)
    check(res["validation"]["passed"] and res["planned_compute_us"] > 0, f"switch: {res}")
    check(res["message_count"] == 4 * 12, "switch-base-8: 12 sparse layers")


@case
def replay_param_half_buckets_and_barrier(env):
    """A PARAM trace of fp16/bf16 buckets, a reduce_scatter and a barrier replays validated
    on MPI (the half user op) and the engine: nothing skipped."""
    trace = env.path("param16.json")
    recs = [dict(comms="all_reduce", in_msg_size=4096, out_msg_size=4096, dtype="Half"),
            dict(comms="all_reduce", in_msg_size=1001, out_msg_size=1001, dtype="BFloat16"),
            dict(comms="reduce_scatter", in_msg_size=2048, out_msg_size=1024, dtype="Half"),
            dict(comms="barrier")]
    with open(trace, "w") as f:
        json.dump([dict(r, world_size=2) for r in recs], f)
    for backend in ("mpi", "engine"):
        _, res, _ = replay(env, ["--trace", trace, "--backend", backend, "-c", *FAST])
        colls = [(m["coll"], m["bytes"]) for m in res["messages"]]
        check(colls == [("allreduce", 8192), ("allreduce", 2002), ("reduce_scatter", 2048),
                        ("barrier", 0)], f"{backend}: {colls}")
        check(not res["skipped_ops"] and res["validation"]["passed"], f"{backend}: {res}")


@case("-asan")  # replay_validation checks -c under ASan, on a smaller model
def replay_vgg16_validated(env):
    _, res, doc = replay(env, ["--model", "vgg16", "--fusion", "ddp", "--backend", "engine",
                               "-c", "-i", "1", "-x", "0"], timeout=200)
    check_document(doc, "replay", 2, [VGG16_BYTES])
    check(res["message_count"] == 6 and res["validation"]["passed"], f"vgg16 ddp: {res}")
    check(res["algo"], "the engine names its algorithm")


@case('tsan', '-asan')
def replay_compute_overlap(env):
    rate = 100  # us per MiB: ~9.7 ms of backward for ResNet-50's 97.5 MiB
    planned = rate * 102_228_128 / 2**20
    # Under TSan the engine only: its progress meets the compute loop, where the mpi
    # backend's waits are MPI's own.
    backends = ("engine",) if env.sanitizer() == "thread" else ("mpi", "engine")
    for backend in backends:
        for fusion in ("ddp", "horovod"):
            _, res, _ = replay(env, ["--model", "resnet50", "--fusion", fusion, "--compute",
                                     f"us-per-mb:{rate}", "--backend", backend, *FAST])
            check_record(res)
            check(abs(res["planned_compute_us"] - planned) < 1e-3, "planned compute")
            check(res["compute_us"] >= 0.99 * planned, f"compute reaches the plan: {res}")
            check(res["compute"] == f"us-per-mb:{rate}", "compute spec recorded")
            if fusion == "horovod":
                check(0 < res["planned_idle_us"] <= 1000, "a Horovod cycle ends past backward")
            launches = [m["ready_us"] for m in res["messages"]]
            check(launches == sorted(launches) and launches[-1] > 0, "staggered launches")


@case
def replay_validation(env):
    for backend in ("mpi", "engine"):
        _, res, _ = replay(env, ["--model", "resnet50", "--backend", backend, "-c", *FAST])
        check(res["validation"]["passed"] and res["validation"]["wrong_elements"] == 0, "-c")
    r = env.run(2, "replay", ["--model", "resnet50", "--fusion", "ddp", "-c", "-i", "1"],
                env={"CB_TEST_FAULT": "corrupt"}, timeout=60)
    check(r.rc == 1 and "DATA VALIDATION ERROR" in r.err, f"a corrupted byte is caught: {r}")


@case('-asan')
def replay_imported_traces(env):
    """PARAM and CSV imports and a two-step collbench trace, on both backends, validated."""
    for backend in ("mpi", "engine"):
        r, res, _ = replay(env, ["--trace", os.path.join(DATA, "param_basic.json"),
                                 "--backend", backend, "-c", *FAST])
        check(not {"allgather", "reduce_scatter"} & set(res["skipped_ops"]),
              f"allgather and reduce_scatter replay: {res['skipped_ops']}")
        check(res["wrapped_roots"] == 1 and "taken modulo 2" in r.out, "root 2 of 4 ranks")
        check([m["coll"] for m in res["messages"]][:5] == ["allreduce", "bcast", "alltoall",
                                                           "allgather", "reduce_scatter"],
              "ops in trace order")
        _, res, _ = replay(env, ["--trace", os.path.join(DATA, "allreduce_table.csv"),
                                 "--fusion", "horovod", "--backend", backend, "-c", *FAST])
        check(res["message_count"] == 2, "CSV: one float and one char message")
        _, res, _ = replay(env, ["--trace", os.path.join(DATA, "small.trace.json"),
                                 "--compute", "trace", "--backend", backend, "-c", *FAST])
        check(res["input"]["segments"] == 2 and res["planned_compute_us"] == 25, "two steps")
        check(res["validation"]["passed"], "validation of a multi-step trace")


# Issue 15: a profiler's table whose counts add up over 106 training steps (21 MiB and
# 14 MiB x 106, four sizes once). One buffer per message needed 3936079008 B: refused.
PROFILE = os.path.join(DATA, "profile_106_steps.csv")
PROFILE_BYTES = 3_936_079_008
PROFILE_STEP = [22_020_096 + 14_680_064] * 106
PROFILE_STEP[0] += 25_165_824 + 16_777_216 + 3_145_728 + 773_280  # the sizes called once


@case('-asan')
def replay_profile_table_fits(env):
    """The whole table as one step, validated, under the default 1 GiB: a buffer per message
    (3.9 GB) does not fit, so buffers are shared 16 launches apart (16 buffers), and a launch
    that takes over a buffer waits for its previous message (200 of the 216 do)."""
    r, res, doc = replay(env, ["--trace", PROFILE, "-c", "-i", "1", "-x", "0"], timeout=240)
    check_document(doc, "replay", 2, [PROFILE_BYTES])
    check_record(res)
    check(res["validation"]["passed"] and res["message_count"] == 216, f"{res['validation']}")
    b = res["buffers"]
    check(b["count"] == 16 and b["messages"] == 216 and b["shared"], f"buffers {b}")
    check(b["window"] == 16 and b["reuse_waits"] == 200, f"shared within the step: {b}")
    check("a message whose buffer an earlier one of the step used first waits" in r.out, r.out)
    check(res["buffer_bytes"] == b["bytes"] == 15 * 22_020_096 + 25_165_824 < 2**30,
          f"16 x the largest message at most: {b}")
    check(b["limit_bytes"] == 2**30 and doc["options"]["steps"] == 1, "default limit, one step")
    check("# Buffers on HOST: 16 shared among 216 messages" in r.out, r.out)
    check("--steps N replays one of them per step" in r.out, "the --steps hint")
    check(res["steps"]["count"] == 1 and res["steps"]["table_bytes"] == PROFILE_BYTES, "steps")


@case('-asan')
def replay_profile_per_step(env):
    """--steps 106: each replay step is one training step of the table; the steps add up to
    the table; buffers for one step's messages. -c would check every message of the table
    (3.9 GB per rank, as replay_profile_table_fits does): the results of steps sharing
    their buffers are checked on a small table instead."""
    table = env.path("table.csv")
    with open(table, "w") as f:
        f.write("size,count\n4096,6\n1024,3\n12,1\n")
    _, res, _ = replay(env, ["--trace", table, "--steps", "3", "--backend", "engine", "-c",
                             "-i", "3", "-x", "1"])
    check(res["validation"]["passed"] and res["steps"]["count"] == 3, f"{res['validation']}")
    check(res["buffers"]["shared"] and res["buffers"]["count"] == 4, f"{res['buffers']}")
    for backend in ("engine", "mpi"):
        r, res, doc = replay(env, ["--trace", PROFILE, "--steps", "106", "--backend", backend,
                                   "-i", "3", "-x", "1"], timeout=240)
        check_document(doc, "replay", 2, [PROFILE_BYTES // 106])
        st = res["steps"]
        check(st["count"] == 106 and doc["options"]["steps"] == 106, f"steps {st}")
        check(st["messages_per_step"] == [6] + [2] * 105 and st["timed_steps"] == 3, f"{st}")
        check("remainder spread evenly from the first step" in st["split"], st["split"])
        check(st["table_bytes"] == sum(PROFILE_STEP) == PROFILE_BYTES, "the table, exactly")
        check(res["message_count"] == 216 and len(res["messages"]) == 216, "every message")
        per_step = [0] * 106
        for m in res["messages"]:
            per_step[m["segment"]] += m["bytes"]
            timed = m["segment"] < 3  # timed step j replays training step j mod 106
            check((m["latency_us"]["avg"] > 0) == timed, f"latency of timed steps only: {m}")
        check(per_step == PROFILE_STEP, "bytes per training step")
        check(sorted(row["count"] for row in res["sizes"]) == [1, 1, 1, 1, 106, 106] and
              all(abs(row["per_step"] - row["count"] / 106) < 1e-12 for row in res["sizes"]),
              f"sizes {res['sizes']}")
        # At 2 ranks allreduce bus bytes = bytes: the mean of the timed steps 0, 1, 2.
        check(abs(res["bus_bytes"] - sum(PROFILE_STEP[:3]) / 3) < 1, f"{res['bus_bytes']}")
        bus = res["bus_bytes"] / (res["pure_comm_us"]["avg"] * 1e-6) / 1e9
        check(abs(res["busbw_GBps"] - bus) <= 1e-9 * (1 + bus), "busbw = bus bytes / pure")
        check(abs(res["messages_per_step"] - 10 / 3) < 1e-9, "6, 2, 2 messages timed")
        b = res["buffers"]
        check(b["count"] == 6 and b["bytes"] == PROFILE_STEP[0], f"one step's buffers: {b}")
        check(b["window"] == 0 and b["reuse_waits"] == 0, f"each its own in a step: {b}")
        for needle in ("# Steps: the table covers 106 training steps (--steps 106)",
                       "2 to 6 messages",
                       "# Timed step j replays training step j mod 106",
                       "# Buffers on HOST: 6 shared among 216 messages", "Per step"):
            check(needle in r.out, f"{backend}: '{needle}' missing:\n{r.out}")


def many_ready_at_once(env, backend, np):
    """40 allreduces ready at once (no compute): each has its own buffer, none waits for
    another before it starts (no limit on messages in flight, issue 25), all validated."""
    trace = env.path("forty.json")
    with open(trace, "w") as f:
        json.dump({"schema": "collbench.trace/1", "name": "forty", "ops": [
            {"coll": "allreduce", "count": 16384 + 64 * k, "dtype": "float", "op": "sum",
             "name": f"bucket{k}"} for k in range(40)]}, f)
    r, res, _ = replay(env, ["--trace", trace, "--backend", backend, "-c", "--wait", "yield",
                             *FAST], np=np, timeout=120)
    what = f"{backend} at {np} ranks"
    check(res["message_count"] == 40 and res["validation"]["passed"], f"{what}: {res['validation']}")
    b = res["buffers"]
    check(b["count"] == 40 and not b["shared"] and b["window"] == 0 and b["reuse_waits"] == 0,
          f"{what}: a buffer per message, no launch waits for one: {b}")
    check("no limit on messages in flight" in r.out and "first waits" not in r.out,
          f"{what}: the step line\n{r.out}")
    check("# Buffers on HOST: one per message (40)" in r.out, f"{what}:\n{r.out}")
    check_record(res, np)


@case('other_mpis')
def replay_many_ready_at_once_mpi(env):
    for np in (2, 3):
        many_ready_at_once(env, "mpi", np)


@case('other_mpis')
def replay_many_ready_at_once_engine(env):
    """The same on the engine: more than 16 shared-memory collectives in flight at once."""
    for np in (2, 3):
        many_ready_at_once(env, "engine", np)


@case('-asan')
def replay_profile_errors(env):
    """A limit below even the shared buffers, and --steps where it does not apply."""
    small = os.path.join(DATA, "small.trace.json")
    cases = [
        (["--trace", PROFILE, "--steps", "106", "-M", "64M"],
         "the replay needs 78.74 MiB (82562208 B) of buffers per process, more than the limit "
         "of 64 MiB (-M/--mem-limit): 6 buffers (1 x 25165824 B + 1 x 22020096 B + "
         "1 x 16777216 B + 1 x 14680064 B + 1 x 3145728 B + 1 x 773280 B)"),
        (["--trace", PROFILE, "-M", "256M"],
         "the replay needs 339.00 MiB (355467264 B) of buffers per process, more than the "
         "limit of 256 MiB (-M/--mem-limit): 16 buffers (1 x 25165824 B + 15 x 22020096 B)"),
        (["--trace", PROFILE, "--steps", "107"],
         "--steps 107: " + PROFILE + ": more steps than the table's largest count (106)"),
        (["--trace", PROFILE, "--steps", "0"], "--steps must be a whole number, at least 1"),
        (["--trace", small, "--steps", "2"], "--steps 2: applies to a CSV count table"),
        (["--model", "gpt2", "--steps", "2"], "--steps applies to a CSV count table"),
    ]
    for args, needle in cases:
        r = env.run(2, "replay", args, timeout=60)
        check(r.rc == 2, f"{args}: expected exit 2: {r}")
        check(needle in r.err and r.err.count("collbench: error") == 1, f"{args}: {r}")


@case
def replay_three_ranks_yield(env):
    for backend in ("mpi", "engine"):
        r, res, _ = replay(env, ["--model", "resnet50", "--fusion", "ddp", "--backend", backend,
                                 "-c", "-i", "1", "-x", "0"], np=3, timeout=200)
        check("wait: yield" in r.out, "yield mode with more ranks than cores")
        check_record(res, nranks=3)
        check(abs(res["bus_bytes"] - 102_228_128 * 4 / 3) < 1, "2(n-1)/n at 3 ranks")


REPLAY_BAD_INPUT = [
    (["--model", "resnet"], "unknown model 'resnet' (known: resnet50, vgg16, bert-base, gpt2, "
                            "mixtral-8x7b (MoE), switch-base-8 (MoE))"),
    (["--model", "gpt2", "--counts", "zipf:1"], "--counts and --tokens apply to the MoE models"),
    (["--model", "gpt2", "--tokens", "8"], "--counts and --tokens apply to the MoE models"),
    (["--model", "mixtral-8x7b", "--tokens", "0"], "--tokens must be from 1"),
    (["--model", "mixtral-8x7b", "--counts", "zipf:x"], "--counts: invalid value 'zipf:x'"),
    (["--model", "mixtral-8x7b", "--fusion", "ddp"], "--fusion and --parallel apply to the dense"),
    (["--model", "mixtral-8x7b", "--export-trace", "x.json"], "has no count matrix"),
    (["--model", "gpt2", "--fusion", "nccl"], "--fusion: unknown fusion policy"),
    (["--model", "gpt2", "--fusion", "ddp:-1"], "--fusion"),
    (["--model", "gpt2", "--compute", "fast"], "--compute: unknown compute \"fast\""),
    (["--model", "gpt2", "--compute", "us-per-mb:x"], "--compute"),
    (["--trace", "/nonexistent/t.json"], "/nonexistent/t.json: cannot open"),
    (["--model", "gpt2", "--trace", "t.json"], "exactly one of --trace FILE or --model NAME"),
    ([], "exactly one of --trace FILE or --model NAME"),
    (["--model", "gpt2", "--algo", "ring"], "--algo selects engine algorithms"),
    (["--model", "gpt2", "--backend", "engine", "--algo", "nosuch"], "unknown allreduce algorithm"),
    (["--model", "gpt2", "--parallel", "tp"], "--parallel: unknown mode \"tp\""),
    (["--model", "gpt2", "--parallel", "zero2:0"], "--parallel"),
    (["--model", "gpt2", "--parallel", "fsdp", "--fusion", "ddp"], "applies to --parallel ddp"),
]


@case
def replay_bad_input(env):
    bad = env.path("bad.json")
    with open(bad, "w") as f:
        json.dump({"schema": "collbench.trace/1",
                   "ops": [{"coll": "allreduce", "count": 8}, {"coll": "allreduce", "cout": 8}]}, f)
    only_alltoallv = env.path("alltoallv.json")  # a trace op has no count matrix: skipped
    with open(only_alltoallv, "w") as f:
        json.dump({"schema": "collbench.trace/1", "ops": [{"coll": "alltoallv", "count": 8}]}, f)
    sized_barrier = env.path("barrier.json")
    with open(sized_barrier, "w") as f:
        json.dump({"schema": "collbench.trace/1", "ops": [{"coll": "barrier", "count": 8}]}, f)
    cases = REPLAY_BAD_INPUT + [
        (["--trace", bad], f'{bad}: ops[1]: field "cout": unknown field'),
        (["--trace", only_alltoallv], "nothing to replay"),
        (["--trace", sized_barrier], 'field "count": a barrier moves no data'),
        (["--model", "gpt2", "--export-trace", "/nonexistent/x.json"], "--export-trace"),
        (["--trace", bad, "--parallel", "zero1"], "--parallel zero1 applies to --model"),
    ]
    for args, needle in cases:
        r = env.run(2, "replay", args, timeout=30)
        check(r.rc == 2, f"{args}: expected exit 2: {r}")
        check(needle in r.err and r.err.count("collbench: error") == 1, f"{args}: {r}")


@case
def replay_export_round_trip(env):
    per_tensor = env.path("resnet50.json")
    out = env.path("export.json")
    r = env.ok(2, "replay", ["--model", "resnet50", "--export-trace", per_tensor, "-J", out])
    check("nothing replayed" in r.out, "export does not replay")
    check(load_json(out)["status"] == "complete" and load_json(out)["results"] == [], "no results")
    t = load_json(per_tensor)
    check(t["schema"] == "collbench.trace/1" and len(t["ops"]) == 161, "one op per tensor")
    check(sum(op["count"] for op in t["ops"]) == 25_557_032, "every parameter")
    check(t["ops"][0]["name"] == "fc.bias", "backward order: the last layer first")
    _, res, _ = replay(env, ["--trace", per_tensor, "--fusion", "ddp", "-c", *FAST])
    check(res["message_count"] == 5 and res["validation"]["passed"], "fused like the model")

    fused = env.path("resnet50-ddp.json")
    env.ok(2, "replay", ["--model", "resnet50", "--fusion", "ddp", "--compute", "us-per-mb:50",
                         "--export-trace", fused])
    t = load_json(fused)
    check(len(t["ops"]) == 5 and all(op["compute_us"] > 0 for op in t["ops"]), "5 buckets")
    _, res, _ = replay(env, ["--trace", fused, "--compute", "trace", *FAST])
    planned = 50 * 102_228_128 / 2**20
    check(res["message_count"] == 5 and abs(res["planned_compute_us"] - planned) < 1e-3,
          f"the exported schedule replays as planned: {res['planned_compute_us']}")


# What record_app.cpp issues, as the recorder must write it (comm_size 2 unless noted).
RECORDED = [
    dict(coll="allreduce", count=1000, dtype="float", name="MPI_Allreduce"),
    dict(coll="allreduce", count=256, dtype="double", op="max", name="MPI_Iallreduce"),
    dict(coll="bcast", count=10, dtype="int64", root=1, name="MPI_Bcast"),
    dict(coll="bcast", count=33, dtype="char", root=0, name="MPI_Ibcast"),
    dict(coll="alltoall", count=8, dtype="int32", name="MPI_Alltoall"),
    dict(coll="alltoall", count=4, dtype="float", name="MPI_Ialltoall"),
    dict(coll="reduce", count=16, dtype="double", op="min", root=0, name="MPI_Reduce"),
    dict(coll="allgather", count=5, dtype="int32", name="MPI_Allgather"),
    dict(coll="allreduce", count=12, dtype="char",
         name="MPI_Allreduce (MPI_SHORT recorded as bytes)"),
    dict(coll="allreduce", count=3, dtype="int64", name="MPI_Allreduce", comm_size=1),
    dict(coll="allreduce", count=4, dtype="int32",
         name="MPI_Allreduce (op other than sum/prod/max/min: replayed as sum)"),
    dict(coll="barrier", name="MPI_Barrier"),
    dict(coll="reduce_scatter", count=8, dtype="float", name="MPI_Reduce_scatter_block"),
    dict(coll="allgather", count=5, dtype="int32", name="MPI_Iallgather"),
    dict(coll="alltoall", count=7, dtype="int32",
         name="MPI_Alltoallv (recorded as alltoall of its mean per-peer count)"),
    dict(coll="gather", count=3, dtype="int32", root=1, name="MPI_Gather"),
    dict(coll="scatter", count=2, dtype="int32", root=0, name="MPI_Iscatter"),
]


@case('other_mpis')
def replay_recorder_round_trip(env):
    lib = os.path.join(env.bindir, "libcb_record.so")
    app = os.path.join(env.bindir, "tests", "cb_record_app")
    check(os.path.exists(lib) and os.path.exists(app), f"missing {lib} or {app}")
    base = env.path("rec.json")
    run_env = dict(os.environ, LD_PRELOAD=lib, CB_RECORD=base)
    try:
        p = subprocess.run([env.mpirun, "-n", "2", app], env=run_env, capture_output=True,
                           text=True, timeout=60)
    except subprocess.TimeoutExpired as e:
        raise Failure(f"HANG: recorded application: {e}")
    check(p.returncode == 0, f"recorded application failed: {p.stdout}\n{p.stderr}")
    for rank in (0, 1):
        t = load_json(env.path(f"rec.rank{rank}.json"))
        check(t["source"] == "recorder" and t["world_size"] == 2 and t["name"] == "cb_record_app",
              f"rank {rank} header: {t}")
        timing = ("compute_us", "start_us", "duration_us")
        got = [{k: v for k, v in op.items() if k not in timing} for op in t["ops"]]
        want = [dict(op, comm_size=op.get("comm_size", 2)) for op in RECORDED]
        check(got == want, f"rank {rank}: recorded ops differ:\n{got}\nexpected\n{want}")
        ops = t["ops"]
        check(ops[1]["compute_us"] >= 3000, "the 3 ms sleep is compute before op 1")
        starts = [op["start_us"] for op in ops]
        check(starts == sorted(starts) and all(op["duration_us"] >= 0 for op in ops), "times")
        for a, b in zip(ops, ops[1:]):
            gap = b["start_us"] - a["start_us"] - a["duration_us"]
            check(abs(gap - b["compute_us"]) < 0.01, f"compute_us = gap between calls: {a} {b}")
    for backend in ("mpi", "engine"):
        r, res, _ = replay(env, ["--trace", env.path("rec.rank0.json"), "--compute", "trace",
                                 "--backend", backend, "-c", *FAST])
        skipped = res["skipped_ops"]  # every recorded collective replays
        check(not skipped, f"{backend}: skipped {skipped}")
        colls = {m["coll"] for m in res["messages"]}
        check({"barrier", "reduce_scatter", "reduce", "allgather"} <= colls, f"{colls}")
        check(res["message_count"] == len(RECORDED) and
              res["validation"]["passed"], f"{backend}: {res}")
        check("recorded on communicators of another size" in r.out, "comm_size noted")
