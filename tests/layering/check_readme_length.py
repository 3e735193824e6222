#!/usr/bin/env python3
"""README.md is the front door (issue 38): at most 200 lines; the rest lives in docs/ by
topic. Exit 1, naming the count, when it grows past that.

  check_readme_length.py REPO_ROOT"""
import os
import sys

LIMIT = 200


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..")
    path = os.path.join(root, "README.md")
    with open(path) as f:
        n = len(f.read().splitlines())
    if n > LIMIT:
        print(f"check_readme_length.py: README.md has {n} lines, more than {LIMIT}: move the "
              "detail to docs/ (docs/usage.md, docs/methodology.md, docs/development.md, ...)",
              file=sys.stderr)
        return 1
    print(f"check_readme_length.py: README.md has {n} lines (at most {LIMIT})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
