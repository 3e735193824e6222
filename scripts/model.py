#!/usr/bin/env python3
"""A performance model of collective algorithms, fitted to collbench results.

  model.py [options] FIT.json [...] [--check MEASURED.json [...]]

1. Fits Hockney's model (T = alpha + beta x m, and alpha-beta-gamma for reductions) to every
   (platform, benchmark, algorithm) of the FIT files by least squares on the relative error
   of the per-size time, and reports the fit error per size range.
2. Projects allreduce, bcast, alltoall, allgather, reduce_scatter, reduce and barrier to
   other rank counts with each algorithm's cost formula (Thakur, Rabenseifner and Gropp
   2005; Chan et al. 2007), and says which algorithm should win where (Markdown, JSON, and
   one PNG of time vs ranks per platform).
3. --check compares the projection with MEASURED runs at other rank counts.

Without -o the report is printed (Markdown); with -o DIR it is written to DIR/model.md and
DIR/model.json, with the plots. Standard library; the plots need matplotlib (without it
they are left out with a warning). Exit status 2 on bad input. See docs/model.md.
"""
import argparse
import itertools
import json
import math
import os
import re
import signal
import sys
import textwrap
from collections import namedtuple

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cbjson  # noqa: E402

PROG = "model.py"
SCHEMA = "collbench.model/1"
KIB, MIB = 1 << 10, 1 << 20

# Fit errors are reported per size range: latency-bound, in between, bandwidth-bound.
SIZE_RANGES = (("<= 8 KiB", lambda m: m <= 8 * KIB),
               ("8 KiB - 1 MiB", lambda m: 8 * KIB < m < MIB),
               (">= 1 MiB", lambda m: m >= MIB))

DEFAULT_RANKS = "2:4096"
DEFAULT_SIZES = "8,1K,64K,1M,16M,64M"
DEFAULT_PLOT_SIZES = "8,64K,16M"
# The engine's default CB_BCAST_SEGMENT_BYTES: the chain bcast's pipeline unit.
CHAIN_SEGMENT_BYTES = 128 * KIB


class UsageError(Exception):
    """Bad options or files: reported on one line, exit status 2."""


# --- cost formulas -------------------------------------------------------------------------

# alpha: us per message; beta: us per byte sent; gamma: us per byte reduced (None: unknown).
Params = namedtuple("Params", "alpha beta gamma")
PARAM_NAMES = Params._fields


class Cost(namedtuple("Cost", "alpha beta gamma")):
    """Coefficients of T = alpha x a + beta x b + gamma x c on the critical path: a messages
    in sequence, b bytes sent, c bytes reduced."""
    __slots__ = ()

    def __add__(self, other):
        return Cost(*(x + y for x, y in zip(self, other)))

    def time(self, params):
        """T in us, or None when a parameter this cost needs is unknown."""
        total = 0.0
        for coefficient, value in zip(self, params):
            if coefficient:
                if value is None:
                    return None
                total += coefficient * value
        return total


NO_COST = Cost(0, 0, 0)


def ceil_log2(p):
    return (p - 1).bit_length()


def largest_power_of_two(p):
    return 1 << (p.bit_length() - 1)


def is_power_of_two(p):
    return p == largest_power_of_two(p)


def power_of_two_fold(p, m, returns_result=True):
    """Extra cost for p not a power of two (MPICH's and the engine's fold): the ranks beyond
    the largest power of two hand their vector to a neighbour, which reduces it, before the
    power-of-two core, and get the result back after it (allreduce; not reduce)."""
    if is_power_of_two(p):
        return NO_COST
    hand_in = Cost(1, m, m)
    return hand_in + Cost(1, m, 0) if returns_result else hand_in


# Every formula takes the rank count p and the message size m as collbench's `bytes` gives
# it: per rank (allreduce, bcast, reduce), the block per rank (allgather, reduce_scatter),
# per peer (alltoall). It returns a Cost, or None where the algorithm cannot run.

def allreduce_recursive_doubling(p, m):
    rounds = ceil_log2(largest_power_of_two(p))
    return Cost(rounds, rounds * m, rounds * m) + power_of_two_fold(p, m)


def allreduce_rabenseifner(p, m):
    q = largest_power_of_two(p)
    share = (q - 1) / q * m
    return Cost(2 * ceil_log2(q), 2 * share, share) + power_of_two_fold(p, m)


def allreduce_ring(p, m):
    share = (p - 1) / p * m
    return Cost(2 * (p - 1), 2 * share, share)


def bcast_binomial(p, m):
    rounds = ceil_log2(p)
    return Cost(rounds, rounds * m, 0)


def bcast_scatter_allgather(p, m):
    return Cost(ceil_log2(p) + p - 1, 2 * (p - 1) / p * m, 0)


def bcast_chain(p, m):
    segments = max(1, math.ceil(m / CHAIN_SEGMENT_BYTES))
    steps = p - 2 + segments  # the last segment leaves the root after segments - 1 steps
    return Cost(steps, steps * m / segments, 0)


def alltoall_pairwise(p, m):
    return Cost(p - 1, (p - 1) * m, 0)


def alltoall_bruck(p, m):
    # Round k forwards every block whose index has bit k set, packed into one message.
    blocks = sum(sum(1 for i in range(1, p) if i >> k & 1) for k in range(ceil_log2(p)))
    return Cost(ceil_log2(p), blocks * m, 0)


