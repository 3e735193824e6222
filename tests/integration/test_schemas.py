"""The JSON Schemas of schemas/ (draft 2020-12) against real output: every document kind
collbench writes (result, info, trace, compare, tuning; gpu_kernels where a GPU is), from
every executable that writes one, validated with Python's jsonschema. Also: each schema is
a valid 2020-12 schema, every property has a description, and documents with a required
field removed or a value out of its set are rejected. Skips (77) only where jsonschema
(Debian: python3-jsonschema) cannot be imported."""
import copy
import json
import os
import pathlib
import re
import signal
import subprocess
import sys
import time

from cbtest import Failure, case, check, load_json
from test_launch import virtual_nodes, virtual_nodes_unavailable

LABELS = ('release', 'mpi')  # tests/labels.md

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCHEMAS = ROOT / "schemas"
SCRIPTS = ROOT / "scripts"

# The "schema" field of a document -> its schema file.
KINDS = {
    "collbench.result/1": "collbench.result-1.schema.json",
    "collbench.info/1": "collbench.info-1.schema.json",
    "collbench.trace/1": "collbench.trace-1.schema.json",
    "collbench.compare/1": "collbench.compare-1.schema.json",
    "collbench.tuning/1": "collbench.tuning-1.schema.json",
    "collbench.gpu_kernels/1": "collbench.gpu_kernels-1.schema.json",
    "collbench.omb_compare/1": "collbench.omb_compare-1.schema.json",
}
SHARED = "collbench.common-1.schema.json"  # definitions only, no document of its own
# Kinds some writer in the tree names but that have no schema yet, and why. Any other
# "collbench.NAME/N" in src/ or scripts/ without a schema fails schemas_well_formed.
NO_SCHEMA_YET = {
    "collbench.model/1": "scripts/model.py's report (new; its format is still changing)",
    "collbench.fidelity/1": "scripts/omb_fidelity.py's comparison with OMB's loop (new)",
    "collbench.fidelity_callgrind/1": "scripts/omb_fidelity.py's instruction counts (new)",
    "collbench.floors_report/1": "scripts/cbfloors.py's table of runs against cb_info's "
                                 "floors (new)",
}

QUICK = ["-m", "8:8", "-i", "2", "-x", "1"]  # one small size, few iterations


def jsonschema_or_skip():
    """The jsonschema module, or a SKIP string when it (or its draft 2020-12 support)
    is missing."""
    try:
        import jsonschema
        jsonschema.Draft202012Validator  # noqa: B018  (jsonschema >= 4.0)
    except (ImportError, AttributeError) as e:
        return None, (f"SKIP: Python's jsonschema with draft 2020-12 support is not importable "
                      f"by {sys.executable} ({e}); apt-get install python3-jsonschema")
    return jsonschema, None


class Schemas:
    """Every schema file of schemas/, each under its file URI so that the relative
    references between them ("collbench.common-1.schema.json#/$defs/...") resolve, with
    jsonschema's referencing registry (>= 4.18) or its RefResolver (4.x before, Debian 12's
    4.10)."""

    def __init__(self, jsonschema):
        self.js = jsonschema
        self.by_name = {}
        for path in sorted(SCHEMAS.glob("*.schema.json")):
            with open(path, encoding="utf-8") as f:
                schema = json.load(f)
            check("$id" not in schema, f"{path.name}: has an $id (references are relative to "
                                       "the file's own location)")
            schema["$id"] = path.as_uri()
            self.by_name[path.name] = schema
        check(set(self.by_name) == set(KINDS.values()) | {SHARED},
              f"schemas/ holds {sorted(self.by_name)}, expected {sorted(KINDS.values())} "
              f"and {SHARED}")
        try:
            from referencing import Registry, Resource
        except ImportError:
            store = {s["$id"]: s for s in self.by_name.values()}
            self._make = lambda s: jsonschema.Draft202012Validator(
                s, resolver=jsonschema.RefResolver.from_schema(s, store=store))
        else:
            registry = Registry().with_resources(
                (s["$id"], Resource.from_contents(s)) for s in self.by_name.values())
            self._make = lambda s: jsonschema.Draft202012Validator(s, registry=registry)
        self.validators = {name: self._make(s) for name, s in self.by_name.items()}

    def errors(self, doc):
        """Every way `doc` breaks the schema its "schema" field names (a list of lines)."""
        kind = doc.get("schema") if isinstance(doc, dict) else None
        if kind not in KINDS:
            return [f"no schema for document kind {kind!r}"]
        lines = []
        for e in sorted(self.validators[KINDS[kind]].iter_errors(doc),
                        key=lambda e: list(map(str, e.absolute_path))):
            where = "/".join(map(str, e.absolute_path)) or "(top)"
            if e.context:  # oneOf/anyOf: the branch that came closest says more
                e = self.js.exceptions.best_match(e.context)
                where += " -> " + ("/".join(map(str, e.absolute_path)) or "(top)")
            lines.append(f"{where}: {e.message[:300]}")
        return lines


