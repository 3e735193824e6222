"""run.sh's launches (raw.tar.xz: raw/<variant>.<round>.txt) -> summary.json and summary.md
(median MB/s and 95 % interval per variant and size, scripts/cbstats.py's median_interval)."""
import json, os, re, sys, tarfile

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "../../../scripts"))
import cbstats  # noqa: E402

here = sys.argv[1]
tag = sys.argv[2] if len(sys.argv) > 2 else ""  # "-bibw": run.sh's BENCH=bibw files
runs = {}
with tarfile.open(os.path.join(here, f"raw{tag}.tar.xz")) as tar:
    texts = {m.name: tar.extractfile(m).read().decode() for m in tar.getmembers() if m.isfile()}
for path, text in sorted(texts.items()):
    variant = re.sub(r"\.\d+\.txt$", "", os.path.basename(path))
    for line in text.splitlines():
        f = line.split()
        if len(f) == 2 and f[0].isdigit() and int(f[0]) in (4096, 8192):
            runs.setdefault(variant, {}).setdefault(int(f[0]), []).append(float(f[1]))
summary = {"run": json.load(open(os.path.join(here, f"run{tag}.json"))), "variants": {}}
for v, sizes in sorted(runs.items()):
    summary["variants"][v] = {}
    for size, xs in sorted(sizes.items()):
        mi = cbstats.median_interval(xs)
        summary["variants"][v][str(size)] = {
            "mb_per_s": xs, "median": cbstats.median(xs),
            "interval": [mi["lo"], mi["hi"]] if mi else None}
json.dump(summary, open(os.path.join(here, f"summary{tag}.json"), "w"), indent=1)
bench = summary["run"].get("bench", "bw")
rows = [f"# osu_{bench} and cb_{bench} at 4-8 KiB by the run's largest size (run.sh)", "",
        f"Generated from summary{tag}.json by summarize.py. {summary['run']['rounds']} rounds, one "
        f"launch per variant per round in a drawn order (seed {summary['run']['seed']}), "
        f"{summary['run']['mpirun']}, at {summary['run']['git_revision']}. MB/s: median of the "
        "launches and its 95 % interval (sign test).", "",
        "| variant | 4 KiB | 8 KiB |", "|---|---:|---:|"]
for v, sizes in summary["variants"].items():
    cell = lambda s: (f"{sizes[s]['median']:.0f} [{sizes[s]['interval'][0]:.0f}, "
                      f"{sizes[s]['interval'][1]:.0f}]" if sizes[s]["interval"]
                      else f"{sizes[s]['median']:.0f}")
    rows.append(f"| {v} | {cell('4096')} | {cell('8192')} |")
open(os.path.join(here, f"summary{tag}.md"), "w").write("\n".join(rows) + "\n")
print("\n".join(rows))
