#!/usr/bin/env python3
"""results/ stays curated data (issue 38): at most 300 files and 10 MiB.

  check_results_size.py REPO [--max-files 300] [--max-bytes 10485760]

Counts what git tracks under REPO/results (`git ls-files`, sizes of the working tree's
files), or every file of a walk of REPO/results where git cannot answer (an export without
.git). Exit 1, naming the largest folders, where either bound is passed; earlier runs belong
in git history (results/README.md, "Earlier runs"), not in the tree."""
import argparse
import os
import subprocess
import sys

MAX_FILES = 300
MAX_BYTES = 10 << 20


def tracked(repo):
    """Paths under results/ relative to repo, from git; None where git cannot say."""
    try:
        p = subprocess.run(["git", "-C", repo, "ls-files", "-z", "--", "results"],
                           capture_output=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if p.returncode != 0:
        return None
    return [x for x in p.stdout.decode("utf-8", "replace").split("\0") if x]


def walked(repo):
    out = []
    for d, _, files in os.walk(os.path.join(repo, "results")):
        out += [os.path.relpath(os.path.join(d, f), repo) for f in files]
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("repo")
    ap.add_argument("--max-files", type=int, default=MAX_FILES)
    ap.add_argument("--max-bytes", type=int, default=MAX_BYTES)
    a = ap.parse_args()
    paths = tracked(a.repo)
    how = "git ls-files results"
    if paths is None:
        paths, how = walked(a.repo), "a walk of results/"
    sizes = {}
    for rel in paths:
        full = os.path.join(a.repo, rel)
        if os.path.isfile(full):  # a tracked file deleted in the tree counts for nothing
            sizes[rel] = os.path.getsize(full)
    files, total = len(sizes), sum(sizes.values())
    print(f"check_results_size.py: {how}: {files} files, {total / (1 << 20):.2f} MiB "
          f"(bounds: {a.max_files} files, {a.max_bytes / (1 << 20):g} MiB)")
    if files <= a.max_files and total <= a.max_bytes:
        return 0
    per_folder = {}
    for rel, size in sizes.items():
        parts = rel.split("/")
        key = "/".join(parts[:3]) if len(parts) > 3 else "/".join(parts[:2])
        n, b = per_folder.get(key, (0, 0))
        per_folder[key] = (n + 1, b + size)
    print("check_results_size.py: results/ is over its bounds; the largest folders:",
          file=sys.stderr)
    for key, (n, b) in sorted(per_folder.items(), key=lambda kv: -kv[1][1])[:10]:
        print(f"  {key}: {n} files, {b / (1 << 20):.2f} MiB", file=sys.stderr)
    print("Keep one reference run per machine kind (pack raw documents into a .tar.xz its "
          "scripts read); earlier runs stay in git history (results/README.md).",
          file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
