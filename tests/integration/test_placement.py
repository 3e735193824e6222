"""Buffers that do not flatter (issue 36): --off-cache (IMB's -off_cache ring), --vary-data
(the data changes every iteration) and -u/--misalign, on collectives (blocking, non-blocking,
mpi and engine) and point to point, each with -c: every element checked, the JSON and the
header say what was on, bad values are refused with exit 2, and corruption is still caught."""
from cbtest import (case, check, check_corruption_caught, check_document, check_refused,
                    doubling, load_json)

LABELS = ('release', 'mpi')  # tests/labels.md (why not asan: there)

SIZES = ["-m", "4:16K", "-i", "12", "-x", "2"]
OPTION_SETS = {
    "off_cache": ["--off-cache", "256K"],
    "vary_data": ["--vary-data"],
    "misalign": ["-u", "3"],
    "all": ["--off-cache", "256K", "--vary-data", "-u", "4095"],
}
HEADERS = {"off_cache": "# Off-cache (--off-cache)", "vary_data": "# Varied data (--vary-data)",
           "misalign": "# Misaligned (-u "}


def check_run(env, bench, extra, which, name):
    out = env.path(f"{name}.json")
    r = env.ok(2, bench, [*SIZES, "-c", *extra, "-J", out])
    doc = load_json(out)
    check_document(doc, bench, 2, doubling(4, 16384))
    on = {k: k in which for k in HEADERS}
    opts = doc["options"]
    check(opts["off_cache"] is on["off_cache"], f"{name}: options.off_cache {opts['off_cache']}")
    check(opts["off_cache_bytes"] == (256 << 10 if on["off_cache"] else 0),
          f"{name}: options.off_cache_bytes {opts['off_cache_bytes']}")
    check(opts["vary_data"] is on["vary_data"], f"{name}: options.vary_data")
    misalign = 4095 if "4095" in extra else (3 if on["misalign"] else 0)
    check(opts["misalign_bytes"] == misalign, f"{name}: options.misalign_bytes")
    place = doc.get("buffer_placement")
    check(isinstance(place, dict), f"{name}: no buffer_placement: {sorted(doc)}")
    check(place["misalign_bytes"] == misalign, f"{name}: buffer_placement {place}")
    check((place["vary_data"] is not None) == on["vary_data"], f"{name}: {place}")
    if on["vary_data"]:
        check(place["vary_data"]["line_bytes"] == 64 and
              place["vary_data"]["timed"] == (bench == "latency"), f"{name}: {place}")
    if on["off_cache"]:
        oc = place["off_cache"]
        check(oc["target_bytes"] == 256 << 10 and oc["source"].startswith("--off-cache"),
              f"{name}: {oc}")
        check(oc["recv_ring_bytes"] >= 256 << 10, f"{name}: ring smaller than its target: {oc}")
    else:
        check(place["off_cache"] is None, f"{name}: {place}")
    for key, header in HEADERS.items():
        check((header in r.out) == on[key], f"{name}: header {header!r} on={on[key]}:\n{r.out}")
    for rec in doc["results"]:
        v = rec["validation"]
        check(v["enabled"] and v["passed"] and v["wrong_elements"] == 0,
              f"{name} {rec['bytes']} B: validation {v}")
        slots = rec.get("off_cache_slots")
        check((slots is not None) == on["off_cache"], f"{name}: off_cache_slots {slots}")
        if slots:
            stride = (rec["bytes"] + 63) // 64 * 64 + 64  # a line more than the message
            want = max(1, -(-(256 << 10) // stride))
            check(slots["recv"] == want, f"{name} {rec['bytes']} B: {slots}, expected {want}")


@case
def placement_collectives_json_and_validation(env):
    for key, extra in OPTION_SETS.items():
        which = set(OPTION_SETS) - {"all"} if key == "all" else {key}
        check_run(env, "allreduce", extra, which, f"allreduce.{key}")
    all_on = set(OPTION_SETS) - {"all"}
    check_run(env, "allreduce", [*OPTION_SETS["all"], "--backend", "engine"], all_on,
              "allreduce.engine.all")
    check_run(env, "iallreduce", OPTION_SETS["all"], all_on, "iallreduce.all")
    check_run(env, "bcast", [*OPTION_SETS["all"], "-k", "rotate"], all_on, "bcast.all")


@case
def placement_pt2pt_json_and_validation(env):
    for key, extra in OPTION_SETS.items():
        which = set(OPTION_SETS) - {"all"} if key == "all" else {key}
        check_run(env, "latency", extra, which, f"latency.{key}")
    r = env.ok(2, "bw", ["-m", "1:4K", "-i", "4", "-x", "1", "-c", *OPTION_SETS["all"]])
    check("Fail" not in r.out, f"cb_bw with every option:\n{r.out}")


@case
def placement_still_catches_corruption(env):
    for bench in ("allreduce", "latency"):
        check_corruption_caught(env, bench, OPTION_SETS["all"])


@case
def placement_bad_values_refused(env):
    for bad in ("4096", "-1", "abc", "1.5"):
        check_refused(env.run(2, "allreduce", ["-u", bad]), f"-u {bad}", "-u/--misalign")
    for bad in ("0", "abc", "-5"):
        check_refused(env.run(2, "latency", ["--off-cache", bad]), f"--off-cache {bad}",
                      "--off-cache must be a size")
    check_refused(env.run(2, "allreduce", ["--off-cache", "4000000G"]), "huge ring",
                  "cannot fit")
    check_refused(env.run(2, "allreduce", ["--off-cache", "600M", "-m", "4:4"]),
                  "ring over -M", "more than -M")
    check_refused(env.run(2, "put_latency", ["--vary-data"]), "one-sided", "does not take")
    check_refused(env.run(2, "barrier", ["--off-cache"]), "barrier", "moves no data")
    check_refused(env.run(2, "allreduce", ["--vary-data", "--blocking", "0"]), "blocking 0",
                  "--blocking 3")