def undescribed(node, where="", skip=False):
    """Places in a schema where a declared property has no description. Properties in
    if/then/else/not only add conditions to ones declared elsewhere, so they are left out."""
    out = []
    if isinstance(node, dict):
        for key, value in node.items():
            quiet = skip or key in ("if", "then", "else", "not")
            if key == "properties" and isinstance(value, dict) and not quiet:
                for name, sub in value.items():
                    if not (isinstance(sub, dict) and isinstance(sub.get("description"), str)
                            and sub["description"].strip()):
                        out.append(f"{where}/properties/{name}")
            out += undescribed(value, f"{where}/{key}", quiet)
    elif isinstance(node, list):
        for i, value in enumerate(node):
            out += undescribed(value, f"{where}/{i}", skip)
    return out


def mutations(doc):
    """(what, broken copy) pairs the schema must reject: a required field removed, and a
    value outside its fixed set."""
    kind = doc["schema"]
    out = []

    def broken(what, change):
        d = copy.deepcopy(doc)
        change(d)
        out.append((what, d))

    broken("without its schema field", lambda d: d.pop("schema"))
    if kind == "collbench.result/1":
        broken("without environment.timer", lambda d: d["environment"].pop("timer"))
        broken("status not in its set", lambda d: d.update(status="finished"))
        broken("interrupted without status_detail",
               lambda d: (d.update(status="interrupted", complete=False), d.pop("status_detail", None)))
        if doc["results"]:
            broken("a record without bytes", lambda d: d["results"][0].pop("bytes"))
            broken("a record with an unknown field", lambda d: d["results"][0].update(speed=1))
        if "options" in doc:
            broken("options.dtype not in its set", lambda d: d["options"].update(dtype="fp8"))
        broken("without environment.launcher", lambda d: d["environment"].pop("launcher"))
        broken("launcher.name not in its set",
               lambda d: d["environment"]["launcher"].update(name="pbsdsh"))
        broken("line_rate.rate_gbps null without unavailable",
               lambda d: d["environment"].update(line_rate={"rate_gbps": None, "source": "none"}))
        if doc["benchmark"]["name"] in ("bw", "bibw", "mbw_mr", "bw_persistent",
                                        "bibw_persistent"):
            broken("a bandwidth result without line_rate", lambda d: d.pop("line_rate"))
            if doc["results"] and not doc["line_rate"]["percent_reported"]:
                broken("line_rate_percent without percent_reported",
                       lambda d: d["results"][0].update(line_rate_percent=50.0))
        elif doc["results"]:
            broken("line_rate outside bw, bibw, mbw_mr",
                   lambda d: d.update(line_rate={"rate_gbps": None}))
        if doc["results"] and "options" in doc:
            if doc["options"]["cuda_graph"]:
                broken("a -G record without cuda_graph",
                       lambda d: d["results"][0].pop("cuda_graph"))
            else:
                broken("cuda_graph in a record of a run without -G",
                       lambda d: d["results"][0].update(
                           cuda_graph={"launches": 1, "calls_per_graph": 1, "graph_nodes": 1}))
    elif kind == "collbench.info/1":
        broken("without engine", lambda d: d.pop("engine"))
        broken("without environment.rdma", lambda d: d["environment"].pop("rdma"))
        broken("without environment.line_rate", lambda d: d["environment"].pop("line_rate"))
        broken("without floors", lambda d: d.pop("floors"))
        if "handoff" in doc["floors"]:
            broken("floors without handoff", lambda d: d["floors"].pop("handoff"))
            broken("a collective floor of 3 ranks",
                   lambda d: d["floors"]["collectives"][0].update(ranks=3))
            broken("floors off with measurements", lambda d: d["floors"].update(mode="off"))
    elif kind == "collbench.trace/1":
        broken("an op without coll", lambda d: d["ops"][0].pop("coll"))
        broken("an op with a misspelt field", lambda d: d["ops"][0].update(cout=1))
        broken("no ops", lambda d: d.update(ops=[]))
    elif kind == "collbench.compare/1":
        broken("without comparisons", lambda d: d.pop("comparisons"))
        if doc["comparisons"] and "rows" in doc["comparisons"][0]:
            broken("a comparison without rows", lambda d: d["comparisons"][0].pop("rows"))
    elif kind == "collbench.tuning/1":
        broken("without rules", lambda d: d.pop("rules"))
        broken("a rule with an algorithm of another collective",
               lambda d: d["rules"].insert(0, {"coll": "bcast", "mem": "host", "algo": "ring"}))
    return out


