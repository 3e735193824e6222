#!/usr/bin/env python3
"""Plots collbench result files (collbench.result/1) as PNG and SVG.

  plot.py [-o DIR] [--prefix NAME.] [--per-benchmark] [--copy-bw copy_bw.json]
          [--info info.json] FILE.json ...

Writes, for what the files contain: latency.{png,svg} (latency vs size, log-log),
bandwidth (point-to-point MB/s), busbw and algbw (collectives, GB/s), overlap (non-blocking
collectives, %) and replay (step time breakdown). One curve per run; an `--algo all` run's
algorithms get figures of their own (algos.<figure>). Legends name what differs between
the curves (`MPICH 4.0.2`, `engine, plain buffers`, `engine: ring`), the subtitle what they
share. Bandwidth figures mark the copy bound when cb_copybw's result is given, latency
figures the latency floor (k cache-line hand-offs) when cb_info's is. Needs
matplotlib; if this interpreter lacks it, /usr/bin/python3 (Debian's python3-matplotlib)
is tried. See docs/plots.md.
"""
import argparse
import os
import signal
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cbfloors  # noqa: E402
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
    ap.add_argument("--copy-bw", action="append", default=[], metavar="FILE",
                    help="cb_copybw's result (copy_bw.json): mark the copy bound on bandwidth "
                         "figures (also taken from FILE.json arguments that are one)")
    ap.add_argument("--info", action="append", default=[], metavar="FILE",
                    help="cb_info's document (info.json) with its floors: mark the latency "
                         "floor (k hand-offs) on latency figures of 2-rank runs on its host")
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


# --- which curves: one per run, and each --algo all sweep in a figure of its own -----------

def is_sweep(doc):
    """An `--algo all` run: one document with a result per algorithm at each size."""
    opts = doc.get("options") if isinstance(doc.get("options"), dict) else {}
    return opts.get("algo") == "all"


def is_copy_bw(doc):
    """cb_copybw's document (copy_bw.json): the copy bound, not a curve."""
    return cbjson.text(doc, "benchmark", "name") == "copy_bw"


def tuned_series(sweep):
    """The curve the engine's tuning table would have drawn, picked from an `--algo all`
    sweep: at each size the record of the first rule (the document's backend.tuning, in
    table order) for this collective, memory kind and rank count whose size range holds the
    size and whose algorithm the sweep measured there (the engine takes the first rule whose
    algorithm can run). None when the document has no table or no size matches."""
    first = sweep[0]
    tuning = first.doc.get("backend", {}).get("tuning")
    rules = tuning.get("rules") if isinstance(tuning, dict) else None
    if not isinstance(rules, list):
        return None
    rules = [r for r in rules if isinstance(r, dict)]
    colls = {r.get("coll") for r in rules}
    coll = first.benchmark
    if coll not in colls and coll.startswith("i") and coll[1:] in colls:
        coll = coll[1:]  # non-blocking collectives use the blocking one's rules
    opts = first.doc.get("options") if isinstance(first.doc.get("options"), dict) else {}
    buffers = opts.get("buffers") if isinstance(opts.get("buffers"), list) else []
    mem = "cuda" if "cuda" in buffers or opts.get("accelerator") == "cuda" else "host"
    nranks = (first.doc.get("environment") or {}).get("nranks")

    def applies(rule, size):
        ranks = rule.get("ranks")
        lo_b = rule.get("min_bytes") if isinstance(rule.get("min_bytes"), int) else 0
        hi_b = rule.get("max_bytes") if isinstance(rule.get("max_bytes"), int) else None
        return (rule.get("coll") == coll and rule.get("mem", "host") == mem
                and (not isinstance(ranks, list) or len(ranks) != 2 or nranks is None
                     or ranks[0] <= nranks <= ranks[1])
                and lo_b <= size and (hi_b is None or size <= hi_b))

    by_size = {}
    for s in sweep:
        for r in s.records:
            by_size.setdefault(int(cbjson.number(r, "bytes") or 0), {})[s.algo] = r
    picked = []
    for size, algos in sorted(by_size.items()):
        rule = next((r for r in rules if applies(r, size) and r.get("algo") in algos), None)
        if rule is not None:
            picked.append(algos[rule["algo"]])
    if not picked:
        return None
    s = cbjson.Series(first.path, first.doc, "", picked)
    s.note = " (table's choice from --algo all)"
    return s


