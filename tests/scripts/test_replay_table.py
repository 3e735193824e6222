#!/usr/bin/env python3
"""scripts/replay_table.py on hand-made replay documents: rows, columns and the ratio."""
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fixtures as fx  # noqa: E402


def replay_doc(backend, model, fusion, compute, step, comp, exposed):
    rec = fx.replay_record(model, comp, exposed, step - comp - exposed)
    rec.update({"input": {"model": model}, "message_count": 5})
    doc = fx.document("replay", backend, [rec])
    doc["options"].update({"fusion": fusion, "compute": compute})
    return doc


class ReplayTableTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="cb_replay_table_")
        self.dir = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def test_rows_and_ratio(self):
        paths = fx.write_all(self.dir, {
            "a.json": replay_doc("mpi", "resnet50", "ddp", "none", 8000.0, 0.0, 8000.0),
            "b.json": replay_doc("engine", "resnet50", "ddp", "none", 2000.0, 0.0, 2000.0),
            "c.json": replay_doc("mpi", "gpt2", "none", "trace", 30000.0, 20000.0, 10000.0),
            "d.json": fx.document("allreduce", "mpi", [fx.coll_record(4, 2.0)]),  # ignored
        })
        md = os.path.join(self.dir, "t.md")
        p = fx.run_script("replay_table.py", ["--md", md, *paths.values()])
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        with open(md) as f:
            lines = f.read().splitlines()
        self.assertIn("engine/mpi step", lines[0])
        self.assertEqual(len(lines), 4)  # header, rule, gpt2 row, resnet50 row
        gpt2, resnet = lines[2], lines[3]
        self.assertTrue(gpt2.startswith("| gpt2 | none | trace | 5 | 30.00 | 10.00 |"), gpt2)
        self.assertTrue(resnet.startswith("| resnet50 | ddp | none |"), resnet)
        self.assertTrue(resnet.endswith("| 0.25 |"), resnet)  # 2 ms / 8 ms

    def test_no_replay_results_is_an_error(self):
        paths = fx.write_all(self.dir, {"d.json": fx.document("allreduce", "mpi",
                                                              [fx.coll_record(4, 2.0)])})
        p = fx.run_script("replay_table.py", list(paths.values()))
        self.assertEqual(p.returncode, 2)
        self.assertIn("no cb_replay results", p.stderr)

    def test_malformed_file_names_it(self):
        bad = os.path.join(self.dir, "bad.json")
        with open(bad, "w") as f:
            f.write("{")
        p = fx.run_script("replay_table.py", [bad])
        self.assertEqual(p.returncode, 2)
        self.assertIn("bad.json: not valid JSON", p.stderr)


if __name__ == "__main__":
    unittest.main()
