#!/usr/bin/env python3
"""scripts/omb_fidelity.py on hand-made rounds: best of the rounds per size, the ratio to
the OMB-method reference, the tolerance, harness_overhead_us carried over, bad input."""
import json
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fixtures as fx  # noqa: E402


def cb_doc(values, overhead=None):
    """A collbench.result/1 document with latency_us.avg per size (the fields read)."""
    results = []
    for size, v in values.items():
        r = {"bytes": size, "latency_us": {"avg": v, "min": v, "max": v}}
        if overhead is not None:
            r["harness_overhead_us"] = overhead
        results.append(r)
    return {"schema": "collbench.result/1", "results": results}


class FidelityTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="cb_fidelity_")
        self.dir = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def write(self, name, text):
        with open(os.path.join(self.dir, name), "w") as f:
            f.write(text)

    def run_it(self, *args, rc=0):
        p = fx.run_script("omb_fidelity.py", [self.dir, *args])
        self.assertEqual(p.returncode, rc, p.stdout + p.stderr)
        return p

    def test_best_of_rounds_ratio_and_tolerance(self):
        # Round 2 is the best for collbench at 4 B, round 1 at 8 B; the reference's best is
        # round 1 at 4 B and round 2 at 8 B.
        self.write("cb_bcast.1.json", json.dumps(cb_doc({4: 0.30, 8: 0.40}, 0.03)))
        self.write("cb_bcast.2.json", json.dumps(cb_doc({4: 0.25, 8: 0.50}, 0.02)))
        self.write("ref_bcast.1.txt", "4 0.2400\n8 0.5000\n")
        self.write("ref_bcast.2.txt", "4 0.2600\n8 0.3000\n")
        self.write("ref2_bcast.1.txt", "4 0.2700\n8 0.3100\n")
        out = self.run_it("--tolerance", "5").stdout
        with open(os.path.join(self.dir, "fidelity.json")) as f:
            doc = json.load(f)
        b = doc["benchmarks"]["bcast"]
        self.assertEqual(b["rounds"], 2)
        s4, s8 = b["sizes"]
        self.assertAlmostEqual(s4["collbench_us"], 0.25)
        self.assertAlmostEqual(s4["omb_method_us"], 0.24)
        self.assertAlmostEqual(s4["ratio"], 0.25 / 0.24)
        self.assertTrue(s4["within"])  # 4.2% <= 5%
        self.assertAlmostEqual(s8["ratio"], 0.40 / 0.30)
        self.assertFalse(s8["within"])
        self.assertAlmostEqual(s4["harness_overhead_us"], 0.02)
        self.assertAlmostEqual(s4["omb_method_two_comms_us"], 0.27)
        self.assertIn("| 8 | 0.400 | 0.300 | 1.333 | NO |", out)
        self.assertNotIn("latency", doc["benchmarks"])  # no files for it

    def test_bad_input_exits_2(self):
        self.run_it(rc=2)  # nothing to compare
        self.write("cb_latency.1.json", json.dumps(cb_doc({1: 0.2})))
        self.write("ref_latency.1.txt", "1 0.2 extra\n")
        p = self.run_it(rc=2)
        self.assertIn("expected 'SIZE LATENCY_US'", p.stderr)
        self.write("ref_latency.1.txt", "1 0.2\n")
        self.write("cb_latency.1.json", json.dumps({"schema": "other"}))
        self.assertIn("not a collbench result", self.run_it(rc=2).stderr)
        self.assertIn("--callgrind needs", self.run_it("--callgrind", rc=2).stderr)


if __name__ == "__main__":
    unittest.main()