def reject_mutations(schemas, doc, label):
    for what, bad in mutations(doc):
        check(schemas.errors(bad), f"{label} {what}: accepted by its schema, should be rejected")


class Documents:
    """Runs the executables and collects (label, path) of the documents they write."""

    def __init__(self, env):
        self.env = env
        self.docs = []
        self.runs = 0
        self.notes = []

    def add(self, label, path):
        check(os.path.isfile(path), f"{label}: wrote no document at {path}")
        self.docs.append((label, path))
        return path

    def bench(self, np, bench, args, name=None, env=None):
        path = self.env.path((name or bench) + ".json")
        self.runs += 1
        self.env.ok(np, bench, [*map(str, args), "-J", path], env=env, timeout=120)
        return self.add(f"cb_{bench} {' '.join(map(str, args))}", path)

    def failing(self, np, bench, args, name, rc, status, env):
        """A run that must end with exit status `rc` and document status `status`
        (CB_TEST_FAULT): its document is as a failed run leaves it."""
        path = self.env.path(name + ".json")
        self.runs += 1
        r = self.env.run(np, bench, [*map(str, args), "-J", path], env=env, timeout=120)
        check(r.rc == rc, f"cb_{bench} {' '.join(map(str, args))} with {env}: exit {r.rc}, "
                          f"expected {rc}: {r}")
        check(load_json(path)["status"] == status, f"{path}: status is not {status}")
        return self.add(f"cb_{bench} {' '.join(map(str, args))} ({env})", path)

    def interrupted(self, np, bench, args, name):
        """A run ended by SIGTERM to mpirun once its first size is in the document."""
        path = self.env.path(name + ".json")
        self.runs += 1
        cmd = [self.env.mpirun, "-n", str(np), self.env.exe(bench), *map(str, args), "-J", path]
        job = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline and job.poll() is None:
                try:
                    if load_json(path)["results"]:
                        break
                except (OSError, ValueError, KeyError):
                    pass
                time.sleep(0.05)
            check(job.poll() is None, f"{' '.join(cmd)} ended before it could be interrupted")
            job.send_signal(signal.SIGTERM)
            job.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            job.kill()
            raise Failure(f"HANG: {' '.join(cmd)} after SIGTERM")
        finally:
            if job.poll() is None:
                job.kill()
                job.communicate()
        check(load_json(path)["status"] == "interrupted", f"{path}: not marked interrupted")
        return self.add(f"cb_{bench} {' '.join(map(str, args))}, SIGTERM", path)

    def command(self, label, cmd, env=None, timeout=120):
        self.runs += 1
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                               env=dict(os.environ, **(env or {})))
        except subprocess.TimeoutExpired:
            raise Failure(f"HANG: {label}: {' '.join(cmd)}")
        check(p.returncode == 0, f"{label} failed (rc={p.returncode}): {' '.join(cmd)}\n"
                                 f"{p.stdout}\n{p.stderr}")
        return p


