#!/usr/bin/env python3
"""Replay results side by side: one row per (input, fusion, compute), one column group per
backend, with the candidate/baseline step-time ratio; Markdown, and optionally one grouped
bar figure of the step time split into compute and exposed communication.

  scripts/replay_table.py [--baseline mpi] [--md OUT.md] [--plot OUT_PREFIX] replay*.json

Reads cb_replay JSON (collbench.result/1, benchmark "replay"); other results are ignored.
The figures are the averages over the timed steps that cb_replay prints (docs/replay.md).
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cbjson  # noqa: E402


def rows_from(paths, skip_invalid):
    """{(input, fusion, compute): {backend: record}} and the backends in first-seen order."""
    table, backends = {}, []
    for path in paths:
        try:
            doc = cbjson.load(path)
        except cbjson.InputError as e:
            if not skip_invalid:
                raise
            print(f"replay_table.py: skipping {e}", file=sys.stderr)
            continue
        if not cbjson.is_replay(doc):
            continue
        backend = cbjson.text(doc, "backend", "name")
        opts = doc.get("options", {})
        for rec in doc["results"]:
            if cbjson.average(rec, "step_us") is None:
                continue
            inp = rec.get("input", {})
            name = inp.get("model") or inp.get("name") or os.path.basename(path)
            # --parallel zero1|zero2|fsdp groups by itself: the mode takes the Fusion column.
            parallel = str(opts.get("parallel", "ddp"))
            fusion = str(opts.get("fusion", "none")) if parallel == "ddp" else parallel
            moe = inp.get("moe") if isinstance(inp.get("moe"), dict) else None
            if moe:  # MoE layers: the router and tokens take the Fusion column
                fusion = f"moe {moe.get('router')} x{moe.get('tokens')}"
            key = (name, fusion, str(opts.get("compute", "none")))
            table.setdefault(key, {})[backend] = rec
            if backend not in backends:
                backends.append(backend)
    return table, backends


def ms(v):
    return "" if v is None else f"{v / 1e3:.2f}"


def markdown(table, backends, baseline):
    others = [b for b in backends if b != baseline]
    head = ["Input", "Fusion", "Compute", "Messages"]
    for b in backends:
        head += [f"{b} step (ms)", f"{b} exposed (ms)", f"{b} overlap %"]
    head += [f"{b}/{baseline} step" for b in others if baseline in backends]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for (name, fusion, compute), by_backend in sorted(table.items()):
        any_rec = next(iter(by_backend.values()))
        row = [name, fusion, compute, str(any_rec.get("message_count", ""))]
        for b in backends:
            r = by_backend.get(b, {})
            ov = cbjson.number(r, "overlap_pct")
            row += [ms(cbjson.average(r, "step_us")), ms(cbjson.number(r, "exposed_comm_us")),
                    "" if ov is None else f"{ov:.0f}"]
        base = cbjson.average(by_backend.get(baseline, {}), "step_us")
        for b in others if baseline in backends else []:
            cand = cbjson.average(by_backend.get(b, {}), "step_us")
            row.append(f"{cand / base:.2f}" if cand and base else "")
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines) + "\n"


def plot(table, backends, prefix):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    keys = sorted(table)
    width = 0.8 / max(1, len(backends))
    fig, ax = plt.subplots(figsize=(min(16, max(8, 0.3 * len(keys) * len(backends))), 5))
    for i, b in enumerate(backends):
        xs = [k + (i - (len(backends) - 1) / 2) * width for k in range(len(keys))]
        comp = [(cbjson.number(table[k].get(b, {}), "compute_us") or 0) / 1e3 for k in keys]
        expo = [(cbjson.number(table[k].get(b, {}), "exposed_comm_us") or 0) / 1e3 for k in keys]
        ax.bar(xs, comp, width, color="0.75", edgecolor=f"C{i}",
               label="compute" if i == 0 else None)
        ax.bar(xs, expo, width, bottom=comp, color=f"C{i}", label=f"{b}: exposed communication")
    ax.set_xticks(range(len(keys)), [f"{n}\n{f.split(' ')[0]}, {c}" for n, f, c in keys],
                  rotation=60, fontsize="x-small")
    ax.set_ylabel("Time per step (ms)")
    ax.set_title("Gradient replay: step time = compute + exposed communication")
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(fontsize="small")
    fig.tight_layout()
    paths = []
    for fmt in ("png", "svg"):
        paths.append(f"{prefix}.{fmt}")
        fig.savefig(paths[-1], dpi=120, bbox_inches="tight")
    plt.close(fig)
    return paths


def main(argv=None):
    ap = argparse.ArgumentParser(prog="replay_table.py", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("files", nargs="+", metavar="FILE.json")
    ap.add_argument("--baseline", default="mpi", metavar="BACKEND")
    ap.add_argument("--md", metavar="OUT.md", help="write the table here (default: stdout)")
    ap.add_argument("--plot", metavar="PREFIX", help="write PREFIX.png and PREFIX.svg")
    ap.add_argument("--skip-invalid", action="store_true")
    args = ap.parse_args(argv)
    try:
        table, backends = rows_from(args.files, args.skip_invalid)
    except cbjson.InputError as e:
        print(f"replay_table.py: {e}", file=sys.stderr)
        return 2
    if not table:
        print("replay_table.py: no cb_replay results among the files", file=sys.stderr)
        return 2
    text = markdown(table, backends, args.baseline)
    if args.md:
        with open(args.md, "w", encoding="utf-8") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    if args.plot:
        plot(table, backends, args.plot)
    return 0


if __name__ == "__main__":
    sys.exit(main())