def allgather_ring(p, m):
    return Cost(p - 1, (p - 1) * m, 0)


def allgather_recursive_doubling(p, m):
    return Cost(ceil_log2(p), (p - 1) * m, 0) if is_power_of_two(p) else None


def allgather_bruck(p, m):
    return Cost(ceil_log2(p), (p - 1) * m, 0)


def reduce_scatter_ring(p, m):
    return Cost(p - 1, (p - 1) * m, (p - 1) * m)


def reduce_scatter_recursive_halving(p, m):
    return Cost(ceil_log2(p), (p - 1) * m, (p - 1) * m) if is_power_of_two(p) else None


def reduce_binomial(p, m):
    rounds = ceil_log2(p)
    return Cost(rounds, rounds * m, rounds * m)


def reduce_rabenseifner(p, m):
    return allreduce_rabenseifner(largest_power_of_two(p), m) + power_of_two_fold(
        p, m, returns_result=False)


def barrier_dissemination(p, m):
    return Cost(ceil_log2(p), 0, 0)


def pt2pt(p, m):
    return Cost(1, m, 0)


# benchmark -> algorithm (the records' `algo`) -> formula. cb_latency's one-way time is
# Hockney's own T = alpha + beta x m, so its algorithm is the empty name records carry.
FORMULAS = {
    "allreduce": {"recursive_doubling": allreduce_recursive_doubling,
                  "rabenseifner": allreduce_rabenseifner, "ring": allreduce_ring},
    "bcast": {"binomial": bcast_binomial, "scatter_allgather": bcast_scatter_allgather,
              "chain": bcast_chain},
    "alltoall": {"pairwise": alltoall_pairwise, "bruck": alltoall_bruck},
    "allgather": {"ring": allgather_ring, "recursive_doubling": allgather_recursive_doubling,
                  "bruck": allgather_bruck},
    "reduce_scatter": {"ring": reduce_scatter_ring,
                       "recursive_halving": reduce_scatter_recursive_halving,
                       "pairwise": reduce_scatter_ring},  # same cost as the ring (p-1 steps)
    "reduce": {"binomial": reduce_binomial, "rabenseifner": reduce_rabenseifner},
    "barrier": {"dissemination": barrier_dissemination},
    "latency": {"": pt2pt},
}
REDUCTIONS = ("allreduce", "reduce_scatter", "reduce")
PROJECTED = ("allreduce", "bcast", "alltoall", "allgather", "reduce_scatter", "reduce",
             "barrier")
HIERARCHICAL = "hierarchical"
HIERARCHICAL_COLLECTIVES = ("allreduce", "bcast")  # as the engine has them


def hockney(p, m):
    """For runs of algorithms without a formula (MPI's own, the engine's shared-memory
    ones): the effective T = alpha + beta x m."""
    return Cost(1, m, 0)


# --- reading runs --------------------------------------------------------------------------

# ranks_per_node: None for a run on one node.
Point = namedtuple("Point", "ranks bytes time_us ranks_per_node file")
Sample = namedtuple("Sample", "bytes cost time_us")  # a Point with its cost coefficients


class Platform:
    """Runs whose parameters are comparable: one host, backend, transport, buffer kind and
    wait mode (a busy-polling and a yielding run of one backend are different machines)."""

    def __init__(self, doc):
        env = doc.get("environment") if isinstance(doc.get("environment"), dict) else {}
        opts = doc.get("options") if isinstance(doc.get("options"), dict) else {}
        self.host = cbjson.text(doc, "environment", "hostname", default="?")
        self.backend = cbjson.text(doc, "backend", "name")
        transport = cbjson.text(doc, "backend", "transport")
        alloc = opts.get("alloc") if isinstance(opts.get("alloc"), str) else ""
        wait = env.get("wait_mode") if isinstance(env.get("wait_mode"), str) else ""
        self.key = (self.host, self.backend, transport, alloc, wait)
        suffix = ""
        if cbjson.text(doc, "backend", "shared_memory").startswith("off"):
            suffix += "-noshm"
        if alloc == "plain":
            suffix += "-plain"
        if wait == "yield":
            suffix += "-yield"
        self.label = f"{self.backend}{suffix}@{self.host}"
        self.network = None  # Params: alpha, beta of the base fit, gamma pooled
        self.base = None     # the Fit alpha and beta come from
        self.gamma_from = 0  # how many reduction series the pooled gamma comes from


class Series:
    """The records of one (platform, benchmark, algorithm), from one or more files."""

    def __init__(self, platform, benchmark, algo):
        self.platform, self.benchmark, self.algo = platform, benchmark, algo
        self.points = []

    @property
    def name(self):
        return f"{self.benchmark}/{self.algo}" if self.algo else self.benchmark

    @property
    def formula(self):
        return FORMULAS.get(self.benchmark, {}).get(self.algo)

    @property
    def ranks(self):
        return sorted({pt.ranks for pt in self.points})

    @property
    def files(self):
        return list(dict.fromkeys(pt.file for pt in self.points))

    def samples(self, formula):
        """[Sample] of the points the formula can cost."""
        out = []
        for pt in self.points:
            cost = formula(pt.ranks, pt.bytes)
            if cost is not None:
                out.append(Sample(pt.bytes, cost, pt.time_us))
        return out


