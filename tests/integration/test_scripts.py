"""scripts/plot.py and scripts/compare.py on results of real runs, on a hand-made pair with
known ratios, and on broken input (exit 2, one line naming the file, no traceback)."""
import json
import os
import pathlib
import subprocess
import sys

from cbtest import case, check, load_json

LABELS = ('release', 'mpi')  # tests/labels.md

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "scripts"))
from fixtures import SCRIPTS, plotting_python  # noqa: E402  (tests/scripts/fixtures.py)


def script(name, args, python=None):
    cmd = [python or sys.executable, str(SCRIPTS / name), *map(str, args)]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    check("Traceback" not in p.stderr, f"{name} printed a traceback:\n{p.stderr}")
    return p


def real_runs(env):
    """A latency and a bw run (mpirun -n 2), short."""
    lat, bw = env.path("latency.mpi.host.json"), env.path("bw.mpi.host.json")
    env.ok(2, "latency", ["-m", "1:1K", "-i", "50", "-x", "10", "-J", lat])
    env.ok(2, "bw", ["-m", "1:1K", "-i", "10", "-x", "2", "-J", bw])
    return lat, bw


@case
def scripts_plot_real_results(env):
    python = plotting_python()
    if python is None:
        return "SKIP: matplotlib is not installed (apt-get install python3-matplotlib)"
    lat, bw = real_runs(env)
    out = env.path("plots")
    p = script("plot.py", ["-o", out, lat, bw], python=python)
    check(p.returncode == 0, f"plot.py failed: {p.stderr}")
    for name in ("latency", "bandwidth"):
        for ext in ("png", "svg"):
            path = os.path.join(out, f"{name}.{ext}")
            check(os.path.isfile(path) and os.path.getsize(path) > 1000, f"{path} missing or tiny")
    check(sorted(os.listdir(out)) == ["bandwidth.png", "bandwidth.svg", "latency.png",
                                      "latency.svg"], f"unexpected plots: {os.listdir(out)}")
    with open(os.path.join(out, "latency.svg")) as f:
        svg = f.read()
    # one curve: the legend names the backend, the subtitle its library
    check("<!-- mpi -->" in svg and "<!-- MPICH" in svg and "Latency (µs)" in svg,
          "legend/subtitle/axis label missing in SVG")


@case
def scripts_compare_real_results(env):
    lat, _ = real_runs(env)
    again = env.path("latency2.json")
    env.ok(2, "latency", ["-m", "1:1K", "-i", "50", "-x", "10", "-J", again])
    md, js = env.path("cmp.md"), env.path("cmp.json")
    p = script("compare.py", [lat, again, "--md", md, "--json", js])
    check(p.returncode == 0, f"compare.py failed: {p.stderr}")
    (c,) = load_json(js)["comparisons"]
    check(c["metric"] == "latency" and [r["bytes"] for r in c["rows"]] == [2 ** k for k in
                                                                            range(11)],
          f"rows: {c['rows']}")
    for r in c["rows"]:
        check(abs(r["ratio"] - r["candidate"] / r["baseline"]) < 1e-12, f"ratio {r}")
    with open(md) as f:
        text = f.read()
    check("| 1K |" in text and "Geometric mean ratio" in text, "markdown table:\n" + text)


def handmade(size_values, metric_field):
    """A collbench.result/1 document with one figure per size."""
    def record(size, v):
        rec = {"bytes": size, "iterations": 10, "warmup": 1}
        if metric_field == "latency_us":
            rec["latency_us"] = {"avg": v, "min": v, "max": v}
        else:
            rec[metric_field] = v
        return rec
    return {"schema": "collbench.result/1", "status": "complete",
            "benchmark": {"name": "handmade"}, "backend": {"name": "mpi", "library": "x"},
            "environment": {"hostname": "h", "nranks": 2},
            "results": [record(s, v) for s, v in size_values]}


def write(path, doc):
    with open(path, "w") as f:
        f.write(doc if isinstance(doc, str) else json.dumps(doc))
    return path


