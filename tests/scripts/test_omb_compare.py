#!/usr/bin/env python3
"""scripts/omb_compare.py on hand-made rounds: per-round ratios collbench / OMB (a rate's
inverted), the median's interval, the verdicts against the tolerance, bad input."""
import json
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fixtures as fx  # noqa: E402

# The machine's speed per round: both sides of a round run at it, so the per-round ratio
# is steady even though each side's times overlap the other's across rounds.
SPEED = [1.0, 2.0, 1.0, 3.0, 1.5, 1.0, 2.5, 1.0]


def write_round(d, r, speed):
    # latency: 8 B the same as OMB (agree), 1 KiB 20 % slower (differ).
    lat = fx.document("latency", "mpi", [fx.latency_record(8, 1.0 * speed),
                                         fx.latency_record(1024, 2.4 * speed)], nranks=2)
    # bw: collbench reports 10 % more MB/s (ratio 1 / 1.1 = 0.909 as a time: differ).
    bw = fx.document("bw", "mpi", [fx.bandwidth_record(8, 110.0 / speed)], nranks=2)
    for name, doc in (("latency", lat), ("bw", bw)):
        with open(os.path.join(d, f"cb_{name}.{r}.json"), "w") as f:
            json.dump(doc, f)
    with open(os.path.join(d, f"osu_latency.{r}.txt"), "w") as f:
        f.write("# OSU MPI Latency Test v7.4\n# Size Avg Latency(us)\n"
                f"8 {1.0 * speed:.4f}\n1024 {2.0 * speed:.4f}\n")
    with open(os.path.join(d, f"osu_bw.{r}.txt"), "w") as f:
        f.write(f"# OSU MPI Bandwidth Test v7.4\n8 {100.0 / speed:.4f}\n")


class OmbCompare(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.d = self.tmp.name
        with open(os.path.join(self.d, "run.json"), "w") as f:
            json.dump({"omb_version": "7.4", "omb_source": "/src", "seed": 3,
                       "rounds": len(SPEED), "git_revision": "abc", "start": "t"}, f)
        for r, s in enumerate(SPEED, start=1):
            write_round(self.d, r, s)

    def tearDown(self):
        self.tmp.cleanup()

    def run_ok(self, *extra):
        res = fx.run_script("omb_compare.py", [self.d, *extra])
        self.assertEqual(res.returncode, 0, res.stderr)
        with open(os.path.join(self.d, "omb_compare.json")) as f:
            return json.load(f)

    def size(self, doc, bench, b):
        return next(e for e in doc["benchmarks"][bench]["sizes"] if e["bytes"] == b)

    def test_verdicts_per_size(self):
        doc = self.run_ok()
        self.assertEqual(self.size(doc, "latency", 8)["verdict"], "agree")
        e = self.size(doc, "latency", 1024)
        self.assertAlmostEqual(e["ratio"], 1.2, places=3)
        self.assertEqual(e["verdict"], "differ")
        self.assertEqual(e["rounds"], len(SPEED))

    def test_a_rate_is_compared_as_a_time(self):
        e = self.size(self.run_ok(), "bw", 8)
        self.assertAlmostEqual(e["ratio"], 100 / 110, places=3)
        self.assertEqual(e["verdict"], "differ")

    def test_tolerance_wide_enough_agrees(self):
        doc = self.run_ok("--tolerance", "25")
        self.assertEqual(self.size(doc, "latency", 1024)["verdict"], "agree")

    def test_markdown_generated(self):
        self.run_ok()
        with open(os.path.join(self.d, "omb_compare.md")) as f:
            md = f.read()
        self.assertIn("## latency: agree 1, differ 1", md)
        self.assertIn("| 1 KiB |", md)

    def test_too_few_rounds(self):
        for r in range(4, len(SPEED) + 1):
            os.remove(os.path.join(self.d, f"osu_latency.{r}.txt"))
        self.assertEqual(self.size(self.run_ok(), "latency", 8)["verdict"], "too few rounds")

    def test_bad_osu_output_names_the_line(self):
        with open(os.path.join(self.d, "osu_latency.2.txt"), "w") as f:
            f.write("# header\nsegmentation fault\n")
        res = fx.run_script("omb_compare.py", [self.d])
        self.assertEqual(res.returncode, 1)
        self.assertIn("osu_latency.2.txt:2", res.stderr)

    def test_missing_run_json(self):
        os.remove(os.path.join(self.d, "run.json"))
        res = fx.run_script("omb_compare.py", [self.d])
        self.assertEqual(res.returncode, 2)
        self.assertIn("run.json", res.stderr)


if __name__ == "__main__":
    unittest.main()