def placement(doc, path):
    """(ranks, ranks per node or None when all are on one node)."""
    p = cbjson.number(doc, "environment", "nranks")
    if p is None or p < 1 or p != int(p):
        raise cbjson.InputError(f"{path}: malformed result: environment.nranks is missing")
    nodes = cbjson.number(doc, "environment", "nodes") or 1
    per_node = cbjson.number(doc, "environment", "max_ranks_per_node")
    return int(p), (int(per_node) if nodes > 1 and per_node else None)


def series_of(loaded, platforms):
    """{(platform key, benchmark, algo): Series} of the documents with a usable time, and
    the names of the benchmarks left out (no cost formula: bw, replay, ...). `platforms`
    maps a key to its Platform and is extended."""
    out, left_out = {}, set()
    latency = cbjson.METRICS["latency"]
    for path, doc in loaded:
        benchmark = cbjson.text(doc, "benchmark", "name")
        if benchmark not in FORMULAS:
            left_out.add(benchmark)
            continue
        platform = Platform(doc)
        platform = platforms.setdefault(platform.key, platform)
        p, per_node = placement(doc, path)
        for rec in doc["results"]:
            t = latency.get(rec)
            if t is None or t <= 0:
                continue
            algo = rec.get("algo") if isinstance(rec.get("algo"), str) else ""
            s = out.setdefault((platform.key, benchmark, algo),
                               Series(platform, benchmark, algo))
            s.points.append(Point(p, int(cbjson.number(rec, "bytes")), t, per_node, path))
    return out, left_out


# --- least squares -------------------------------------------------------------------------

def solve_linear(matrix, rhs):
    """Gaussian elimination with partial pivoting; None when (nearly) singular."""
    n = len(rhs)
    a = [list(row) + [b] for row, b in zip(matrix, rhs)]
    scale = max(abs(a[i][i]) for i in range(n)) or 1.0
    for col in range(n):
        pivot = max(range(col, n), key=lambda r: abs(a[r][col]))
        if abs(a[pivot][col]) <= 1e-12 * scale:
            return None
        a[col], a[pivot] = a[pivot], a[col]
        for r in range(col + 1, n):
            f = a[r][col] / a[col][col]
            for c in range(col, n + 1):
                a[r][c] -= f * a[col][c]
    x = [0.0] * n
    for r in reversed(range(n)):
        x[r] = (a[r][n] - sum(a[r][c] * x[c] for c in range(r + 1, n))) / a[r][r]
    return x


def least_squares(samples, free, fixed=Params(None, None, None)):
    """Params minimising the sum of ((T_model - T) / T)^2 over the samples: relative errors,
    so that an 8-byte time counts as much as a 64 MiB one (least squares on the time itself
    would follow the largest sizes only and leave alpha to their noise). The parameters
    named in `free` are fitted and non-negative (the best unconstrained fit over the
    subsets of them, the others 0: exact non-negative least squares for so few); the rest
    come from `fixed`. A free parameter no sample depends on (beta when every size is 0)
    is None: unknown."""
    free_idx = [i for i, name in enumerate(PARAM_NAMES)
                if name in free and any(s.cost[i] for s in samples)]
    fixed_idx = [i for i, name in enumerate(PARAM_NAMES) if name not in free]
    # Each row divided by its T: minimise |X theta - z|^2.
    xs = [[s.cost[i] / s.time_us for i in free_idx] for s in samples]
    zs = [(s.time_us - sum(s.cost[i] * (fixed[i] or 0.0) for i in fixed_idx)) / s.time_us
          for s in samples]

    def residual(theta):
        return sum((sum(t * x for t, x in zip(theta, row)) - z) ** 2 for row, z in zip(xs, zs))

    best = [0.0] * len(free_idx)
    for size in range(1, len(free_idx) + 1):
        for subset in itertools.combinations(range(len(free_idx)), size):
            normal = [[sum(row[j] * row[k] for row in xs) for k in subset] for j in subset]
            solved = solve_linear(normal, [sum(row[j] * z for row, z in zip(xs, zs))
                                           for j in subset])
            if solved is None or min(solved) < 0:
                continue
            theta = [0.0] * len(free_idx)
            for j, v in zip(subset, solved):
                theta[j] = v
            if residual(theta) < residual(best):
                best = theta
    values = [None if name in free else fixed[i] for i, name in enumerate(PARAM_NAMES)]
    for i, v in zip(free_idx, best):
        values[i] = v
    return Params(*values)


def relative_errors(samples, params):
    """[(bytes, (model - measured) / measured)] of the samples the params can cost."""
    out = []
    for s in samples:
        t = s.cost.time(params)
        if t is not None:
            out.append((s.bytes, (t - s.time_us) / s.time_us))
    return out


def error_summary(errors):
    """Per size range, and over all: points, relative RMS and largest |error|, in %."""
    def summary(values):
        if not values:
            return {"n": 0, "rms_pct": None, "max_pct": None}
        return {"n": len(values),
                "rms_pct": 100 * math.sqrt(sum(v * v for v in values) / len(values)),
                "max_pct": 100 * max(abs(v) for v in values)}
    out = {name: summary([e for m, e in errors if in_range(m)])
           for name, in_range in SIZE_RANGES}
    out["all"] = summary([e for _, e in errors])
    return out


# --- fits ----------------------------------------------------------------------------------