def arrange(series):
    """(main, sweeps, copies): one curve per run for the comparison figures (an `--algo all`
    run is left out when a run of the same setup let the engine choose, else drawn as its
    tuning table's choice); each sweep as (its per-algorithm series, the tuned curve or
    None); the cb_copybw documents."""
    copies = list({s.path: s.doc for s in series if is_copy_bw(s.doc)}.values())
    plain = [s for s in series if not cbjson.is_replay(s.doc) and not is_copy_bw(s.doc)]
    main = [s for s in plain if not is_sweep(s.doc)]
    sweeps = {}
    for s in plain:
        if is_sweep(s.doc):
            sweeps.setdefault(s.path, []).append(s)
    groups = []
    for sweep in sweeps.values():
        want = facets(sweep[0], algo=False)
        ref = next((s for s in main if facets(s, algo=False) == want), None)
        if ref is None:
            ref = tuned_series(sweep)
            if ref is not None:
                main.append(ref)
        groups.append((sweep, ref))
    return main, groups, copies


# --- legend labels: what differs between the curves of one figure -------------------------

ROOTED = {"bcast", "ibcast", "reduce", "ireduce"}


def _opts(s):
    return s.doc.get("options") if isinstance(s.doc.get("options"), dict) else {}


def _env(s):
    return s.doc.get("environment") if isinstance(s.doc.get("environment"), dict) else {}


def _has(s, key):
    """Whether the run's records carry `key` (an option that applies to this benchmark)."""
    return any(key in r for r in s.records)


def facets(s, algo=True):
    """What can tell one curve from another, by facet name: None where the run does not
    have it. Options that do not apply to a benchmark (the test calls of a blocking one)
    are left out by the fields its records carry."""
    opt, env, be = _opts(s), _env(s), s.doc.get("backend") or {}
    buffers = opt.get("buffers")
    shm = be.get("shared_memory")
    f = {
        "benchmark": s.benchmark,
        "backend": (s.backend, s.library),
        "algo": s.algo or (opt.get("algo") if opt.get("algo") not in (None, "", "all") else ""),
        "shared_memory": ("off" if shm.startswith("off") else "on") if isinstance(shm, str)
        else None,
        "alloc": opt.get("alloc") or "backend",
        "buffers": "→".join(dict.fromkeys(buffers)) if isinstance(buffers, list) and buffers
        else None,
        "dtype": (s.records[0].get("dtype") or opt.get("dtype")) if _has(s, "dtype") else None,
        "op": opt.get("op") if _has(s, "op") else None,
        "in_place": bool(opt.get("in_place")) if _has(s, "in_place") else None,
        "root": opt.get("root") if s.benchmark in ROOTED else None,
        "counts": (opt.get("counts") or "uniform") if _has(s, "counts") else None,
        "test_calls": opt.get("test_calls") if _has(s, "test_calls") else None,
        "progress_thread": bool(opt.get("progress_thread") or be.get("progress_thread")),
        "window": opt.get("window") if _has(s, "window") else None,
        "pairs": cbjson.number(s.records[0], "pairs") if s.benchmark == "mbw_mr" else None,
        "wait_mode": env.get("wait_mode"),
        "nranks": env.get("nranks"),
        "host": s.host,
        "build": cbjson.text(env, "collbench", "git_revision") or None,
    }
    if not algo:
        del f["algo"]
    return f


def _nodefault(value, default, text):
    return "" if value == default else text


# How a facet reads in a legend (differing) and in the subtitle (common); "" says nothing.
RENDER = {
    "shared_memory": lambda v: _nodefault(v, "on", "no shared memory"),
    "alloc": lambda v: _nodefault(v, "backend", f"{v} buffers"),
    "buffers": lambda v: f"{v} memory",
    "dtype": str,
    "op": str,
    "in_place": lambda v: "in place" if v else "",
    "root": lambda v: _nodefault(v, "fixed:0", "rotating root" if v == "rotate"
                                 else f"root {str(v).replace('fixed:', '')}"),
    "counts": lambda v: _nodefault(v, "uniform", f"{v} counts"),
    "test_calls": lambda v: f"{v} test calls" if v else "no test calls",
    "progress_thread": lambda v: "progress thread" if v else "",
    "window": lambda v: f"window {v}",
    "pairs": lambda v: f"{v:g} pairs",
    "wait_mode": lambda v: _nodefault(v, "spin", f"{v}-wait"),
    "nranks": lambda v: f"{v} ranks",
    "build": lambda v: f"build {v}",
}


