#!/usr/bin/env python3
"""Real PyTorch traces for cb_replay's importers (issue 41): DDP and FSDP on CPU with Gloo.

Installs `torch` from PyPI into a virtual environment (unless --python names one that has
it), then for each world size trains a small MLP for a few steps under DDP (a small
bucket_cap_mb, so several buckets) and under FSDP, recording on every rank:

  kineto.<mode>.w<N>.rank<R>.json  torch.profiler (record_shapes=True) export_chrome_trace
  et.<mode>.w<N>.rank<R>.json      torch.profiler.ExecutionTraceObserver (one step)
  fr.<mode>.w<N>.rank<R>.json      the flight recorder's JSON dump (_dump_fr_trace_json)
  (modes: ddp, fsdp, and with --modes hsdp at 4 ranks FSDP2 on a 2x2 mesh: collectives on
  process groups of 2 ranks, replicate [0, 2], [1, 3] and shard [0, 1], [2, 3])
  info.json                        torch version, command, the DDP buckets DDP reported

The traces are trimmed here (--keep-all skips it) so that the committed fixtures stay in
kilobytes: Kineto keeps its metadata, the ProfilerStep#N events and every event of a
collective (record_param_comms, c10d::*, gloo:*); the execution trace keeps the nodes of
the collectives (record_param_comms, c10d::*) and their parents' ids; the flight recorder's
entries drop their stack frames. What is dropped is what collbench's importers ignore.

PyPI's Linux torch wheel needs its nvidia-* dependencies to import even on CPU (libtorch
links libnccl, libcusparseLt, libnvshmem, libcufile), so the install is the full one
(about 3 GB of wheels, 5.4 GB installed; about 35 s on a fast mirror). `pip install torch
--no-deps` plus the pure-Python dependencies fails at import (`libcufile.so.0`, then an
NCCL symbol), and the CPU-only wheel index is not on PyPI.

  python3 scripts/make_torch_traces.py --out /tmp/torch-traces             # latest torch
  python3 scripts/make_torch_traces.py --torch 2.6.0 --venv /tmp/t26 --out /tmp/t26-traces
"""
import argparse
import json
import os
import socket
import subprocess
import sys
import time

MODES = ("ddp", "fsdp")  # and "hsdp" (--modes hsdp, 4 ranks): FSDP2 on a 2x2 mesh
BUCKET_CAP_MB = 0.25  # DDP: several buckets from the ~1.1 MiB model
STEPS = 3  # profiled steps (after one warmup step, so that DDP has rebuilt its buckets)
COMM_PREFIXES = ("record_param_comms", "c10d::", "gloo:", "ProfilerStep#", "nccl:")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# ---- installing -----------------------------------------------------------------------


def ensure_torch(args):
    """The python that has torch: --python, or the venv at --venv (made and filled if needed)."""
    if args.python:
        return args.python
    py = os.path.join(args.venv, "bin", "python")
    if not os.path.exists(py):
        subprocess.check_call([sys.executable, "-m", "venv", args.venv])
    spec = "torch" + ("==" + args.torch if args.torch else "")
    have = subprocess.run([py, "-c", "import torch; print(torch.__version__)"],
                          capture_output=True, text=True)
    wanted = args.torch and not have.stdout.strip().startswith(args.torch)
    if have.returncode != 0 or wanted:
        subprocess.check_call([py, "-m", "pip", "install", "--quiet", spec, "numpy"])
    return py


# ---- one rank (runs inside the venv) ----------------------------------------------------


def model(torch):
    # 5 layers of 256x256 + a head: 1.06 MiB of fp32 gradients in 12 tensors.
    layers = [torch.nn.Linear(64, 256), torch.nn.ReLU()]
    for _ in range(4):
        layers += [torch.nn.Linear(256, 256), torch.nn.ReLU()]
    layers += [torch.nn.Linear(256, 10)]
    return torch.nn.Sequential(*layers)


def trim_kineto(doc):
    keep = [e for e in doc.get("traceEvents", [])
            if isinstance(e.get("name"), str) and e["name"].startswith(COMM_PREFIXES)]
    doc["traceEvents"] = keep
    return doc