class Fit:
    """The parameters of one Series and how well they follow it. kind: 'alpha-beta' (a
    copy-only algorithm or point to point, by its formula), 'gamma' (a reduction: gamma
    fitted, alpha and beta the platform's base), 'effective' (no formula: the plain
    T = alpha + beta x m, for reference; not used to project)."""

    def __init__(self, series, kind, formula, free, fixed=Params(None, None, None), note=""):
        self.series, self.kind, self.note = series, kind, note
        samples = series.samples(formula)
        self.params = least_squares(samples, free, fixed)
        self.errors = error_summary(relative_errors(samples, self.params))

    def describe(self):
        s = self.series
        return {"platform": s.platform.label, "benchmark": s.benchmark, "algo": s.algo,
                "ranks": s.ranks, "kind": self.kind, **param_fields(self.params),
                "note": self.note, "errors": self.errors, "files": s.files}


def param_fields(params):
    """alpha in us; beta and gamma in ns per byte (1 / (GB/s)), as reported."""
    def ns(v):
        return None if v is None else v * 1e3
    return {"alpha_us": params.alpha, "beta_ns_per_byte": ns(params.beta),
            "gamma_ns_per_byte": ns(params.gamma)}


def choose_base(fits):
    """A platform's alpha and beta: its point-to-point latency fit (Hockney's own
    measurement) when there is one, else the copy-only collective fitted on the most
    sizes (the widest evidence; then the lowest relative RMS)."""
    candidates = [f for f in fits if f.params.beta is not None]
    if not candidates:
        return None
    return min(candidates, key=lambda f: (f.series.benchmark != "latency",
                                          -f.errors["all"]["n"], f.errors["all"]["rms_pct"]))


def enough_sizes(series, formula):
    """Alpha and beta need two message sizes (or none but 0: alpha alone, as barrier)."""
    sizes = {s.bytes for s in series.samples(formula)}
    return len(sizes) >= 2 or sizes == {0}


def fit_platform(platform, members):
    """Fits the series of one platform and sets its network parameters. Returns [Fit] and
    [why a series was left out]."""
    copy_only, reductions, without_formula, left_out = [], [], [], []
    for s in members:
        if s.formula is None:
            group = without_formula if enough_sizes(s, hockney) else None
        elif not s.samples(s.formula):
            left_out.append(f"{platform.label} {s.name}: its formula cannot cost its runs")
            continue
        elif s.benchmark in REDUCTIONS:
            group = reductions  # gamma alone: one size is enough
        else:
            group = copy_only if enough_sizes(s, s.formula) else None
        if group is None:
            left_out.append(f"{platform.label} {s.name}: one message size, too few to fit "
                            f"alpha and beta")
        else:
            group.append(s)
    fits = [Fit(s, "alpha-beta", s.formula, ("alpha", "beta")) for s in copy_only]
    platform.base = choose_base(fits)
    if platform.base is not None:
        fixed = platform.base.params._replace(gamma=None)
        fits += [Fit(s, "gamma", s.formula, ("gamma",), fixed,
                     note=f"alpha, beta of {platform.base.series.name}") for s in reductions]
        # One gamma for the platform: all its reduction runs at once.
        pooled = [x for s in reductions for x in s.samples(s.formula)]
        gamma = least_squares(pooled, ("gamma",), fixed).gamma if pooled else None
        platform.network = fixed._replace(gamma=gamma)
        platform.gamma_from = len(reductions)
    else:
        fits += [Fit(s, "effective", hockney, ("alpha", "beta"),
                     note="no copy-only run with a cost formula on this platform, so beta "
                          "and gamma cannot be told apart")
                 for s in reductions if enough_sizes(s, hockney)]
    fits += [Fit(s, "effective", hockney, ("alpha", "beta"),
                 note="no cost formula for this algorithm") for s in without_formula]
    return fits, left_out


def fit_all(all_series, platforms):
    """[Fit] of every series, sorted for the report, and [why a series was left out]."""
    by_platform = {}
    for s in all_series.values():
        by_platform.setdefault(s.platform.key, []).append(s)
    fits, left_out = [], []
    for key, members in by_platform.items():
        platform_fits, platform_left_out = fit_platform(platforms[key], members)
        fits += platform_fits
        left_out += platform_left_out
    order = list(FORMULAS)
    fits.sort(key=lambda f: (f.series.platform.label, order.index(f.series.benchmark),
                             f.series.algo))
    return fits, left_out


# --- projection ----------------------------------------------------------------------------

# ranks_per_node: None when every rank is on one node; inter: Params of the network
# between nodes (alpha, beta; gamma is the CPU's, from the fits).
Layout = namedtuple("Layout", "ranks_per_node inter")
ONE_NODE = Layout(None, None)