def _head(s, differs, engine_libs):
    """The backend, as a legend names it: the library where backends or versions differ
    ('MPICH 4.0.2', 'NCCL 2.28.9'; the engine stays 'engine', with its version only when
    two engine versions are plotted), else the backend's short name."""
    if not differs or not s.library:
        return s.backend or "?"
    if s.library.startswith("collbench "):
        return s.library[len("collbench "):] if len(engine_libs) > 1 else s.backend
    return s.library


def _unfinished(s):
    status = cbjson.text(s.doc, "status")
    return "" if status in ("complete", "validation_failed") else f" [{status}]"


def legend_labels(curves, unnamed_algo=""):
    """The legend label of each curve: its backend, then only the facets whose values differ
    between these curves (algorithm as 'engine: ring', 'plain buffers', 'MPICH 4.0.2', ...);
    what they share goes to common_text(). Labels that still coincide get the file name,
    then a number. `unnamed_algo`: how to name a run that let the engine choose, in a figure
    of algorithms ('tuned')."""
    vals = [facets(c) for c in curves]
    differ = {k for k in vals[0] if len({repr(v[k]) for v in vals}) > 1} if vals else set()
    engine_libs = {c.library for c in curves if c.library.startswith("collbench ")}
    labels = []
    for c, v in zip(curves, vals):
        parts = [c.benchmark] if "benchmark" in differ else []
        head = _head(c, "backend" in differ, engine_libs)
        algo = v["algo"] or unnamed_algo
        parts.append(f"{head}: {algo}" if "algo" in differ and algo else head)
        for key, render in RENDER.items():
            if key in differ and v[key] is not None:
                text = render(v[key])
                if text:
                    parts.append(text)
        where = f" @ {v['host']}" if "host" in differ else ""
        labels.append(", ".join(parts) + where + getattr(c, "note", "") + _unfinished(c))
    return unique(labels, curves)


def unique(labels, curves):
    """Labels that still coincide get their file names where the files differ, then
    '#2', '#3', ... in order."""
    labels = list(labels)
    for by_file in (True, False):
        same = {}
        for i, label in enumerate(labels):
            same.setdefault(label, []).append(i)
        for group in same.values():
            if len(group) < 2:
                continue
            if by_file and len({curves[i].path for i in group}) > 1:
                for i in group:
                    labels[i] += f" [{os.path.basename(curves[i].path)}]"
            elif not by_file:
                for n, i in enumerate(group[1:], start=2):
                    labels[i] += f" #{n}"
    return labels


def common_text(curves):
    """Subtitle: what all the curves of a figure share (library, ranks and host, dtype and
    op, memory, ...), so that their legend labels need not repeat it."""
    vals = [facets(c) for c in curves]
    if not vals:
        return ""
    common = {k: vals[0][k] for k in vals[0]
              if vals[0][k] is not None and len({repr(v[k]) for v in vals}) == 1}
    parts = []
    version = cbjson.text(_env(curves[0]), "collbench", "version")
    engines = {c.library for c in curves if c.library.startswith("collbench ")}
    if "backend" in common and not engines:
        parts.append(curves[0].library or curves[0].backend)  # 'MPICH 4.0.2'
    elif len(engines) == 1 and not ("build" in common and version
                                    and engines == {f"collbench engine {version}"}):
        parts.append(engines.pop())  # the engine's version, unless the build says it
    if common.get("algo"):
        parts.append(f"algorithm {common['algo']}")
    if "shared_memory" in common and common["shared_memory"] == "off":
        parts.append("engine without shared memory")
    where = []
    if "nranks" in common:
        where.append(RENDER["nranks"](common["nranks"]))
    if "host" in common:
        where.append(f"on {common['host']}")
    if where:
        parts.append(" ".join(where))
    if "dtype" in common or "op" in common:
        parts.append(" ".join(str(common[k]) for k in ("dtype", "op") if k in common))
    for key in ("buffers", "alloc", "in_place", "root", "counts", "test_calls",
                "progress_thread", "window", "pairs"):
        if key in common:
            text = RENDER[key](common[key])
            if text:
                parts.append(text)
    if "build" in common:
        parts.append(f"collbench {version} ({common['build']})" if version
                     else f"collbench build {common['build']}")
    if any(v["wait_mode"] == "yield" for v in vals):
        parts.append("yield-wait mode: for relative comparisons only")
    return ", ".join(parts)


