#!/usr/bin/env python3
"""scripts/cbstats.py against docs/statistics.md's table (the interval's order statistics
and coverage for 6 to 20 values) and against what tests/harness/stats_test.cpp asserts of
the C++ median_interval() and compare_paired(), so that the scripts and the harness give
the same intervals and verdicts."""
import math
import os
import random
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "scripts"))
import cbstats  # noqa: E402

# docs/statistics.md, "The median and its interval": N -> (j, coverage to 3 places).
TABLE = {6: (1, 0.969), 7: (1, 0.984), 8: (1, 0.992), 9: (2, 0.961), 10: (2, 0.979),
         11: (2, 0.988), 12: (3, 0.961), 13: (3, 0.978), 14: (3, 0.987), 15: (4, 0.965),
         16: (4, 0.979), 20: (6, 0.959)}


def binomial_miss(n, j):
    """2 P(Binomial(n, 1/2) <= j - 1), exactly."""
    return 2 * sum(math.comb(n, k) for k in range(j)) / 2 ** n


class MedianInterval(unittest.TestCase):
    def test_docs_table(self):
        for n, (j, coverage) in TABLE.items():
            xs = [float(i) for i in range(n, 0, -1)]  # reversed: the order does not matter
            m = cbstats.median_interval(xs)
            self.assertIsNotNone(m, n)
            self.assertEqual((m["lo"], m["hi"]), (j, n + 1 - j), n)
            self.assertEqual(round(m["confidence"], 3), coverage, n)

    def test_largest_j_for_every_n(self):
        # The definition itself, from exact binomial sums, for 6 to 60 values.
        for n in range(6, 61):
            j, coverage = cbstats.interval_rank(n)
            self.assertLessEqual(binomial_miss(n, j), 0.05, n)
            self.assertGreater(binomial_miss(n, j + 1), 0.05, n)
            self.assertAlmostEqual(coverage, 1 - binomial_miss(n, j), places=12, msg=n)

    def test_under_six_values_no_interval(self):
        for n in range(0, 6):
            self.assertIsNone(cbstats.median_interval([1.0] * n), n)
            self.assertEqual(cbstats.interval_rank(n), (0, 0.0))
        # 5 values: 2 / 32 = 0.0625 outside the extremes, above 0.05
        self.assertGreater(binomial_miss(5, 1), 0.05)

    def test_stats_test_cpp(self):
        # tests/harness/stats_test.cpp, MedianIntervalIsTheSignTestsOrderStatistics
        self.assertIsNone(cbstats.median_interval([1, 2, 3, 4, 5]))
        six = cbstats.median_interval([6, 1, 5, 2, 4, 3])
        self.assertEqual((six["lo"], six["hi"], six["median"]), (1, 6, 3.5))
        self.assertAlmostEqual(six["confidence"], 1 - 2.0 / 64, places=12)
        ten = cbstats.median_interval(list(range(10, 0, -1)))
        self.assertEqual((ten["lo"], ten["hi"]), (2, 9))
        self.assertAlmostEqual(ten["confidence"], 1 - 2.0 * 11 / 1024, places=12)
        twenty = cbstats.median_interval(list(range(1, 21)))
        self.assertEqual((twenty["lo"], twenty["hi"]), (6, 15))
        self.assertTrue(0.95 <= twenty["confidence"] < 0.97)

    def test_median_odd_even_and_ties(self):
        self.assertEqual(cbstats.median([3, 1, 2]), 2)
        self.assertEqual(cbstats.median([4, 1, 3, 2]), 2.5)
        self.assertIsNone(cbstats.median([]))
        m = cbstats.median_interval([5.0] * 7)
        self.assertEqual((m["lo"], m["median"], m["hi"]), (5.0, 5.0, 5.0))

    def test_interval_holds_the_median(self):
        rng = random.Random(36)
        for _ in range(200):
            xs = [rng.lognormvariate(0, 1) for _ in range(rng.randint(6, 40))]
            m = cbstats.median_interval(xs)
            self.assertTrue(m["lo"] <= m["median"] <= m["hi"])
            self.assertIn(m["lo"], xs)
            self.assertIn(m["hi"], xs)


