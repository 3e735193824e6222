#!/usr/bin/env python3
"""scripts/tune.py on hand-made --algo all documents (no MPI): winners per size, the MPI
library's "mpi" algorithm as a winner like any other, and --tiers keeping what it does not
measure."""
import json
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fixtures as fx  # noqa: E402

SIZES = [4, 64, 1024, 16384, 262144]

PREVIOUS = {
    "schema": "collbench.tuning/1",
    "parameters": {"hierarchical_allreduce_small_bytes": 16384},
    "rules": [
        {"coll": "bcast", "mem": "host", "algo": "binomial", "max_bytes": 64,
         "ranks": [2, 2], "buffers": "private"},
        {"coll": "bcast", "mem": "host", "algo": "shm", "ranks": [2, 2]},
        {"coll": "bcast", "mem": "host", "algo": "hierarchical"},
        {"coll": "bcast", "mem": "host", "algo": "binomial", "ranks": [2, 2]},
        {"coll": "bcast", "mem": "cuda", "algo": "binomial"},
    ],
    "winners": {"bcast.shm": [{"bytes": 4, "algo": "shm", "p50_us": 0.3}]},
}


def plain_bcast():
    """Private buffers: the library wins up to 1 KiB, chain above."""
    recs = []
    for s in SIZES:
        recs.append(fx.coll_record(s, 1.0 if s <= 1024 else 50.0, "mpi", nranks=2))
        recs.append(fx.coll_record(s, 2.0 if s <= 1024 else 10.0, "chain", nranks=2))
    return fx.document("bcast", "engine", recs, nranks=2, algo="all",
                       options={"alloc": "plain"})


class TuneTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="cb_tune_")
        self.out = os.path.join(self.tmp.name, "table.json")
        with open(self.out, "w") as f:
            json.dump(PREVIOUS, f)
        self.plain = os.path.join(self.tmp.name, "bcast.plain.json")
        with open(self.plain, "w") as f:
            json.dump(plain_bcast(), f)

    def tearDown(self):
        self.tmp.cleanup()

    def tune(self, *args, rc=0):
        p = fx.run_script("tune.py", ["--ranks", "2", "--out", self.out, *args])
        self.assertEqual(p.returncode, rc, p.stdout + p.stderr)
        return p

    def test_plain_tier_alone_replaces_private_rules_and_keeps_the_rest(self):
        self.tune("--tiers", "plain", "--from-plain", self.plain)
        with open(self.out) as f:
            table = json.load(f)
        bcast = [r for r in table["rules"] if r["coll"] == "bcast" and r["mem"] == "host"]
        private = [r for r in bcast if r.get("buffers") == "private"]
        self.assertEqual([(r["algo"], r.get("min_bytes"), r.get("max_bytes")) for r in private],
                         [("mpi", None, 1024), ("chain", 1025, None)])
        # the shared-memory and MPI-transport rules, in their order, and device rules
        self.assertEqual([r["algo"] for r in bcast if "buffers" not in r],
                         ["shm", "hierarchical", "binomial"])
        self.assertIn({"coll": "bcast", "mem": "cuda", "algo": "binomial"}, table["rules"])
        self.assertEqual(table["parameters"], PREVIOUS["parameters"])
        self.assertEqual(table["winners"]["bcast.shm"], PREVIOUS["winners"]["bcast.shm"])
        self.assertEqual([w["algo"] for w in table["winners"]["bcast.plain"]],
                         ["mpi", "mpi", "mpi", "chain", "chain"])
        self.assertIn("measured tiers: plain", table["description"])

    def test_library_called_directly_replaces_the_engines_mpi_times(self):
        # --backend mpi is faster than chain only up to 64 B: the engine's "mpi" records
        # (1 us up to 1 KiB) give way to it
        lib = fx.document("bcast", "mpi", [fx.coll_record(s, 1.5 if s <= 64 else 30.0, nranks=2)
                                           for s in SIZES], nranks=2)
        path = os.path.join(self.tmp.name, "bcast.mpi.json")
        with open(path, "w") as f:
            json.dump(lib, f)
        self.tune("--tiers", "plain", "--from-plain", self.plain, "--from-library", path)
        with open(self.out) as f:
            table = json.load(f)
        self.assertEqual([w["algo"] for w in table["winners"]["bcast.plain"]],
                         ["mpi", "mpi", "chain", "chain", "chain"])

    def preloaded(self, algo, times):
        """A run under the preload with CB_BCAST_ALGO=algo, `times` per size."""
        doc = fx.document("bcast", "mpi", [fx.coll_record(sz, t, nranks=2)
                                           for sz, t in times.items()], nranks=2)
        doc["environment"].update(ld_preload="/x/libcb_engine_preload.so",
                                  cb_variables={"CB_BCAST_ALGO": algo})
        path = os.path.join(self.tmp.name, f"bcast.preloaded.{algo}.json")
        with open(path, "w") as f:
            json.dump(doc, f)
        return path

    def test_runs_under_the_preload_replace_every_algorithms_times(self):
        # Under the preload chain costs more (its per-call cost): the library wins to 16 KiB.
        # The 4 B "chain" time of 0.1 us is dropped: chain did not run at 4 B in the
        # --algo all document (the preload would have passed that call to the library).
        plain = plain_bcast()
        plain["results"] = [r for r in plain["results"] if (r["bytes"], r["algo"]) != (4, "chain")]
        with open(self.plain, "w") as f:
            json.dump(plain, f)
        mpi = self.preloaded("mpi", {s: 1.2 if s <= 16384 else 60.0 for s in SIZES})
        chain = self.preloaded("chain", {s: 0.1 if s == 4 else 3.0 if s <= 16384 else 12.0
                                         for s in SIZES})
        self.tune("--tiers", "plain", "--from-plain", self.plain, "--from-preloaded", mpi, chain)
        with open(self.out) as f:
            table = json.load(f)
        self.assertEqual([w["algo"] for w in table["winners"]["bcast.plain"]],
                         ["mpi", "mpi", "mpi", "mpi", "chain"])
        self.assertIn("private buffers timed under the preload for bcast", table["description"])

    def test_a_preloaded_run_must_name_its_algorithm(self):
        path = self.preloaded("mpi", {s: 1.0 for s in SIZES})
        with open(path) as f:
            doc = json.load(f)
        del doc["environment"]["cb_variables"]
        with open(path, "w") as f:
            json.dump(doc, f)
        p = self.tune("--tiers", "plain", "--from-plain", self.plain, "--from-preloaded", path,
                      rc=2)
        self.assertIn("CB_BCAST_ALGO", p.stderr)

    def test_shm_without_noshm_is_refused(self):
        p = self.tune("--tiers", "shm,plain", "--from-plain", self.plain, rc=2)
        self.assertIn("shm and noshm are measured together", p.stderr)

    def test_unknown_tier_is_named(self):
        p = self.tune("--tiers", "gpu", "--from-plain", self.plain, rc=2)
        self.assertIn("unknown tier 'gpu'", p.stderr)

    def eight_rank_bcast(self):
        """--algo all at 8 ranks: binomial wins up to 1 KiB, shm above."""
        recs = []
        for s in SIZES:
            recs.append(fx.coll_record(s, 1.0 if s <= 1024 else 9.0, "binomial", nranks=8))
            recs.append(fx.coll_record(s, 5.0, "shm", nranks=8))
        path = os.path.join(self.tmp.name, "bcast.8.json")
        with open(path, "w") as f:
            json.dump(fx.document("bcast", "engine", recs, nranks=8, algo="all"), f)
        return path

    def test_merge_puts_one_rank_counts_rules_first_and_keeps_every_other(self):
        path = self.eight_rank_bcast()
        for _ in range(2):  # a second merge replaces the first's rules, adds none
            p = fx.run_script("tune.py", ["--merge", "--ranks", "8", "--from", path,
                                          "--source", "results/here", "--out", self.out])
            self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        with open(self.out) as f:
            table = json.load(f)
        bcast = [r for r in table["rules"] if r["coll"] == "bcast"]
        self.assertEqual([(r["algo"], r.get("ranks"), r.get("buffers"), r.get("min_bytes"),
                           r.get("max_bytes")) for r in bcast[:2]],
                         [("binomial", [8, 8], "shared", None, 1024),
                          ("shm", [8, 8], "shared", 1025, None)])
        self.assertIn("results/here", bcast[0]["comment"])
        self.assertEqual(bcast[2:], PREVIOUS["rules"])  # private, other ranks, cuda: kept
        self.assertEqual(table["parameters"], PREVIOUS["parameters"])
        self.assertEqual(table["winners"]["bcast.shm"], PREVIOUS["winners"]["bcast.shm"])
        self.assertEqual([w["algo"] for w in table["winners"]["bcast.shm.8ranks"]],
                         ["binomial"] * 3 + ["shm"] * 2)

    def test_merge_refuses_another_rank_count(self):
        p = fx.run_script("tune.py", ["--merge", "--ranks", "4", "--from", self.eight_rank_bcast(),
                                      "--out", self.out])
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertIn("measured at 8 ranks, not --ranks 4", p.stderr)


if __name__ == "__main__":
    unittest.main()
