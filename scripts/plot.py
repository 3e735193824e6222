#!/usr/bin/env python3
"""Plots collbench result files (collbench.result/1) as PNG and SVG.

  plot.py [-o DIR] [--prefix NAME.] [--per-benchmark] FILE.json [FILE.json ...]

Writes, for what the files contain: latency.{png,svg} (latency vs size, log-log),
bandwidth (point-to-point MB/s), busbw and algbw (collectives, GB/s), overlap (non-blocking
collectives, %) and replay (step time breakdown). One line per (benchmark, backend,
algorithm, host). Needs matplotlib; if this interpreter lacks it, /usr/bin/python3 (Debian's
python3-matplotlib) is tried. See docs/plots.md.
"""
import argparse
import os
import signal
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cbjson  # noqa: E402

PROG = "plot.py"
SYSTEM_PYTHON = "/usr/bin/python3"
FORMATS = ("png", "svg")


def parse_args(argv):
    ap = argparse.ArgumentParser(prog=PROG, description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("files", nargs="+", metavar="FILE.json")
    ap.add_argument("-o", "--outdir", default=".", metavar="DIR",
                    help="where to write the plots (created if missing; default .)")
    ap.add_argument("--prefix", default="", help="prepended to every output file name")
    ap.add_argument("--per-benchmark", action="store_true",
                    help="one set of plots per benchmark, named BENCHMARK.FIGURE.png")
    ap.add_argument("--skip-invalid", action="store_true",
                    help="warn about and leave out files that are not usable results")
    return ap.parse_args(argv)


def import_pyplot():
    """matplotlib.pyplot with the Agg backend, or exit 2 with how to install it."""
    try:
        import matplotlib
    except ImportError:
        retry_with_system_python()
        print(f"{PROG}: error: matplotlib is not installed for {sys.executable}. Install it "
              f"with 'apt-get install python3-matplotlib' (then run {SYSTEM_PYTHON} "
              f"scripts/plot.py) or 'pip install -r scripts/requirements.txt'", file=sys.stderr)
        sys.exit(2)
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def retry_with_system_python():
    """Re-runs this script under Debian's python3 (which python3-matplotlib serves) when
    another interpreter (pyenv, venv) runs it; once only."""
    here = os.path.realpath(sys.executable or "")
    if (os.environ.get("CB_PLOT_NO_REEXEC") or not os.access(SYSTEM_PYTHON, os.X_OK)
            or os.path.realpath(SYSTEM_PYTHON) == here):
        return
    os.environ["CB_PLOT_NO_REEXEC"] = "1"
    sys.stdout.flush()
    os.execv(SYSTEM_PYTHON, [SYSTEM_PYTHON, os.path.abspath(__file__), *sys.argv[1:]])


# --- what to plot ------------------------------------------------------------------------

class Line:
    """One figure of a record drawn as a line: a getter, a legend suffix and a style."""

    def __init__(self, getter, suffix="", style="-"):
        self.get, self.suffix, self.style = getter, suffix, style


class Figure:
    def __init__(self, name, title, ylabel, lines, ylog=False, percent=False):
        self.name, self.title, self.ylabel = name, title, ylabel
        self.lines, self.ylog, self.percent = lines, ylog, percent


def _num(*keys):
    return lambda rec: cbjson.number(rec, *keys)


FIGURES = [
    Figure("latency", "Latency vs message size", "Latency (µs)",
           [Line(_num("latency_us", "avg")),
            Line(_num("pure_comm_us", "avg"), " (non-blocking, pure comm.)")], ylog=True),
    Figure("bandwidth", "Point-to-point bandwidth vs message size",
           "Bandwidth (MB/s, 1 MB = 10⁶ B)", [Line(_num("bandwidth_MBps"))]),
    Figure("busbw", "Collective bus bandwidth vs message size",
           "Bus bandwidth (GB/s, 1 GB = 10⁹ B)", [Line(_num("busbw_GBps"))]),
    Figure("algbw", "Collective algorithm bandwidth vs message size",
           "Algorithm bandwidth (GB/s, 1 GB = 10⁹ B)", [Line(_num("algbw_GBps"))]),
    Figure("overlap", "Communication/computation overlap vs message size", "Overlap (%)",
           [Line(_num("overlap_pct"), " (OMB)", "-"),
            Line(_num("overlap_pct_imb"), " (IMB)", "--")], percent=True),
]


def points(series, line):
    """(sizes, values) of a series for one line; size 0 cannot sit on a log axis."""
    pts = [(cbjson.number(r, "bytes"), line.get(r)) for r in series.records]
    pts = [(int(b), v) for b, v in pts if b and v is not None]
    return [b for b, _ in pts], [v for _, v in pts]


def context(series):
    """Subtitle: what all plotted runs share (ranks, hosts, wait mode)."""
    envs = [s.doc.get("environment") or {} for s in series]
    parts = []
    nranks = {e.get("nranks") for e in envs}
    hosts = {cbjson.text(e, "hostname") for e in envs}
    if len(nranks) == 1 and None not in nranks:
        parts.append(f"{nranks.pop()} ranks")
    if len(hosts) == 1:
        parts.append(f"host {hosts.pop()}")
    if any(e.get("wait_mode") == "yield" for e in envs):
        parts.append("yield-wait mode: for relative comparisons only")
    return ", ".join(parts)


# --- drawing -----------------------------------------------------------------------------

def size_axis(ax, sizes):
    """Log2 message-size axis labelled 1, 4, 16, ..., 1K, 4K, ... (at most ~12 ticks)."""
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator
    lo, hi = min(sizes).bit_length() - 1, max(sizes).bit_length() - 1
    step = max(1, (hi - lo + 11) // 12)
    ax.set_xscale("log", base=2)
    ax.xaxis.set_major_locator(FixedLocator([2 ** e for e in range(lo, hi + 1, step)]))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: cbjson.format_size(v)))
    ax.set_xlabel("Message size (bytes)")