class ComparePaired(unittest.TestCase):
    BASE = [10, 11, 9, 10, 12, 10, 11, 10]

    def test_stats_test_cpp_verdicts(self):
        # tests/harness/stats_test.cpp, PairedComparisonVerdicts (there the series comes
        # first: compare_paired(series, baseline); here the baseline does)
        fast = [b * 0.8 for b in self.BASE]
        slow = [b * 1.3 for b in self.BASE]
        same = [10.5, 10.4, 8.8, 10.2, 11.5, 9.9, 11.3, 9.7]
        c = cbstats.compare_paired(self.BASE, fast)
        self.assertEqual(c["verdict"], "faster")
        self.assertAlmostEqual(c["interval"]["median"], 0.8, places=12)
        self.assertAlmostEqual(c["ratio"], 0.8, places=12)
        self.assertEqual(cbstats.compare_paired(self.BASE, slow)["verdict"], "slower")
        self.assertEqual(cbstats.compare_paired(self.BASE, same)["verdict"], "indistinguishable")
        five = cbstats.compare_paired(self.BASE[:5], self.BASE[:5])
        self.assertEqual(five["verdict"], "too few passes")
        self.assertIsNone(five["interval"])
        self.assertEqual(five["ratio"], 1.0)

    def test_ratio_is_other_over_base_per_pass(self):
        # A drift that triples the second half's times falls on both: the ratios stay 0.5
        # and 2, where a ratio of medians would not pair them.
        base = [10, 10, 10, 30, 30, 30]
        other = [5, 5, 5, 15, 15, 15]
        c = cbstats.compare_paired(base, other)
        self.assertEqual(c["ratios"], [0.5] * 6)
        self.assertEqual(c["verdict"], "faster")
        self.assertEqual(cbstats.compare_paired(other, base)["verdict"], "slower")

    def test_one_ratio_on_the_other_side_of_one(self):
        # Six passes give [min, max]: one ratio above 1 makes it indistinguishable; ten
        # give [x(2), x(9)]: one ratio above 1 is outside the interval.
        six = cbstats.compare_paired([1.0] * 6, [0.9, 0.9, 0.9, 0.9, 0.9, 1.1])
        self.assertEqual(six["verdict"], "indistinguishable")
        ten = cbstats.compare_paired([1.0] * 10, [0.9] * 9 + [1.1])
        self.assertEqual(ten["verdict"], "faster")
        self.assertEqual((ten["interval"]["lo"], ten["interval"]["hi"]), (0.9, 0.9))

    def test_an_interval_ending_at_one_holds_one(self):
        # stats.cpp: faster only when hi < 1, slower only when lo > 1
        up = cbstats.compare_paired([1.0] * 6, [0.5] * 5 + [1.0])
        self.assertEqual((up["interval"]["hi"], up["verdict"]), (1.0, "indistinguishable"))
        down = cbstats.compare_paired([1.0] * 6, [2.0] * 5 + [1.0])
        self.assertEqual((down["interval"]["lo"], down["verdict"]), (1.0, "indistinguishable"))

    def test_verdict_strings_are_the_cpp_ones(self):
        self.assertEqual({cbstats.FASTER, cbstats.SLOWER, cbstats.SAME, cbstats.TOO_FEW},
                         {"faster", "slower", "indistinguishable", "too few passes"})
        with open(os.path.join(os.path.dirname(cbstats.__file__), "..", "src", "harness",
                               "stats.cpp")) as f:
            cpp = f.read()
        for v in ("faster", "slower", "indistinguishable", "too few passes"):
            self.assertIn(f'c.verdict = "{v}"', cpp, v)

    def test_unequal_lengths_and_zero_base(self):
        c = cbstats.compare_paired([0, 1, 1, 1, 1, 1, 1], [1, 2, 2, 2, 2, 2, 2, 2])
        self.assertEqual(c["ratios"], [2.0] * 6)  # pass 1 (base 0) and the extra pass out
        self.assertEqual(c["verdict"], "slower")


if __name__ == "__main__":
    unittest.main()
