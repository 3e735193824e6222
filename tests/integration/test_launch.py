"""Launching on a cluster and the line rate: scripts/launch.sh's command lines (mpirun of
MPICH hydra and of Open MPI with a hosts file and ranks per node, srun inside a Slurm
allocation) with fake launchers on PATH that record their argv; scripts/sweep.sh going
through it; environment.launcher and environment.line_rate in real runs' JSON, the
'no RDMA device' header line, and the % Line column on two virtual nodes (a UTS namespace
per rank gives each its own host name)."""
import os
import pathlib
import shutil
import subprocess
import sys

from cbtest import REPO, Run, case, check, load_json

LABELS = ('release', 'mpi')  # tests/labels.md (why not asan: there)

ROOT = pathlib.Path(__file__).resolve().parents[2]
LAUNCH = ROOT / "scripts" / "launch.sh"
SWEEP = ROOT / "scripts" / "sweep.sh"

HYDRA_VERSION = "HYDRA build details:\n    Version:                                 4.0.2\n"
OPENMPI_VERSION = ("mpirun (Open MPI) 4.1.4\n\n"
                   "Report bugs to http://www.open-mpi.org/community/help/\n")

# A launcher that answers --version from FAKE_VERSION and otherwise appends its name and
# argv, tab-separated, as one line to FAKE_LOG, then exits 0 without running anything.
FAKE = """#!/bin/sh
if [ "$1" = --version ]; then printf '%s' "$FAKE_VERSION"; exit 0; fi
{ printf '%s' "$(basename "$0")"; for a in "$@"; do printf '\\t%s' "$a"; done; echo; } \\
  >> "$FAKE_LOG"
"""


class Fakes:
    """A directory with fake mpirun and srun, and the environment that puts it first on
    PATH with every launcher setting of the calling environment removed."""

    def __init__(self, env):
        self.bin = env.path("fakebin")
        self.log = env.path("launches.log")
        os.makedirs(self.bin, exist_ok=True)
        for name in ("mpirun", "srun"):
            path = os.path.join(self.bin, name)
            with open(path, "w") as f:
                f.write(FAKE)
            os.chmod(path, 0o755)
        self.hostfile = env.path("hosts")
        with open(self.hostfile, "w") as f:
            f.write("node1\nnode2\n")

    def environ(self, version=HYDRA_VERSION, **settings):
        e = {k: v for k, v in os.environ.items()
             if not k.startswith(("CB_", "SLURM_")) and k not in ("MPIRUN", "SRUN")}
        e.update(PATH=self.bin + os.pathsep + e.get("PATH", ""), FAKE_LOG=self.log,
                 FAKE_VERSION=version)
        e.update({k: str(v) for k, v in settings.items()})
        return e

    def launches(self):
        """Every recorded command line, as a list of arguments (launcher name first)."""
        if not os.path.exists(self.log):
            return []
        with open(self.log) as f:
            lines = [line.rstrip("\n").split("\t") for line in f if line.strip()]
        os.remove(self.log)
        return lines


def bash(script, environ, timeout=60):
    p = subprocess.run(["bash", "-c", script, "launch-test"], capture_output=True, text=True,
                       env=environ, timeout=timeout)
    return Run(p.returncode, p.stdout, p.stderr, 0)


def launched(fakes, np, ppn, **settings):
    """Sources launch.sh and runs `cb_launch NP PPN prog arg` under the fake launchers;
    returns the one recorded command line."""
    r = bash(f'source "{LAUNCH}" && cb_launch {np} "{ppn}" /bin/prog arg',
             fakes.environ(**settings))
    check(r.rc == 0, f"cb_launch {np} '{ppn}' with {settings}: {r}")
    lines = fakes.launches()
    check(len(lines) == 1, f"expected one launch, got {lines}")
    return lines[0]


