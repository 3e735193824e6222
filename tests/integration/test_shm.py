"""The engine's shared-memory path: no /dev/shm leftovers (normal run, killed rank),
shared heap and plain buffers, virtual nodes for the hierarchical algorithms, shm off."""
import os

from cbtest import case, check, load_json


def leftovers():
    try:
        return {f for f in os.listdir("/dev/shm") if f.startswith("collbench.")}
    except FileNotFoundError:
        return set()


@case
def shm_no_leftovers_after_normal_and_killed_runs(env):
    before = leftovers()
    env.ok(2, "allreduce", ["--backend", "engine", "-m", "4:1M", "-c", "-i", "5"])
    check(leftovers() == before, f"/dev/shm leftovers after a normal run: {leftovers() - before}")
    out = env.path("die.json")
    r = env.run(2, "allreduce", ["--backend", "engine", "--algo", "shm", "-m", "64K:1M", "-i", "40",
                                 "--time-limit", "20", "-J", out],
                env={"CB_TEST_FAULT": "die"}, timeout=60)
    check(r.rc != 0 and r.seconds < 20, f"a killed rank must end the job quickly: {r}")
    check("Killed" in r.out + r.err or "exited while this rank waited" in r.err, str(r))
    check(leftovers() == before, f"/dev/shm leftovers after a killed rank: {leftovers() - before}")
    check([x["bytes"] for x in load_json(out)["results"]] == [65536], "the first size was kept")


@case
def shm_collectives_on_shared_and_plain_buffers(env):
    for alloc in ("backend", "plain"):
        for bench, algo in (("allreduce", "shm"), ("allreduce", "shm_flat"), ("bcast", "shm"),
                            ("alltoall", "shm"), ("iallreduce", "shm")):
            for extra in ([], ["-k", "1"] if bench == "bcast" else ["-l"]):
                out = env.path(f"{bench}.json")
                env.ok(2, bench, ["--backend", "engine", "--algo", algo, "--alloc", alloc,
                                  "-m", "4:2M", "-c", "-i", "3", "-x", "1", "-J", out, *extra])
                doc = load_json(out)
                check(doc["options"]["alloc"] == alloc, "alloc recorded")
                check(all(x["algo"] == algo and x["validation"]["passed"] for x in doc["results"]),
                      f"{bench} {algo} --alloc {alloc} {extra}")
        out = env.path("bw.json")
        env.ok(2, "bw", ["--backend", "engine", "--alloc", alloc, "-m", "1:4M", "-c", "-i", "5",
                         "-J", out])
        check(all(x["validation"]["passed"] for x in load_json(out)["results"]), f"bw {alloc}")


@case
def shm_hierarchical_on_virtual_nodes(env):
    for np, per_node in ((4, 2), (5, 2)):
        for bench, extra in (("allreduce", []), ("allreduce", ["-l"]), ("bcast", ["-k", "rotate"]),
                             ("iallreduce", [])):
            out = env.path(f"h{np}{bench}.json")
            r = env.ok(np, bench, ["--backend", "engine", "--algo", "hierarchical", "-m", "4:1M",
                                   "-c", "-i", "3", "-x", "1", "-J", out, *extra],
                       env={"CB_RANKS_PER_NODE": str(per_node)}, timeout=120)
            doc = load_json(out)
            check(doc["backend"]["nodes"] == (np + per_node - 1) // per_node, "virtual nodes")
            check(all(x["validation"]["passed"] for x in doc["results"]), f"{bench} {extra} np={np}")
    r = env.run(2, "allreduce", ["--backend", "engine", "--algo", "hierarchical", "-m", "8"],
                timeout=30)
    check(r.rc == 2 and "needs ranks on at least two nodes" in r.err, str(r))


@case
def shm_off(env):
    out = env.path("off.json")
    env.ok(2, "allreduce", ["--backend", "engine", "-m", "4:64K", "-c", "-i", "3", "-J", out],
           env={"CB_ENGINE_SHM": "0"})
    doc = load_json(out)
    check(doc["backend"]["shared_memory"].startswith("off"), doc["backend"]["shared_memory"])
    check(all(not x["algo"].startswith("shm") for x in doc["results"]), "no shm algorithm chosen")
    r = env.run(2, "allreduce", ["--backend", "engine", "--algo", "shm", "-m", "8"],
                env={"CB_ENGINE_SHM": "0"}, timeout=30)
    check(r.rc == 2 and "shared memory" in r.err and "CB_ENGINE_SHM=0" in r.err, str(r))