def log_value_axis(ax, values):
    """Log y axis with plain numbers; the 2..9 ticks are labelled within two decades."""
    from matplotlib.ticker import FuncFormatter, NullFormatter
    ax.set_yscale("log")
    plain = FuncFormatter(lambda v, _: f"{v:.6g}")
    ax.yaxis.set_major_formatter(plain)
    positive = [v for v in values if v > 0]
    narrow = positive and max(positive) / min(positive) < 100
    ax.yaxis.set_minor_formatter(plain if narrow else NullFormatter())


def executable(series):
    return cbjson.text(series.doc, "benchmark", "executable", default=series.benchmark)


def finish(plt, fig, ax, title, sub, outdir, name, prefix):
    ax.set_title(title + (f"\n{sub}" if sub else ""), fontsize=11)
    ax.grid(True, which="both", alpha=0.3)
    handles = ax.get_legend_handles_labels()[0]
    if handles:
        if len(handles) <= 6:
            ax.legend(fontsize="small")
        else:
            ax.legend(fontsize="x-small", loc="upper center", bbox_to_anchor=(0.5, -0.15), ncol=2)
    return save(plt, fig, outdir, name, prefix)


def line_figure(plt, spec, series, outdir, prefix):
    drawn = [(s, line, *points(s, line)) for s in series for line in spec.lines]
    drawn = [d for d in drawn if d[2]]
    if not drawn:
        return []
    fig, ax = plt.subplots(figsize=(8, 5))
    several = len({s.benchmark for s, *_ in drawn}) > 1
    # Up to 10 series: the default cycle; more: tab20, and markers that cycle differently,
    # so that no two lines share both colour and marker.
    count = len({id(s) for s, *_ in drawn})
    palette = [f"C{i}" for i in range(10)] if count <= 10 else list(plt.get_cmap("tab20").colors)
    markers = "o" if count <= 10 else "osD^v<>"
    colors = {}
    for s, line, xs, ys in drawn:
        k = colors.setdefault(id(s), len(colors))
        ax.plot(xs, ys, line.style, marker=markers[k % len(markers)], markersize=3,
                color=palette[k % len(palette)],
                label=s.label(with_benchmark=several) + line.suffix)
    size_axis(ax, [x for d in drawn for x in d[2]])
    if spec.ylog:
        log_value_axis(ax, [y for d in drawn for y in d[3]])
    if spec.percent:
        lo = min(min(d[3]) for d in drawn)
        hi = max(max(d[3]) for d in drawn)
        ax.set_ylim(min(0, lo - 5), max(100, hi + 5))
    ax.set_ylabel(spec.ylabel)
    title = spec.title if several else f"{executable(drawn[0][0])}: {spec.title.lower()}"
    return finish(plt, fig, ax, title, context([d[0] for d in drawn]), outdir, spec.name, prefix)


# --- replay: stacked bars ----------------------------------------------------------------

REPLAY_LABEL_KEYS = ("name", "label", "policy", "fusion", "step", "bucket_bytes", "bytes")


