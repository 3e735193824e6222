"""docs/benchmarks.md, the table of every OMB and nccl-tests executable and its collbench
counterpart, read as docs/usage.md promises it: every executable it names exists, every
collective one validates (-c) at 2 ranks on the MPI backend, and a row without a
counterpart names the issue that brings it."""
import os
import re

from cbtest import case, check

LABELS = ('release', 'mpi')  # tests/labels.md

TABLE = os.path.join(os.path.dirname(__file__), "..", "..", "docs", "benchmarks.md")
# MPICH 4.0's defective persistent forms are refused, saying so (test_omb_collectives).
STALE = "deliver the first start's data again"
SIZELESS = {"barrier", "ibarrier", "barrier_persistent"}


def rows():
    """(section, peer executable, collbench cell) of every table row naming a peer
    executable."""
    out, section = [], ""
    with open(TABLE) as f:
        for line in f:
            if line.startswith("## "):
                section = line[3:].strip()
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if len(cells) >= 2 and re.fullmatch(r"`(osu|[a-z_]+_perf)[a-z_]*`", cells[0]):
                out.append((section, cells[0].strip("`"), cells[1]))
    return out


@case
def benchmark_table_counterparts_exist_and_validate(env):
    table = rows()
    check(len(table) >= 89, f"docs/benchmarks.md lists {len(table)} executables, expected OMB "
                            "7.4's 77 + 7.5's partitioned latency + nccl-tests' 11")
    validated = set()
    for section, peer, ours in table:
        names = re.findall(r"`cb_([a-z_]+)`", ours)
        if not names:
            check(re.fullmatch(r"issue \d+", ours), f"{peer}: neither a cb_ executable nor "
                                                    f"an issue: {ours!r}")
            continue
        for name in names:
            check(os.access(env.exe(name), os.X_OK), f"{peer}: {env.exe(name)} missing")
            if name in validated or not section.endswith("collectives"):
                continue  # point to point and the rest: their own tests run them
            validated.add(name)
            args = ["-i", "2", "-x", "1"] if name in SIZELESS else ["-m", "4:1K", "-c", "-i",
                                                                    "2", "-x", "1"]
            r = env.run(2, name, args)
            refused = name.endswith("_persistent") and r.rc == 2 and STALE in r.err
            check(r.rc == 0 or refused, f"{peer} -> cb_{name}: {r}")
