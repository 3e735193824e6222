#!/usr/bin/env bash
# The floors beside the runs already committed on this VM today: the 60 interleaved
# launches of cb_allreduce --backend mpi,engine at 8 B, 64 KiB and 4 MiB of
# results/vm-20261127/verdict-check-launches (raw.tar.xz), against this folder's info.json.
# That folder left the tree with the other earlier runs (results/README.md, "Earlier runs"):
# its archive is read from git history where it is not checked out.
# Writes context.json and context.md (scripts/cbfloors.py) and context_summary.md (per
# series and size over the launches: the median time and the median, lowest and highest
# fraction of the floor).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
raw=results/vm-20261127/verdict-check-launches/raw.tar.xz
if [ -f "$repo/$raw" ]; then
  tar -xJf "$repo/$raw" -C "$tmp"
else
  git -C "$repo" show "9108515:$raw" | tar -xJf - -C "$tmp"
fi
mapfile -t files < <(find "$tmp" -name '*mpi-engine*.json' | sort)
python3 "$repo/scripts/cbfloors.py" "$here/info.json" "${files[@]}" --json "$here/context.json" \
  --md "$here/context.md"
python3 - "$here/context.json" "$here/context_summary.md" <<'PY'
import json, statistics, sys
doc = json.load(open(sys.argv[1]))
groups = {}
for r in doc["rows"]:
    groups.setdefault((r["bytes"], r["series"]), []).append(r)
lines = ["| size | series | launches | median time (us) | floor (us) | floor / time: median | lowest | highest |",
         "|---:|---|---:|---:|---:|---:|---:|---:|"]
for (b, s), rs in sorted(groups.items(), key=lambda kv: (kv[0][0], kv[0][1] != "engine")):
    fr = [r["fraction_of_floor"] for r in rs]
    size = f"{b >> 20} MiB" if b >= 1 << 20 else f"{b >> 10} KiB" if b >= 1024 else f"{b} B"
    lines.append(f"| {size} | {s} | {len(rs)} | {statistics.median(r['measured_us'] for r in rs):.3g} | "
                 f"{rs[0]['floor_us']:.3g} | {statistics.median(fr):.2f} | {min(fr):.2f} | {max(fr):.2f} |")
open(sys.argv[2], "w").write("\n".join(lines) + "\n")
PY
