#!/usr/bin/env python3
"""Fails, naming the tests, when a ctest test of the build lacks its labels (tests/labels.md):
at least one stage label and exactly one kind label, and no label outside the vocabulary.
Reads `ctest --show-only=json-v1`, so it sees every test as ctest will run it, whichever
CMakeLists.txt or case module defined it.
  check_labels.py CTEST BUILD_DIR"""
import json
import os
import subprocess
import sys

# The one vocabulary: the integration cases' registry declares it (tests/labels.md).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
from cbtest import KIND_LABELS, OTHER_LABELS, STAGE_LABELS  # noqa: E402

STAGES, KINDS, OTHERS = set(STAGE_LABELS), set(KIND_LABELS), set(OTHER_LABELS)


def problems(doc):
    out = []
    for test in doc.get("tests", []):
        labels = []
        for prop in test.get("properties", []):
            if prop.get("name") == "LABELS":
                labels = prop.get("value") or []
        name = test.get("name")
        unknown = sorted(set(labels) - STAGES - KINDS - OTHERS)
        kinds = [l for l in labels if l in KINDS]
        if not any(l in STAGES for l in labels):
            out.append(f"{name}: no stage label (one of {sorted(STAGES)}); labels {labels}")
        if len(kinds) != 1:
            out.append(f"{name}: {len(kinds)} kind labels {kinds}, expected one of {sorted(KINDS)}")
        if unknown:
            out.append(f"{name}: unknown labels {unknown}")
    return out


def main():
    ctest, build = sys.argv[1], sys.argv[2]
    p = subprocess.run([ctest, "--test-dir", build, "--show-only=json-v1"], capture_output=True,
                       text=True, timeout=120)
    if p.returncode != 0:
        print(f"check_labels: ctest --show-only failed: {p.stderr}", file=sys.stderr)
        return 1
    doc = json.loads(p.stdout)
    bad = problems(doc)
    if bad:
        print("tests without their labels (tests/labels.md):\n  " + "\n  ".join(bad))
        return 1
    counts = {}
    for test in doc["tests"]:
        for prop in test.get("properties", []):
            if prop.get("name") == "LABELS":
                for l in prop["value"]:
                    counts[l] = counts.get(l, 0) + 1
    print(f"check_labels: {len(doc['tests'])} tests labelled; " +
          ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    # The check must be able to fail: a test without labels is refused.
    assert problems({"tests": [{"name": "x", "properties": []}]}), "an unlabelled test passed"
    return 0


if __name__ == "__main__":
    sys.exit(main())