def refused(fakes, np, words, **settings):
    r = bash(f'source "{LAUNCH}" && cb_launch {np} "" /bin/prog', fakes.environ(**settings))
    check(r.rc == 2 and r.err.startswith("launch: error: ") and r.err.count("\n") == 1,
          f"{settings}: expected exit 2 and one 'launch: error:' line: {r}")
    check(all(w in r.err for w in words), f"{settings}: message lacks {words}: {r.err}")
    check(fakes.launches() == [], f"{settings}: launched despite the error")


@case
def launch_open_mpi_as_its_users_do(env):
    """scripts/mpirun_compat.sh in front of Open MPI's mpirun and MPICH's hydra: the tests'
    launch (no binding; Open MPI with oversubscription allowed, so that two jobs side by side
    never share a bound core), and with CB_MPIRUN_AS_USERS=1 (compare_mpis.sh: every library
    bound alike) Open MPI's own default binding, with --oversubscribe only when the ranks
    outnumber the cores, and hydra's -bind-to core when the ranks fit the cores. The flavour
    from CB_MPIRUN_FLAVOUR or from the launcher's --version."""
    compat = os.path.join(REPO, "scripts", "mpirun_compat.sh")
    fake = env.path("fake-mpirun")
    with open(fake, "w") as f:
        f.write('#!/bin/sh\nif [ "$1" = --version ]; then printf "%s" "$FAKE_VERSION"; exit 0; '
                'fi\nprintf "%s\\n" "$@"\n')
    os.chmod(fake, 0o755)

    def args(np, users, flavour="openmpi", version=""):
        e = dict(os.environ, CB_MPIRUN_REAL=fake, FAKE_VERSION=version)
        for k in ("CB_MPIRUN_AS_USERS", "CB_MPIRUN_FLAVOUR"):
            e.pop(k, None)
        if flavour:
            e["CB_MPIRUN_FLAVOUR"] = flavour
        if users:
            e["CB_MPIRUN_AS_USERS"] = "1"
        p = subprocess.run([compat, "-n", str(np), "/bin/prog"], capture_output=True, text=True,
                           env=e, timeout=30)
        check(p.returncode == 0, p.stderr)
        return p.stdout.split()
    cores = len(os.sched_getaffinity(0))  # what nproc counts
    more = cores + 1
    check(args(2, False) == ["--oversubscribe", "--bind-to", "none", "-n", "2", "/bin/prog"],
          f"tests' launch: {args(2, False)}")
    check(args(1, True) == ["-n", "1", "/bin/prog"], f"as users, 1 rank: {args(1, True)}")
    check(args(more, True) == ["--oversubscribe", "-n", str(more), "/bin/prog"],
          f"as users, {more} ranks on {cores} cores: {args(more, True)}")
    got = args(1, True, flavour="", version=OPENMPI_VERSION)
    check(got == ["-n", "1", "/bin/prog"], f"Open MPI from --version, as users: {got}")
    got = args(2, False, flavour="", version=OPENMPI_VERSION)
    check(got[:3] == ["--oversubscribe", "--bind-to", "none"], f"Open MPI from --version: {got}")
    # MPICH's hydra: unchanged for the tests; bound to cores as users when the ranks fit.
    for flavour, version in (("hydra", ""), ("", HYDRA_VERSION)):
        how = f"hydra ({'CB_MPIRUN_FLAVOUR' if flavour else '--version'})"
        got = args(2, False, flavour, version)
        check(got == ["-n", "2", "/bin/prog"], f"{how}, tests' launch: {got}")
        got = args(cores, True, flavour, version)
        check(got == ["-bind-to", "core", "-n", str(cores), "/bin/prog"],
              f"{how}, as users, {cores} ranks on {cores} cores: {got}")
        got = args(more, True, flavour, version)
        check(got == ["-n", str(more), "/bin/prog"],
              f"{how}, as users, {more} ranks on {cores} cores: {got}")
    # Ranks on other hosts (a hosts file): Open MPI passes them only what -x names, so every
    # CB_* setting and LD_PRELOAD (scripts/cluster.sh's hosts, a real cluster); hydra passes all.
    e = dict(os.environ, CB_MPIRUN_REAL=fake, CB_MPIRUN_FLAVOUR="openmpi", CB_ENGINE_SHM="0",
             LD_PRELOAD="/lib/x.so")
    e.pop("CB_MPIRUN_AS_USERS", None)
    p = subprocess.run([compat, "--hostfile", "h", "-n", "2", "/bin/prog"], capture_output=True,
                       text=True, env=e, timeout=30)
    got = p.stdout.split()
    passed = {got[i + 1] for i, a in enumerate(got) if a == "-x"}
    check({"CB_ENGINE_SHM", "LD_PRELOAD"} <= passed and not any(
        v.startswith("CB_MPIRUN_") for v in passed), f"Open MPI with a hosts file: {got}")
    # Anything else: unchanged, as users too.
    got = args(1, True, flavour="", version="some other launcher 1.0")
    check(got == ["-n", "1", "/bin/prog"], f"another launcher, as users: {got}")