def trim_et(doc):
    nodes = doc.get("nodes", [])
    comm = [n for n in nodes
            if n.get("name", "").startswith(("record_param_comms", "c10d::"))]
    ids = {n["id"] for n in comm}
    # keep the root and the parents chain id (ctrl_deps) of each comm node for structure
    by_id = {n["id"]: n for n in nodes}
    for n in list(comm):
        p = by_id.get(n.get("ctrl_deps"))
        while p is not None and p["id"] not in ids:
            ids.add(p["id"])
            p = by_id.get(p.get("ctrl_deps"))
    doc["nodes"] = [n for n in nodes if n["id"] in ids]
    return doc


FR_FIELDS = ("profiling_name", "input_sizes", "input_dtypes", "output_sizes", "output_dtypes",
             "is_p2p", "process_group", "collective_seq_id", "time_created_ns", "duration_ms")


def trim_fr(doc):
    # Entries keep the fields collbench reads (docs/trace-format.md §8); the fixtures made
    # before the hsdp mode only dropped "frames".
    doc["entries"] = [{k: e[k] for k in FR_FIELDS if k in e} for e in doc.get("entries", [])]
    return doc


def rank_main(rank, world, mode, out, port, keep_all):
    import torch
    import torch.distributed as dist
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    os.environ.setdefault("TORCH_FR_BUFFER_SIZE", "2000")
    dist.init_process_group("gloo", rank=rank, world_size=world)
    torch.manual_seed(0)
    net = model(torch)
    info = {}
    if mode == "ddp":
        from torch.nn.parallel import DistributedDataParallel as DDP
        net = DDP(net, bucket_cap_mb=BUCKET_CAP_MB)
    elif mode == "hsdp":
        # HSDP: FSDP2 sharding within groups of 2 ranks, replicated across them (allreduce of
        # the sharded gradients): collectives on sub-groups of the job ([0, 1], [2, 3] shard;
        # [0, 2], [1, 3] replicate), the case cb_replay replays on sub-communicators.
        from torch.distributed.device_mesh import init_device_mesh
        from torch.distributed.fsdp import fully_shard
        if world % 2:
            raise SystemExit("hsdp needs an even number of ranks")
        mesh = init_device_mesh("cpu", (2, world // 2), mesh_dim_names=("replicate", "shard"))
        for layer in net:
            if isinstance(layer, torch.nn.Linear):
                fully_shard(layer, mesh=mesh)
        fully_shard(net, mesh=mesh)
        info["fsdp"] = f"fully_shard (FSDP2) on a 2 x {world // 2} mesh (replicate, shard)"
        info["mesh"] = mesh.mesh.tolist()  # rows: replicas; a row's ranks shard the model
    else:
        try:  # FSDP2
            from torch.distributed.fsdp import fully_shard
            for layer in net:
                if isinstance(layer, torch.nn.Linear):
                    fully_shard(layer)
            fully_shard(net)
            info["fsdp"] = "fully_shard (FSDP2), one unit per Linear"
        except ImportError:
            from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
            net = FSDP(net, device_id=torch.device("cpu"))
            info["fsdp"] = "FullyShardedDataParallel (FSDP1)"
    opt = torch.optim.SGD(net.parameters(), lr=0.01)
    x = torch.randn(32, 64)
    y = torch.randint(0, 10, (32,))

    def step():
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(net(x), y)
        loss.backward()
        opt.step()

    try:
        step()  # warmup: DDP rebuilds its buckets in backward order after the first step
    except (AttributeError, RuntimeError) as e:
        if mode != "fsdp" or "FSDP2" not in info.get("fsdp", ""):
            raise
        # FSDP2 before torch 2.7 needs accelerator streams: FSDP1 on CPU instead.
        from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
        torch.manual_seed(0)
        net = FSDP(model(torch), device_id=torch.device("cpu"))
        info["fsdp"] = f"FullyShardedDataParallel (FSDP1): fully_shard failed on CPU ({e})"
        opt = torch.optim.SGD(net.parameters(), lr=0.01)
        step()
    from torch.profiler import ExecutionTraceObserver, ProfilerActivity, profile, schedule
    folder = os.path.join(out, f"{mode}-w{world}")
    for fmt in ("kineto", "et", "fr"):
        os.makedirs(os.path.join(folder, fmt), exist_ok=True)
    name = f"rank{rank}.json"
    # Execution trace of one step.
    et_path = os.path.join(folder, "et", name)
    et = ExecutionTraceObserver()
    et.register_callback(et_path)
    et.start()
    step()
    et.stop()
    et.unregister_callback()
    # Profiler over STEPS steps.
    k_path = os.path.join(folder, "kineto", name)
    with profile(activities=[ProfilerActivity.CPU], record_shapes=True,
                 schedule=schedule(wait=0, warmup=0, active=STEPS, repeat=1),
                 on_trace_ready=lambda p: p.export_chrome_trace(k_path)) as prof:
        for _ in range(STEPS):  # each step is a ProfilerStep#N event
            step()
            prof.step()
    # Flight recorder (Gloo's instance), as JSON.
    fr_path = os.path.join(folder, "fr", name)
    try:
        from torch._C._distributed_c10d import _dump_fr_trace_json
        with open(fr_path, "wb") as f:
            f.write(_dump_fr_trace_json(backend="gloo"))
    except (ImportError, TypeError, RuntimeError) as e:
        info["flight_recorder"] = f"not produced: {e}"
        fr_path = None
    if mode == "ddp":  # the buckets DDP reports (bytes), rebuilt in backward order after step 1
        logging = net._get_ddp_logging_data()
        for key in ("bucket_sizes", "rebuilt_bucket_sizes"):
            info[key] = [int(s) for s in str(logging.get(key, "")).split(", ") if s]
        info["bucket_cap_mb"] = BUCKET_CAP_MB
    dist.barrier()
    dist.destroy_process_group()
    if not keep_all:
        for path, trim in ((k_path, trim_kineto), (et_path, trim_et), (fr_path, trim_fr)):
            if path and os.path.exists(path):
                with open(path) as f:
                    doc = json.load(f)
                with open(path, "w") as f:
                    json.dump(trim(doc), f, indent=None, separators=(",", ":"))
                    f.write("\n")
    if rank == 0:
        with open(os.path.join(folder, "info.json"), "w") as f:
            json.dump(info, f, indent=1)


def run_worker(args):
    import torch.multiprocessing as mp
    port = free_port()
    mp.spawn(rank_main, args=(args.world, args.mode, args.out, port, args.keep_all),
             nprocs=args.world, join=True)


# ---- driver ------------------------------------------------------------------------------


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True, help="folder for the traces")
    ap.add_argument("--venv", default="/tmp/cb_torch_venv", help="virtual environment for torch")
    ap.add_argument("--python", help="a python that already has torch (no install)")
    ap.add_argument("--torch", help="torch version to install (default: the newest)")
    ap.add_argument("--ranks", default="2,4", help="world sizes, comma-separated")
    ap.add_argument("--modes", default=",".join(MODES))
    ap.add_argument("--keep-all", action="store_true", help="do not trim the traces")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--world", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--mode", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        return run_worker(args)
    os.makedirs(args.out, exist_ok=True)
    py = ensure_torch(args)
    version = subprocess.check_output([py, "-c", "import torch; print(torch.__version__)"],
                                      text=True).strip()
    for world in [int(w) for w in args.ranks.split(",")]:
        for mode in args.modes.split(","):
            t0 = time.time()
            cmd = [py, os.path.abspath(__file__), "--worker", "--world", str(world),
                   "--mode", mode, "--out", args.out] + (["--keep-all"] if args.keep_all else [])
            subprocess.check_call(cmd, env=dict(os.environ, OMP_NUM_THREADS="1"))
            print(f"{mode} x{world}: {time.time() - t0:.1f} s", file=sys.stderr)
    meta = {"torch": version, "python": sys.version.split()[0],
            "command": " ".join(["scripts/make_torch_traces.py"] + sys.argv[1:]),
            "bucket_cap_mb": BUCKET_CAP_MB, "profiled_steps": STEPS,
            "trimmed": not args.keep_all}
    with open(os.path.join(args.out, "made_by.json"), "w") as f:
        json.dump(meta, f, indent=1)
        f.write("\n")
    print(f"traces of torch {version} in {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
