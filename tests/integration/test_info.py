"""cb_info: text sections and -J JSON, as a plain process (MPI singleton) and under mpirun."""
import os
import re
import subprocess
import sys

from cbtest import Run, case, check, load_json

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "scripts"))
import cbfloors  # noqa: E402

LABELS = ('release', 'mpi')  # tests/labels.md (why not asan: there)

SECTIONS = ["[collbench]", "[MPI]", "[CUDA]", "[NCCL]", "[RDMA]", "[CPU and memory]", "[ranks]",
            "[engine]", "[floors]"]
COLLS = {"allreduce": (2, 1, 1), "bcast": (1, 1, 1), "alltoall": (2, 2, 2), "barrier": (2, 0, 0),
         "latency": (1, 1, 1)}  # hand-offs, bytes read and written per byte, per rank


def plain(env, args, timeout=60):
    """Runs cb_info without mpirun."""
    cmd = [env.exe("info"), *args]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        check(False, f"HANG: {' '.join(cmd)}")
    return Run(p.returncode, p.stdout, p.stderr, 0)


def check_info(info, nranks):
    engine = info["engine"]
    check(len(engine["algorithms"]) >= 15 and engine["tuning"]["rules"], "engine section")
    check({"allreduce", "bcast", "alltoall"} <= {a["coll"] for a in engine["algorithms"]},
          "engine algorithms of every collective")
    check(info["schema"] == "collbench.info/1", f"schema {info.get('schema')}")
    e = info["environment"]
    for key in ("hostname", "hosts", "nranks", "mpi", "collbench", "cpu", "timer", "gpu", "rdma"):
        check(key in e, f"environment lacks '{key}'")
    check(e["nranks"] == nranks and sum(len(h["ranks"]) for h in e["hosts"]) == nranks,
          f"ranks: {e['nranks']}, hosts {e['hosts']}")
    features = e["collbench"]["features"]
    check(set(features) == {"cuda", "nccl", "verbs"}, f"features {features}")
    check(e["collbench"]["git_revision"] and e["mpi"]["library"], "revision / MPI library")
    check(e["cpu"]["logical_cores"] >= 1 and e["cpu"]["model"] is not None, "cpu")
    check(isinstance(info["build"]["cuda_architectures"], str), "build.cuda_architectures")
    aware = info["mpi"]["cuda_aware"]
    check(aware in (True, False, None) and info["mpi"]["cuda_aware_detail"], f"mpi {info['mpi']}")
    check(("version" in info["nccl"]) == features["nccl"], f"nccl {info['nccl']}")
    if features["nccl"]:
        check(info["nccl"]["version"].count(".") == 2, f"nccl version {info['nccl']}")
    check("devices" in e["gpu"] or e["gpu"].get("unavailable"), f"gpu {e['gpu']}")
    check_rdma(e["rdma"], features["verbs"])


def close(a, b):
    return abs(a - b) <= 1e-9 * max(abs(a), abs(b), 1e-12)


def check_floors(info, nranks):
    """Floors present and sane: the hand-off between the ranks' CPUs with its interval,
    memcpy and read+write rates per size up to beyond the LLC, and each collective's
    floors as the counts and the rule say (cbfloors.py computes the same)."""
    f = info["floors"]
    check(f["mode"] == "quick" and "error" not in f, f"floors {f.get('mode')}: {f.get('error')}")
    # A guard against a runaway measurement, not a timing: quick takes 1-2 s on a quiet
    # 2-core VM and several times that when other cases share the cores (ctest -j2).
    if not info["environment"]["collbench"].get("sanitize"):
        check(f["seconds"] < 20, f"quick floors took {f['seconds']:.2f} s")
    h = f["handoff"]
    binding = info["environment"]["binding"]["cpus_per_rank"]
    if nranks == 2 and all(re.fullmatch(r"\d+", c) for c in binding) and binding[0] != binding[1]:
        check(h["ranks_cpus"] == [int(c) for c in binding] and "binding" in h["ranks_cpus_from"],
              f"ranks' CPUs {h['ranks_cpus']} ({h['ranks_cpus_from']}), bound to {binding}")
    if os.cpu_count() >= 2:
        check(h["pairs"] and h["pairs"][0]["cpus"] == h["ranks_cpus"], f"pairs {h['pairs']}")
        ns = h["pairs"][0].get("one_way_ns")
        check(ns is not None, f"ranks' pair not measured: {h['pairs'][0]}")
        check(5 < ns["median"] < 100e3 and ns["min"] <= ns["median"] <= ns["max"],
              f"one-way hand-off {ns}")
        check(ns["ci95_lo"] <= ns["median"] <= ns["ci95_hi"], f"interval {ns}")
        check(h["one_way_ns"] == ns["median"], f"one_way_ns {h['one_way_ns']}")
    rows = f["bandwidth"]["rows"]
    sizes = [r["bytes"] for r in rows]
    check(sizes[:5] == [4096, 65536, 1 << 20, 16 << 20, 64 << 20] and sizes == sorted(set(sizes)),
          f"bandwidth sizes {sizes}")
    check(rows[-1]["where"] == "beyond LLC" or "note" in f["bandwidth"],
          f"no size beyond the LLC and no note: {rows[-1]}")
    for r in rows:
        check(0 < r["memcpy_GBps_median"] <= r["memcpy_GBps"] < 1e4
              and r["memcpy_GBps"] == max(r["memcpy_whole_GBps"], r["memcpy_pieces_GBps"])
              and 0 < r["read_write_GBps_median"] <= r["read_write_GBps"] < 1e4,
              f"bandwidth row {r}")
    colls = {c["coll"]: c for c in f["collectives"]}
    check(set(colls) == set(COLLS), f"collectives {sorted(colls)}")
    for name, (k, rd, wr) in COLLS.items():
        c = colls[name]
        check((c["handoffs"], c["read_bytes_per_byte"], c["write_bytes_per_byte"]) == (k, rd, wr),
              f"{name}: {c}")
        check(close(c["latency_floor_us"], k * h["one_way_ns"] / 1e3), f"{name}: latency floor")
        last = 0
        for p in c["points"]:
            bw = (p["read_bytes"] + p["write_bytes"]) / (2 * p["memcpy_GBps"] * 1e3)
            check(close(p["bandwidth_floor_us"], bw)
                  and close(p["floor_us"], max(bw, c["latency_floor_us"])) and p["floor_us"] >= last,
                  f"{name} at {p['bytes']} B: {p}")
            check(close(cbfloors.at(f, name, p["bytes"])["floor_us"], p["floor_us"]),
                  f"{name} at {p['bytes']} B: cbfloors.py says "
                  f"{cbfloors.at(f, name, p['bytes'])}, cb_info {p}")
            last = p["floor_us"]
        check(bool(c["points"]) == (rd + wr > 0), f"{name} points")