@case
def launch_command_lines(env):
    f = Fakes(env)
    # Not in Slurm, nothing set: today's `mpirun -n NP`.
    check(launched(f, 2, "") == ["mpirun", "-n", "2", "/bin/prog", "arg"], "plain mpirun")
    # MPICH hydra: -f HOSTFILE -ppn N.
    got = launched(f, 8, "", CB_HOSTFILE=f.hostfile, CB_PPN=4)
    check(got == ["mpirun", "-f", f.hostfile, "-ppn", "4", "-n", "8", "/bin/prog", "arg"],
          f"hydra with hosts file: {got}")
    got = launched(f, 2, 1, CB_HOSTFILE=f.hostfile, CB_PPN=4)  # the argument wins over CB_PPN
    check(got[:6] == ["mpirun", "-f", f.hostfile, "-ppn", "1", "-n"], f"ppn argument: {got}")
    # Open MPI: --hostfile F --map-by ppr:N:node.
    got = launched(f, 8, "", version=OPENMPI_VERSION, CB_HOSTFILE=f.hostfile, CB_PPN=4)
    check(got == ["mpirun", "--hostfile", f.hostfile, "--map-by", "ppr:4:node", "-n", "8",
                  "/bin/prog", "arg"], f"Open MPI with hosts file: {got}")
    got = launched(f, 4, "", version="no banner", CB_MPIRUN_FLAVOUR="openmpi", CB_PPN=2)
    check(got[:3] == ["mpirun", "--map-by", "ppr:2:node"], f"CB_MPIRUN_FLAVOUR: {got}")
    # Inside a Slurm allocation: srun, with the layout.
    got = launched(f, 8, "", SLURM_JOB_ID=42, CB_PPN=4)
    check(got == ["srun", "-n", "8", "-N", "2", "--ntasks-per-node", "4", "--kill-on-bad-exit=1",
                  "/bin/prog", "arg"], f"srun: {got}")
    got = launched(f, 3, "", SLURM_JOB_ID=42)
    check(got == ["srun", "-n", "3", "--kill-on-bad-exit=1", "/bin/prog", "arg"], f"srun: {got}")
    # Chosen against the detection either way; extra arguments.
    got = launched(f, 2, "", SLURM_JOB_ID=42, CB_LAUNCHER="mpirun")
    check(got == ["mpirun", "-n", "2", "/bin/prog", "arg"], f"CB_LAUNCHER=mpirun in Slurm: {got}")
    got = launched(f, 2, 1, CB_LAUNCHER="srun", CB_LAUNCH_ARGS="--mpi=pmix -l")
    check(got == ["srun", "-n", "2", "-N", "2", "--ntasks-per-node", "1", "--kill-on-bad-exit=1",
                  "--mpi=pmix", "-l", "/bin/prog", "arg"], f"CB_LAUNCHER=srun: {got}")
    got = launched(f, 2, "", MPIRUN=os.path.join(f.bin, "mpirun"), CB_LAUNCH_ARGS="-bind-to core")
    check(got == ["mpirun", "-n", "2", "-bind-to", "core", "/bin/prog", "arg"], f"MPIRUN: {got}")
    # --print / --print0 for callers in other languages (scripts/tune.py).
    p = subprocess.run(["bash", str(LAUNCH), "--print0", "4", "2"], capture_output=True,
                       env=f.environ(SLURM_JOB_ID=42), timeout=60)
    check(p.returncode == 0 and p.stdout.split(b"\0")[:-1] == [
        b"srun", b"-n", b"4", b"-N", b"2", b"--ntasks-per-node", b"2", b"--kill-on-bad-exit=1"],
        f"--print0: {p}")
    p = subprocess.run(["bash", str(LAUNCH), "--print", "2"], capture_output=True, text=True,
                       env=f.environ(CB_HOSTFILE=f.hostfile + " x"), timeout=60)
    check(p.returncode == 2 and "cannot be read" in p.stderr, f"--print, missing hosts file: {p}")
    # Bad settings: exit 2, one line naming the setting.
    refused(f, 2, ["CB_HOSTFILE", "srun"], SLURM_JOB_ID=42, CB_HOSTFILE=f.hostfile)
    refused(f, 2, ["CB_LAUNCHER", "'pbs'"], CB_LAUNCHER="pbs")
    refused(f, 2, ["CB_PPN", "'0'"], CB_PPN=0)
    refused(f, 2, ["CB_PPN", "'two'"], CB_PPN="two")
    refused(f, 2, ["CB_MPIRUN_FLAVOUR"], version="Some Other MPI 1.0", CB_PPN=2)
    refused(f, 0, ["rank count"])