class Projection:
    """Projected times of one platform. mode 'network': every algorithm costs with the
    platform's alpha, beta (its base fit) and gamma (pooled); 'fitted': an algorithm that
    was fitted uses its own parameters (its implementation's efficiency), the others the
    platform's."""

    def __init__(self, platform, fits, mode):
        self.platform, self.mode = platform, mode
        self.own = {(f.series.benchmark, f.series.algo): f.params for f in fits
                    if f.series.platform is platform and f.kind != "effective"}

    def params(self, collective, algo, layout, across_nodes):
        net = self.platform.network
        params = self.own.get((collective, algo)) if self.mode == "fitted" else None
        params = net if params is None else params._replace(gamma=(
            params.gamma if params.gamma is not None else net.gamma))
        if across_nodes:
            params = params._replace(alpha=layout.inter.alpha, beta=layout.inter.beta)
        return params

    def flat_time(self, collective, algo, p, m, layout, across_nodes):
        if p == 1:
            return 0.0
        cost = FORMULAS[collective][algo](p, m)
        return None if cost is None else cost.time(
            self.params(collective, algo, layout, across_nodes))

    def best_flat_time(self, collective, p, m, layout, across_nodes):
        times = [self.flat_time(collective, algo, p, m, layout, across_nodes)
                 for algo in FORMULAS[collective]]
        times = [t for t in times if t is not None]
        return min(times) if times else None

    def hierarchical_time(self, collective, p, m, layout):
        """Within each node the best algorithm on the node's parameters, among the node
        leaders the best on the network's: allreduce = reduce + allreduce + bcast, bcast =
        bcast among nodes + bcast on each node (the engine's hierarchical algorithms)."""
        k = layout.ranks_per_node
        if k is None or p <= k:
            return None
        nodes = math.ceil(p / k)
        phases = [self.best_flat_time(collective, nodes, m, layout, True),
                  self.best_flat_time("bcast", k, m, layout, False)]
        if collective == "allreduce":
            phases.append(self.best_flat_time("reduce", k, m, layout, False))
        return None if None in phases else sum(phases)

    def algorithms(self, collective, layout):
        hierarchical = (collective in HIERARCHICAL_COLLECTIVES
                        and layout.ranks_per_node is not None)
        return list(FORMULAS[collective]) + ([HIERARCHICAL] if hierarchical else [])

    def time(self, collective, algo, p, m, layout):
        if algo == HIERARCHICAL:
            return self.hierarchical_time(collective, p, m, layout)
        across = layout.ranks_per_node is not None and p > layout.ranks_per_node
        return self.flat_time(collective, algo, p, m, layout, across)

    def times(self, collective, p, m, layout):
        """{algo: us or None}, and the fastest algorithm (None if none can be costed)."""
        times = {algo: self.time(collective, algo, p, m, layout)
                 for algo in self.algorithms(collective, layout)}
        costed = {a: t for a, t in times.items() if t is not None}
        return times, (min(costed, key=costed.get) if costed else None)


def project_grid(projections, ranks, sizes, layout):
    rows = []
    for proj in projections:
        for collective in PROJECTED:
            for p in ranks:
                for m in ([0] if collective == "barrier" else sizes):
                    times, best = proj.times(collective, p, m, layout)
                    rows.append({"platform": proj.platform.label, "collective": collective,
                                 "ranks": p, "bytes": m, "times_us": times, "best": best})
    return rows


# --- check ---------------------------------------------------------------------------------

def check_against(loaded, platforms, projections, inter):
    """Compares the projection with measured runs: [entry], [skipped reason]. A run on
    several nodes is projected with its own ranks per node and the --inter-* network."""
    measured_platforms = {}
    measured, _ = series_of(loaded, measured_platforms)
    by_key = {p.platform.key: p for p in projections}
    entries, skipped = [], []
    for s in measured.values():
        proj = by_key.get(s.platform.key)
        if s.formula is None:
            skipped.append(f"{s.platform.label} {s.name}: no cost formula for this algorithm")
            continue
        if proj is None:
            why = ("no fitted run of this platform" if s.platform.key not in platforms else
                   "its fits give no alpha and beta")
            skipped.append(f"{s.platform.label} {s.name}: {why}")
            continue
        for p in s.ranks:
            points = [pt for pt in s.points if pt.ranks == p]
            per_node = {pt.ranks_per_node for pt in points}
            if per_node != {None} and inter is None:
                skipped.append(f"{s.platform.label} {s.name} at {p} ranks: a run on several "
                               f"nodes needs --inter-alpha and --inter-beta")
                continue
            rows = []
            for pt in sorted(points, key=lambda q: q.bytes):
                layout = Layout(pt.ranks_per_node, inter) if pt.ranks_per_node else ONE_NODE
                t = proj.time(s.benchmark, s.algo, p, pt.bytes, layout)
                if t is not None:
                    rows.append({"bytes": pt.bytes, "measured_us": pt.time_us,
                                 "projected_us": t,
                                 "error_pct": 100 * (t - pt.time_us) / pt.time_us})
            if not rows:
                skipped.append(f"{s.platform.label} {s.name} at {p} ranks: nothing the "
                               f"model can cost (no gamma for a reduction?)")
                continue
            errors = error_summary([(r["bytes"], r["error_pct"] / 100) for r in rows])
            entries.append({"platform": s.platform.label, "benchmark": s.benchmark,
                            "algo": s.algo, "ranks": p,
                            "files": list(dict.fromkeys(pt.file for pt in points)),
                            "points": rows, "errors": errors})
    return entries, skipped


# --- report --------------------------------------------------------------------------------

def format_time(us):
    if us is None:
        return "–"
    if us < 1e3:
        return f"{us:.3g} µs"
    return f"{us / 1e3:.3g} ms" if us < 1e6 else f"{us / 1e6:.3g} s"


def format_number(v, digits=3):
    return "–" if v is None else f"{v:.{digits}g}"


def format_errors(summary):
    if not summary["n"]:
        return "–"
    return f"{summary['rms_pct']:.1f} / {summary['max_pct']:.1f} ({summary['n']})"


def md_table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return lines


