#!/usr/bin/env python3
"""scripts/plot.py on hand-made collective, overlap and replay documents: its legend labels,
curve arrangement and copy bound as functions (any interpreter), and the figures it draws
(skipped, exit 77, when no interpreter here has matplotlib)."""
import os
import re
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fixtures as fx  # noqa: E402

sys.path.insert(0, str(fx.SCRIPTS))
import cbjson  # noqa: E402
import plot  # noqa: E402

PYTHON = fx.plotting_python()
SIZES = [4 << k for k in range(0, 21, 2)]  # 4 B .. 4 MiB


def curves(docs):
    """{file name: doc} -> the series plot.py draws from them, as cbjson reads them."""
    return cbjson.all_series([(name, doc) for name, doc in docs.items()])


def allreduce(backend="mpi", library="MPICH Version: 4.0.2", **kw):
    return fx.document("allreduce", backend,
                       [fx.coll_record(s, 2.0 + s / 5e3, kw.pop("rec_algo", "")) for s in SIZES],
                       library=library, **kw)


def sweep(**kw):
    """An engine --algo all run: ring and recursive_doubling at every size."""
    recs = ([fx.coll_record(s, 3.0 + s / 6e3, "ring") for s in SIZES]
            + [fx.coll_record(s, 1.5 + s / 4e3, "recursive_doubling") for s in SIZES])
    return fx.document("allreduce", "engine", recs, library=fx.ENGINE, algo="all", **kw)


class LabelTest(unittest.TestCase):
    """plot.legend_labels and plot.common_text: a label names what differs, once."""

    def labels(self, docs, **kw):
        ss = curves(docs)
        return dict(zip(docs, plot.legend_labels(ss, **kw))), plot.common_text(ss)

    def test_backends_and_engine_variants(self):
        labels, common = self.labels({
            "allreduce.mpi.host.json": allreduce(),
            "allreduce.engine.host.json": allreduce("engine", fx.ENGINE),
            "allreduce.engine-plain.host.json": allreduce("engine", fx.ENGINE,
                                                          options={"alloc": "plain"}),
            "allreduce.engine-p2p.host.json": allreduce(
                "engine", fx.ENGINE.replace("shared memory + ", ""),
                backend_fields={"shared_memory": "off (CB_ENGINE_SHM=0)"}),
            "allreduce.engine-ring.host.json": allreduce("engine", fx.ENGINE,
                                                         algo="ring", rec_algo="ring"),
        })
        self.assertEqual(labels, {
            "allreduce.mpi.host.json": "MPICH 4.0.2",
            "allreduce.engine.host.json": "engine",
            "allreduce.engine-plain.host.json": "engine, plain buffers",
            "allreduce.engine-p2p.host.json": "engine, no shared memory",
            "allreduce.engine-ring.host.json": "engine: ring",
        })
        # What the curves share is said once, in the subtitle.
        self.assertIn("4 ranks on node1", common)
        self.assertIn("float sum", common)
        self.assertIn("host memory", common)
        self.assertIn("collbench 0.1.0 (abc1234)", common)
        for label in labels.values():
            for shared in ("node1", "collbench", ".json", "4 ranks", "float", "host", "["):
                self.assertNotIn(shared, label)

    def test_one_backend_is_named_short_and_its_library_goes_to_the_subtitle(self):
        nb = [fx.overlap_record(s, 2.0, 3.0, 4.0) for s in SIZES]
        labels, common = self.labels({
            "iallreduce.mpi-t0.json": fx.document("iallreduce", "mpi", nb,
                                                  options={"test_calls": 0}),
            "iallreduce.mpi-t10.json": fx.document("iallreduce", "mpi", [
                dict(r, test_calls=10) for r in nb], options={"test_calls": 10}),
        })
        self.assertEqual(sorted(labels.values()), ["mpi, 10 test calls", "mpi, no test calls"])
        self.assertTrue(common.startswith("MPICH 4.0.2, 4 ranks on node1"), common)

    def test_algorithms_of_a_sweep(self):
        ss = curves({"allreduce.engine-all.json": sweep(),
                     "allreduce.engine.json": allreduce("engine", fx.ENGINE)})
        self.assertEqual(sorted(plot.legend_labels(ss, unnamed_algo="tuned")),
                         ["engine: recursive_doubling", "engine: ring", "engine: tuned"])

    def test_hosts_ranks_versions_and_benchmarks_that_differ(self):
        labels, common = self.labels({
            "a.json": allreduce(host="node1"),
            "b.json": allreduce(host="node2", library="MPICH Version: 4.2.0"),
            "c.json": allreduce("engine", fx.ENGINE, host="node2"),
            "d.json": allreduce("engine", fx.ENGINE.replace("0.1.0", "0.2.0"), host="node2"),
        })
        self.assertEqual(labels, {"a.json": "MPICH 4.0.2 @ node1",
                                  "b.json": "MPICH 4.2.0 @ node2",
                                  "c.json": "engine 0.1.0 @ node2",
                                  "d.json": "engine 0.2.0 @ node2"})
        self.assertNotIn("node", common)
        labels, _ = self.labels({"a.json": allreduce(nranks=2),
                                 "b.json": fx.document("bcast", "mpi", [
                                     fx.coll_record(s, 2.0) for s in SIZES], nranks=4)})
        self.assertEqual(labels, {"a.json": "allreduce, mpi, 2 ranks",
                                  "b.json": "bcast, mpi, 4 ranks"})

    def test_labels_never_coincide(self):
        # Runs that differ in nothing the labels read: the file names tell them apart.
        labels, _ = self.labels({"x/run1.json": allreduce(), "x/run2.json": allreduce()})
        self.assertEqual(labels, {"x/run1.json": "mpi [run1.json]",
                                  "x/run2.json": "mpi [run2.json]"})
        # Even from one file (an --algo all document listing an algorithm twice over).
        doc = allreduce()
        ss = curves({"one.json": doc}) * 2
        self.assertEqual(plot.legend_labels(ss), ["mpi", "mpi #2"])

    def test_unfinished_runs_are_marked(self):
        labels, _ = self.labels({"a.json": allreduce(),
                                 "b.json": allreduce("engine", fx.ENGINE, status="aborted")})
        self.assertEqual(labels, {"a.json": "MPICH 4.0.2", "b.json": "engine [aborted]"})


