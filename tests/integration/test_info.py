"""cb_info: text sections and -J JSON, as a plain process (MPI singleton) and under mpirun."""
import os
import re
import subprocess

from cbtest import Run, case, check, load_json

LABELS = ('release', 'asan', 'mpi')  # tests/labels.md

SECTIONS = ["[collbench]", "[MPI]", "[CUDA]", "[NCCL]", "[RDMA]", "[CPU and memory]", "[ranks]"]


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
    # The text says what the JSON says.
    rdma = info["environment"]["rdma"]
    if not rdma["devices"]:
        check(rdma["unavailable"] in r.out, "RDMA reason missing from the text:\n" + r.out)


@case('other_mpis')
def info_under_mpirun(env):
    out = env.path("info2.json")
    r = env.ok(2, "info", ["-J", out])
    check_text(r.out, 2)
    check_info(load_json(out), 2)
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
    r = env.run(2, "info", ["-J", "/nonexistent/dir/info.json"])
    check(r.rc == 2 and r.err.count("collbench: error: cannot write JSON file") == 1,
          f"unwritable -J: {r}")
    r = plain(env, ["--help"])
    check(r.rc == 0 and "-J,--json FILE" in r.out, f"help: {r}")
