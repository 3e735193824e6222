#!/usr/bin/env python3
"""scripts/compare.py and scripts/cbjson.py on hand-made documents (no MPI, no matplotlib)."""
import json
import math
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fixtures as fx  # noqa: E402


class CompareTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="cb_scripts_")
        self.dir = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def path(self, name):
        return os.path.join(self.dir, name)

    def compare(self, *args, rc=0):
        out = self.path("out.json")
        p = fx.run_script("compare.py", [*args, "--json", out, "--md", self.path("out.md")])
        self.assertEqual(p.returncode, rc, p.stdout + p.stderr)
        with open(out) as f:
            return json.load(f)["comparisons"]

    def test_latency_ratios_and_tolerance(self):
        base = [fx.latency_record(s, v) for s, v in ((1, 2.0), (2, 4.0), (4, 8.0), (8, 4.0),
                                                     (16, 1.0))]
        cand = [fx.latency_record(s, v) for s, v in ((1, 3.0), (2, 2.0), (4, 8.25), (8, 4.5),
                                                     (32, 1.0))]
        paths = fx.write_all(self.dir, {"a.json": fx.document("latency", "mpi", base),
                                        "b.json": fx.document("latency", "mpi", cand)})
        (c,) = self.compare(paths["a.json"], paths["b.json"])
        self.assertEqual(c["metric"], "latency")
        got = {r["bytes"]: (r["ratio"], r["slower"]) for r in c["rows"]}
        # 8.25 / 8 = 1.03125 is within the default 5 %; 4.5 / 4 = 1.125 is not.
        self.assertEqual(got, {1: (1.5, True), 2: (0.5, False), 4: (1.03125, False),
                               8: (1.125, True)})
        self.assertEqual(c["slower_sizes"], [1, 8])
        self.assertEqual((c["only_in_baseline"], c["only_in_candidate"]), ([16], [32]))
        want = math.exp((math.log(1.5) + math.log(0.5) + math.log(1.03125) + math.log(1.125)) / 4)
        self.assertAlmostEqual(c["geomean_ratio"], want, places=12)
        (strict,) = self.compare(paths["a.json"], paths["b.json"], "--tolerance", "0")
        self.assertEqual(strict["slower_sizes"], [1, 4, 8])
        with open(self.path("out.md")) as f:
            md = f.read()
        self.assertIn("| 1 | 2 | 3 | 1.500 | SLOWER |", md)
        self.assertIn("| 4 | 8 | 8.25 | 1.031 | SLOWER |", md)

    def test_bandwidth_is_slower_when_lower(self):
        base = [fx.bandwidth_record(s, 100.0) for s in (1024, 2048, 4096)]
        cand = [fx.bandwidth_record(1024, 50.0), fx.bandwidth_record(2048, 200.0),
                fx.bandwidth_record(4096, 96.0)]
        paths = fx.write_all(self.dir, {"a.json": fx.document("bw", "mpi", base),
                                        "b.json": fx.document("bw", "mpi", cand)})
        (c,) = self.compare(paths["a.json"], paths["b.json"], "--metric", "bandwidth")
        self.assertEqual(c["better"], "higher")
        self.assertEqual([(r["ratio"], r["slower"]) for r in c["rows"]],
                         [(0.5, True), (2.0, False), (0.96, False)])
        self.compare(paths["a.json"], paths["b.json"], "--fail-on-slower", rc=1)

    def test_baseline_backend_mode(self):
        paths = fx.collective_files(self.dir)
        lat = fx.write_all(self.dir, {"lat.json": fx.document(
            "latency", "mpi", [fx.latency_record(8, 1.0)])})
        comps = self.compare("--baseline-backend", "mpi", "--metric", "latency,busbw",
                             *paths.values(), *lat.values())
        pairs = sorted((c["benchmark"], c["candidate"]["backend"], c["candidate"]["algo"],
                        c.get("metric")) for c in comps)
        self.assertEqual(pairs, [
            ("allreduce", "engine", "recursive_doubling", "busbw"),
            ("allreduce", "engine", "recursive_doubling", "latency"),
            ("allreduce", "engine", "ring", "busbw"),
            ("allreduce", "engine", "ring", "latency"),
            ("allreduce", "nccl", "", "busbw"),
            ("allreduce", "nccl", "", "latency")])
        ring = next(c for c in comps if c["candidate"]["algo"] == "ring"
                    and c["metric"] == "latency")
        self.assertEqual(ring["baseline"]["backend"], "mpi")
        first = ring["rows"][0]  # 4 B: (3 + 4/6e3) / (2 + 4/5e3)
        self.assertAlmostEqual(first["ratio"], (3 + 4 / 6e3) / (2 + 4 / 5e3), places=12)
        self.assertTrue(first["slower"])
        with open(self.path("out.md")) as f:
            md = f.read()
        self.assertIn("engine/ring (collbench engine 0.1.0) @ node1", md)

    def test_summary_is_one_page_by_size_band(self):
        # separate runs: latency of mpi and engine; an interleaved mpi,engine allreduce
        lat = {"latency.mpi.host.json": fx.document("latency", "mpi", [
                   fx.latency_record(8, 1.0), fx.latency_record(64 << 10, 10.0)]),
               "latency.engine.host.json": fx.document("latency", "engine", [
                   fx.latency_record(8, 2.0), fx.latency_record(64 << 10, 5.0)],
                   library=fx.ENGINE)}
        recs = []
        for size, ratio, ci, verdict in ((8, 0.5, [0.4, 0.6], "faster"),
                                         (16, 0.9, [0.7, 1.2], "indistinguishable"),
                                         (1 << 20, 1.5, [1.2, 1.8], "slower")):
            recs.append(dict(fx.coll_record(size, 2.0), series="mpi"))
            recs.append(dict(fx.coll_record(size, 2.0 * ratio), series="engine",
                             versus={"baseline": "mpi", "ratio": ratio, "ratio_ci95": ci,
                                     "verdict": verdict}))
        inter = fx.document("allreduce", "mpi", recs)
        inter["interleave"] = {"baseline": "mpi", "passes": 6, "series": [
            {"name": "mpi", "backend": "mpi"}, {"name": "engine", "backend": "engine"}]}
        paths = fx.write_all(self.dir, {**lat, "allreduce.mpi-engine.host.json": inter})
        summary = self.path("summary.md")
        comps = self.compare("--baseline-backend", "mpi", "--summary", summary,
                             *paths.values())
        # the interleaved run is not compared as one mixed series
        self.assertEqual([c["benchmark"] for c in comps], ["latency"])
        with open(summary) as f:
            md = f.read()
        self.assertIn("| allreduce | engine | interleaved, 6 passes | 0.50 [0.40, 1.20] "
                      "faster 1/2, indist. 1/2 | - | 1.50 [1.20, 1.80] slower 1/1 | "
                      "[allreduce.mpi-engine.host.txt](allreduce.mpi-engine.host.txt) |", md)
        self.assertIn("| latency | engine | separate runs, latency | 2.00 slower 1/1 | "
                      "0.50 faster 1/1 | - | [out.md](out.md) |", md)
        self.assertIn("| <= 1 KiB | 16-256 KiB | 256 KiB-4 MiB |", md)  # the bands measured
        self.assertIn("- allreduce, engine: 1 MiB", md)
        self.assertIn("- latency, engine: 8 B", md)
        self.assertLess(md.count("\n"), 40)
        # plot.py's reader: the interleaved run is two series, each with its own backend
        sys.path.insert(0, str(fx.SCRIPTS))
        import cbjson
        split = cbjson.series_of("x.json", inter)
        self.assertEqual([(s.name, len(s.records)) for s in split], [("mpi", 3), ("engine", 3)])
        p = fx.run_script("compare.py", ["--summary", summary, *paths.values()])
        self.assertEqual(p.returncode, 2, p.stderr)  # --summary needs --baseline-backend

    def test_tuned_run_is_one_series_across_its_algorithms(self):
        sizes = [4 << k for k in range(0, 11, 2)]
        tuned = [fx.coll_record(s, 1.0, "shm_flat" if s <= 256 else "shm") for s in sizes]
        base = [fx.coll_record(s, 2.0) for s in sizes]
        paths = fx.write_all(self.dir, {"m.json": fx.document("allreduce", "mpi", base),
                                        "e.json": fx.document("allreduce", "engine", tuned)})
        (c,) = self.compare(paths["m.json"], paths["e.json"], "--metric", "latency")
        self.assertEqual(c["candidate"]["algo"], "")
        self.assertEqual([r["ratio"] for r in c["rows"]], [0.5] * len(sizes))

    def test_default_metric_follows_the_baseline(self):
        paths = fx.collective_files(self.dir)
        comps = self.compare(paths["allreduce.mpi.json"], paths["allreduce.engine.json"])
        self.assertEqual([(c["candidate"]["algo"], c["metric"]) for c in comps],
                         [("ring", "latency"), ("recursive_doubling", "latency")])
        comps = self.compare(paths["allreduce.mpi.json"], paths["iallreduce.mpi.json"])
        self.assertEqual(comps[0]["metric"], "latency")  # pure_comm_us for non-blocking

    def test_repeat_ranges_flag_sizes_within_noise(self):
        rep = fx.with_repeat
        # latency: 8 B ranges 1.5-2.5 and 2-3 overlap (~); 64 B 1-1.25 and 2-2.5 do not.
        base = [rep(fx.latency_record(8, 2.0), "latency_us.avg", [2.0, 2.5, 1.5], 0),
                rep(fx.latency_record(64, 1.0), "latency_us.avg", [1.0, 1.25, 1.0], 0),
                fx.latency_record(512, 4.0)]  # no repeat data at this size
        cand = [rep(fx.latency_record(8, 2.5), "latency_us.avg", [3.0, 2.0, 2.5], 2),
                rep(fx.latency_record(64, 2.0), "latency_us.avg", [2.0, 2.5, 2.0], 0),
                rep(fx.latency_record(512, 4.0), "latency_us.avg", [4.0, 4.0, 4.0], 0)]
        paths = fx.write_all(self.dir, {"a.json": fx.document("latency", "mpi", base),
                                        "b.json": fx.document("latency", "mpi", cand)})
        (c,) = self.compare(paths["a.json"], paths["b.json"])
        rows = {r["bytes"]: r for r in c["rows"]}
        self.assertEqual(rows[8]["baseline_range"], [1.5, 2.5])
        self.assertEqual(rows[8]["candidate_range"], [2.0, 3.0])
        self.assertEqual([(b, rows[b]["slower"], rows[b]["within_noise"]) for b in (8, 64, 512)],
                         [(8, True, True), (64, True, False), (512, False, None)])
        self.assertTrue(c["noise_known"])
        self.assertEqual(c["within_noise_sizes"], [8])
        self.assertEqual(c["repeat"], {"baseline": 3, "candidate": 3})
        with open(self.path("out.md")) as f:
            md = f.read()
        self.assertIn("| 8 | 2 | 2.5 | 1.250 | SLOWER | 1.5–2.5 | 2–3 | ~ |", md)
        self.assertIn("| 64 | 1 | 2 | 2.000 | SLOWER | 1–1.25 | 2–2.5 |  |", md)
        self.assertIn("| 512 | 4 | 4 | 1.000 |  | n/a | 4–4 | n/a |", md)
        self.assertIn("within noise at 1 of 3 (8)", md)
        self.assertIn("| 1 of 3 |", md)  # the overview's Within noise column

    def test_repeat_ranges_of_rates_follow_the_pass_times(self):
        rep = fx.with_repeat
        # bandwidth = k / time: 100 MB/s at 10 us, passes 8..20 us -> 50..125 MB/s.
        base = [rep(fx.bandwidth_record(1024, 100.0), "bandwidth_MBps", [10.0, 20.0, 8.0], 0)]
        cand = [rep(fx.bandwidth_record(1024, 160.0), "bandwidth_MBps", [5.0, 4.0, 6.0], 0)]
        paths = fx.write_all(self.dir, {"a.json": fx.document("bw", "mpi", base),
                                        "b.json": fx.document("bw", "mpi", cand)})
        (c,) = self.compare(paths["a.json"], paths["b.json"], "--metric", "bandwidth")
        (row,) = c["rows"]
        self.assertEqual(row["baseline_range"], [50.0, 125.0])
        self.assertEqual(row["candidate_range"], [800.0 / 6.0, 200.0])
        self.assertIs(row["within_noise"], False)
        # busbw and algbw follow latency_us.avg's passes inversely; latency directly.
        def mk(avg, passes):
            return rep(fx.coll_record(4096, avg), "latency_us.avg", passes, 0)

        paths = fx.write_all(self.dir, {
            "m.json": fx.document("allreduce", "mpi", [mk(4.0, [4.0, 2.0, 8.0])]),
            "e.json": fx.document("allreduce", "engine", [mk(2.0, [2.0, 1.0, 2.5])],
                                  library="collbench engine 0.1.0")})
        comps = self.compare(paths["m.json"], paths["e.json"], "--metric", "latency,busbw")
        by = {c["metric"]: c["rows"][0] for c in comps}
        self.assertEqual(by["latency"]["baseline_range"], [2.0, 8.0])
        self.assertEqual(by["latency"]["candidate_range"], [1.0, 2.5])
        self.assertIs(by["latency"]["within_noise"], True)
        busbw = fx.coll_record(4096, 4.0)["busbw_GBps"]
        lo, hi = by["busbw"]["baseline_range"]
        self.assertAlmostEqual(lo, busbw / 2, places=12)  # slowest pass: twice the time
        self.assertAlmostEqual(hi, busbw * 2, places=12)
        self.assertIs(by["busbw"]["within_noise"], True)

    def test_without_repeat_data_the_report_says_so(self):
        paths = fx.write_all(self.dir, {
            "a.json": fx.document("latency", "mpi", [fx.latency_record(8, 1.0)]),
            "b.json": fx.document("latency", "mpi", [fx.with_repeat(
                fx.latency_record(8, 1.0), "latency_us.avg", [1.0, 1.0, 1.0], 0)])})
        (c,) = self.compare(paths["a.json"], paths["b.json"])
        self.assertFalse(c["noise_known"])
        self.assertIsNone(c["rows"][0]["within_noise"])
        self.assertEqual(c["repeat"], {"baseline": None, "candidate": 3})
        with open(self.path("out.md")) as f:
            md = f.read()
        self.assertIn("No repeat data in the baseline (run with --repeat N)", md)
        self.assertIn("| 8 | 1 | 1 | 1.000 |  |\n", md)  # no noise columns
        self.assertIn("| n/a |\n", md)  # the overview's Within noise column
        # a figure that is not the metric's (cb_replay's step time) gives no range
        rec = fx.with_repeat(fx.latency_record(8, 1.0), "step_us.avg", [1.0, 2.0, 3.0], 0)
        paths = fx.write_all(self.dir, {"a.json": fx.document("latency", "mpi", [rec]),
                                        "b.json": fx.document("latency", "mpi", [rec])})
        (c,) = self.compare(paths["a.json"], paths["b.json"])
        self.assertFalse(c["noise_known"])
        with open(self.path("out.md")) as f:
            self.assertIn("No repeat data for latency", f.read())

    def test_bad_input_is_one_line_and_exit_2(self):
        good = fx.write_all(self.dir, {"ok.json": fx.document(
            "latency", "mpi", [fx.latency_record(8, 1.0)])})["ok.json"]
        with open(good) as f:
            text = f.read()
        cases = {
            "truncated.json": (text[: len(text) // 2], "not valid JSON"),
            "empty.json": ("", "empty file"),
            "list.json": ("[1, 2]", "not an object"),
            "schema.json": (json.dumps({"schema": "other/1", "results": []}), "schema is"),
            "noresults.json": (json.dumps({**json.loads(text), "results": []}), "no results"),
            "nobytes.json": (json.dumps({**json.loads(text), "results": [{"x": 1}]}),
                             "no numeric 'bytes'"),
        }
        for name, (content, why) in cases.items():
            with open(self.path(name), "w") as f:
                f.write(content)
            for script, extra in (("compare.py", []), ("plot.py", ["-o", self.dir])):
                p = fx.run_script(script, [good, self.path(name), *extra])
                self.assertEqual(p.returncode, 2, f"{script} {name}: {p.stderr}")
                lines = p.stderr.strip().splitlines()
                self.assertEqual(len(lines), 1, f"{script} {name}: {p.stderr}")
                self.assertIn(name, lines[0])
                self.assertIn(why, lines[0])
                self.assertNotIn("Traceback", p.stderr)
        p = fx.run_script("compare.py", [good, self.path("missing.json")])
        self.assertEqual(p.returncode, 2)
        self.assertIn("missing.json: cannot read: No such file", p.stderr)


if __name__ == "__main__":
    unittest.main()