class ArrangeTest(unittest.TestCase):
    """plot.arrange: one curve per run; a sweep's algorithms go to their own figure."""

    def test_a_sweep_beside_its_tuned_run(self):
        ss = curves({"mpi.json": allreduce(), "all.json": sweep(),
                     "engine.json": allreduce("engine", fx.ENGINE)})
        main, sweeps, _ = plot.arrange(ss)
        self.assertEqual([s.path for s in main], ["mpi.json", "engine.json"])
        ((algos, ref),) = sweeps
        self.assertEqual(sorted(s.algo for s in algos), ["recursive_doubling", "ring"])
        self.assertEqual(ref.path, "engine.json")

    def test_a_sweep_alone_is_drawn_as_its_tables_choice(self):
        ss = curves({"mpi.json": allreduce(),
                     "all.json": sweep(backend_fields={"tuning": fx.TUNING})})
        main, ((_, ref),), _ = plot.arrange(ss)
        self.assertEqual(len(main), 2)
        self.assertIs(main[1], ref)
        self.assertEqual([(r["bytes"], r["algo"]) for r in ref.records],
                         [(s, "recursive_doubling" if s <= 4096 else "ring") for s in SIZES])
        self.assertEqual(plot.legend_labels(main),
                         ["MPICH 4.0.2", "engine (table's choice from --algo all)"])

    def test_a_sweep_without_a_table_is_left_to_its_own_figure(self):
        main, ((algos, ref),), _ = plot.arrange(curves({"mpi.json": allreduce(),
                                                         "all.json": sweep()}))
        self.assertEqual([s.path for s in main], ["mpi.json"])
        self.assertEqual(len(algos), 2)
        self.assertIsNone(ref)


