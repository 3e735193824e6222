#!/usr/bin/env python3
"""scripts/cbfloors.py on hand-made cb_info documents: the memcpy rate a size may use (the
row at or below it, or any larger row that is faster), the floor of each collective (k
hand-offs, the bytes each rank must move), which runs the floors apply to (2 ranks on
cb_info's host), the errors for unusable input, and the table of the fraction of the floor
each run reaches. Numbers chosen so that the floors are exact."""
import json
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fixtures as fx  # noqa: E402

sys.path.insert(0, str(fx.SCRIPTS))
import cbfloors  # noqa: E402
import cbjson  # noqa: E402

MIB = 1 << 20


def floors(**kw):
    doc = fx.info_document(**kw)
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(doc, f)
    try:
        return cbfloors.read_info(f.name)
    finally:
        os.unlink(f.name)


class Rules(unittest.TestCase):
    def setUp(self):
        # rows: 4 KiB 100 GB/s, 1 MiB 50, 64 MiB 10, 1 GiB 20 (faster: non-temporal stores)
        self.f = floors()

    def test_memcpy_rate_at_or_below_else_smallest_or_any_larger_faster(self):
        self.assertEqual(cbfloors.memcpy_rate(self.f, 8), (100.0, 4096))
        self.assertEqual(cbfloors.memcpy_rate(self.f, 2 * MIB), (50.0, MIB))
        self.assertEqual(cbfloors.memcpy_rate(self.f, 64 * MIB), (20.0, 1 << 30))
        self.assertEqual(cbfloors.memcpy_rate(self.f, 4 << 30), (20.0, 1 << 30))

    def test_floor_is_the_larger_of_handoffs_and_bytes_at_memcpy_rate(self):
        small = cbfloors.at(self.f, "allreduce", 8)
        self.assertAlmostEqual(small["latency_floor_us"], 0.4)  # 2 x 200 ns
        self.assertAlmostEqual(small["floor_us"], 0.4)
        big = cbfloors.at(self.f, "allreduce", 64 * MIB)
        # reads 64 MiB and writes 64 MiB: 128 MiB / (2 x 20 GB/s)
        self.assertEqual((big["read_bytes"], big["write_bytes"]), (64 * MIB, 64 * MIB))
        self.assertAlmostEqual(big["floor_us"], 64 * MIB / 20e3)
        self.assertAlmostEqual(cbfloors.at(self.f, "alltoall", 64 * MIB)["floor_us"],
                               2 * 64 * MIB / 20e3)  # two copies of N
        self.assertAlmostEqual(cbfloors.at(self.f, "bcast", 8)["floor_us"], 0.2)  # 1 hand-off
        self.assertAlmostEqual(cbfloors.at(self.f, "barrier", 0)["floor_us"], 0.4)
        self.assertIsNone(cbfloors.at(self.f, "reduce_scatter", 8))  # no floor for it

    def test_both_cpus_floor_uses_the_rate_of_a_thread_while_the_other_copies(self):
        self.assertNotIn("both_cpus_floor_us", cbfloors.at(self.f, "allreduce", 64 * MIB))
        doc = fx.info_document()
        rows = doc["floors"]["bandwidth"]["rows"]
        rows[1]["both_cpus_memcpy_GBps"] = 40.0  # 1 MiB: 50 alone, 40 each at once
        rows[2]["both_cpus_memcpy_GBps"] = 5.0  # 64 MiB: half its 10 (none beyond)
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
            json.dump(doc, f)
        try:
            both = cbfloors.read_info(f.name)
        finally:
            os.unlink(f.name)
        self.assertEqual(cbfloors.memcpy_rate(both, 2 * MIB, "both_cpus_memcpy_GBps"),
                         (40.0, MIB))
        self.assertEqual(cbfloors.memcpy_rate(both, 8, "both_cpus_memcpy_GBps"), (40.0, MIB))
        big = cbfloors.at(both, "allreduce", 64 * MIB)
        self.assertAlmostEqual(big["floor_us"], 64 * MIB / 20e3)  # one thread: the 1 GiB row
        self.assertAlmostEqual(big["both_cpus_floor_us"], 64 * MIB / 5e3)
        self.assertAlmostEqual(cbfloors.at(both, "allreduce", 8)["both_cpus_floor_us"], 0.4)

    def test_no_handoff_no_floor(self):
        f = floors(one_way_ns=None)
        self.assertIsNone(cbfloors.at(f, "allreduce", 8))
        self.assertIsNone(cbfloors.latency_line(f, "allreduce"))

    def test_applies_to_two_ranks_on_its_host(self):
        self.assertTrue(cbfloors.applies(self.f, fx.document("allreduce", "mpi", [], nranks=2)))
        self.assertFalse(cbfloors.applies(self.f, fx.document("allreduce", "mpi", [], nranks=4)))
        self.assertFalse(cbfloors.applies(self.f, fx.document("allreduce", "mpi", [], nranks=2,
                                                              host="node2")))