@case
def scripts_compare_exact_ratios(env):
    base = write(env.path("base.json"), handmade([(8, 2.0), (64, 4.0), (512, 8.0)], "latency_us"))
    cand = write(env.path("cand.json"), handmade([(8, 3.0), (64, 2.0), (512, 8.25)],
                                                 "latency_us"))
    js = env.path("out.json")
    p = script("compare.py", [base, cand, "--json", js])
    check(p.returncode == 0, p.stderr)
    rows = load_json(js)["comparisons"][0]["rows"]
    got = [(r["bytes"], r["ratio"], r["slower"]) for r in rows]
    # time ratios: 3/2 slower, 2/4 faster, 8.25/8 = 1.03125 within the 5 % tolerance
    check(got == [(8, 1.5, True), (64, 0.5, False), (512, 1.03125, False)], f"rows {got}")
    p = script("compare.py", [base, cand, "--tolerance", "0"])
    check(p.returncode == 0 and "| 512 | 8 | 8.25 | 1.031 | SLOWER |" in p.stdout, p.stdout)

    base = write(env.path("bwb.json"), handmade([(8, 100.0), (64, 100.0)], "busbw_GBps"))
    cand = write(env.path("bwc.json"), handmade([(8, 50.0), (64, 125.0)], "busbw_GBps"))
    p = script("compare.py", [base, cand, "--metric", "busbw", "--json", js,
                              "--fail-on-slower"])
    check(p.returncode == 1, f"--fail-on-slower: rc {p.returncode}")
    rows = load_json(js)["comparisons"][0]["rows"]
    got = [(r["ratio"], r["slower"]) for r in rows]
    check(got == [(0.5, True), (1.25, False)], f"bandwidth: lower is slower: {got}")