def fake_build(env):
    """A build directory whose cb_info and cb_copybw write stub documents: sweep.sh then
    needs no real benchmark (they all go to the fake launchers)."""
    build = env.path("fakebuild")
    os.makedirs(build, exist_ok=True)
    stub = """#!/bin/sh
while [ $# -gt 0 ]; do [ "$1" = -J ] && echo '{"environment": {"gpu": {}}}' > "$2"; shift; done
"""
    for name in ("cb_info", "cb_copybw"):
        with open(os.path.join(build, name), "w") as f:
            f.write(stub)
        os.chmod(os.path.join(build, name), 0o755)
    return build


def sweep(env, fakes, build, **settings):
    sweep.count = getattr(sweep, "count", 0) + 1
    out = env.path(f"sweep{sweep.count}")
    p = subprocess.run(["bash", str(SWEEP), build, out, "--full", "--quick"], capture_output=True,
                       text=True, env=fakes.environ(**settings), timeout=250)
    check(p.returncode == 0, f"sweep.sh with fake launchers, {settings}: rc={p.returncode}\n"
                             f"{p.stdout[-2000:]}\n{p.stderr[-2000:]}")
    runs = fakes.launches()
    by_bench = {}
    for argv in runs:
        exe = next((a for a in argv if a.startswith(build + "/cb_")), None)
        check(exe is not None, f"a launch without a benchmark: {argv}")
        by_bench.setdefault(os.path.basename(exe), []).append(argv[:argv.index(exe)])
    return p, by_bench