def check_rdma(rdma, verbs):
    """Devices with numeric port rates, or the reason there are none."""
    check(isinstance(rdma.get("devices"), list), f"rdma {rdma}")
    if rdma["devices"]:
        for dev in rdma["devices"]:
            check(dev.get("name") and "ports" in dev, f"rdma device {dev}")
            for port in dev["ports"]:
                if "error" in port:
                    continue
                rate = port.get("rate_gbps")
                check(isinstance(rate, (int, float)) and rate >= 0, f"port rate {port}")
                check(port["state"] != "active" or rate > 0, f"active port without rate {port}")
        return
    why = rdma.get("unavailable", "")
    if not verbs:
        check("built without libibverbs" in why, f"rdma reason: {why}")
    elif not os.path.isdir("/sys/class/infiniband_verbs"):
        # No kernel RDMA support (this development machine): NULL list, errno ENOSYS.
        check(why == "ibv_get_device_list failed: Function not implemented "
                     "(no RDMA devices or kernel support)", f"rdma reason: {why}")
    else:
        check("no RDMA devices" in why, f"rdma reason: {why}")


def check_text(out, nranks):
    check("[engine]" in out and "tuning table" in out, "engine section printed:\n" + out)
    check(out.count("# collbench info v") == 1, "title printed once:\n" + out)
    pos = [out.find(s) for s in SECTIONS]
    check(all(p >= 0 for p in pos) and pos == sorted(pos), f"sections {SECTIONS}:\n{out}")
    check(re.search(rf"^  ranks +{nranks} on 1 host$", out, re.M), "rank line:\n" + out)
    for key in ("git revision", "CUDA-aware", "logical cores"):
        check(key in out, f"'{key}' missing:\n{out}")


@case
def info_plain_process(env):
    out = env.path("info.json")
    r = plain(env, ["-J", out])
    check(r.rc == 0, f"cb_info failed: {r}")
    check_text(r.out, 1)
    info = load_json(out)
    check_info(info, 1)
    info["floors"]["host"] = info["environment"]["hostname"]
    check_floors(info, 1)
    check(re.search(r"^  hand-off \d+<->\d+ +[0-9.]+ ns one way", r.out, re.M)
          or os.cpu_count() < 2, "hand-off line:\n" + r.out)
    # The text says what the JSON says.
    rdma = info["environment"]["rdma"]
    if not rdma["devices"]:
        check(rdma["unavailable"] in r.out, "RDMA reason missing from the text:\n" + r.out)


@case('other_mpis')
def info_under_mpirun(env):
    out = env.path("info2.json")
    r = env.ok(2, "info", ["-J", out])
    check_text(r.out, 2)
    info = load_json(out)
    check_info(info, 2)
    info["floors"]["host"] = info["environment"]["hostname"]
    check_floors(info, 2)
    # Every result JSON carries the same environment block (rdma included).
    lat = env.path("lat.json")
    env.ok(2, "latency", ["-m", "8:8", "-i", "10", "-J", lat])
    result_env = load_json(lat)["environment"]
    info_env = load_json(out)["environment"]
    check(set(result_env) == set(info_env), f"keys differ: {set(result_env) ^ set(info_env)}")
    check(result_env["rdma"] == info_env["rdma"], "rdma block differs")


@case
def info_bad_input(env):
    r = plain(env, ["--no-such-option"])
    check(r.rc == 2 and r.err.startswith("collbench: error:") and len(r.err.splitlines()) == 1,
          f"bad option: {r}")
    r = plain(env, ["--floors", "fast"])
    check(r.rc == 2 and "--floors" in r.err and len(r.err.splitlines()) == 1, f"bad --floors: {r}")
    r = plain(env, ["--floors", "off", "-J", env.path("off.json")])
    check(r.rc == 0 and load_json(env.path("off.json"))["floors"] == {"mode": "off"}
          and "no (--floors off)" in r.out, f"--floors off: {r}")
    r = env.run(2, "info", ["--floors", "off", "-J", "/nonexistent/dir/info.json"])
    check(r.rc == 2 and r.err.count("collbench: error: cannot write JSON file") == 1,
          f"unwritable -J: {r}")
    r = plain(env, ["--help"])
    check(r.rc == 0 and "-J,--json FILE" in r.out, f"help: {r}")