class Errors(unittest.TestCase):
    def check(self, doc, message):
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
            json.dump(doc, f)
        try:
            with self.assertRaises(cbjson.InputError) as e:
                cbfloors.read_info(f.name)
            self.assertIn(message, str(e.exception))
        finally:
            os.unlink(f.name)

    def test_unusable_documents(self):
        self.check(fx.document("allreduce", "mpi", []), "not a cb_info document")
        doc = fx.info_document()
        doc["floors"] = {"mode": "off"}
        self.check(doc, "floors not measured (cb_info --floors off)")
        doc["floors"] = {"mode": "quick", "error": "cannot map"}
        self.check(doc, "floors failed: cannot map")
        del doc["floors"]
        self.check(doc, "no floors")


class Table(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        d = self.tmp.name
        interleaved = fx.document("allreduce", "mpi", [], nranks=2)
        for series, us in (("mpi", 0.8), ("engine", 1.6)):
            r = fx.coll_record(8, us, nranks=2)
            r["series"] = series
            interleaved["results"].append(r)
        self.files = fx.write_all(d, {
            "info.json": fx.info_document(),
            # 8 B at 0.8 us: floor 0.4 us, half of it; 64 MiB at twice its floor
            "ar.json": fx.document("allreduce", "engine", [
                fx.coll_record(8, 0.8, nranks=2),
                fx.coll_record(64 * MIB, 2 * 64 * MIB / 20e3, nranks=2)], nranks=2),
            "ar4.json": fx.document("allreduce", "engine", [fx.coll_record(8, 0.8)], nranks=4),
            "rs.json": fx.document("reduce_scatter", "engine",
                                   [fx.coll_record(8, 0.8, nranks=2)], nranks=2),
            "il.json": interleaved})

    def tearDown(self):
        self.tmp.cleanup()

    def test_fraction_of_the_floor_per_series_and_size(self):
        out = os.path.join(self.tmp.name, "out.json")
        f = self.files
        p = fx.run_script("cbfloors.py", [f["info.json"], f["ar.json"], f["ar4.json"],
                                          f["rs.json"], f["il.json"], "--json", out])
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(out) as fh:
            rows = json.load(fh)["rows"]
        got = [(r["file"], r["series"], r["bytes"], round(r["fraction_of_floor"], 6))
               for r in rows]
        # the 4-rank run and reduce_scatter (no floor) are left out
        self.assertEqual(got, [("ar.json", "engine", 8, 0.5), ("ar.json", "engine", 64 * MIB, 0.5),
                               ("il.json", "mpi", 8, 0.5), ("il.json", "engine", 8, 0.25)])
        self.assertAlmostEqual(rows[1]["busbw_floor_GBps"], 2 * rows[1]["busbw_GBps"])
        self.assertIn("| allreduce | engine | 64 MiB |", p.stdout)
        self.assertIn("one-way hand-off 200 ns (CPUs 0 and 1", p.stdout)

    def test_sizes_and_errors(self):
        f = self.files
        p = fx.run_script("cbfloors.py", [f["info.json"], f["ar.json"], "--sizes", "8"])
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertNotIn("64 MiB", p.stdout)
        p = fx.run_script("cbfloors.py", [f["info.json"], f["ar4.json"]])
        self.assertEqual(p.returncode, 2)
        self.assertTrue(p.stderr.startswith("cbfloors.py: error: no result with a floor"))
        p = fx.run_script("cbfloors.py", [f["info.json"], f["ar.json"], "--sizes", "8x"])
        self.assertEqual((p.returncode, p.stderr.count("\n")), (2, 1), p.stderr)
        p = fx.run_script("cbfloors.py", [f["ar.json"], f["ar.json"]])
        self.assertIn("not a cb_info document", p.stderr)
        self.assertNotIn("Traceback", p.stderr)


if __name__ == "__main__":
    unittest.main()
