"""The statistics of docs/statistics.md for the scripts: the same median interval and
paired comparison as the C++ harness (src/harness/stats.cpp, median_interval() and
compare_paired()), so that a comparison made across processes (scripts/compare_mpis.py:
one library per process) reads like one made within a process (--backend mpi,engine).

median_interval(xs): the median of xs and the sign test's distribution-free 95 % interval
for it, [x(j), x(n+1-j)] (sorted, 1-based) with the largest j such that
2 P(Binomial(n, 1/2) <= j - 1) <= 0.05, and that interval's exact coverage; None under 6
values (no interval reaches 95 % there).

compare_paired(base, other): per-pass ratios other[k] / base[k] (< 1: other is faster),
their median and interval, and the verdict: "faster" (the interval lies below 1), "slower"
(above 1), "indistinguishable" (it holds 1), "too few passes" (under 6 ratios)."""
import math

FASTER, SLOWER, SAME, TOO_FEW = "faster", "slower", "indistinguishable", "too few passes"
MIN_PASSES = 6  # the fewest values with a 95 % interval


def median(xs):
    """The median (the mean of the two middle values for an even count); None if empty."""
    s = sorted(xs)
    n = len(s)
    if n == 0:
        return None
    return s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2.0


def interval_rank(n):
    """The j of the interval [x(j), x(n+1-j)] for n values (0: none reaches 95 %) and its
    coverage 1 - 2 P(Binomial(n, 1/2) <= j - 1) (0.0 when j is 0). The loop is stats.cpp's."""
    cdf, term = 0.0, math.pow(0.5, n)  # P(X = 0)
    j = 0
    for k in range(n // 2):
        cdf += term
        if 2 * cdf > 0.05:
            break
        j = k + 1
        term *= (n - k) / (k + 1)  # P(X = k + 1)
    if j == 0:
        return 0, 0.0
    miss, t = 0.0, math.pow(0.5, n)
    for k in range(j):
        miss += t
        t *= (n - k) / (k + 1)
    return j, 1 - 2 * miss


def median_interval(xs):
    """{"median", "lo", "hi", "confidence"} of xs, or None under 6 values (and for none)."""
    s = sorted(xs)
    n = len(s)
    if n == 0:
        return None
    j, confidence = interval_rank(n)
    if j == 0:
        return None
    return {"median": median(s), "lo": s[j - 1], "hi": s[n - j], "confidence": confidence}


def verdict(interval):
    """The verdict an interval of ratios gives (None: too few passes)."""
    if interval is None:
        return TOO_FEW
    if interval["hi"] < 1:
        return FASTER
    if interval["lo"] > 1:
        return SLOWER
    return SAME


def compare_paired(base, other):
    """other against base, pass by pass: base[k] and other[k] ran in the same round. Pairs
    with a base time of 0 or less are left out, as in stats.cpp. Returns {"ratios",
    "ratio" (their median, None when there are none), "interval" (median_interval of the
    ratios: None under 6), "verdict"}."""
    ratios = [o / b for b, o in zip(base, other) if b > 0]
    interval = median_interval(ratios)
    return {"ratios": ratios, "ratio": median(ratios), "interval": interval,
            "verdict": verdict(interval)}
