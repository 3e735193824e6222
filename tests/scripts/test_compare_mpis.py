#!/usr/bin/env python3
"""scripts/compare_mpis.py on hand-made documents (no MPI), and scripts/compare_mpis.sh's
plan in a dry run (CB_COMPARE_DRY_RUN=1: no build, no run). The baseline at each size is
the library with the lowest median; every other series is compared with it pass by pass
(docs/statistics.md's sign-test interval and verdict, scripts/cbstats.py), so a machine
whose speed drifts between rounds does not blur a difference that each round shows; run.json
says which files belong to the run, the revision measured and the seed; an older folder
(no run.json, 3 passes) still reads, with no intervals and "too few passes"."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fixtures as fx  # noqa: E402

REPO = fx.SCRIPTS.parent
# The machine's speed per pass: every series of a round runs at that round's speed.
SPEED = [1.0, 3.0, 1.0, 2.0, 1.0, 3.0, 1.5, 1.0, 2.5, 1.0]
# preload-a's ratio to the fastest library per pass: on both sides of 1.
WOBBLE = [0.9, 1.1, 0.95, 1.05, 0.9, 1.1, 0.95, 1.05, 1.0, 1.0]


def write(dirname, name, records, library):
    doc = fx.document("allreduce", "mpi", records, nranks=2)
    doc["environment"]["mpi"] = {"implementation": library[0], "version": library[1]}
    # Library b's launcher binds each rank to a core, a's leaves them free.
    doc["environment"]["binding"] = ({"bound": True, "cpus_per_rank": ["0", "1"]}
                                     if library[0] == "LibB" else
                                     {"bound": False, "cpus_per_rank": ["0-1", "0-1"]})
    with open(os.path.join(dirname, name), "w") as f:
        json.dump(doc, f)


def head():
    p = subprocess.run(["git", "-C", str(REPO), "rev-parse", "HEAD"], capture_output=True,
                       text=True)
    return p.stdout.strip() if p.returncode == 0 else None


def write_run(dirname, files, failed=(), revision="0" * 40):
    run = {"schema": "collbench.compare_mpis/1", "complete": True,
           "git": {"revision": revision, "dirty": False}, "seed": 42, "passes": len(SPEED),
           "start": "2026-01-01T00:00:00Z", "end": "2026-01-01T01:00:00Z",
           "machine": {"hostname": "vm", "nproc": 2},
           "runs": [{"file": f, "status": "ok"} for f in files]
           + [{"file": f, "status": "failed"} for f in failed]}
    with open(os.path.join(dirname, "run.json"), "w") as f:
        json.dump(run, f)


class CompareMpis(unittest.TestCase):
    """10 passes. 1 KiB (chunk 1): mpi-a 10 us, mpi-b 20 us (a is the baseline), engine-a
    0.9 of a in every pass (faster), preload-a on both sides of a (indistinguishable).
    1 MiB (chunk 2): mpi-b 90 us is the baseline, engine-a 1.5 of it (slower). Every time
    scaled by the pass's speed (1 to 3): the engine's and the library's times overlap across
    passes, but each pass's ratio is 0.9."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.d = self.tmp.name
        files = []

        def put(name, size, us, lib):
            write(self.d, name, [fx.coll_record(size, us)], lib)
            files.append(name)
        a, b = ("LibA", "1.0"), ("LibB", "2.0")
        for p, speed in enumerate(SPEED, start=1):
            if p != 4:  # mpi-a's run of pass 4 failed: no pair in that pass
                put(f"allreduce.mpi-a.{p}.c1.json", 1024, 10.0 * speed, a)
            put(f"allreduce.mpi-b.{p}.c1.json", 1024, 20.0 * speed, b)
            put(f"allreduce.engine-a.{p}.c1.json", 1024, 9.0 * speed, a)
            put(f"allreduce.preload-a.{p}.c1.json", 1024, 10.0 * speed * WOBBLE[p - 1], a)
            put(f"allreduce.mpi-a.{p}.c2.json", 1 << 20, 100.0 * speed, a)
            put(f"allreduce.mpi-b.{p}.c2.json", 1 << 20, 90.0 * speed, b)
            put(f"allreduce.engine-a.{p}.c2.json", 1 << 20, 135.0 * speed, a)
        # A file of an earlier run in the same folder, not in run.json: not read.
        write(self.d, "allreduce.engine-a.11.c1.json", [fx.coll_record(1024, 1.0)], a)
        write_run(self.d, files, failed=["allreduce.mpi-a.4.c1.json"])
        self.run_script()

    def run_script(self):
        res = fx.run_script("compare_mpis.py", [self.d])
        self.assertEqual(res.returncode, 0, res.stderr)
        with open(os.path.join(self.d, "comparison.md")) as f:
            self.md = f.read()
        with open(os.path.join(self.d, "comparison.json")) as f:
            self.json = json.load(f)

    def tearDown(self):
        self.tmp.cleanup()

    def row(self, size):
        line = next(l for l in self.md.splitlines() if l.startswith(f"| {size} |"))
        return [c.strip() for c in line.strip("|").split("|")]

    def at(self, size, series):
        e = next(e for e in self.json["collectives"]["allreduce"]["sizes"] if e["bytes"] == size)
        return e, e["series"][series]

    def test_baseline_is_the_library_with_the_lowest_median(self):
        # size, mpi-a, mpi-b, engine-a, preload-a, fastest, engine-a / f, preload-a / f
        self.assertEqual(self.row("1 KiB")[5], "a")
        self.assertEqual(self.row("1 MiB")[5], "b")
        self.assertEqual(self.at(1024, "mpi-a")[0]["baseline"], "mpi-a")

    def test_paired_ratio_interval_and_verdict(self):
        self.assertEqual(self.row("1 KiB")[6], "0.90 [0.90, 0.90] faster")
        self.assertEqual(self.row("1 MiB")[6], "1.50 [1.50, 1.50] slower")
        self.assertTrue(self.row("1 KiB")[7].endswith(" indistinguishable"), self.row("1 KiB"))
        _, eng = self.at(1024, "engine-a")
        # 9 pairs: the pass where mpi-a failed has none, the stray 11th file is not read
        self.assertEqual(eng["versus"]["passes"], [1, 2, 3, 5, 6, 7, 8, 9, 10])
        self.assertEqual(eng["passes"], list(range(1, 11)))
        self.assertEqual(eng["versus"]["verdict"], "faster")
        self.assertAlmostEqual(eng["versus"]["confidence"], 1 - 2 * 10 / 512, places=12)
        # The library that is not the baseline is compared too (in the JSON)
        _, b = self.at(1024, "mpi-b")
        self.assertEqual((b["versus"]["ratio"], b["versus"]["verdict"]), (2.0, "slower"))

    def test_binding_of_each_series_in_the_table_and_json(self):
        self.assertIn("`mpi-b` rank 0 on CPU 0, rank 1 on CPU 1 (bound)", self.md)
        self.assertIn("`engine-a` rank 0 on CPUs 0-1, rank 1 on CPUs 0-1 (not bound)", self.md)
        self.assertEqual(self.json["bindings"]["mpi-b"],
                         ["rank 0 on CPU 0, rank 1 on CPU 1 (bound)"])

    def test_floors_from_info_json(self):
        """With cb_info's info.json: a floor column (2 hand-offs of 200 ns; at 1 MiB 2 MiB
        moved at 50 GB/s: 20.97 us) and each series' floor / median in the JSON."""
        self.assertNotIn("floor (us)", self.md)  # none without info.json
        self.assertIsNone(self.json["floors"])
        fx.write_all(self.d, {"info.json": fx.info_document()})
        self.run_script()
        self.assertIn("| size | floor (us) | mpi-a (us) |", self.md)
        self.assertIn("one-way cache-line hand-off 200 ns (CPUs 0 and 1", self.md)
        self.assertEqual(self.row("1 KiB")[1], "0.4")
        self.assertEqual(self.row("1 MiB")[1], "21")
        e, b = self.at(1 << 20, "mpi-b")
        self.assertAlmostEqual(e["floor"]["floor_us"], 2 * (1 << 20) / 100e3)
        self.assertAlmostEqual(b["floor_fraction"], e["floor"]["floor_us"] / b["median_us"])
        self.assertEqual(self.json["floors"]["one_way_ns"], 200.0)
        self.assertNotIn("floor, both CPUs", self.md)  # an info.json without both-CPU rows
        # With them: 1 MiB's both-CPUs rate 25 GB/s (50 alone): twice the floor
        info = fx.info_document()
        info["floors"]["bandwidth"]["rows"][1]["both_cpus_memcpy_GBps"] = 25.0
        fx.write_all(self.d, {"info.json": info})
        self.run_script()
        self.assertIn("| size | floor (us) | floor, both CPUs (us) | mpi-a (us) |", self.md)
        self.assertEqual(self.row("1 MiB")[2], "41.9")
        e, b = self.at(1 << 20, "mpi-b")
        self.assertAlmostEqual(e["floor"]["both_cpus_floor_us"], 2 * (1 << 20) / 50e3)
        self.assertAlmostEqual(b["both_cpus_floor_fraction"],
                               e["floor"]["both_cpus_floor_us"] / b["median_us"])

    def test_a_committed_run_reads_its_packed_raw_documents(self):
        """A results/ folder keeps the runs' documents in raw.tar.xz (raw/<name>.json): the
        same comparison comes out of it; a broken archive is one line and exit 2."""
        import glob
        import tarfile
        before = self.json["collectives"]
        with tarfile.open(os.path.join(self.d, "raw.tar.xz"), "w:xz") as tar:
            for path in glob.glob(os.path.join(self.d, "allreduce.*.json")):
                tar.add(path, arcname="raw/" + os.path.basename(path))
                os.unlink(path)
        self.run_script()
        self.assertEqual(self.json["collectives"], before)
        with open(os.path.join(self.d, "raw.tar.xz"), "wb") as f:
            f.write(b"not xz")
        res = fx.run_script("compare_mpis.py", [self.d])
        self.assertEqual(res.returncode, 2, res.stderr)
        self.assertIn("raw.tar.xz", res.stderr)
        self.assertEqual(len(res.stderr.strip().splitlines()), 1, res.stderr)

    def test_median_with_its_interval(self):
        # mpi-b at 1 KiB: 20 x SPEED, sorted 20 20 20 20 20 30 40 50 60 60: median 25, the
        # interval [x(2), x(9)] = [20, 60]
        self.assertEqual(self.row("1 KiB")[2], "25.00 [20.00, 60.00]")
        _, b = self.at(1024, "mpi-b")
        self.assertEqual(b["median_ci95_us"], [20.0, 60.0])
        # The intervals of the engine and the library overlap: only the pairing decides.
        _, a = self.at(1024, "mpi-a")
        _, eng = self.at(1024, "engine-a")
        self.assertLess(eng["median_ci95_us"][0], a["median_ci95_us"][1])

    def test_summary_lists_every_size_not_faster(self):
        self.assertIn("- `engine-a` against the fastest library: slower at 1 MiB "
                      "(1.50 [1.50, 1.50]); faster at 1 of 2 sizes", self.md)
        self.assertRegex(self.md, r"- `preload-a` against the fastest library: slower at no "
                         r"size; indistinguishable at 1 KiB \(1\.00 \[0\.90, 1\.10\]\)")
        self.assertIn("| engine-a | 0.90-0.90 (faster 1) | 1.50-1.50 (slower 1) |", self.md)
        self.assertIn("`mpi-a` = LibA 1.0", self.md)

    def test_revision_and_a_changed_tree(self):
        self.assertIn(f"Measured at git revision `{'0' * 40}` on vm (2 cores)", self.md)
        self.assertIn("seed 42", self.md)
        self.assertIn("Runs that failed and are left out (1): `allreduce.mpi-a.4.c1.json`",
                      self.md)
        now = head()
        if now is None:
            self.skipTest("not a git checkout")
        self.assertIn(f"The tree has changed since: the repository's HEAD is now `{now}`",
                      self.md)
        with open(os.path.join(self.d, "run.json")) as f:
            run = json.load(f)
        run["git"]["revision"] = now
        with open(os.path.join(self.d, "run.json"), "w") as f:
            json.dump(run, f)
        self.run_script()
        self.assertNotIn("has changed since", self.md)