@case
def schemas_well_formed(env):
    """Each schema is valid draft 2020-12, every property is described, and the tables and
    traces kept in the source tree validate."""
    js, skip = jsonschema_or_skip()
    if skip:
        return skip
    schemas = Schemas(js)
    for name, schema in schemas.by_name.items():
        try:
            js.Draft202012Validator.check_schema(schema)
        except js.exceptions.SchemaError as e:
            raise Failure(f"{name}: not a valid draft 2020-12 schema: {e.message}")
        check(schema.get("$schema") == "https://json-schema.org/draft/2020-12/schema",
              f"{name}: $schema is {schema.get('$schema')!r}")
        missing = undescribed(schema)
        check(not missing, f"{name}: properties without a description: {missing}")
    for kind, name in KINDS.items():
        const = schemas.by_name[name]["properties"]["schema"].get("const")
        check(const == kind, f"{name}: schema const {const!r}, expected {kind!r}")
    named = set()
    for path in [*(ROOT / "src").rglob("*.[ch]pp"), *SCRIPTS.glob("*.py")]:
        named |= set(re.findall(r"collbench\.[a-z_]+/[0-9]+", path.read_text(errors="replace")))
    unknown = named - set(KINDS) - set(NO_SCHEMA_YET)
    check(not unknown, f"document kinds named in src/ or scripts/ without a schema in schemas/: "
                       f"{sorted(unknown)} (add one, and to KINDS here)")
    check(set(KINDS) <= named, f"schemas for kinds nothing writes any more: "
                               f"{sorted(set(KINDS) - named)}")
    tree = [ROOT / "src/engine/tuning/default.json", *sorted((ROOT / "tests/engine/data").glob("*.json"))]
    # collbench's own traces; the others are PARAM traces (lists) and PyTorch's formats
    # (an execution trace's "schema" is PyTorch's, "1.1.1-chakra.0.0.4")
    tree += [p for p in sorted((ROOT / "tests/fuzz/corpus/trace").glob("*.json"))
             if isinstance(load_json(p), dict) and
             str(load_json(p).get("schema", "")).startswith("collbench.")]
    for path in tree:
        doc = load_json(path)
        errors = schemas.errors(doc)
        check(not errors, f"{path.relative_to(ROOT)}: " + "\n  ".join(errors))
        reject_mutations(schemas, doc, str(path.relative_to(ROOT)))
    print(f"{len(schemas.by_name)} schemas well formed; {len(tree)} documents of the source "
          "tree valid")