# --- the copy bound ----------------------------------------------------------------------

COPY_ONE, COPY_ALL = "copy_GBps_1_thread", "copy_GBps_all_threads"


def copy_rates(copies, host, size):
    """(bytes, 1-thread GB/s, all-threads GB/s) of cb_copybw on `host` at the largest size
    it measured up to `size` (the largest message of the figure: where bandwidth curves
    level off), else at its smallest; None when no cb_copybw run is from that host."""
    rows = []
    for doc in copies:
        if cbjson.text(doc, "environment", "hostname", default="?") != host:
            continue
        for r in doc.get("results") or []:
            row = tuple(cbjson.number(r, k) for k in ("bytes", COPY_ONE, COPY_ALL))
            if None not in row:
                rows.append(row)
    if not rows:
        return None
    below = [r for r in rows if r[0] <= size]
    return max(below) if below else min(rows)


def copy_bound(spec_name, s, copies, size):
    """(the copy bound of one curve in the figure's unit: busbw, algbw GB/s, bandwidth
    MB/s; the cb_copybw size it is from), or None when unknown (no cb_copybw run on its
    host, several nodes, a benchmark without a rule). docs/methodology.md, "The copy
    bound": one copy at a time runs at the 1-thread rate; k > 1 copies that run at once
    share the all-threads rate, each also held to the 1-thread rate (a rank copies on one
    thread)."""
    env = _env(s)
    n = env.get("nranks")
    rates = copy_rates(copies, s.host, size)
    if (rates is None or not isinstance(n, int) or n < 2
            or (isinstance(env.get("nodes"), int) and env["nodes"] > 1)):
        return None
    copied, one, every = rates
    if spec_name == "bandwidth":
        pairs = cbjson.number(s.records[0], "pairs") or max(1, n // 2)
        gbps = {"bw": one, "bibw": min(2 * one, every),
                "mbw_mr": min(pairs * one, every)}.get(s.benchmark)
        return (gbps * 1e3, copied) if gbps is not None else None
    if spec_name not in ("busbw", "algbw") or s.benchmark in ("barrier", "ibarrier"):
        return None
    # busbw: what each rank must move, per second, at the rate of one of k copies that run
    # at once. Rooted collectives: the n - 1 other ranks' (bcast into them, reduce out of
    # them); the rest: all n ranks'.
    k = n - 1 if s.benchmark in ROOTED else n
    busbw = one if k == 1 else min(one, every / k)
    if spec_name == "busbw":
        return busbw, copied
    factor = next((cbjson.number(r, "bus_factor") for r in s.records
                   if cbjson.number(r, "bus_factor")), None)
    return (busbw / factor, copied) if factor else None


def copy_bound_lines(spec, curves, copies):
    """[(value, label)]: one dashed line per distinct copy bound of the plotted curves."""
    sizes = [x for s in curves for line in spec.lines for x in points(s, line)[0]]
    bounds = {}
    for s in curves:
        b = copy_bound(spec.name, s, copies, max(sizes)) if sizes else None
        if b is not None:
            bounds.setdefault((float(f"{b[0]:.3g}"), b[1]), []).append(s.benchmark)
    unit = "MB/s" if spec.name == "bandwidth" else "GB/s"
    lines = []
    for (value, copied), benches in sorted(bounds.items()):
        which = f", {', '.join(dict.fromkeys(benches))}" if len(bounds) > 1 else ""
        lines.append((value, f"copy bound {value:g} {unit} "
                             f"({cbjson.size_text(copied)} memcpy{which})"))
    return lines


# --- the latency floor ----------------------------------------------------------------------

def floor_lines(spec, curves, floors):
    """[(value, label)]: one dotted line per distinct latency floor (cb_info's k hand-offs)
    of the curves of a latency figure whose runs the floors apply to (2 ranks, the host
    cb_info ran on)."""
    if spec.name != "latency" or not floors:
        return []
    found = {}
    for s in curves:
        for f in floors:
            line = cbfloors.latency_line(f, s.benchmark) if cbfloors.applies(f, s.doc) else None
            if line is not None:
                found.setdefault((float(f"{line[0]:.3g}"), line[1], f["host"]),
                                 []).append(s.benchmark)
                break
    out = []
    for (value, k, host), benches in sorted(found.items()):
        which = f", {', '.join(dict.fromkeys(benches))}" if len(found) > 1 else ""
        out.append((value, f"latency floor {value:g} µs ({k} hand-off{'s' if k > 1 else ''}"
                           f", cb_info{which})"))
    return out


# --- drawing -----------------------------------------------------------------------------

def size_axis(ax, sizes):
    """Log2 message-size axis labelled 1 B, 4 B, ..., 1 KiB, 4 KiB, ... (at most ~12 ticks)."""
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator
    lo, hi = min(sizes).bit_length() - 1, max(sizes).bit_length() - 1
    step = max(1, (hi - lo + 11) // 12)
    ax.set_xscale("log", base=2)
    ax.xaxis.set_major_locator(FixedLocator([2 ** e for e in range(lo, hi + 1, step)]))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: cbjson.size_text(v)))
    ax.set_xlabel("Message size")


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


