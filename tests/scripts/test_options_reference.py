#!/usr/bin/env python3
"""scripts/options_reference.py's README list on made-up build folders (no MPI): every
executable under exactly one family, in the family's order, and an executable no family
claims refused by name (a new benchmark cannot be left out of the README)."""
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "scripts"))
import options_reference as ref  # noqa: E402

EVERY_FAMILY = ["bw", "latency", "put_latency", "reduce", "allreduce", "ireduce", "iallreduce",
                "allreduce_persistent", "neighbor_alltoall", "init", "replay", "info"]


class BenchmarkList(unittest.TestCase):
    def build(self, names):
        d = tempfile.mkdtemp()
        for n in names:
            path = os.path.join(d, f"cb_{n}")
            with open(path, "w") as f:
                f.write("#!/bin/sh\n")
            os.chmod(path, 0o755)
        with open(os.path.join(d, "cb_not_executable"), "w") as f:
            f.write("")
        return d

    def test_families_and_order(self):
        text = ref.benchmark_list(self.build(EVERY_FAMILY))
        lines = text.splitlines()
        self.assertEqual((lines[0], lines[-1]), (ref.BEGIN, ref.END))
        self.assertIn("- **Point to point**: `cb_latency`, `cb_bw`", text)
        self.assertIn("- **Blocking collectives**: `cb_allreduce`, `cb_reduce`", text)
        self.assertIn("- **Non-blocking collectives**: `cb_iallreduce`, `cb_ireduce` (", text)
        self.assertIn("`cb_gpu_bench`", text)  # listed whether or not the build has CUDA
        self.assertNotIn("not_executable", text)

    def test_an_executable_no_family_claims(self):
        with self.assertRaises(SystemExit) as e:
            ref.benchmark_list(self.build(EVERY_FAMILY + ["scan"]))
        self.assertIn("cb_scan (no family)", str(e.exception))

    def test_a_family_without_executables(self):
        with self.assertRaises(SystemExit) as e:
            ref.benchmark_list(self.build([n for n in EVERY_FAMILY if n != "init"]))
        self.assertIn("no executable of 'Start-up'", str(e.exception))

    def test_readme_block_replaced_in_place(self):
        text = f"head\n{ref.BEGIN}\nold\n{ref.END}\ntail\n"
        self.assertEqual(ref.readme_with(text, "NEW"), "head\nNEW\ntail\n")
        with self.assertRaises(SystemExit):
            ref.readme_with("no markers", "NEW")


if __name__ == "__main__":
    unittest.main()