@case
def scripts_bad_input(env):
    lat = env.path("lat.json")
    env.ok(2, "latency", ["-m", "1:8", "-i", "10", "-J", lat])
    with open(lat) as f:
        text = f.read()
    doc = json.loads(text)
    broken = {
        "truncated.json": (text[: len(text) * 2 // 3], "not valid JSON"),
        "schema.json": (json.dumps({**doc, "schema": "nccl-tests"}), "not a collbench result"),
        "noresults.json": (json.dumps({k: v for k, v in doc.items() if k != "results"}),
                           "'results' is missing"),
        "empty_results.json": (json.dumps({**doc, "results": [], "status": "error"}),
                               "no results"),
    }
    for name, (content, why) in broken.items():
        path = write(env.path(name), content)
        for tool, args in (("plot.py", ["-o", env.path("p"), lat, path]),
                           ("compare.py", [lat, path])):
            p = script(tool, args)
            lines = p.stderr.strip().splitlines()
            check(p.returncode == 2, f"{tool} {name}: rc {p.returncode}: {p.stderr}")
            check(len(lines) == 1 and name in lines[0] and why in lines[0],
                  f"{tool} {name}: expected one line naming the file and '{why}':\n{p.stderr}")


@case
def scripts_collective_results(env):
    """Blocking and non-blocking collectives, engine with every algorithm: the plots that
    pt2pt runs do not make, and the --baseline-backend summary."""
    files = {name: env.path(name) for name in ("allreduce.mpi.json", "allreduce.engine.json",
                                               "iallreduce.mpi.json")}
    common = ["-m", "8:4K", "-i", "20", "-x", "2"]
    env.ok(2, "allreduce", [*common, "-J", files["allreduce.mpi.json"]])
    env.ok(2, "allreduce", [*common, "--backend", "engine", "--algo", "all",
                            "-J", files["allreduce.engine.json"]])
    env.ok(2, "iallreduce", [*common, "-J", files["iallreduce.mpi.json"]])
    algos = {r["algo"] for r in load_json(files["allreduce.engine.json"])["results"]}
    check(len(algos) > 1, f"engine --algo all ran only {algos}")

    js = env.path("summary.json")
    p = script("compare.py", ["--baseline-backend", "mpi", "--metric", "latency,busbw",
                              "--json", js, "--md", env.path("summary.md"), *files.values()])
    check(p.returncode == 0, p.stderr)
    comps = load_json(js)["comparisons"]
    got = sorted((c["candidate"]["algo"], c["metric"]) for c in comps)
    check(got == sorted((a, m) for a in algos for m in ("latency", "busbw")),
          f"comparisons {got}, engine algorithms {algos}")
    check(all(c["baseline"]["backend"] == "mpi" and c["rows"] for c in comps), "baselines")

    python = plotting_python()
    if python is None:
        return "SKIP: matplotlib is not installed (apt-get install python3-matplotlib)"
    out = env.path("plots")
    p = script("plot.py", ["--per-benchmark", "-o", out, *files.values()], python=python)
    check(p.returncode == 0, p.stderr)
    want = {f"{b}.{f}.{e}" for b, f in (("allreduce", "latency"), ("allreduce", "busbw"),
                                        ("allreduce", "algbw"), ("allreduce", "algos.latency"),
                                        ("allreduce", "algos.busbw"),
                                        ("allreduce", "algos.algbw"), ("iallreduce", "latency"),
                                        ("iallreduce", "overlap")) for e in ("png", "svg")}
    check(set(os.listdir(out)) == want, f"plots {sorted(os.listdir(out))}")
    # the comparison: one curve per run, the --algo all run as its tuning table's choice
    # (SVG comments write '--' as '- -'); its algorithms in a figure of their own
    with open(os.path.join(out, "allreduce.busbw.svg")) as f:
        svg = f.read()
    check("<!-- engine (table's choice from - -algo all) -->" in svg
          and "<!-- MPICH" in svg, "comparison legend")
    with open(os.path.join(out, "allreduce.algos.busbw.svg")) as f:
        svg = f.read()
    for algo in algos:
        check(f"<!-- engine: {algo} -->" in svg, f"no legend entry for {algo}")


@case
def main_job_quick_sweep(env):
    """The main job's pipeline (scripts/sweep.sh --full --quick): every benchmark on mpi and
    engine, cb_info, the copy bound, plots, the summary and the comparisons."""
    import glob
    import os
    import subprocess
    here = os.path.dirname(os.path.abspath(__file__))
    sweep = os.path.join(here, "..", "..", "scripts", "sweep.sh")
    out = env.path("sweep")
    # Below ctest's 300 s per case (tests/integration/CMakeLists.txt), so that this timeout,
    # with its message, is the one that fires.
    p = subprocess.run(["bash", sweep, env.bindir, out, "--full", "--quick"], capture_output=True,
                       text=True, timeout=280, env=dict(os.environ, MPIRUN=env.mpirun))
    check(p.returncode == 0, f"sweep failed: {p.stdout[-3000:]}\n{p.stderr[-3000:]}")
    check("failed" not in p.stderr, "a benchmark failed during the sweep:\n" + p.stderr[-3000:])
    for name in ("info.json", "copy_bw.json", "summary.md", "allreduce.mpi.host.json",
                 "allreduce.engine.host.json", "allreduce.engine-all.host.json", "bw.engine-plain.host.json",
                 "ialltoall.mpi-t10.host.json", "latency.engine.host.json",
                 "allreduce.engine-p2p.host.json", "replay-resnet50-ddp-trace.engine.host.json",
                 "replay.md", "plots/replay.steps.png"):
        check(os.path.getsize(os.path.join(out, name)) > 0, f"{name} missing or empty")
    for path in glob.glob(os.path.join(out, "*.host.json")):
        doc = load_json(path)
        check(doc["status"] == "complete", f"{path}: {doc['status']}")
    for r in load_json(os.path.join(out, "copy_bw.json"))["results"]:
        for t in ("1_thread", "all_threads"):
            whole, pieces = r[f"copy_GBps_{t}_whole"], r[f"copy_GBps_{t}_pieces"]
            check(min(whole, pieces) > 0 and r[f"copy_GBps_{t}"] == max(whole, pieces),
                  f"copy bound at {r['bytes']} B: {r}")
    with open(os.path.join(out, "summary.md")) as f:
        summary = f.read()
    check("| resnet50 | ddp" in summary, "replay step table in summary.md")
    # --repeat 3: every record keeps its passes; the ratio tables have the noise column
    ar = load_json(os.path.join(out, "allreduce.engine.host.json"))
    check(ar["options"]["repeat"] == 3 and all(r["repeat"]["passes"] == 3
                                               for r in ar["results"]),
          f"the main job measures 3 passes per size: {ar['results'][0].get('repeat')}")
    check("# collbench summary" in summary and "[comparisons.md](comparisons.md)" in summary,
          "summary.md is not the one-page summary")
    with open(os.path.join(out, "comparisons.md")) as f:
        detail = f.read()
    check("| Baseline passes | Candidate passes | Noise |" in detail and "Within noise" in detail,
          "comparisons.md has no noise column")
    check("shared memory" not in load_json(os.path.join(out, "allreduce.engine-p2p.host.json"))
          ["backend"]["library"], "engine-p2p runs without its shared-memory path")
    pngs = glob.glob(os.path.join(out, "plots", "*.png"))
    check(len(pngs) >= 10 and all(os.path.getsize(p) > 0 for p in pngs), f"plots: {pngs}")
