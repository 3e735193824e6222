#!/usr/bin/env python3
"""scripts/preload_apps_report.py on a hand-made run of scripts/preload_apps.sh: the preload's
verbose lines summed over ranks (reasons included), mpi4py's per-module verdicts, a differing
check making the exit status 1, the paired time ratio and its interval."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
REPORT = os.path.join(HERE, "..", "..", "scripts", "preload_apps_report.py")


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


class PreloadAppsReport(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        d = self.d = self.tmp.name
        write(f"{d}/hdf5/hdf5.np2.preload.verbose",
              "cb_engine_preload: rank 0: MPI_Allreduce: 3 engine, 2 passed through (user op: 2)\n"
              "cb_engine_preload: rank 1: MPI_Allreduce: 3 engine, 1 passed through (user op: 1)\n"
              "cb_engine_preload: rank 0: MPI_Barrier: 4 engine, 0 passed through\n"
              "unrelated line\n")
        write(f"{d}/scalapack/scalapack-xdlu.np2.preload.verbose",
              "cb_engine_preload: rank 0: MPI_Bcast: 0 engine, 5 passed through "
              "(derived datatype: 4, invalid datatype: 1)\n")
        write(f"{d}/mpi4py/suite/summary.txt",
              "# header\n"
              "test_a np=2: plain 3 0 1 rc=0 2s; preload 3 0 1 rc=0 2s; ENGINE x same\n"
              "test_b np=2: plain 5 0 0 rc=0 2s; preload 4 1 0 rc=1 2s; ENGINE x DIFFERENT\n"
              "test_c np=2: plain died TIMEOUT rc=124 60s; preload died TIMEOUT rc=124 60s; "
              "ENGINE none same\n")
        write(f"{d}/mpi4py/suite/test_a.np2.preload.verbose",
              "cb_engine_preload: rank 1: MPI_Bcast: 7 engine, 0 passed through\n")
        recs = [
            {"kind": "suite", "app": "mpi4py", "summary": "mpi4py/suite/summary.txt"},
            {"kind": "output", "app": "mpi4py", "module": "test_a", "np": "2",
             "plain_vs_preload": "identical"},
            {"kind": "check", "app": "hdf5", "np": "2", "rc_plain": "0", "rc_preload": "0",
             "plain_vs_plain": "identical", "plain_vs_preload": "identical",
             "seconds_plain": "1.0", "seconds_preload": "1.2",
             "verbose": "hdf5/hdf5.np2.preload.verbose"},
            {"kind": "check", "app": "scalapack-xdlu", "np": "2", "rc_plain": "0",
             "rc_preload": "0", "plain_vs_plain": "identical",
             "plain_vs_preload": "rank 0: 3c3 < 1 --- > 2",
             "seconds_plain": "1.0", "seconds_preload": "1.0",
             "verbose": "scalapack/scalapack-xdlu.np2.preload.verbose"},
        ]
        # 7 pairs, the preload 10 % slower in every one whatever the machine's speed
        for k, speed in enumerate([1.0, 2.0, 1.5, 1.0, 3.0, 1.2, 1.0]):
            recs.append({"kind": "time", "app": "hdf5", "np": "2", "pass": str(k),
                         "plain": str(speed), "preload": str(1.1 * speed)})
        self.write_records(recs)

    def write_records(self, recs):
        for app in ("hdf5", "scalapack", "mpi4py"):  # apps.json keeps mpi4py, hdf5, scalapack
            mine = [r for r in recs if r["app"].split("-")[0] == app]
            if mine:
                write(f"{self.d}/{app}/records.jsonl", "".join(json.dumps(r) + "\n" for r in mine))

    def tearDown(self):
        self.tmp.cleanup()

    def run_report(self):
        p = subprocess.run([sys.executable, REPORT, self.d], capture_output=True, text=True)
        with open(os.path.join(self.d, "apps.json")) as f:
            return p, json.load(f)

    def test_counts_verdicts_and_timing(self):
        p, doc = self.run_report()
        self.assertEqual(p.returncode, 1, p.stderr)  # test_b and xdlu differ
        apps = {a["app"]: a for a in doc["applications"]}
        self.assertEqual(list(apps), ["mpi4py", "hdf5", "scalapack"])
        h = apps["hdf5"]["checks"][0]
        self.assertTrue(h["identical"])
        self.assertEqual(h["per_function"]["MPI_Allreduce"],
                         {"engine": 6, "passed": 3, "reasons": {"user op": 3}})
        self.assertEqual(h["engine"], {"engine": 10, "passed": 3, "engine_not_barrier": 6,
                                       "passed_not_barrier": 3})
        s = apps["scalapack"]["checks"][0]
        self.assertFalse(s["identical"])
        self.assertEqual(s["per_function"]["MPI_Bcast"]["reasons"],
                         {"derived datatype": 4, "invalid datatype": 1})
        m = apps["mpi4py"]["checks"][0]
        self.assertEqual((m["modules"], m["identical"], m["differ"], m["unfinished_alike"]),
                         (3, 1, ["test_b"], ["test_c"]))
        self.assertEqual(m["engine"]["engine"], 7)
        t = apps["hdf5"]["timing"]["preload_over_plain"]
        self.assertAlmostEqual(t["ratio"], 1.1)
        self.assertEqual(t["verdict"], "slower")
        with open(os.path.join(self.d, "summary.md")) as f:
            md = f.read()
        self.assertIn("| hdf5 | 2 | identical | 10 / 3 (6 / 3) | user op: 3 |", md)
        self.assertIn("1.100 [1.100, 1.100] slower", md)

    def test_all_identical_exits_0(self):
        for app in ("mpi4py", "scalapack"):
            os.remove(os.path.join(self.d, app, "records.jsonl"))
        p, doc = self.run_report()
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual([a["app"] for a in doc["applications"]], ["hdf5"])

    def test_missing_records_is_a_clear_error(self):
        for app in ("mpi4py", "hdf5", "scalapack"):
            os.remove(os.path.join(self.d, app, "records.jsonl"))
        p = subprocess.run([sys.executable, REPORT, self.d], capture_output=True, text=True)
        self.assertEqual(p.returncode, 2)
        self.assertIn("records.jsonl", p.stderr)


if __name__ == "__main__":
    unittest.main()