@case
def launch_sweep_layouts(env):
    """scripts/sweep.sh builds every benchmark's command line with launch.sh: two-rank
    point-to-point runs across nodes on a cluster, CB_NP/CB_PPN for the others."""
    f = Fakes(env)
    build = fake_build(env)
    # A laptop or VM: `mpirun -n 2` for everything, as before.
    _, runs = sweep(env, f, build)
    for bench in ("cb_latency", "cb_bw", "cb_mbw_mr", "cb_allreduce", "cb_ialltoallv"):
        check(runs.get(bench) and all(c == ["mpirun", "-n", "2"] for c in runs[bench]),
              f"{bench}: {runs.get(bench)}")
    check("cb_info" not in runs, "cb_info runs as one process off a cluster")
    # Slurm: pairs on two nodes, CB_NP ranks CB_PPN per node for the rest, cb_info too.
    p, runs = sweep(env, f, build, SLURM_JOB_ID=42, SLURM_NNODES=2, CB_NP=4, CB_PPN=2)
    pair = ["srun", "-n", "2", "-N", "2", "--ntasks-per-node", "1", "--kill-on-bad-exit=1"]
    wide = ["srun", "-n", "4", "-N", "2", "--ntasks-per-node", "2", "--kill-on-bad-exit=1"]
    for bench in ("cb_latency", "cb_bw", "cb_bibw"):
        check(runs[bench] and all(c == pair for c in runs[bench]), f"{bench}: {runs[bench]}")
    for bench in ("cb_mbw_mr", "cb_allreduce", "cb_barrier", "cb_iallreduce", "cb_info"):
        check(runs.get(bench) and all(c == wide for c in runs[bench]),
              f"{bench}: {runs.get(bench)}")
    check("sweep: launcher: srun (Slurm job 42, 2 nodes), ranks per node: 2" in p.stdout,
          "the launcher line:\n" + p.stdout[:2000])
    # mpirun of Open MPI with a hosts file; an odd CB_NP gives mbw_mr -p NP/2.
    _, runs = sweep(env, f, build, version=OPENMPI_VERSION, CB_HOSTFILE=f.hostfile, CB_NP=3,
                    CB_PPN=2)
    check(all(c == ["mpirun", "--hostfile", f.hostfile, "--map-by", "ppr:1:node", "-n", "2"]
              for c in runs["cb_bw"]), f"cb_bw: {runs['cb_bw']}")
    check(all(c == ["mpirun", "--hostfile", f.hostfile, "--map-by", "ppr:2:node", "-n", "3"]
              for c in runs["cb_allreduce"]), f"cb_allreduce: {runs['cb_allreduce']}")
    # A bad layout stops the sweep before anything runs, naming the setting.
    for settings, words in (({"SLURM_JOB_ID": 42, "CB_HOSTFILE": f.hostfile}, "CB_HOSTFILE"),
                            ({"CB_NP": "0"}, "CB_NP"), ({"CB_PAIR_PPN": "two"}, "CB_PAIR_PPN")):
        p = subprocess.run(["bash", str(SWEEP), build, env.path("bad"), "--quick"],
                           capture_output=True, text=True, timeout=60, env=f.environ(**settings))
        check(p.returncode == 2 and p.stderr.startswith(f"launch: error: {words}")
              and not f.launches(), f"sweep with {settings}: rc={p.returncode} {p.stderr}")


def columns(out):
    """The table's column header line ("# Size ...")."""
    return next((x for x in out.splitlines() if x.startswith("# Size")), "")


def no_line_rate_expected(doc):
    """True where this machine's ranks have no active RDMA port (the development VM)."""
    return doc["environment"]["line_rate"]["rate_gbps"] is None


