#!/usr/bin/env python3
"""scripts/model.py: cost formulas against hand-computed values, fits of synthetic runs made
from known alpha, beta and gamma, the projection's choice, --check, and bad input (exit 2,
one message). No MPI; the plot case needs matplotlib and is skipped without it."""
import json
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fixtures as fx  # noqa: E402

sys.path.insert(0, str(fx.SCRIPTS))
import model  # noqa: E402
from model import Cost  # noqa: E402

KIB, MIB = 1 << 10, 1 << 20
SIZES = [4 << (2 * k) for k in range(11)]  # 4 B .. 4 MiB
# The machine the synthetic runs come from: alpha 1.5 us, beta 0.2 ns/B, gamma 0.5 ns/B
# (model.py works in us and us per byte).
ALPHA, BETA, GAMMA = 1.5, 0.2e-3, 0.5e-3
TRUE = model.Params(ALPHA, BETA, GAMMA)


def run_document(benchmark, algo, ranks, noise=0.0, slowdown=1.0, params=TRUE):
    """A result whose time at each size is the formula's under `params`, times
    (1 +- noise) alternately and `slowdown`."""
    formula = model.FORMULAS[benchmark][algo]
    records = []
    for i, m in enumerate(SIZES):
        t = formula(ranks, m).time(params) * (1 + noise * (-1) ** i) * slowdown
        if benchmark == "latency":
            records.append(fx.latency_record(m, t))
        else:
            records.append(fx.coll_record(m, t, algo, ranks))
    return fx.document(benchmark, "engine", records, library="collbench engine 0.1.0",
                       nranks=ranks, algo="all" if algo else "")


class FormulaTest(unittest.TestCase):
    """Costs of p ranks and m bytes (collbench's message size) as (alpha, beta, gamma)
    coefficients, worked out by hand from Thakur et al. 2005 and Chan et al. 2007."""

    def cost(self, benchmark, algo, p, m):
        return model.FORMULAS[benchmark][algo](p, m)

    def test_allreduce(self):
        # Ring: 2(p-1) alpha + 2(p-1)/p m beta + (p-1)/p m gamma.
        self.assertEqual(self.cost("allreduce", "ring", 4, 1024), Cost(6, 1536, 768))
        self.assertAlmostEqual(Cost(6, 1536, 768).time(model.Params(2.0, 1e-3, 5e-4)),
                               12 + 1.536 + 0.384)
        # Recursive doubling: lg p (alpha + m beta + m gamma); p = 6 folds two ranks onto
        # 4: one hand-in with its reduction before, one message after.
        self.assertEqual(self.cost("allreduce", "recursive_doubling", 8, 100),
                         Cost(3, 300, 300))
        self.assertEqual(self.cost("allreduce", "recursive_doubling", 6, 100),
                         Cost(2 + 2, 200 + 200, 200 + 100))
        # Rabenseifner: 2 lg p alpha + 2(p-1)/p m beta + (p-1)/p m gamma.
        self.assertEqual(self.cost("allreduce", "rabenseifner", 8, 800), Cost(6, 1400, 700))
        self.assertEqual(self.cost("allreduce", "rabenseifner", 3, 800),
                         Cost(2 + 2, 800 + 1600, 400 + 800))

    def test_bcast(self):
        self.assertEqual(self.cost("bcast", "binomial", 5, 10), Cost(3, 30, 0))
        # Scatter + ring allgather: (lg p + p - 1) alpha + 2(p-1)/p m beta.
        self.assertEqual(self.cost("bcast", "scatter_allgather", 4, 100), Cost(5, 150, 0))
        # Chain of 128 KiB segments: (p - 2 + segments) steps of one segment.
        self.assertEqual(self.cost("bcast", "chain", 4, MIB), Cost(10, 10 * 128 * KIB, 0))
        self.assertEqual(self.cost("bcast", "chain", 2, 8), Cost(1, 8, 0))

    def test_alltoall_allgather_reduce_scatter_reduce_barrier(self):
        self.assertEqual(self.cost("alltoall", "pairwise", 5, 10), Cost(4, 40, 0))
        # Bruck, p = 5: rounds forward blocks {1, 3}, {2, 3}, {4}: 5 blocks in 3 messages.
        self.assertEqual(self.cost("alltoall", "bruck", 5, 10), Cost(3, 50, 0))
        self.assertEqual(self.cost("alltoall", "bruck", 8, 10), Cost(3, 120, 0))
        self.assertEqual(self.cost("allgather", "ring", 6, 10), Cost(5, 50, 0))
        self.assertEqual(self.cost("allgather", "bruck", 6, 10), Cost(3, 50, 0))
        self.assertEqual(self.cost("allgather", "recursive_doubling", 8, 10), Cost(3, 70, 0))
        self.assertIsNone(self.cost("allgather", "recursive_doubling", 6, 10))
        self.assertEqual(self.cost("reduce_scatter", "ring", 4, 10), Cost(3, 30, 30))
        self.assertEqual(self.cost("reduce_scatter", "pairwise", 4, 10), Cost(3, 30, 30))
        self.assertEqual(self.cost("reduce_scatter", "recursive_halving", 8, 10),
                         Cost(3, 70, 70))
        self.assertIsNone(self.cost("reduce_scatter", "recursive_halving", 6, 10))
        self.assertEqual(self.cost("reduce", "binomial", 8, 10), Cost(3, 30, 30))
        # Rabenseifner's reduce on 6 ranks: the core on 4 plus one hand-in (no way back).
        self.assertEqual(self.cost("reduce", "rabenseifner", 6, 100),
                         Cost(4 + 1, 150 + 100, 75 + 100))
        self.assertEqual(self.cost("barrier", "dissemination", 9, 0), Cost(4, 0, 0))
        self.assertEqual(self.cost("latency", "", 2, 64), Cost(1, 64, 0))

    def test_unknown_parameter_gives_no_time(self):
        self.assertIsNone(Cost(1, 10, 10).time(model.Params(1.0, 1e-3, None)))
        self.assertEqual(Cost(1, 10, 0).time(model.Params(1.0, 1e-3, None)), 1.01)


class ModelTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="cb_model_")
        self.dir = self.tmp.name
        self.out = os.path.join(self.dir, "out")

    def tearDown(self):
        self.tmp.cleanup()

    def write(self, docs):
        return fx.write_all(self.dir, docs)

    def model(self, *args, rc=0, python=None):
        p = fx.run_script("model.py", ["--no-plot", *args], python=python)
        self.assertEqual(p.returncode, rc, p.stdout + p.stderr)
        self.assertNotIn("Traceback", p.stderr)
        return p

    def report(self, *args):
        self.model("-o", self.out, *args)
        with open(os.path.join(self.out, "model.json")) as f:
            return json.load(f)

    def fit_files(self, noise=0.0):
        return self.write({
            "latency.json": run_document("latency", "", 2, noise=noise),
            "bcast.json": run_document("bcast", "binomial", 4, noise=noise),
            "allreduce.json": run_document("allreduce", "ring", 4, noise=noise)})

    def assert_close(self, got, want, rel, what):
        self.assertLessEqual(abs(got - want), rel * abs(want), f"{what}: {got} vs {want}")

    def test_fits_recover_alpha_beta_gamma(self):
        files = self.fit_files()
        report = self.report(*files.values())
        fits = {(f["benchmark"], f["algo"]): f for f in report["fits"]}
        self.assertEqual(set(fits), {("latency", ""), ("bcast", "binomial"),
                                     ("allreduce", "ring")})
        for key in (("latency", ""), ("bcast", "binomial")):
            self.assertEqual(fits[key]["kind"], "alpha-beta")
            self.assert_close(fits[key]["alpha_us"], 1.5, 1e-9, key)
            self.assert_close(fits[key]["beta_ns_per_byte"], 0.2, 1e-9, key)
            self.assertLess(fits[key]["errors"]["all"]["max_pct"], 1e-6)
        ring = fits[("allreduce", "ring")]
        self.assertEqual(ring["kind"], "gamma")
        self.assertEqual(ring["alpha_us"], fits[("latency", "")]["alpha_us"])  # the base's
        self.assert_close(ring["gamma_ns_per_byte"], 0.5, 1e-9, "gamma")
        (platform,) = report["platforms"]
        self.assertEqual(platform["alpha_beta_from"], "latency")
        self.assert_close(platform["gamma_ns_per_byte"], 0.5, 1e-9, "pooled gamma")

    def test_fits_with_noise_stay_close_and_report_errors_per_range(self):
        files = self.fit_files(noise=0.01)
        report = self.report(*files.values())
        fits = {(f["benchmark"], f["algo"]): f for f in report["fits"]}
        lat = fits[("latency", "")]
        self.assert_close(lat["alpha_us"], 1.5, 0.03, "alpha")
        self.assert_close(lat["beta_ns_per_byte"], 0.2, 0.03, "beta")
        self.assert_close(fits[("allreduce", "ring")]["gamma_ns_per_byte"], 0.5, 0.05, "gamma")
        self.assertEqual(report["size_ranges"], ["<= 8 KiB", "8 KiB - 1 MiB", ">= 1 MiB"])
        # 4 B .. 4 MiB by 4x: 6 sizes up to 8 KiB, 3 in between, 2 from 1 MiB.
        counts = [lat["errors"][r]["n"] for r in report["size_ranges"]]
        self.assertEqual(counts, [6, 3, 2])
        for r in report["size_ranges"]:
            self.assertLess(lat["errors"][r]["rms_pct"], 2.5)
            self.assertGreater(lat["errors"][r]["max_pct"], 0.1)  # the noise shows
        with open(os.path.join(self.out, "model.md")) as f:
            md = f.read()
        self.assertIn("| latency | – | 2 | α, β | 1.5", md)

    def test_without_a_formula_the_fit_is_effective_and_not_projected(self):
        files = self.write({"mpi.json": fx.document(
            "allreduce", "mpi", [fx.coll_record(m, 2.0 + m * 1e-3) for m in SIZES])})
        p = self.model(*files.values())
        self.assertIn("α, β (effective)", p.stdout)
        self.assertIn("No platform has α and β: nothing to project.", p.stdout)

    def test_projection_picks_the_cheapest_algorithm(self):
        files = self.fit_files()
        report = self.report(*files.values(), "--ranks", "3,4096", "--sizes", "8,64M")
        best = {(r["collective"], r["ranks"], r["bytes"]): r["best"]
                for r in report["projection"]["rows"]}
        self.assertEqual(best[("allreduce", 4096, 8)], "recursive_doubling")
        # Powers of two: Rabenseifner moves as much as the ring in 2 lg p messages.
        self.assertEqual(best[("allreduce", 4096, 64 * MIB)], "rabenseifner")
        # 3 ranks: its fold sends the whole vector twice more; the ring does not fold.
        self.assertEqual(best[("allreduce", 3, 64 * MIB)], "ring")
        self.assertEqual(best[("bcast", 4096, 8)], "binomial")
        self.assertEqual(best[("bcast", 4096, 64 * MIB)], "scatter_allgather")
        self.assertEqual(best[("alltoall", 4096, 8)], "bruck")
        self.assertEqual(best[("alltoall", 4096, 64 * MIB)], "pairwise")
        self.assertEqual(best[("barrier", 4096, 0)], "dissemination")
        row = next(r for r in report["projection"]["rows"] if r["collective"] == "allreduce"
                   and r["ranks"] == 4096 and r["bytes"] == 8)
        self.assertAlmostEqual(row["times_us"]["ring"],
                               model.allreduce_ring(4096, 8).time(TRUE), places=6)
        self.assertIsNone(next(r for r in report["projection"]["rows"]
                               if r["collective"] == "allgather" and r["ranks"] == 3)
                          ["times_us"]["recursive_doubling"])  # powers of two only

    def test_hierarchical_uses_the_inter_node_network_between_nodes(self):
        files = self.fit_files()
        report = self.report(*files.values(), "--ranks", "4,16", "--sizes", "8",
                             "--ranks-per-node", "4", "--inter-alpha", "10",
                             "--inter-beta", "1")
        rows = {(r["collective"], r["ranks"]): r for r in report["projection"]["rows"]}
        inter = model.Params(10.0, 1e-3, GAMMA)
        # 16 ranks = 4 nodes of 4: binomial among the 4 node leaders on the network, then
        # binomial on each node (the cheapest at 8 B in both places).
        self.assertAlmostEqual(rows[("bcast", 16)]["times_us"]["hierarchical"],
                               2 * (10 + 8e-3) + 2 * (ALPHA + 8 * BETA), places=9)
        # A flat algorithm across nodes pays the network's alpha and beta at every step.
        self.assertAlmostEqual(rows[("bcast", 16)]["times_us"]["binomial"],
                               model.bcast_binomial(16, 8).time(inter), places=9)
        self.assertEqual(rows[("bcast", 16)]["best"], "hierarchical")
        self.assertIsNone(rows[("bcast", 4)]["times_us"]["hierarchical"])  # one node
        self.assertAlmostEqual(rows[("bcast", 4)]["times_us"]["binomial"],
                               model.bcast_binomial(4, 8).time(TRUE), places=9)

    def test_check_reports_the_error_per_size(self):
        files = self.fit_files()
        measured = self.write({
            "exact.json": run_document("allreduce", "ring", 8),
            "slow.json": run_document("allreduce", "rabenseifner", 6, slowdown=2.0)})
        report = self.report(*files.values(), "--check", *measured.values())
        entries = {(e["algo"], e["ranks"]): e for e in report["check"]["entries"]}
        self.assertEqual(set(entries), {("ring", 8), ("rabenseifner", 6)})
        for point in entries[("ring", 8)]["points"]:
            self.assertLess(abs(point["error_pct"]), 1e-6)
        for point in entries[("rabenseifner", 6)]["points"]:
            self.assertAlmostEqual(point["error_pct"], -50.0, places=6)
        self.assertAlmostEqual(entries[("rabenseifner", 6)]["errors"][">= 1 MiB"]["max_pct"],
                               50.0, places=6)
        with open(os.path.join(self.out, "model.md")) as f:
            md = f.read()
        self.assertIn("## Check: projection against measured runs", md)
        self.assertIn("| 4M | -50.0 |", md)

    def test_check_of_a_platform_never_fitted_is_an_error(self):
        files = self.fit_files()
        other = run_document("allreduce", "ring", 8)
        other["environment"]["hostname"] = "elsewhere"
        measured = self.write({"other.json": other})
        p = self.model(*files.values(), "--check", *measured.values(), rc=2)
        self.assertIn("model.py: error: nothing to check", p.stderr)
        self.assertIn("no fitted run of this platform", p.stderr)

    def test_bad_input_exits_2_with_one_message(self):
        files = self.fit_files()
        with open(os.path.join(self.dir, "broken.json"), "w") as f:
            f.write('{"schema": "collbench.result/1", "results": [')
        bw_only = self.write({"bw.json": fx.document(
            "bw", "mpi", [fx.bandwidth_record(1024, 100.0)])})["bw.json"]
        cases = [
            ([os.path.join(self.dir, "missing.json")], "missing.json: cannot read"),
            ([os.path.join(self.dir, "broken.json")], "broken.json: not valid JSON"),
            ([files["latency.json"], "--check", os.path.join(self.dir, "broken.json")],
             "not valid JSON"),
            ([bw_only], "nothing to fit"),
            ([files["latency.json"], "--inter-alpha", "2"], "go together"),
            ([files["latency.json"], "--sizes", "8,lots"], "not understood"),
            ([files["latency.json"], "--ranks-per-node", "0"], "must be at least 1"),
            ([files["latency.json"], "-o", files["bcast.json"]], "cannot create"),
        ]
        for args, message in cases:
            p = self.model(*args, rc=2)
            self.assertIn(message, p.stderr, args)
            self.assertIn("model.py: error:", p.stderr, args)

    def test_skip_invalid_leaves_out_a_bad_file(self):
        files = self.fit_files()
        p = self.model(files["latency.json"], os.path.join(self.dir, "missing.json"),
                       "--skip-invalid")
        self.assertIn("missing.json: cannot read", p.stderr)
        self.assertIn("| latency | – | 2 | α, β |", p.stdout)

    @unittest.skipIf(fx.plotting_python() is None, "matplotlib is not installed")
    def test_plot(self):
        files = self.fit_files()
        p = fx.run_script("model.py", ["-o", self.out, *files.values(), "--ranks", "2:64",
                                       "--ranks-per-node", "8", "--inter-alpha", "2",
                                       "--inter-beta", "0.08"],
                          python=fx.plotting_python())
        self.assertEqual(p.returncode, 0, p.stderr)
        (png,) = [line for line in p.stdout.split() if line.endswith(".png")]
        self.assertEqual(os.path.basename(png), "model.engine@node1.png")
        with open(png, "rb") as f:
            self.assertEqual(f.read(4), b"\x89PNG")


if __name__ == "__main__":
    unittest.main()