def finish(plt, fig, ax, title, sub, outdir, name, prefix, handles=None):
    import textwrap
    sub = "\n".join(textwrap.wrap(sub, 100)) if sub else ""
    ax.set_title(title + (f"\n{sub}" if sub else ""), fontsize=11 if not sub else 10)
    ax.grid(True, which="both", alpha=0.3)
    handles = handles if handles is not None else ax.get_legend_handles_labels()[0]
    if handles:
        if len(handles) <= 6:
            ax.legend(handles=handles, fontsize="small")
        else:
            ax.legend(handles=handles, fontsize="x-small", loc="upper center",
                      bbox_to_anchor=(0.5, -0.15), ncol=2)
    return save(plt, fig, outdir, name, prefix)


BACKEND_ORDER = {"mpi": 0, "nccl": 1, "engine": 2}


def ordered(curves, labels):
    """Curves in a stable reading order: MPI, NCCL, the engine, then variants after the
    run they vary (fewer facets named first)."""
    keyed = sorted(zip(curves, labels), key=lambda cl: (
        cl[0].benchmark, BACKEND_ORDER.get(cl[0].backend, 3), cl[1].count(","), cl[1]))
    return [c for c, _ in keyed], [lb for _, lb in keyed]


def line_figure(plt, spec, series, outdir, prefix, copies=(), name=None, title=None,
                references=(), unnamed_algo="", floors=()):
    """One figure of `spec` over `series`, one colour each; `references` (curves of
    `series`: the runs an --algo all sweep is measured against) are dashed, and black when
    there is one. With the copy bound and the latency floor when known."""
    from matplotlib.lines import Line2D
    curves = [s for s in series if any(points(s, line)[0] for line in spec.lines)]
    if not curves:
        return []
    curves, labels = ordered(curves, legend_labels(curves, unnamed_algo))
    drawn = [(s, lb, line, *points(s, line)) for s, lb in zip(curves, labels)
             for line in spec.lines]
    drawn = [d for d in drawn if d[3]]
    fig, ax = plt.subplots(figsize=(8, 5))
    several = len({s.benchmark for s in curves}) > 1
    # Up to 10 series: the default cycle; more: tab20, and markers that cycle differently,
    # so that no two lines share both colour and marker.
    count = len(curves)
    palette = [f"C{i}" for i in range(10)] if count <= 10 else list(plt.get_cmap("tab20").colors)
    markers = "o" if count <= 10 else "osD^v<>"
    # Line kinds (overlap: OMB solid, IMB dashed): named once in the legend when several
    # are drawn; a suffix every line shares goes to the title.
    styles = list(dict.fromkeys((d[2].suffix, d[2].style) for d in drawn))
    suffixes = {d[2].suffix for d in drawn}
    by_style = len(styles) > 1 and len({st for _, st in styles}) == len(styles)
    handles, colors, seen = [], {}, set()
    for s, lb, line, xs, ys in drawn:
        k = colors.setdefault(id(s), len(colors))
        ref = any(s is r for r in references)
        color = "black" if ref and len(references) == 1 else palette[k % len(palette)]
        style = "--" if ref and not by_style else line.style
        label = lb if by_style or len(suffixes) == 1 else lb + line.suffix
        h, = ax.plot(xs, ys, style, marker=markers[k % len(markers)], markersize=3,
                     color=color, label=label, zorder=3 if ref else 2)
        if not by_style:
            handles.append(h)
        elif id(s) not in seen:  # one entry per curve; the line kinds get their own
            seen.add(id(s))
            handles.append(Line2D([], [], color=color, marker=h.get_marker(), markersize=3,
                                  label=label))
    if by_style:
        handles += [Line2D([], [], color="0.4", linestyle=st, label=suf.strip(" ()"))
                    for suf, st in styles]
    for value, text in copy_bound_lines(spec, curves, copies):
        handles.append(ax.axhline(value, color="0.35", linestyle=(0, (6, 3)), linewidth=1.2,
                                  label=text, zorder=1))
    for value, text in floor_lines(spec, curves, floors):
        handles.append(ax.axhline(value, color="0.2", linestyle=(0, (1, 2)), linewidth=1.4,
                                  label=text, zorder=1))
    size_axis(ax, [x for d in drawn for x in d[3]])
    if spec.ylog:
        log_value_axis(ax, [y for d in drawn for y in d[4]] +
                       [v for v, _ in floor_lines(spec, curves, floors)])
    if spec.percent:
        lo = min(min(d[4]) for d in drawn)
        hi = max(max(d[4]) for d in drawn)
        ax.set_ylim(min(0, lo - 5), max(100, hi + 5))
    ax.set_ylabel(spec.ylabel)
    if title is None:
        title = spec.title if several else f"{executable(curves[0])}: {spec.title.lower()}"
    if len(suffixes) == 1 and suffixes != {""}:
        title += suffixes.pop()
    return finish(plt, fig, ax, title, common_text(curves), outdir, name or spec.name, prefix,
                  handles)


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
            label = cbjson.size_text(r[key])
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
        # no date in the SVG and fixed element ids, so that plotting the same results again
        # writes the same file (committed plots do not change for nothing)
        meta = {"Date": None} if fmt == "svg" else None
        with plt.rc_context({"svg.hashsalt": f"{prefix}{name}"}):
            fig.savefig(path, dpi=120, bbox_inches="tight", metadata=meta)
        paths.append(path)
    plt.close(fig)
    return paths


