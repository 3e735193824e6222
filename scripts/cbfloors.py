#!/usr/bin/env python3
"""The floors cb_info measures (collbench.info/1 "floors"; docs/plots.md, "cb_info's
floors"), for the scripts that put them beside measurements: plot.py (the latency floor
line), compare_mpis.py and verdict_check.py (a floor column), and this script's own table.

  cbfloors.py INFO.json RESULT.json ... [--sizes 8,1M,...] [--json OUT] [--md OUT]

For every series of the result files (one per file; an interleaved run's: one per
--backend series) and size with a floor (allreduce, bcast, alltoall, barrier and
cb_latency, 2 ranks, the host cb_info ran on): the measured time (the record's
latency_us.avg: the median pass's for a --repeat run), the floor and the fraction of it
reached (floor / measured: 1 = at the floor), and for bandwidth the bus bandwidth the
floor allows (the record's busbw x measured / floor). Writes Markdown to stdout (or
--md), and --json: {"schema": "collbench.floors_report/1", ...}. Exit 0, or 2 with one
line on stderr for unusable input (not an info document, floors off or failed, no
result with a floor).

The floor of a collective at N bytes: latency floor = k hand-offs (the info's
collectives[].handoffs x handoff.one_way_ns); bandwidth floor = (bytes read + bytes
written per rank) / (2 x one thread's memcpy rate at N: the best at the largest measured
size up to N, else the smallest, or at any larger size); floor = the larger. The same rule
cb_info applies at its own sizes."""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cbjson  # noqa: E402

PROG = "cbfloors.py"
INFO_SCHEMA = "collbench.info/1"


def read_info(path):
    """The floors block of a cb_info document; cbjson.InputError when the file is not one or
    its floors were not measured."""
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except OSError as e:
        raise cbjson.InputError(f"{path}: cannot read: {e.strerror}") from None
    except ValueError as e:
        raise cbjson.InputError(f"{path}: not valid JSON: {e}") from None
    if not isinstance(doc, dict) or doc.get("schema") != INFO_SCHEMA:
        got = doc.get("schema") if isinstance(doc, dict) else type(doc).__name__
        raise cbjson.InputError(f"{path}: not a cb_info document: schema is {got!r}, expected "
                                f"{INFO_SCHEMA!r}")
    floors = doc.get("floors")
    if not isinstance(floors, dict):
        raise cbjson.InputError(f"{path}: no floors (cb_info older than --floors)")
    if floors.get("mode") == "off":
        raise cbjson.InputError(f"{path}: floors not measured (cb_info --floors off)")
    if "error" in floors:
        raise cbjson.InputError(f"{path}: floors failed: {floors['error']}")
    floors = dict(floors)
    floors["host"] = cbjson.text(doc, "environment", "hostname", default="?")
    return floors


def entry(floors, coll):
    """The collectives[] entry of `coll` (None when it has none)."""
    return next((c for c in floors.get("collectives", []) if c.get("coll") == coll), None)


def memcpy_rate(floors, nbytes, key="memcpy_GBps"):
    """(GB/s copied, row size): the best of one thread's memcpy at the largest measured
    size up to nbytes (else the smallest) and at every larger size (a larger copy that runs
    faster, as glibc's non-temporal stores do beyond ~3/4 of the LLC, shows a method a copy
    of nbytes can use too). cb_info's rule (src/info/floors.cpp, rate_row). key
    "both_cpus_memcpy_GBps": a thread's rate while the other CPU copies too, among the rows
    that have it; (None, None) when none has (cb_info before it measured both CPUs)."""
    rows = sorted((r for r in floors["bandwidth"]["rows"] if key in r), key=lambda r: r["bytes"])
    if not rows:
        return None, None
    start = max([i for i, r in enumerate(rows) if r["bytes"] <= nbytes], default=0)
    row = max(rows[start:], key=lambda r: r[key])
    return row[key], row["bytes"]


def at(floors, coll, nbytes):
    """{latency_floor_us, bandwidth_floor_us, floor_us, read_bytes, write_bytes, handoffs,
    memcpy_GBps[, both_cpus_memcpy_GBps, both_cpus_floor_us]} of `coll` at nbytes, or None (no
    floor for it, or no hand-off measured)."""
    e = entry(floors, coll)
    if e is None or e.get("latency_floor_us") is None:
        return None
    read = e["read_bytes_per_byte"] * nbytes
    write = e["write_bytes_per_byte"] * nbytes
    rate, _ = memcpy_rate(floors, max(nbytes, 1))
    bw = (read + write) / (2.0 * rate * 1e9) * 1e6 if read + write and rate > 0 else 0.0
    lat = e["latency_floor_us"]
    out = {"handoffs": e["handoffs"], "latency_floor_us": lat, "bandwidth_floor_us": bw,
           "floor_us": max(lat, bw), "read_bytes": read, "write_bytes": write,
           "memcpy_GBps": rate}
    both, _ = memcpy_rate(floors, max(nbytes, 1), "both_cpus_memcpy_GBps")
    if both:  # both ranks copy at once: each at what a thread gets while the other copies
        bw2 = (read + write) / (2.0 * both * 1e9) * 1e6 if read + write else 0.0
        out.update(both_cpus_memcpy_GBps=both, both_cpus_floor_us=max(lat, bw2))
    return out


def applies(floors, doc):
    """Whether the floors (2 ranks, their host) apply to a result document."""
    env = doc.get("environment") if isinstance(doc.get("environment"), dict) else {}
    return (env.get("nranks") == 2 and env.get("hostname") == floors["host"]
            and env.get("nodes", 1) == 1)


def latency_line(floors, coll):
    """(microseconds, k) of the latency floor of `coll`, or None."""
    e = entry(floors, coll)
    if e is None or e.get("latency_floor_us") is None:
        return None
    return e["latency_floor_us"], e["handoffs"]