def describe_layout(layout):
    if layout.ranks_per_node is None:
        return "all ranks on one node (the fitted parameters at every rank count)"
    return (f"{layout.ranks_per_node} ranks per node; between nodes alpha = "
            f"{layout.inter.alpha:g} µs, beta = {layout.inter.beta * 1e3:g} ns/B "
            f"({1 / (layout.inter.beta * 1e3):.3g} GB/s); a flat algorithm on more than one "
            f"node pays the inter-node alpha and beta at every step")


FIT_KINDS = {"alpha-beta": "α, β", "gamma": "γ", "effective": "α, β (effective)"}


def md_fits(fits, platforms, left_out):
    out = ["## Fits", "",
           "Least squares on the relative error of each size's time (`latency_us.avg`). "
           "Fitted: α, β by the algorithm's cost formula; γ of a reduction with α and β "
           "the platform's (below); *effective*: the plain T = α + β·m of a run without a "
           "cost formula (MPI's own algorithms, the engine's shared-memory ones), for "
           "reference only. Error columns: relative RMS / largest |error| in % (points).", ""]
    header = ["benchmark", "algorithm", "ranks", "fitted", "α (µs)", "β (ns/B)", "γ (ns/B)",
              *(name for name, _ in SIZE_RANGES)]
    for platform in platforms:
        mine = [f for f in fits if f.series.platform is platform]
        if not mine:
            continue
        rows = []
        for f in mine:
            v = param_fields(f.params)
            rows.append([f.series.benchmark, f.series.algo or "–",
                         ",".join(map(str, f.series.ranks)), FIT_KINDS[f.kind],
                         format_number(v["alpha_us"]), format_number(v["beta_ns_per_byte"]),
                         format_number(v["gamma_ns_per_byte"]),
                         *(format_errors(f.errors[name]) for name, _ in SIZE_RANGES)])
        out += [f"### {platform.label}", "", *md_table(header, rows), ""]
    if left_out:
        out += ["Not fitted:", "", *(f"- {why}" for why in left_out), ""]
    return out


def md_platforms(platforms):
    rows = []
    for pl in platforms:
        if pl.network is None:
            rows.append([pl.label, "–", "–", "–", "–",
                         "no copy-only run with a cost formula", "–"])
            continue
        v = param_fields(pl.network)
        rows.append([pl.label, format_number(v["alpha_us"]),
                     format_number(v["beta_ns_per_byte"]),
                     format_number(1 / v["beta_ns_per_byte"]) if v["beta_ns_per_byte"] else "–",
                     format_number(v["gamma_ns_per_byte"]), pl.base.series.name,
                     f"{pl.gamma_from} reduction run(s)" if pl.gamma_from else "none"])
    return ["## Parameters per platform", "",
            "What the projection uses (mode `network`; mode `fitted` takes a fitted "
            "algorithm's own values instead).", "",
            *md_table(["platform", "α (µs)", "β (ns/B)", "1/β (GB/s)", "γ (ns/B)",
                       "α, β from", "γ from"], rows), ""]


def md_projection(rows, ranks, sizes, layout, mode):
    out = ["## Projection: the fastest algorithm", "",
           f"Parameters: `{mode}`. Layout: {describe_layout(layout)}. Each cell: the "
           f"algorithm with the lowest projected time, and that time; columns: message "
           f"size in bytes (K, M = 2^10, 2^20).", ""]
    cells = {(r["platform"], r["collective"], r["ranks"], r["bytes"]): r for r in rows}
    for label in dict.fromkeys(r["platform"] for r in rows):
        out += [f"### {label}", ""]
        for collective in PROJECTED:
            columns = [0] if collective == "barrier" else sizes
            header = ["ranks", *(["time"] if collective == "barrier"
                                 else map(cbjson.format_size, columns))]
            table = []
            for p in ranks:
                row = [p]
                for m in columns:
                    r = cells[(label, collective, p, m)]
                    row.append(f"{r['best']} {format_time(r['times_us'][r['best']])}"
                               if r["best"] else "–")
                table.append(row)
            out += [f"**{collective}**", "", *md_table(header, table), ""]
    return out


def md_check(entries, skipped, mode):
    out = ["## Check: projection against measured runs", "",
           f"Parameters: `{mode}`. Error = (projected − measured) / measured, %.", ""]
    summary = [[e["platform"], e["benchmark"], e["algo"] or "–", e["ranks"],
                *(format_errors(e["errors"][name]) for name, _ in SIZE_RANGES),
                format_errors(e["errors"]["all"])] for e in entries]
    out += ["Relative RMS / largest |error| in % (points):", "",
            *md_table(["platform", "benchmark", "algorithm", "ranks",
                       *(name for name, _ in SIZE_RANGES), "all"], summary), ""]
    groups = {}
    for e in entries:
        groups.setdefault((e["platform"], e["benchmark"], e["algo"]), []).append(e)
    for (label, benchmark, algo), members in groups.items():
        headers = [f"{e['ranks']} ranks" for e in members]
        for i, e in enumerate(members):  # two runs at one rank count: name their files
            if headers.count(headers[i]) > 1:
                headers[i] += f" ({os.path.basename(e['files'][0])})"
        errors = [{r["bytes"]: r["error_pct"] for r in e["points"]} for e in members]
        sizes = sorted({m for e in errors for m in e})
        table = [[cbjson.format_size(m), *(f"{e[m]:+.1f}" if m in e else "–" for e in errors)]
                 for m in sizes]
        out += [f"**{label} {benchmark}/{algo}**: error (%) per size", "",
                *md_table(["bytes", *headers], table), ""]
    if skipped:
        out += ["Not checked:", "", *(f"- {why}" for why in skipped), ""]
    return out