def draw_all(plt, series, outdir, prefix, copies=(), floors=()):
    """The comparison figures (one curve per run), each --algo all sweep's figures
    (`algos.<figure>`: one curve per algorithm, with the run that let the engine choose,
    black and dashed), and the replay bars."""
    main, sweeps, found = arrange(series)
    copies = list(copies) + found
    written = []
    for spec in FIGURES:
        written += line_figure(plt, spec, main, outdir, prefix, copies, floors=floors)
    refs = list({id(ref): ref for _, ref in sweeps if ref is not None}.values())
    curves = [s for sweep, _ in sweeps for s in sweep] + refs
    for spec in FIGURES if curves else ():
        several = len({s.benchmark for s in curves}) > 1
        title = (f"{spec.title}, each algorithm (--algo all)" if several else
                 f"{executable(curves[0])}: {spec.title.lower()}, each algorithm (--algo all)")
        written += line_figure(plt, spec, curves, outdir, prefix, copies,
                               name=f"algos.{spec.name}", title=title, references=refs,
                               unnamed_algo="tuned", floors=floors)
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
    copies = [doc for path, doc in dict((s.path, s.doc) for s in series).items()
              if is_copy_bw(doc)]
    try:
        copies += [cbjson.load(path) for path in args.copy_bw]
        floors = [cbfloors.read_info(path) for path in args.info]
    except cbjson.InputError as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return 2
    series = [s for s in series if not is_copy_bw(s.doc)]
    try:
        if args.per_benchmark:
            written = []
            for bench in dict.fromkeys(s.benchmark for s in series):
                written += draw_all(plt, [s for s in series if s.benchmark == bench],
                                    args.outdir, f"{args.prefix}{bench}.", copies, floors)
        else:
            written = draw_all(plt, series, args.outdir, args.prefix, copies, floors)
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