def replay_rows(series):
    """(bar label, compute, exposed, other, overlap %) per record that has step_us."""
    rows = []
    for i, r in enumerate(series.records):
        step = cbjson.average(r, "step_us")
        comp = cbjson.number(r, "compute_us") or 0.0
        exposed = cbjson.number(r, "exposed_comm_us") or 0.0
        if step is None:
            continue
        key = next((k for k in REPLAY_LABEL_KEYS if k in r), None)
        label = str(r[key]) if key else f"#{i}"
        if key in ("bytes", "bucket_bytes") and cbjson.number(r, key) is not None:
            label = cbjson.format_size(r[key])
        rows.append((label, comp, exposed, max(0.0, step - comp - exposed),
                     cbjson.number(r, "overlap_pct")))
    return rows


def replay_figure(plt, series, outdir, prefix):
    parts = [(s, replay_rows(s)) for s in series if cbjson.is_replay(s.doc)]
    parts = [(s, rows) for s, rows in parts if rows]
    if not parts:
        return []
    peak = max(c + e + o for _, rows in parts for _, c, e, o, _ in rows)
    scale, unit = (1e3, "ms") if peak > 1e4 else (1.0, "µs")
    fig, axes = plt.subplots(len(parts), 1, figsize=(8, 3.2 * len(parts) + 1), squeeze=False)
    for ax, (s, rows) in zip(axes[:, 0], parts):
        xs = range(len(rows))
        comp = [r[1] / scale for r in rows]
        exposed = [r[2] / scale for r in rows]
        other = [r[3] / scale for r in rows]
        ax.bar(xs, comp, color="C0", label="compute")
        ax.bar(xs, exposed, bottom=comp, color="C3", label="exposed communication")
        if any(other):
            ax.bar(xs, other, bottom=[c + e for c, e in zip(comp, exposed)], color="0.7",
                   label="other (step − compute − exposed)")
        for x, r in zip(xs, rows):
            if r[4] is not None:
                ax.annotate(f"{r[4]:.0f}% overlap", (x, (r[1] + r[2] + r[3]) / scale),
                            ha="center", va="bottom", fontsize="x-small")
        ax.set_xticks(list(xs), [r[0] for r in rows], rotation=30 if len(rows) > 6 else 0)
        ax.set_ylabel(f"Time per step ({unit})")
        ax.set_title(s.label(with_benchmark=False), fontsize=9)
        ax.margins(y=0.15)
        ax.grid(True, axis="y", alpha=0.3)
        ax.legend(fontsize="x-small")
    fig.suptitle("Replay: step time = compute + exposed communication", fontsize=11)
    fig.tight_layout()
    return save(plt, fig, outdir, "replay", prefix)


def save(plt, fig, outdir, name, prefix):
    paths = []
    for fmt in FORMATS:
        path = os.path.join(outdir, f"{prefix}{name}.{fmt}")
        fig.savefig(path, dpi=120, bbox_inches="tight")
        paths.append(path)
    plt.close(fig)
    return paths


def draw_all(plt, series, outdir, prefix):
    written = []
    plain = [s for s in series if not cbjson.is_replay(s.doc)]
    for spec in FIGURES:
        written += line_figure(plt, spec, plain, outdir, prefix)
    return written + replay_figure(plt, series, outdir, prefix)


def main(argv=None):
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `| head` ends quietly
    args = parse_args(sys.argv[1:] if argv is None else argv)
    try:
        series = cbjson.all_series(cbjson.load_all(args.files, args.skip_invalid, PROG))
        os.makedirs(args.outdir, exist_ok=True)
    except cbjson.InputError as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"{PROG}: error: {args.outdir}: cannot create: {e.strerror}", file=sys.stderr)
        return 2
    plt = import_pyplot()
    try:
        if args.per_benchmark:
            written = []
            for bench in dict.fromkeys(s.benchmark for s in series):
                written += draw_all(plt, [s for s in series if s.benchmark == bench],
                                    args.outdir, f"{args.prefix}{bench}.")
        else:
            written = draw_all(plt, series, args.outdir, args.prefix)
    except OSError as e:
        print(f"{PROG}: error: {e.filename or args.outdir}: cannot write: {e.strerror}",
              file=sys.stderr)
        return 2
    if not written:
        print(f"{PROG}: error: nothing to plot: no record has a latency, bandwidth, overlap "
              f"or replay figure at a size above 0", file=sys.stderr)
        return 2
    for path in written:
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