def one_way_text(floors):
    """'173 ns (CPUs 0 and 1, median of 21)' or why there is none."""
    h = floors.get("handoff", {})
    if h.get("one_way_ns") is None:
        return "none: " + h.get("unavailable", "unknown")
    cpus = h.get("ranks_cpus", ["?", "?"])
    return (f"{h['one_way_ns']:.0f} ns (CPUs {cpus[0]} and {cpus[1]}, median of "
            f"{h.get('samples', '?')}, {floors.get('mode', '?')} mode)")


# --- the table -----------------------------------------------------------------------------

def parse_sizes(text):
    out = []
    for part in text.split(","):
        part = part.strip()
        mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(part[-1:].upper(), 1)
        digits = part[:-1] if mult > 1 else part
        if not digits.isdigit():
            raise ValueError(f"--sizes: '{part}' is not a size (8, 64K, 1M)")
        out.append(int(digits) * mult)
    return out


def series_records(doc):
    """[(series name, records)]: an interleaved run's records by their 'series', else one."""
    groups = {}
    for r in doc["results"]:
        name = r.get("series") if isinstance(r.get("series"), str) else \
            cbjson.text(doc, "backend", "name")
        groups.setdefault(name, []).append(r)
    return list(groups.items())


def report(floors, loaded, sizes=None):
    rows = []
    for path, doc in loaded:
        bench = cbjson.text(doc, "benchmark", "name")
        if entry(floors, bench) is None or not applies(floors, doc):
            continue
        for name, records in series_records(doc):
            for r in sorted(records, key=lambda r: cbjson.number(r, "bytes") or 0):
                b = int(cbjson.number(r, "bytes") or 0)
                t = cbjson.number(r, "latency_us", "avg")
                if t is None or t <= 0 or (sizes and b not in sizes):
                    continue
                f = at(floors, bench, b)
                if f is None:
                    continue
                busbw = cbjson.number(r, "busbw_GBps")
                rows.append({
                    "file": os.path.basename(path), "benchmark": bench, "series": name,
                    "library": cbjson.text(doc, "backend", "library"), "bytes": b,
                    "measured_us": t, **f, "fraction_of_floor": f["floor_us"] / t,
                    "fraction_of_both_cpus_floor":
                        f["both_cpus_floor_us"] / t if "both_cpus_floor_us" in f else None,
                    "busbw_GBps": busbw,
                    "busbw_floor_GBps": busbw * t / f["floor_us"] if busbw else None})
    return rows


def markdown(floors, info_path, rows):
    lines = [f"Floors from `{os.path.basename(info_path)}` (cb_info on {floors['host']}): "
             f"one-way hand-off {one_way_text(floors)}; bandwidth floors at one thread's "
             "memcpy rate (docs/plots.md, \"cb_info's floors\"). `floor / measured`: the "
             "fraction of the floor reached (1 = at the floor).", "",
             "| benchmark | series | size | measured (us) | floor (us) | k hand-offs (us) | "
             "bandwidth floor (us) | floor / measured | both-CPUs floor / measured | "
             "busbw (GB/s) | busbw at floor (GB/s) |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        bw = f"{r['busbw_GBps']:.2f}" if r["busbw_GBps"] else ""
        bwf = f"{r['busbw_floor_GBps']:.2f}" if r["busbw_floor_GBps"] else ""
        both = r.get("fraction_of_both_cpus_floor")
        lines.append(f"| {r['benchmark']} | {r['series']} | {cbjson.size_text(r['bytes'])} | "
                     f"{r['measured_us']:.3g} | {r['floor_us']:.3g} | "
                     f"{r['handoffs']} = {r['latency_floor_us']:.3g} | "
                     f"{r['bandwidth_floor_us']:.3g} | {r['fraction_of_floor']:.2f} | "
                     f"{'' if both is None else f'{both:.2f}'} | {bw} | {bwf} |")
    return "\n".join(lines) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(prog=PROG, description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("info", metavar="INFO.json", help="cb_info -J's document")
    ap.add_argument("files", nargs="+", metavar="RESULT.json")
    ap.add_argument("--sizes", help="only these message sizes (8,64K,1M)")
    ap.add_argument("--json", metavar="OUT", help="write the rows as JSON")
    ap.add_argument("--md", metavar="OUT", help="write the Markdown table here, not stdout")
    ap.add_argument("--skip-invalid", action="store_true",
                    help="warn about and leave out result files that are not usable")
    args = ap.parse_args(argv)
    try:
        sizes = parse_sizes(args.sizes) if args.sizes else None
        floors = read_info(args.info)
        loaded = cbjson.load_all(args.files, args.skip_invalid, PROG)
    except (cbjson.InputError, ValueError) as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return 2
    rows = report(floors, loaded, sizes)
    if not rows:
        print(f"{PROG}: error: no result with a floor: 2-rank runs of allreduce, bcast, "
              f"alltoall, barrier or latency on {floors['host']} (cb_info's host)",
              file=sys.stderr)
        return 2
    md = markdown(floors, args.info, rows)
    try:
        if args.json:
            with open(args.json, "w", encoding="utf-8") as f:
                json.dump({"schema": "collbench.floors_report/1", "info": args.info,
                           "host": floors["host"], "mode": floors.get("mode"),
                           "one_way_ns": floors["handoff"].get("one_way_ns"),
                           "handoff": floors["handoff"], "rows": rows}, f, indent=1)
                f.write("\n")
        if args.md:
            with open(args.md, "w", encoding="utf-8") as f:
                f.write(md)
        else:
            sys.stdout.write(md)
    except OSError as e:
        print(f"{PROG}: error: {e.filename}: cannot write: {e.strerror}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
