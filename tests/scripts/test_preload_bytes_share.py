#!/usr/bin/env python3
"""scripts/preload_bytes_share.py on hand-made CB_PRELOAD_VERBOSE logs: calls and bytes summed
over ranks and launches, the shares (barriers left out of the calls' share), the reasons of
the function passing most bytes, a folder searched for *.verbose, and a missing log refused."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "..", "scripts", "preload_bytes_share.py")


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


class PreloadBytesShare(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        d = self.d = self.tmp.name
        write(f"{d}/app/a.np2.preload.verbose",
              "cb_engine_preload: rank 0: MPI_Allreduce: 3 engine, 1 passed through (user op: 1)\n"
              "cb_engine_preload: rank 0: MPI_Barrier: 5 engine, 0 passed through\n"
              "cb_engine_preload: rank 0: bytes MPI_Allreduce: 3000 engine, 1000 passed through\n"
              "cb_engine_preload: rank 0: bytes in all: 3000 engine, 1000 passed through "
              "(75.0 % taken)\n"
              "unrelated line\n")
        write(f"{d}/app/sub/b.np2.preload.verbose",
              "cb_engine_preload: rank 1: MPI_Bcast: 1 engine, 0 passed through\n"
              "cb_engine_preload: rank 1: bytes MPI_Bcast: 4000 engine, 0 passed through\n")
        write(f"{d}/app/ignored.log",
              "cb_engine_preload: rank 1: MPI_Bcast: 9 engine, 0 passed through\n")

    def tearDown(self):
        self.tmp.cleanup()

    def run_script(self, *args):
        return subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True)

    def test_sums_and_shares(self):
        out = os.path.join(self.d, "share.json")
        r = self.run_script("--json", out, "--md", os.path.join(self.d, "share.md"),
                            f"app={self.d}/app")
        self.assertEqual(r.returncode, 0, r.stderr)
        doc = json.load(open(out))
        self.assertIn("description", doc)
        a = doc["applications"]["app"]
        self.assertEqual(a["logs"], 2)
        t = a["totals"]
        self.assertEqual((t["bytes_engine"], t["bytes_passed"]), (7000, 1000))
        self.assertEqual((t["calls_engine_not_barrier"], t["calls_passed_not_barrier"]), (4, 1))
        self.assertAlmostEqual(a["bytes_share"], 7000 / 8000)
        self.assertAlmostEqual(a["calls_share_not_barrier"], 0.8)
        self.assertEqual(a["functions"]["MPI_Allreduce"]["reasons"], {"user op": 1})
        self.assertIn("87.5 %", r.stdout)
        self.assertIn("MPI_Allreduce 1000 B (user op: 1)", r.stdout)
        self.assertEqual(open(os.path.join(self.d, "share.md")).read(), r.stdout)

    def test_a_file_and_a_missing_log(self):
        r = self.run_script(f"one={self.d}/app/sub/b.np2.preload.verbose")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("100.0 %", r.stdout)
        r = self.run_script(f"none={self.d}/nothing")
        self.assertEqual(r.returncode, 2)
        self.assertIn("no CB_PRELOAD_VERBOSE log", r.stderr)


if __name__ == "__main__":
    unittest.main()