@case
def launch_recorded_in_json(env):
    """A real 2-rank run under MPICH's mpirun: environment.launcher says hydra, one node,
    two ranks on it; without an RDMA device the header line and JSON say so and there is
    no % Line column."""
    out = env.path("bw.json")
    r = env.ok(2, "bw", ["-m", "1:4K", "-i", "10", "-x", "2", "-J", out])
    doc = load_json(out)
    launcher = doc["environment"]["launcher"]
    check("hydra" in launcher["name"] and launcher["detected_from"] == "MPI_LOCALNRANKS",
          f"launcher under MPICH's mpirun: {launcher}")
    check(launcher["nodes"] == 1 and launcher["ranks_per_node"] == 2
          and launcher["same_on_all_ranks"] is True, f"layout: {launcher}")
    check(launcher["variables"].get("PMI_SIZE") == "2"
          and launcher["variables"].get("MPI_LOCALNRANKS") == "2", f"variables: {launcher}")
    line = doc["line_rate"]
    check(line["directions"] == 1 and line["pairs"] == 1 and line["cross_node_pairs"] == 0,
          f"line_rate: {line}")
    check(line["percent_reported"] is False and line["bound_gbps"] is None, f"line_rate: {line}")
    check("% Line" not in columns(r.out) and all("line_rate_percent" not in x
                                                  for x in doc["results"]),
          "a % Line column on one node:\n" + r.out)
    if no_line_rate_expected(doc):
        why = doc["environment"]["line_rate"]["unavailable"]
        check(why.startswith(("no RDMA device (", "no active RDMA port")), f"unavailable: {why}")
        header = f"# Line rate: {why}; no % Line column"
        check(header in r.out.splitlines(), f"header line '{header}' missing:\n{r.out}")
        check(line["note"] == f"{why}; no % Line column", f"note: {line}")
    else:
        check("both ranks are on one node" in r.out, "one-node header line:\n" + r.out)
    # cb_info as one process: no launcher; its RDMA section names the line rate or its absence.
    info = env.path("info.json")
    p = subprocess.run([env.exe("info"), "--floors", "off", "-J", info], capture_output=True,
                       text=True, timeout=60,
                       env={k: v for k, v in os.environ.items() if not k.startswith("SLURM_")})
    check(p.returncode == 0, f"cb_info: {p.stderr}")
    launcher = load_json(info)["environment"]["launcher"]
    check(launcher["name"] == "none" and launcher["nodes"] == 1 and launcher["ranks_per_node"] == 1,
          f"cb_info launcher: {launcher}")
    check("  launcher             none, ranks per node 1" in p.stdout, "launcher row:\n" + p.stdout)
    if no_line_rate_expected(doc):
        check("  line rate            none: no RDMA device" in p.stdout
              or "  line rate            none: no active RDMA port" in p.stdout,
              "line rate row:\n" + p.stdout)
    # latency has no line rate block.
    lat = env.path("lat.json")
    r = env.ok(2, "latency", ["-m", "1:8", "-i", "10", "-x", "2", "-J", lat])
    check("line_rate" not in load_json(lat) and "# Line rate" not in r.out, "cb_latency line rate")

    # The binding the launcher gave each rank, read back: hydra's default leaves the ranks
    # unbound; -bind-to core binds each to one CPU of its own (where the node has two).
    binding = doc["environment"]["binding"]
    check(len(binding["cpus_per_rank"]) == 2 and all(binding["cpus_per_rank"]),
          f"binding: {binding}")
    if ("hydra" in doc["environment"]["launcher"]["name"]
            and doc["environment"]["cpu"]["logical_cores"] >= 2):
        bound = env.path("bound.json")
        p = subprocess.run([env.mpirun, "-n", "2", "-bind-to", "core", env.exe("latency"),
                            "-m", "1:1", "-i", "5", "-x", "1", "-J", bound],
                           capture_output=True, text=True, timeout=60)
        check(p.returncode == 0, f"-bind-to core: {p.stderr}")
        b = load_json(bound)["environment"]["binding"]
        check(b["bound"] is True and len(set(b["cpus_per_rank"])) == 2
              and "bound: rank 0 to CPU" in p.stdout, f"-bind-to core: {b}\n{p.stdout}")


@case
def launch_line_rate_setting(env):
    """CB_LINE_RATE_GBPS supplies a rate; both ranks on one node still give no column, and a
    bad value is refused (exit 2, one line)."""
    out = env.path("bw.json")
    r = env.ok(2, "bw", ["-m", "1:1K", "-i", "10", "-x", "2", "-J", out],
               env={"CB_LINE_RATE_GBPS": "100"})
    doc = load_json(out)
    check(doc["environment"]["line_rate"] == {"rate_gbps": 100.0, "source": "CB_LINE_RATE_GBPS"},
          f"environment.line_rate: {doc['environment']['line_rate']}")
    check(doc["line_rate"]["rate_gbps"] == 100.0 and not doc["line_rate"]["percent_reported"],
          f"line_rate: {doc['line_rate']}")
    check("# Line rate: 100 Gb/s (CB_LINE_RATE_GBPS); both ranks are on one node" in r.out,
          "header line:\n" + r.out)
    check("% Line" not in columns(r.out), "a column on one node:\n" + r.out)
    for bad in ("fast", "0", "-5", "1e9"):
        r = env.run(2, "bw", ["-m", "1:1K", "-i", "2"], env={"CB_LINE_RATE_GBPS": bad})
        check(r.rc == 2 and r.err.count("CB_LINE_RATE_GBPS") == 1 and f"'{bad}'" in r.err,
              f"CB_LINE_RATE_GBPS={bad}: {r}")