@case
def schemas_every_output(env):
    """Every executable that writes JSON, run briefly, and each document validated."""
    js, skip = jsonschema_or_skip()
    if skip:
        return skip
    schemas = Schemas(js)
    start = time.monotonic()
    d = Documents(env)

    # Point to point, every benchmark, on the mpi and (bw) engine backends.
    for bench in ("latency", "bw", "bibw", "mbw_mr"):
        d.bench(2, bench, [*QUICK, "-c"])
    d.bench(2, "bw", [*QUICK, "--backend", "engine", "-f", "-z", "50,95"], name="bw.engine")
    d.bench(2, "latency", [*QUICK, "--repeat", "2", "--backend", "engine"], name="lat.engine")
    d.bench(2, "latency", [*QUICK, "--repeat", "2"], name="lat.repeat")
    # One-sided (MPI RMA): latency, bandwidth and the one-row atomics.
    for bench in ("put_latency", "put_bw", "put_bibw", "get_acc_latency"):
        d.bench(2, bench, [*QUICK, "-c"])
    for bench in ("latency_persistent", "bw_persistent", "multi_lat", "partitioned_latency",
                  "sendrecv", "hypercube", "latency_mp", "bw_fan_in", "bw_fan_out"):
        d.bench(2, bench, [*QUICK, "-c"])
    d.bench(2, "latency_mt", [*QUICK, "-c", "-t", "2:2", "--wait", "yield"])
    d.bench(2, "cas_latency", ["-i", "5", "-x", "1", "-c", "-s", "fence", "-w", "dynamic"])
    # A line rate (CB_LINE_RATE_GBPS): one node, no % Line; on two host names, % Line.
    d.bench(2, "bibw", QUICK, name="bibw.rate", env={"CB_LINE_RATE_GBPS": "100"})
    if not virtual_nodes_unavailable():
        path = env.path("bw.two_hosts.json")
        r = virtual_nodes(env, "bw", [*QUICK, "-J", path], extra_env={"CB_LINE_RATE_GBPS": "100"})
        check(r.rc == 0, f"cb_bw on two host names: {r}")
        check(load_json(path)["line_rate"]["percent_reported"], f"{path}: no line_rate_percent")
        d.add("cb_bw on two host names (CB_LINE_RATE_GBPS=100)", path)

    # Documents of runs that did not complete: validation_failed, aborted, interrupted.
    d.failing(2, "latency", [*QUICK, "-c"], "lat.corrupt", 1, "validation_failed",
              {"CB_TEST_FAULT": "corrupt"})
    d.failing(2, "latency", ["-m", "1:2", "-i", "2", "-x", "1", "--time-limit", "1"],
              "lat.hang", 4, "aborted", {"CB_TEST_FAULT": "hang"})
    d.interrupted(2, "allreduce", ["-m", "4:64M", "-i", "50"], "allreduce.sigterm")

    # Blocking and non-blocking collectives: mpi (its MPI_Op notes), one of each on the
    # engine (its backend facts, --algo all, --repeat, -z tails).
    for bench in ("allreduce", "bcast", "alltoall", "allgather", "reduce_scatter", "reduce",
                  "alltoallv", "iallreduce", "ibcast", "ialltoall", "iallgather",
                  "ireduce_scatter", "ireduce", "ialltoallv"):
        d.bench(2, bench, [*QUICK, "-c"])
    d.bench(2, "barrier", ["-i", "2", "-x", "1", "-c"])
    # nccl-tests' options: -a, --agg_iters, --blocking, -S, --memory, -I/-K (per_iter).
    d.bench(2, "allreduce", [*QUICK, "-c", "-a", "0", "-S", "1", "--memory", "1", "-I", "1",
                             "-K", "1", "--agg_iters", "2"], name="allreduce.nccl_tests")
    d.bench(2, "bcast", [*QUICK, "-a", "3", "--blocking", "1"], name="bcast.blocking")
    # Buffers that flatter (--off-cache, --vary-data, -u): buffer_placement, off_cache_slots.
    for bench in ("allreduce", "iallreduce", "latency"):
        d.bench(2, bench, [*QUICK, "-c", "--off-cache", "64K", "--vary-data", "-u", "3"],
                name=f"{bench}.placement")
    d.bench(2, "ibcast", [*QUICK, "--memory", "1"], name="ibcast.memory")
    # OMB's other collectives: one of each shape (rooted blocks, v forms, persistent).
    for bench in ("gatherv", "iscatter", "allgatherv", "reduce_scatterv", "alltoallw",
                  "allreduce_persistent", "scatterv_persistent"):
        d.bench(2, bench, [*QUICK, "-c"])
    d.bench(2, "ibarrier", ["-i", "2", "-x", "1"])
    d.bench(2, "neighbor_alltoallv", [*QUICK, "-N", "cart:1:1", "--counts", "random:2", "-c"])
    d.bench(2, "ineighbor_allgather", [*QUICK, "-c"])
    d.bench(2, "gatherv", [*QUICK, "--counts", "zipf:1", "-k", "rotate", "-c"], name="gatherv.zipf")
    algo_all = d.bench(2, "allreduce", [*QUICK, "--backend", "engine", "--algo", "all",
                                        "--repeat", "2", "-z", "-c"], name="allreduce.all")
    d.bench(2, "alltoallv", [*QUICK, "--backend", "engine", "--counts", "zipf:1.2", "-c"],
            name="alltoallv.zipf")
    d.bench(2, "ireduce", [*QUICK, "--backend", "engine", "-k", "rotate", "-t", "2",
                           "-T", "half", "--op", "max", "-c"], name="ireduce.engine")
    d.bench(2, "barrier", ["-i", "2", "-x", "1", "--backend", "engine"], name="barrier.engine")

    # cb_replay: a model (DDP buckets), a MoE model, a CSV table over steps, a trace it
    # exported itself (that trace too), and a recorded one.
    replay = ["-i", "2", "-x", "1"]
    d.bench(2, "replay", ["--model", "resnet50", "--fusion", "ddp", *replay, "-c"],
            name="replay.model")
    d.bench(2, "replay", ["--model", "switch-base-8", "--tokens", "16", "--counts", "zipf:1",
                          "--backend", "engine", *replay, "-c"], name="replay.moe")
    table = env.path("table.csv")
    with open(table, "w") as f:
        f.write("size,count\n4096,6\n1024,3\n12,1\n")
    d.bench(2, "replay", ["--trace", table, "--steps", "3", "--repeat", "2", *replay, "-c"],
            name="replay.csv")
    exported = env.path("exported.trace.json")
    d.bench(1, "replay", ["--model", "gpt2", "--fusion", "horovod", "--compute", "trace",
                          "--export-trace", exported, *replay], name="replay.export")
    d.add("cb_replay --export-trace (trace)", exported)
    d.bench(2, "replay", ["--trace", exported, "--compute", "trace", *replay],
            name="replay.trace")
    # Process groups (messages[].group, process_groups[]): one-rank groups of a 2-rank job.
    groups = env.path("groups.trace.json")
    with open(groups, "w") as f:
        json.dump({"schema": "collbench.trace/1", "world_size": 2, "ops": [
            {"coll": "allreduce", "count": 64, "group": [0]},
            {"coll": "allgather", "count": 16, "group": [1]},
            {"coll": "allreduce", "count": 32}]}, f)
    d.add("trace with process groups", groups)
    d.bench(2, "replay", ["--trace", groups, *replay, "-c"], name="replay.groups")

    # The recorder (libcb_record.so): the test application of the replay tests where it is
    # built, else a benchmark.
    lib = os.path.join(env.bindir, "libcb_record.so")
    check(os.path.exists(lib), f"missing {lib}")
    app = os.path.join(env.bindir, "tests", "cb_record_app")
    target = [app] if os.path.exists(app) else [env.exe("allreduce"), *QUICK]
    base = env.path("rec.json")
    d.command("recorded application", [env.mpirun, "-n", "2", *target],
              env={"LD_PRELOAD": lib, "CB_RECORD": base})
    for rank in (0, 1):
        d.add(f"libcb_record.so trace, rank {rank}", env.path(f"rec.rank{rank}.json"))
    d.bench(2, "replay", ["--trace", env.path("rec.rank0.json"), "--compute", "trace",
                          "--backend", "engine", *replay, "-c"], name="replay.recorded")

    # cb_info, plain (MPI singleton) and under mpirun; cb_copybw.
    info = env.path("info.json")
    d.command("cb_info", [env.exe("info"), "-J", info])
    d.add("cb_info", info)
    info2 = env.path("info.np2.json")
    d.command("mpirun -n 2 cb_info --floors off",
              [env.mpirun, "-n", "2", env.exe("info"), "--floors", "off", "-J", info2])
    d.add("mpirun -n 2 cb_info --floors off", info2)
    copy_json = env.path("copybw.json")
    d.command("cb_copybw", [env.exe("copybw"), "-m", "4K:4K", "-J", copy_json])
    d.add("cb_copybw", copy_json)

    # scripts/compare.py: a pair with repeat data (noise ranges), and a comparison with a
    # metric the baseline lacks (a note); scripts/tune.py's table from an --algo all run.
    cmp_json = env.path("compare.json")
    d.command("compare.py", [sys.executable, str(SCRIPTS / "compare.py"),
                             env.path("lat.repeat.json"), env.path("lat.engine.json"),
                             env.path("latency.json"), "--json", cmp_json])
    d.add("compare.py --json", cmp_json)
    note_json = env.path("compare.note.json")
    d.command("compare.py --baseline-backend", [
        sys.executable, str(SCRIPTS / "compare.py"), "--baseline-backend", "mpi",
        "--metric", "busbw,bandwidth", env.path("bw.json"), env.path("bw.engine.json"),
        env.path("allreduce.json"), env.path("allreduce.all.json"), env.path("latency.json"),
        env.path("lat.engine.json"), "--json", note_json])
    d.add("compare.py --baseline-backend --json", note_json)
    check(any("note" in c for c in load_json(note_json)["comparisons"]),
          f"{note_json}: no comparison note (latency has neither busbw nor bandwidth)")
    # scripts/omb_compare.py: cb_latency's document as 6 rounds beside made-up osu_latency
    # outputs (OMB's format), one at 1.1x collbench's time.
    omb = env.path("omb_compare")
    os.makedirs(omb, exist_ok=True)
    lat = load_json(env.path("latency.json"))
    with open(os.path.join(omb, "run.json"), "w") as f:
        json.dump({"omb_version": "7.4", "omb_source": "made up", "seed": 1, "rounds": 6,
                   "git_revision": "test", "start": "2026-01-01T00:00:00Z"}, f)
    for r in range(1, 7):
        with open(os.path.join(omb, f"cb_latency.{r}.json"), "w") as f:
            json.dump(lat, f)
        with open(os.path.join(omb, f"osu_latency.{r}.txt"), "w") as f:
            f.write("# OSU MPI Latency Test v7.4\n# Size Avg Latency(us)\n" + "".join(
                f"{x['bytes']} {x['latency_us']['avg'] * 1.1:.4f}\n" for x in lat["results"]))
    d.command("omb_compare.py", [sys.executable, str(SCRIPTS / "omb_compare.py"), omb])
    d.add("scripts/omb_compare.py", os.path.join(omb, "omb_compare.json"))
    tuning = env.path("tuning.json")
    d.command("tune.py", [sys.executable, str(SCRIPTS / "tune.py"), "--ranks", "2",
                          "--from", algo_all, "--out", tuning])
    d.add("scripts/tune.py", tuning)

    # Where a GPU is: cb_gpu_bench and the nccl backend.
    gpu = load_json(info)["environment"]
    if gpu["gpu"].get("devices"):
        kernels = env.path("gpu_kernels.json")
        if os.path.exists(os.path.join(env.bindir, "cb_gpu_bench")):
            d.command("cb_gpu_bench", [os.path.join(env.bindir, "cb_gpu_bench"), "--quick",
                                       "-m", "1M:1M", "--matrix-size", "1M", "-J", kernels])
            d.add("cb_gpu_bench", kernels)
        if gpu["collbench"]["features"]["nccl"]:
            d.bench(1, "allreduce", [*QUICK, "--backend", "nccl", "-d", "cuda", "-c"],
                    name="allreduce.nccl")
            d.bench(1, "allreduce", [*QUICK, "--backend", "nccl", "-d", "cuda", "-G", "2", "-c"],
                    name="allreduce.nccl.graph")
    else:
        d.notes.append("no GPU here: cb_gpu_bench (collbench.gpu_kernels/1) and the nccl "
                       "backend not run")

    # The engine's algorithms by collective, as cb_info lists them, are the schema's sets.
    listed = {}
    for a in load_json(info)["engine"]["algorithms"]:
        listed.setdefault(a["coll"], set()).add(a["name"])
    in_schema = {b["if"]["properties"]["coll"]["const"]: set(b["then"]["properties"]["algo"]["enum"])
                 for b in schemas.by_name[SHARED]["$defs"]["engine_algorithm_name"]["allOf"]}
    check(listed == in_schema, f"engine algorithms: cb_info lists {listed}, {SHARED} "
                               f"($defs/engine_algorithm_name) has {in_schema}")

    # Validate every document; then check that broken copies are rejected.
    failures, kinds = [], {}
    for label, path in d.docs:
        doc = load_json(path)
        kinds.setdefault(doc.get("schema"), []).append(label)
        errors = schemas.errors(doc)
        if errors:
            shown = "\n    ".join(errors[:12])
            more = f"\n    ... {len(errors) - 12} more" if len(errors) > 12 else ""
            failures.append(f"{label} ({os.path.basename(path)}):\n    {shown}{more}")
    check(not failures, f"{len(failures)} of {len(d.docs)} documents do not match their schema:\n"
                        + "\n".join(failures))
    missing = set(KINDS) - set(kinds) - ({"collbench.gpu_kernels/1"} if d.notes else set())
    check(not missing, f"no document of kind {sorted(missing)} was validated")
    for label, path in d.docs:
        reject_mutations(schemas, load_json(path), label)

    for kind in sorted(kinds):
        print(f"{kind}: {len(kinds[kind])} documents")
    for note in d.notes:
        print(f"note: {note}")
    print(f"{len(d.docs)} documents from {d.runs} runs valid, {time.monotonic() - start:.1f} s")