class CopyBoundTest(unittest.TestCase):
    """plot.copy_bound: docs/methodology.md's copy bound from cb_copybw's largest size <= the
    figure's."""

    def bound(self, figure, doc, copies=(fx.copy_bw_document(),), size=64 << 20):
        (s,) = curves({"x.json": doc})
        return plot.copy_bound(figure, s, list(copies), size)

    def test_collectives(self):
        # 1 thread 10 GB/s, 4 threads 16 GB/s at 64 MiB: 4 ranks copying at once get 4 each
        self.assertEqual(self.bound("busbw", allreduce()), (4.0, 64 << 20))
        # below 64 MiB the 1 MiB row (40, 60) is the one: min(40, 60 / 4)
        self.assertEqual(self.bound("busbw", allreduce(), size=4 << 20), (15.0, 1 << 20))
        # bcast at 2 ranks: one copy at a time, the 1-thread rate
        bcast = fx.document("bcast", "mpi", [fx.coll_record(s, 2.0) for s in SIZES], nranks=2)
        self.assertEqual(self.bound("busbw", bcast), (10.0, 64 << 20))
        # algbw: busbw / bus factor (allreduce at 4 ranks: 2 (n-1) / n = 1.5)
        doc = allreduce()
        for r in doc["results"]:
            r["bus_factor"] = 1.5
        self.assertAlmostEqual(self.bound("algbw", doc)[0], 4.0 / 1.5)
        self.assertIsNone(self.bound("latency", allreduce()))

    def test_point_to_point_in_megabytes(self):
        bw = fx.document("bw", "mpi", [fx.bandwidth_record(s, 1000.0) for s in SIZES],
                         nranks=2)
        self.assertEqual(self.bound("bandwidth", bw), (10000.0, 64 << 20))
        bibw = fx.document("bibw", "mpi", [fx.bandwidth_record(s, 1000.0) for s in SIZES],
                           nranks=2)
        self.assertEqual(self.bound("bandwidth", bibw), (16000.0, 64 << 20))

    def test_unknown_says_nothing(self):
        self.assertIsNone(self.bound("busbw", allreduce(), copies=()))
        self.assertIsNone(self.bound("busbw", allreduce(host="elsewhere")))
        multi = allreduce()
        multi["environment"]["nodes"] = 2
        self.assertIsNone(self.bound("busbw", multi))


def texts(svg):
    """The text of an SVG that matplotlib wrote: each string is in a comment before its
    glyphs, with '--' written '- -' (XML comments cannot hold '--')."""
    return [t.replace("- -", "--") for t in re.findall(r"<!-- (.*?) -->", svg)]


def outputs(dirname):
    return sorted(os.listdir(dirname))


