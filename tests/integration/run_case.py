#!/usr/bin/env python3
"""Runs one integration case by name (ctest calls this once per case), or lists them."""
import argparse
import importlib
import pathlib
import shutil
import sys
import tempfile
import traceback

sys.path.insert(0, str(pathlib.Path(__file__).parent))
import cbtest  # noqa: E402

for module in sorted(pathlib.Path(__file__).parent.glob("test_*.py")):
    importlib.import_module(module.stem)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bindir", required=True)
    ap.add_argument("--mpirun", default="mpirun")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("case", nargs="?")
    a = ap.parse_args()
    if a.list:  # for CMake: NAME=LABEL,LABEL;...
        print(";".join(f"{n}={','.join(cbtest.LABELS[n])}" for n in sorted(cbtest.CASES)))
        return 0
    if a.case not in cbtest.CASES:
        print(f"unknown case {a.case}", file=sys.stderr)
        return 2
    work = tempfile.mkdtemp(prefix=f"cb_{a.case}_")
    try:
        result = cbtest.CASES[a.case](cbtest.Env(a.bindir, a.mpirun, work))
    except cbtest.Failure as e:
        print(f"FAILED: {e}", file=sys.stderr)
        return 1
    except Exception:
        traceback.print_exc()
        return 1
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if isinstance(result, str) and result.startswith("SKIP"):
        print(result)
        return 77  # ctest SKIP_RETURN_CODE
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