class OldFormat(unittest.TestCase):
    """A folder of the three-pass script: no run.json, no intervals, "too few passes"."""

    def test_reads_without_run_json(self):
        with tempfile.TemporaryDirectory() as d:
            for p, speed in ((1, 1.0), (2, 3.0), (3, 1.0)):
                write(d, f"allreduce.mpi-a.{p}.c1.json", [fx.coll_record(1024, 10.0 * speed)],
                      ("LibA", "1.0"))
                write(d, f"allreduce.engine-a.{p}.c1.json",
                      [fx.coll_record(1024, 12.0 * speed)], ("LibA", "1.0"))
            res = fx.run_script("compare_mpis.py", [d])
            self.assertEqual(res.returncode, 0, res.stderr)
            with open(os.path.join(d, "comparison.md")) as f:
                md = f.read()
            with open(os.path.join(d, "comparison.json")) as f:
                doc = json.load(f)
        self.assertIn("An older run: no run.json", md)
        self.assertIn("| 1 KiB | 10.00 | 12.00 | a | 1.20 too few passes |", md)
        self.assertIn("too few passes for a verdict at 1 sizes, the median ratio above 1 at "
                      "1 KiB (1.20)", md)
        eng = doc["collectives"]["allreduce"]["sizes"][0]["series"]["engine-a"]
        self.assertIsNone(eng["median_ci95_us"])
        self.assertIsNone(eng["versus"]["ratio_ci95"])
        self.assertEqual(eng["versus"]["verdict"], "too few passes")
        self.assertIsNone(doc["run"])