@unittest.skipIf(PYTHON is None, "matplotlib is not installed")
class PlotTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="cb_plot_")
        self.dir = self.tmp.name
        self.files = fx.collective_files(self.dir)
        self.out = os.path.join(self.dir, "plots")

    def tearDown(self):
        self.tmp.cleanup()

    def plot(self, *args, rc=0):
        p = fx.run_script("plot.py", [*args], python=PYTHON)
        self.assertEqual(p.returncode, rc, p.stdout + p.stderr)
        self.assertNotIn("Traceback", p.stderr)
        return p

    def assert_images(self, names):
        for name in names:
            for ext, magic in (("png", b"\x89PNG"), ("svg", b"<?xml")):
                path = os.path.join(self.out, f"{name}.{ext}")
                with open(path, "rb") as f:
                    head = f.read(5)
                self.assertTrue(head.startswith(magic), f"{path}: {head!r}")
                self.assertGreater(os.path.getsize(path), 1000, path)

    def svg(self, name):
        """The texts of plots/NAME.svg, joined by newlines."""
        with open(os.path.join(self.out, f"{name}.svg")) as f:
            return "\n".join(texts(f.read()))

    def assert_texts(self, name, present=(), absent=()):
        got = self.svg(name)
        for text in present:
            self.assertTrue(any(line == text for line in got.splitlines()),
                            f"{name}: no text {text!r} in:\n{got}")
        for text in absent:
            self.assertNotIn(text, got, f"{name}: {text!r} should not be there")

    def test_every_kind_of_record(self):
        p = self.plot("-o", self.out, *self.files.values())
        names = ["algbw", "algos.algbw", "algos.busbw", "algos.latency", "busbw", "latency",
                 "overlap", "replay"]
        self.assertEqual(outputs(self.out), sorted(f"{n}.{e}" for n in names
                                                   for e in ("png", "svg")))
        self.assertEqual(len(p.stdout.split()), 2 * len(names))
        self.assert_images(names)
        # The comparison: one curve per run, the sweep as its tuning table's choice; in the
        # legend the libraries and what differs, not the host or the file, shared by all;
        # those in the subtitle.
        self.assert_texts("busbw", present=(
            "MPICH 4.0.2", "NCCL 2.28.9", "engine (table's choice from --algo all)",
            "4 ranks on node1, float sum, host memory, collbench 0.1.0 (abc1234)"),
            absent=("engine: ring", "@ node1", ".json", "(collbench engine"))
        # The sweep's own figure: one curve per algorithm, and the table's choice.
        self.assert_texts("algos.busbw", present=(
            "engine: ring", "engine: recursive_doubling",
            "engine: tuned (table's choice from --algo all)"),
            absent=("MPICH", "copy bound"))  # no cb_copybw result given

    def test_copy_bound(self):
        copy = fx.write_all(self.dir, {"copy_bw.json": fx.copy_bw_document()})["copy_bw.json"]
        self.plot("-o", self.out, "--copy-bw", copy, self.files["allreduce.mpi.json"],
                  self.files["allreduce.nccl.json"])
        # largest size plotted: 4 MiB, so the 1 MiB row: min(40, 60 / 4 ranks) = 15 GB/s
        self.assert_texts("busbw", present=("copy bound 15 GB/s (1 MiB memcpy)",))
        self.assert_texts("latency", absent=("copy bound",))
        # Sizes on the axis as people write them: "4 B", "1 KiB", not the -m option's "1K".
        self.assert_texts("busbw", present=("Message size", "1 MiB"), absent=("1M\n",))
        # (as one of the FILE.json arguments: test_plots_sh_on_a_results_directory)

    def test_latency_floor(self):
        """cb_info's floors: a dotted line at k hand-offs on the latency figure of 2-rank
        runs on its host (2 x 200 ns for allreduce); none for other rank counts or hosts,
        and none on bandwidth figures."""
        sizes = [8, 1024, 1 << 20]
        files = fx.write_all(self.dir, {
            "info.json": fx.info_document(),
            "ar2.json": fx.document("allreduce", "mpi", [fx.coll_record(s, 1.0 + s / 1e3, nranks=2)
                                                         for s in sizes], nranks=2),
            "bc2.json": fx.document("bcast", "mpi", [fx.coll_record(s, 1.0 + s / 1e3, nranks=2)
                                                     for s in sizes], nranks=2)})
        self.plot("-o", self.out, "--info", files["info.json"], files["ar2.json"])
        self.assert_texts("latency", present=("latency floor 0.4 µs (2 hand-offs, cb_info)",))
        self.assert_texts("busbw", absent=("latency floor",))
        self.plot("-o", self.out, "--info", files["info.json"], files["ar2.json"],
                  files["bc2.json"])
        self.assert_texts("latency", present=(
            "latency floor 0.2 µs (1 hand-off, cb_info, bcast)",
            "latency floor 0.4 µs (2 hand-offs, cb_info, allreduce)"))
        self.plot("-o", self.out, "--info", files["info.json"], self.files["allreduce.mpi.json"])
        self.assert_texts("latency", absent=("latency floor",))  # 4 ranks: no floor
        p = self.plot("-o", self.out, "--info", files["ar2.json"], files["ar2.json"], rc=2)
        self.assertIn("not a cb_info document", p.stderr)

    def test_prefix_and_replay_only(self):
        self.plot("-o", self.out, "--prefix", "r.", self.files["replay.mpi.json"])
        self.assertEqual(outputs(self.out), ["r.replay.png", "r.replay.svg"])

    def test_nothing_to_plot(self):
        only_zero = fx.write_all(self.dir, {"zero.json": fx.document(
            "latency", "mpi", [fx.latency_record(0, 1.0)])})
        p = self.plot("-o", self.out, only_zero["zero.json"], rc=2)
        self.assertIn("nothing to plot", p.stderr)

    def test_plots_sh_on_a_results_directory(self):
        with open(os.path.join(self.dir, "aborted.json"), "w") as f:
            f.write('{"schema": "collbench.result/1", "benchmark": {"name": "bw"}, '
                    '"backend": {"name": "mpi"}, "results": [], "status": "aborted"}')
        fx.write_all(self.dir, {"copy_bw.json": fx.copy_bw_document()})
        p = subprocess.run(["bash", str(fx.SCRIPTS / "plots.sh"), self.dir], capture_output=True,
                           text=True, timeout=120)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn("aborted.json: no results", p.stderr)  # a warning, not an error
        self.assertEqual(outputs(self.out), sorted(
            f"{b}.{n}.{e}" for b, n in (("allreduce", "latency"), ("allreduce", "busbw"),
                                        ("allreduce", "algbw"), ("allreduce", "algos.latency"),
                                        ("allreduce", "algos.busbw"),
                                        ("allreduce", "algos.algbw"), ("iallreduce", "latency"),
                                        ("iallreduce", "overlap"), ("replay", "steps"))
            for e in ("png", "svg")))
        # copy_bw.json, one of the directory's results, is the copy bound, not a benchmark
        self.assert_texts("allreduce.busbw", present=("copy bound 15 GB/s (1 MiB memcpy)",))
        with open(os.path.join(self.dir, "comparisons.md")) as f:
            detail = f.read()
        self.assertIn("| allreduce | nccl (NCCL 2.28.9) @ node1 | mpi (MPICH 4.0.2) @ node1 | "
                      "busbw |", detail)
        with open(os.path.join(self.dir, "summary.md")) as f:
            md = f.read()
        self.assertIn("| allreduce | nccl | separate runs, latency |", md)  # the one page
        self.assertIn("## Gradient replay (cb_replay), step times", md)  # replay_table.py

    def test_missing_matplotlib_is_explained(self):
        # -S drops site-packages, so this interpreter cannot import matplotlib; re-running
        # under /usr/bin/python3 is turned off to see the message.
        cmd = [PYTHON, "-S", str(fx.SCRIPTS / "plot.py"), "-o", self.out,
               self.files["allreduce.mpi.json"]]
        env = dict(os.environ, CB_PLOT_NO_REEXEC="1")
        env.pop("PYTHONPATH", None)
        p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=60)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("apt-get install python3-matplotlib", p.stderr)
        self.assertIn("pip install -r scripts/requirements.txt", p.stderr)
        self.assertNotIn("Traceback", p.stderr)


if __name__ == "__main__":
    if PYTHON is None:
        # The label, arrangement and copy-bound tests need no matplotlib: run them, then
        # report the figures as skipped (77) if they pass.
        result = unittest.main(exit=False).result
        if not result.wasSuccessful():
            sys.exit(1)
        print("SKIP: matplotlib is not installed (apt-get install python3-matplotlib): "
              "no figure drawn")
        sys.exit(77)
    unittest.main()