def virtual_nodes_unavailable():
    """Why virtual_nodes() cannot run here, or "" when it can."""
    if not shutil.which("unshare"):
        return "no unshare(1) to give a rank its own host name"
    probe = subprocess.run(["unshare", "--uts", "sh", "-c", "hostname cb-probe && hostname"],
                           capture_output=True, text=True, timeout=30)
    if probe.returncode != 0 or probe.stdout.strip() != "cb-probe":
        return ("cannot give a rank its own host name here (unshare --uts needs CAP_SYS_ADMIN "
                "or user namespaces)")
    return ""


def virtual_nodes(env, bench, args, names=("vnode-a", "vnode-b"), extra_env=None):
    """mpirun with one rank per UTS namespace, each with its own host name: two nodes as
    the ranks' host names (MPI_Get_processor_name) see it, on one machine."""
    cmd = [env.mpirun]
    for i, name in enumerate(names):
        if i:
            cmd.append(":")
        cmd += ["-n", "1", "unshare", "--uts", "sh", "-c",
                f'hostname {name} && exec "$0" "$@"', env.exe(bench), *args]
    e = dict(os.environ, **(extra_env or {}))
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=e)
    return Run(p.returncode, p.stdout, p.stderr, 0)


@case
def launch_line_rate_column(env):
    """Two ranks on two (virtual) nodes with a line rate: the % Line column, each record's
    line_rate_percent = bandwidth x 8 / 1000 / bound, bibw's bound is both directions;
    environment.launcher counts the nodes from the host names."""
    why = virtual_nodes_unavailable()
    if why:
        return "SKIP: " + why
    for bench, directions in (("bw", 1), ("bibw", 2)):
        out = env.path(f"{bench}.json")
        r = virtual_nodes(env, bench, ["-m", "1K:64K", "-i", "10", "-x", "2", "-c", "-J", out],
                          extra_env={"CB_LINE_RATE_GBPS": "100"})
        check(r.rc == 0, f"cb_{bench} on two virtual nodes: {r}")
        doc = load_json(out)
        launcher = doc["environment"]["launcher"]
        check(launcher["nodes"] == 2 and launcher["ranks_per_node"] == 1
              and "hydra" in launcher["name"], f"launcher on two host names: {launcher}")
        line = doc["line_rate"]
        bound = 100.0 * directions
        check(line["percent_reported"] is True and line["bound_gbps"] == bound
              and line["links"] == 1 and line["cross_node_pairs"] == 1, f"line_rate: {line}")
        header = (f"# Line rate: 100 Gb/s (CB_LINE_RATE_GBPS); % Line = bandwidth / "
                  f"{bound:g} Gb/s (100 Gb/s x {directions} "
                  f"{'direction' if directions == 1 else 'directions'} x 1 link)")
        check(header in r.out.splitlines(), f"header '{header}' missing:\n{r.out}")
        check("% Line" in columns(r.out), f"no % Line column:\n{r.out}")
        rows = [x.split() for x in r.out.splitlines() if x and x[0].isdigit()]
        for rec, row in zip(doc["results"], rows):
            pct = rec["line_rate_percent"]
            want = rec["bandwidth_MBps"] * 8 / 1000 / bound * 100
            check(abs(pct - want) <= 1e-9 * max(1.0, want),
                  f"percent at {rec['bytes']}: {pct} vs {want}")
            check(abs(float(row[2]) - pct) <= 0.006, f"table {row} vs JSON {pct}")
    return None


if __name__ == "__main__":
    sys.exit("run through run_case.py")