def markdown(report, fits, left_out, platforms, projection_rows, args, layout, check):
    out = ["# Performance model (scripts/model.py)", "",
           "Hockney's α-β(-γ) model fitted to collbench runs and projected with each "
           "algorithm's cost formula; formulas and assumptions: docs/model.md.", "",
           "Fitted from: " + ", ".join(f"`{p}`" for p in report["inputs"]), ""]
    out += md_fits(fits, platforms, left_out)
    out += md_platforms(platforms)
    if projection_rows:
        out += md_projection(projection_rows, args.ranks, args.sizes, layout, args.params)
    else:
        out += ["## Projection", "", "No platform has α and β: nothing to project.", ""]
    if check is not None:
        out += md_check(*check, args.params)
    return "\n".join(out)


# --- plots ---------------------------------------------------------------------------------

def import_pyplot():
    """matplotlib.pyplot (Agg), or None with a warning: the tables need no matplotlib."""
    try:
        import matplotlib
    except ImportError:
        print(f"{PROG}: warning: matplotlib is not installed for {sys.executable}: no plots "
              f"(apt-get install python3-matplotlib, or pip install -r "
              f"scripts/requirements.txt)", file=sys.stderr)
        return None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def plot_projection(plt, proj, ranks, sizes, layout, mode, path):
    """One panel per collective: projected time vs ranks, a colour per algorithm and a line
    style per message size."""
    styles = ("-", "--", ":", "-.")
    fig, axes = plt.subplots(2, 4, figsize=(17, 8.5))
    axes = axes.flatten()
    for ax, collective in zip(axes, PROJECTED):
        for colour, algo in enumerate(proj.algorithms(collective, layout)):
            for style, m in zip(itertools.cycle(styles),
                                [0] if collective == "barrier" else sizes):
                xy = [(p, proj.time(collective, algo, p, m, layout)) for p in ranks]
                xy = [(p, t) for p, t in xy if t is not None and t > 0]
                if xy:
                    ax.plot(*zip(*xy), style, color=f"C{colour}", marker=".",
                            label=algo if style == styles[0] else None)
        ax.set_title(collective)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("ranks")
        ax.set_ylabel("projected time (µs)")
        ax.grid(True, which="both", alpha=0.3)
        if ax.lines:
            ax.legend(fontsize=7)
    key = axes[len(PROJECTED)]
    for style, m in zip(itertools.cycle(styles), sizes):
        key.plot([], [], style, color="black", label=cbjson.size_text(m))
    key.legend(title="message size", loc="upper left")
    key.axis("off")
    key.text(0, 0.05, textwrap.fill(f"parameters: {mode}; {describe_layout(layout)}", 50),
             fontsize=7, transform=key.transAxes)
    fig.suptitle(f"Projected collective time vs ranks: {proj.platform.label}")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


# --- command line --------------------------------------------------------------------------

def parse_number_list(text, parse_one, what):
    """'8,1K,64K' or 'MIN:MAX' (doubling from MIN), or both, comma-separated; sorted."""
    values = set()
    for item in text.split(","):
        low, _, high = item.partition(":")
        try:
            first = parse_one(low)
            last = parse_one(high) if high else first
        except ValueError:
            raise argparse.ArgumentTypeError(f"{what}: not understood: {item!r}") from None
        if last < first or (high and first < 1):
            raise argparse.ArgumentTypeError(f"{what}: bad range {item!r}")
        v = first
        while v <= last:
            values.add(v)
            v = v * 2 if v else 1
    return sorted(values)


def parse_size(text):
    m = re.fullmatch(r"\s*(\d+)\s*([KMG]?)(i?B)?\s*", text, re.IGNORECASE)
    if not m:
        raise ValueError(text)
    return int(m.group(1)) << {"": 0, "K": 10, "M": 20, "G": 30}[m.group(2).upper()]


def parse_ranks(text):
    ranks = parse_number_list(text, int, "ranks")
    if ranks[0] < 1:
        raise argparse.ArgumentTypeError("ranks: must be at least 1")
    return ranks


def parse_sizes(text):
    return parse_number_list(text, parse_size, "sizes")


def non_negative(text):
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not math.isfinite(v) or v < 0:
        raise argparse.ArgumentTypeError(f"must be a finite number >= 0: {text!r}")
    return v


def positive_int(text):
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if v < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1: {text!r}")
    return v