def dry_run(outdir, seed, *args, **env):
    e = {k: v for k, v in os.environ.items() if not k.startswith("CB_")}
    e.update(CB_COMPARE_DRY_RUN="1", CB_MPIS="mpich4 openmpi5", CB_COLLS="allreduce bcast",
             CB_SIZES="1K:4K 8K:16K", CB_PASSES="6", CB_SEED=str(seed))
    e.update(env)
    p = subprocess.run(["bash", str(fx.SCRIPTS / "compare_mpis.sh"), outdir, *args],
                       capture_output=True, text=True, env=e, timeout=120)
    if p.returncode != 0:
        raise AssertionError(p.stderr)
    with open(os.path.join(outdir, "run.json")) as f:
        return json.load(f), p.stdout


class ShuffledRounds(unittest.TestCase):
    """compare_mpis.sh's plan: every round runs every series once, in an order shuffled anew
    per round from CB_SEED; run.json records it with the revision and the machine."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.tmp.cleanup()

    def plan(self, name, seed, *args, **env):
        return dry_run(os.path.join(self.tmp.name, name), seed, *args, **env)

    @staticmethod
    def rounds(run):
        out = {}
        for r in run["runs"]:
            out.setdefault((r["coll"], r["chunk"], r["pass"]), []).append(r)
        return {k: [x["series"] for x in sorted(v, key=lambda x: x["position"])]
                for k, v in out.items()}

    def test_every_round_a_permutation_of_all_series(self):
        run, _ = self.plan("a", 11)
        series = {"mpi-mpich4", "mpi-openmpi5", "engine-mpich4", "engine-plain-mpich4",
                  "preload-mpich4", "preload-openmpi5"}
        rounds = self.rounds(run)
        self.assertEqual(len(rounds), 2 * 2 * 6)  # collectives x chunks x passes
        for key, order in rounds.items():
            self.assertEqual(sorted(order), sorted(series), key)
        positions = [sorted(r["position"] for r in run["runs"] if (r["coll"], r["chunk"],
                                                                   r["pass"]) == k)
                     for k in rounds]
        self.assertTrue(all(p == list(range(6)) for p in positions))
        self.assertGreater(len({tuple(o) for o in rounds.values()}), 10)  # shuffled anew
        self.assertEqual({r["status"] for r in run["runs"]}, {"dry run"})
        self.assertEqual(run["runs"][0]["file"].split(".")[-3:], ["1", "c1", "json"])

    def test_the_seed_repeats_the_order(self):
        one, _ = self.plan("a", 11)
        two, _ = self.plan("b", 11)
        other, _ = self.plan("c", 12)
        self.assertEqual(self.rounds(one), self.rounds(two))
        self.assertNotEqual(self.rounds(one), self.rounds(other))

    def test_run_json_records_the_run(self):
        run, out = self.plan("a", 11)
        self.assertEqual((run["seed"], run["passes"]), (11, 6))
        self.assertEqual(run["mpis"], ["mpich4", "openmpi5"])
        self.assertEqual(run["chunks"], {"allreduce": ["1K:4K", "8K:16K"],
                                         "bcast": ["1K:4K", "8K:16K"]})
        self.assertEqual(run["machine"]["nproc"], len(os.sched_getaffinity(0)))
        self.assertIn("seed 11", out)
        if head() is not None:
            self.assertEqual(run["git"]["revision"], head())
            self.assertIn(run["git"]["dirty"], (True, False))
        self.assertTrue(run["complete"])

    def test_short_passes_unless_iterations_are_given(self):
        run, out = self.plan("a", 11)
        self.assertEqual(run["options"]["iterations"], 200)
        self.assertEqual(run["options"]["iterations_large"], 20)
        self.assertIn(" -i 200 --iterations-large 20", out)
        run, out = self.plan("b", 11, "-i", "5", "-x", "1", CB_ITERS_LARGE="3")
        self.assertEqual(run["options"]["iterations"], "as given")
        self.assertEqual(run["options"]["extra"], ["-i", "5", "-x", "1"])
        self.assertNotIn("-i 200", out)
        self.assertIn("--iterations-large 3 -i 5 -x 1", out)

    def hosts_file(self):
        path = os.path.join(self.tmp.name, "hosts")
        with open(path, "w") as f:
            f.write("cb-host1\ncb-host2\n")
        return path

    def test_across_hosts_every_run_gets_the_hosts_file_and_ranks_per_host(self):
        hosts = self.hosts_file()
        run, out = self.plan("a", 11, CB_HOSTFILE=hosts, CB_PPN="1", CB_LINE_RATE_GBPS="1")
        lines = [x for x in out.splitlines() if x.startswith("== allreduce.")
                 or x.startswith("== bcast.")]
        self.assertEqual(len(lines), len(run["runs"]))
        for line in lines:
            name, command = line[3:].split(": ", 1)
            if name.split(".")[1].endswith("openmpi5"):  # the launcher's own options
                self.assertTrue(command.startswith(
                    f"--hostfile {hosts} --map-by ppr:1:node -n 2 cb_"), line)
            else:
                self.assertTrue(command.startswith(f"-f {hosts} -ppn 1 -n 2 cb_"), line)
        self.assertEqual(run["hosts"], {"hostfile": hosts, "hosts": ["cb-host1", "cb-host2"],
                                        "ranks_per_host": 1, "line_rate_gbps": 1.0})
        self.assertEqual(run["ranks"], 2)
        run, out = self.plan("b", 11, CB_HOSTFILE=hosts, CB_PPN="2", CB_NP="4")
        self.assertIn("-f %s -ppn 2 -n 4 cb_allreduce" % hosts, out)
        self.assertEqual((run["ranks"], run["hosts"]["ranks_per_host"]), (4, 2))

    def test_on_one_host_the_launch_is_unchanged(self):
        run, out = self.plan("a", 11)
        names = [x[3:].split(": ", 1) for x in out.splitlines()
                 if x.startswith("== allreduce.")]
        self.assertTrue(names and all(c.startswith("cb_allreduce ") for _, c in names))
        self.assertNotIn("hosts", run)
        self.assertEqual(run["ranks"], 2)

    def test_bad_cluster_settings_are_refused(self):
        for env, says in [({"CB_PPN": "1"}, "CB_PPN (ranks per host) needs CB_HOSTFILE"),
                          ({"CB_HOSTFILE": "/nonexistent/hosts"}, "cannot be read"),
                          ({"CB_HOSTFILE": self.hosts_file(), "CB_PPN": "0"},
                           "CB_PPN must be a whole number"),
                          ({"CB_NP": "two"}, "CB_NP must be a whole number"),
                          ({"CB_COMPARE_KINDS": "engine"}, "must keep mpi"),
                          ({"CB_COMPARE_KINDS": "mpi engines"}, "takes mpi, engine")]:
            with self.assertRaises(AssertionError) as e:
                self.plan("bad", 11, **env)
            self.assertIn(says, str(e.exception), env)

    def test_kinds_choose_the_series(self):
        run, _ = self.plan("a", 11, CB_COMPARE_KINDS="mpi engine")
        self.assertEqual({r["series"] for r in run["runs"]},
                         {"mpi-mpich4", "mpi-openmpi5", "engine-mpich4"})

    def test_a_random_seed_is_printed_and_recorded(self):
        run, out = self.plan("a", "", CB_SEED="")
        self.assertIn(f"seed {run['seed']} (CB_SEED={run['seed']} repeats the order)", out)


if __name__ == "__main__":
    unittest.main()
