"""Reading collbench result files (collbench.result/1) for plot.py and compare.py.

Standard library only. A file that cannot be used raises InputError, whose text is one line
naming the file and the problem. Records are read by the fields they have (see
docs/json-schema.md); unknown fields are ignored.
"""
import json
import math
import os
import sys

SCHEMA = "collbench.result/1"


class InputError(Exception):
    """A file that is not a usable collbench result: str(e) is one line naming the file."""


# --- loading -----------------------------------------------------------------------------

def load(path):
    """Reads and checks one result file; returns the document (a dict)."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        raise InputError(f"{path}: cannot read: {e.strerror}") from None
    except UnicodeDecodeError:
        raise InputError(f"{path}: not a text (UTF-8) file") from None
    if not text.strip():
        raise InputError(f"{path}: empty file")
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        truncated = " (file truncated?)" if e.pos >= len(text.rstrip()) else ""
        raise InputError(f"{path}: not valid JSON: {e.msg} at line {e.lineno} "
                         f"column {e.colno}{truncated}") from None
    check(doc, path)
    return doc


def packed_texts(folder, sub="raw"):
    """[(path, text)] of FOLDER/SUB/*.json, or, where that folder has none, of
    FOLDER/SUB.tar.xz's SUB/*.json (a committed run keeps its hundreds of documents packed:
    scripts/verdict_check.py, compare_mpis.py); [] when neither exists. InputError for a
    file or archive that cannot be read."""
    import glob
    paths = sorted(glob.glob(os.path.join(folder, sub, "*.json")))
    out = []
    for path in paths:
        try:
            with open(path, encoding="utf-8") as f:
                out.append((path, f.read()))
        except (OSError, UnicodeDecodeError) as e:
            raise InputError(f"{path}: cannot read: {e}") from None
    packed = os.path.join(folder, sub + ".tar.xz")
    if out or not os.path.exists(packed):
        return out
    import re
    import tarfile
    member = re.compile(rf"^{re.escape(sub)}/[^/]+\.json$")
    try:
        with tarfile.open(packed, "r:xz") as tar:
            return sorted((os.path.join(folder, m.name), tar.extractfile(m).read().decode())
                          for m in tar.getmembers() if m.isfile() and member.match(m.name))
    except (OSError, tarfile.TarError, UnicodeDecodeError) as e:
        raise InputError(f"{packed}: {e}") from None


def check(doc, path):
    """Raises InputError unless doc is a collbench result with at least one usable record."""
    def bad(problem):
        raise InputError(f"{path}: {problem}")

    if not isinstance(doc, dict):
        bad(f"not a collbench result: the top level is a JSON {type(doc).__name__}, not an object")
    if doc.get("schema") != SCHEMA:
        bad(f"not a collbench result: schema is {doc.get('schema')!r}, expected {SCHEMA!r}")
    for key in ("benchmark", "backend"):
        if not isinstance(doc.get(key), dict) or not isinstance(doc[key].get("name"), str):
            bad(f"malformed result: '{key}' is missing or has no 'name'")
    results = doc.get("results")
    if not isinstance(results, list):
        bad("malformed result: 'results' is missing or not an array")
    if not results:
        why = doc.get("status_detail") or doc.get("status", "?")
        bad(f"no results: the run measured nothing (status: {why})")
    for i, rec in enumerate(results):
        if not isinstance(rec, dict):
            bad(f"malformed result: results[{i}] is not an object")
        if not is_replay(doc) and number(rec, "bytes") is None:
            bad(f"malformed result: results[{i}] has no numeric 'bytes'")


def load_all(paths, skip_invalid=False, prog="collbench"):
    """[(path, doc)]. With skip_invalid, unusable files are reported on stderr and left
    out; InputError only when none is left."""
    loaded = []
    for path in paths:
        try:
            loaded.append((path, load(path)))
        except InputError as e:
            if not skip_invalid:
                raise
            print(f"{prog}: warning: {e} (skipped)", file=sys.stderr)
    if not loaded:
        raise InputError("no usable result file among: " + ", ".join(paths))
    return loaded


# --- fields ------------------------------------------------------------------------------

def number(obj, *keys):
    """obj[k1][k2]... when it is a finite number, else None."""
    for k in keys:
        if not isinstance(obj, dict) or k not in obj:
            return None
        obj = obj[k]
    if isinstance(obj, bool) or not isinstance(obj, (int, float)) or not math.isfinite(obj):
        return None
    return float(obj)


def average(obj, key):
    """obj[key]['avg'] for statistics blocks (cb_replay's step_us), or obj[key] if a number."""
    return _first(number(obj, key, "avg"), number(obj, key))


def text(obj, *keys, default=""):
    for k in keys:
        if not isinstance(obj, dict) or k not in obj:
            return default
        obj = obj[k]
    return obj if isinstance(obj, str) else default


def is_replay(doc):
    return text(doc, "benchmark", "name") == "replay"


def short_library(lib):
    """For legends: 'MPICH Version: 4.0.2' -> 'MPICH 4.0.2'; 'collbench engine 0.1.0,
    transport: ...' -> 'collbench engine 0.1.0' (what follows a comma is left out)."""
    return " ".join(lib.split(",")[0].replace("Version:", " ").split())


# --- metrics -----------------------------------------------------------------------------

class Metric:
    """One figure of a record: how to read it, its unit, and which direction is better.
    `figures`: the `repeat.figure` values (--repeat) whose pass times this metric follows:
    in proportion for a time, inversely for a rate (lower_is_better tells which)."""

    def __init__(self, name, title, unit, lower_is_better, getter, figures=()):
        self.name, self.title, self.unit = name, title, unit
        self.lower_is_better = lower_is_better
        self.get = getter  # record -> float or None
        self.figures = figures


METRICS = {
    # latency_us.avg: pt2pt one-way latency and blocking collectives (OMB's average);
    # pure_comm_us.avg: the communication time of non-blocking collectives.
    "latency": Metric("latency", "latency", "us", True,
                      lambda r: _first(number(r, "latency_us", "avg"),
                                       number(r, "pure_comm_us", "avg")),
                      ("latency_us.avg", "pure_comm_us.avg")),
    "bandwidth": Metric("bandwidth", "bandwidth", "MB/s", False,
                        lambda r: number(r, "bandwidth_MBps"), ("bandwidth_MBps",)),
    "busbw": Metric("busbw", "bus bandwidth", "GB/s", False, lambda r: number(r, "busbw_GBps"),
                    ("latency_us.avg",)),
    "algbw": Metric("algbw", "algorithm bandwidth", "GB/s", False,
                    lambda r: number(r, "algbw_GBps"), ("latency_us.avg",)),
}


def repeat_passes(rec):
    """The number of passes of a record measured with --repeat N > 1, else None."""
    rep = rec.get("repeat") if isinstance(rec, dict) else None
    passes = number(rep, "passes")
    return int(passes) if passes is not None and passes > 1 else None


def repeat_range(rec, metric):
    """(low, high) of the metric over the record's --repeat passes, or None when the record
    has no repeat data for it. The reported figure comes from one pass (reported_pass); the
    others' figures follow from their times: value x t / t_reported for a time, value x
    t_reported / t for a rate (bandwidths are bytes over that time)."""
    if repeat_passes(rec) is None:
        return None
    rep = rec["repeat"]
    value = metric.get(rec)
    times = rep.get("pass_us")
    index = number(rep, "reported_pass")
    lo, hi = number(rep, "min_us"), number(rep, "max_us")
    if (value is None or rep.get("figure") not in metric.figures or not isinstance(times, list)
            or index is None or not 0 <= index < len(times) or lo is None or hi is None):
        return None
    t_rep = times[int(index)]
    if isinstance(t_rep, bool) or not isinstance(t_rep, (int, float)) or not t_rep > 0 \
            or not lo > 0:
        return None
    if metric.lower_is_better:
        return (value * lo / t_rep, value * hi / t_rep)
    return (value * t_rep / hi, value * t_rep / lo)


def _first(*values):
    return next((v for v in values if v is not None), None)


# --- series: one line of a plot, one column of a comparison -------------------------------

class Series:
    """The records of one file that share an algorithm, sorted by message size."""

    def __init__(self, path, doc, algo, records):
        self.path, self.doc, self.algo = path, doc, algo
        self.records = sorted(records, key=lambda r: number(r, "bytes") or 0)
        self.benchmark = text(doc, "benchmark", "name")
        self.backend = text(doc, "backend", "name")
        self.library_full = text(doc, "backend", "library")
        self.library = short_library(self.library_full)
        self.host = text(doc, "environment", "hostname", default="?")
        self.suffix = ""  # set by disambiguate() when two series would read the same

    @property
    def name(self):
        """'mpi', 'engine/ring'."""
        return self.backend + (f"/{self.algo}" if self.algo else "")

    def label(self, with_benchmark=True):
        lib = f" ({self.library})" if self.library else ""
        status = text(self.doc, "status")
        unfinished = "" if status in ("complete", "validation_failed") else f" [{status}]"
        bench = f"{self.benchmark} " if with_benchmark else ""
        return f"{bench}{self.name}{lib} @ {self.host}{unfinished}{self.suffix}"

    def values(self, metric):
        """{bytes: value} of the records that have the metric."""
        out = {}
        for r in self.records:
            v = metric.get(r)
            if v is not None:
                out[int(number(r, "bytes") or 0)] = v
        return out

    def ranges(self, metric):
        """{bytes: (low, high)} over --repeat passes, for records that have repeat data."""
        out = {}
        for r in self.records:
            rng = repeat_range(r, metric)
            if rng is not None:
                out[int(number(r, "bytes") or 0)] = rng
        return out

    def passes(self):
        """The --repeat pass count of the series (its first record's), or None."""
        return next((p for p in map(repeat_passes, self.records) if p), None)

    def describe(self):
        return {"file": self.path, "label": self.label(with_benchmark=False),
                "benchmark": self.benchmark,
                "backend": self.backend, "algo": self.algo, "library": self.library_full,
                "host": self.host}


def series_of(path, doc):
    """An `--algo all` document gives one Series per algorithm (records' 'algo'), a `-T`
    list or `-T all` one per type (records' 'dtype'); any other is one Series, whatever
    algorithm the backend selected at each size: one curve, as a user of the backend sees
    it."""
    inter = doc.get("interleave")
    if isinstance(inter, dict) and isinstance(inter.get("series"), list):
        return interleaved_series(path, doc, inter["series"])
    opts = doc.get("options") if isinstance(doc.get("options"), dict) else {}
    by_algo = opts.get("algo") == "all"
    by_type = isinstance(opts.get("dtypes"), list) and len(opts["dtypes"]) > 1
    if not by_algo and not by_type:
        return [Series(path, doc, "", doc["results"])]
    groups = {}
    for rec in doc["results"]:
        algo = rec.get("algo") if by_algo and isinstance(rec.get("algo"), str) else ""
        dtype = rec.get("dtype") if by_type else None
        groups.setdefault((algo, dtype), []).append(rec)
    out = []
    for (algo, dtype), recs in groups.items():
        s = Series(path, doc, algo, recs)
        if dtype:
            s.suffix = f" [{dtype}]"
        out.append(s)
    return out


def interleaved_series(path, doc, declared):
    """An interleaved run (--backend mpi,engine, docs/statistics.md): one Series per
    declared series, of the records whose 'series' names it, with that series' backend."""
    out = []
    for d in declared:
        if not isinstance(d, dict):
            continue
        recs = [r for r in doc["results"] if r.get("series") == d.get("name")]
        if not recs:
            continue
        s = Series(path, doc, d.get("algo") or "", recs)
        s.backend = d.get("backend") or s.backend
        s.library_full = d.get("library") or s.library_full
        s.library = short_library(s.library_full)
        if d.get("name") and d["name"] != s.name:  # mpi.2, engine/plain
            s.suffix = f" [{d['name']}]"
        out.append(s)
    return out


def all_series(loaded):
    out = [s for path, doc in loaded for s in series_of(path, doc)]
    disambiguate(out)
    return out


def disambiguate(series):
    """Two series from different files with the same label get the file name appended."""
    seen = {}
    for s in series:
        seen.setdefault(s.label(), []).append(s)
    for same in seen.values():
        if len({s.path for s in same}) > 1:
            for s in same:
                s.suffix = f" [{os.path.basename(s.path)}]"


def setup_key(doc):
    """What must match for two runs to be comparable: benchmark, ranks, buffers, dtype, op,
    and alltoallv's count pattern (a Zipf-skewed run is not compared with a uniform one)."""
    opt = doc.get("options") if isinstance(doc.get("options"), dict) else {}
    env = doc.get("environment") if isinstance(doc.get("environment"), dict) else {}
    buffers = opt.get("buffers", opt.get("accelerator", ""))
    return (text(doc, "benchmark", "name"), env.get("nranks"), json.dumps(buffers),
            opt.get("dtype", ""), opt.get("op", ""), opt.get("counts", "uniform"))


def size_text(b):
    """1024 -> '1 KiB', 3 -> '3 B' (the tables' notation; format_size is the -m option's)."""
    b = int(b)
    for unit, div in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if b >= div and b % div == 0:
            return f"{b // div} {unit}"
    return f"{b} B"


def format_size(n):
    """1024 -> '1K', 3 -> '3', 1536 -> '1536' (the -m option's notation)."""
    n = int(n)
    for shift, unit in ((30, "G"), (20, "M"), (10, "K")):
        if n >= 1 << shift and n % (1 << shift) == 0:
            return f"{n >> shift}{unit}"
    return str(n)