def parse_args(argv):
    ap = argparse.ArgumentParser(prog=PROG, description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("files", nargs="+", metavar="FIT.json",
                    help="collbench results to fit (pt2pt latency, collectives)")
    ap.add_argument("--check", nargs="+", metavar="MEASURED.json", default=None,
                    help="compare the projection with these runs (put it after FIT.json)")
    ap.add_argument("-o", "--outdir", metavar="DIR",
                    help="write DIR/model.md, DIR/model.json and DIR/model.PLATFORM.png "
                         "instead of printing the report")
    ap.add_argument("--ranks", type=parse_ranks, default=parse_ranks(DEFAULT_RANKS),
                    help=f"rank counts to project, e.g. 2,3,4 or 2:4096 (doubling; default "
                         f"{DEFAULT_RANKS})")
    ap.add_argument("--sizes", type=parse_sizes, default=parse_sizes(DEFAULT_SIZES),
                    help=f"message sizes of the table (default {DEFAULT_SIZES})")
    ap.add_argument("--plot-sizes", type=parse_sizes, default=parse_sizes(DEFAULT_PLOT_SIZES),
                    help=f"message sizes of the plots (default {DEFAULT_PLOT_SIZES})")
    ap.add_argument("--params", choices=("network", "fitted"), default="network",
                    help="network: every algorithm costs with the platform's alpha, beta, "
                         "gamma; fitted: a fitted algorithm uses its own (default network)")
    ap.add_argument("--ranks-per-node", type=positive_int, metavar="K",
                    help="project K ranks per node (needs --inter-alpha and --inter-beta); "
                         "default: all ranks on one node")
    ap.add_argument("--inter-alpha", type=non_negative, metavar="US",
                    help="alpha between nodes, us per message")
    ap.add_argument("--inter-beta", type=non_negative, metavar="NS_PER_BYTE",
                    help="beta between nodes, ns per byte (0.08 = 12.5 GB/s, 100 Gb/s)")
    ap.add_argument("--no-plot", action="store_true", help="no PNG with -o")
    ap.add_argument("--skip-invalid", action="store_true",
                    help="warn about and leave out files that are not usable results")
    args = ap.parse_args(argv)
    node_options = (args.ranks_per_node, args.inter_alpha, args.inter_beta)
    if any(v is not None for v in node_options) and None in node_options:
        ap.error("--ranks-per-node, --inter-alpha and --inter-beta go together")
    if args.inter_beta == 0:
        ap.error("--inter-beta must be above 0")
    return args


def write_text(path, text):
    try:
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
    except OSError as e:
        raise UsageError(f"{path}: cannot write: {e.strerror}") from None


def run(args):
    loaded = cbjson.load_all(args.files, args.skip_invalid, PROG)
    platforms = {}
    all_series, left_out = series_of(loaded, platforms)
    if left_out:
        print(f"{PROG}: note: no cost formula for {', '.join(sorted(left_out))}: left out",
              file=sys.stderr)
    if not all_series:
        raise UsageError("nothing to fit: no run of latency, allreduce, bcast, alltoall, "
                         "allgather, reduce_scatter, reduce or barrier among the files")
    fits, left_out = fit_all(all_series, platforms)
    for why in left_out:
        print(f"{PROG}: note: not fitted: {why}", file=sys.stderr)
    platform_list = sorted(platforms.values(), key=lambda p: p.label)
    inter = None
    if args.ranks_per_node is not None:
        inter = Params(args.inter_alpha, args.inter_beta / 1e3, None)
    layout = Layout(args.ranks_per_node, inter)
    projections = [Projection(p, fits, args.params) for p in platform_list
                   if p.network is not None]
    rows = project_grid(projections, args.ranks, args.sizes, layout)
    check = None
    if args.check is not None:
        measured = cbjson.load_all(args.check, args.skip_invalid, PROG)
        check = check_against(measured, platforms, projections, inter)
        for why in check[1]:
            print(f"{PROG}: warning: not checked: {why}", file=sys.stderr)
        if not check[0]:
            raise UsageError("nothing to check: no measured run matches a fitted platform "
                             "and algorithm with a cost formula")
    report = {
        "schema": SCHEMA,
        "inputs": list(dict.fromkeys(path for f in fits for path in f.series.files)),
        "not_fitted": left_out,
        "size_ranges": [name for name, _ in SIZE_RANGES],
        "fits": [f.describe() for f in fits],
        "platforms": [{"platform": p.label, "host": p.host, "backend": p.backend,
                       **param_fields(p.network or Params(None, None, None)),
                       "alpha_beta_from": p.base.series.name if p.base else None,
                       "gamma_from_runs": p.gamma_from} for p in platform_list],
        "projection": {"params": args.params, "ranks_per_node": args.ranks_per_node,
                       "inter_alpha_us": args.inter_alpha,
                       "inter_beta_ns_per_byte": args.inter_beta, "ranks": args.ranks,
                       "sizes": args.sizes, "rows": rows},
        "check": None if check is None else {"inputs": args.check, "entries": check[0],
                                             "skipped": check[1]},
    }
    text = markdown(report, fits, left_out, platform_list, rows, args, layout, check)
    if args.outdir is None:
        print(text)
        return
    try:
        os.makedirs(args.outdir, exist_ok=True)
    except OSError as e:
        raise UsageError(f"{args.outdir}: cannot create: {e.strerror}") from None
    written = [os.path.join(args.outdir, "model.md"), os.path.join(args.outdir, "model.json")]
    write_text(written[0], text + "\n")
    write_text(written[1], json.dumps(report, indent=1) + "\n")
    plt = None if args.no_plot or not projections else import_pyplot()
    for proj in projections if plt else []:
        name = re.sub(r"[^A-Za-z0-9_.@-]", "_", proj.platform.label)
        path = os.path.join(args.outdir, f"model.{name}.png")
        try:
            plot_projection(plt, proj, args.ranks, args.plot_sizes, layout, args.params, path)
        except OSError as e:
            raise UsageError(f"{path}: cannot write: {e.strerror}") from None
        written.append(path)
    for path in written:
        print(path)


def main(argv=None):
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `| head` ends quietly
    args = parse_args(sys.argv[1:] if argv is None else argv)
    try:
        run(args)
    except (cbjson.InputError, UsageError) as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
