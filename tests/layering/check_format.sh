#!/usr/bin/env bash
# Fails, naming the files, when a C++ or CUDA source under src/ or tests/ is not formatted
# as .clang-format says; exit 77 (skipped) without clang-format 14. The version is pinned:
# another clang-format formats some constructs differently.
#   tests/layering/check_format.sh REPO_ROOT
set -uo pipefail
root=${1:?usage: check_format.sh REPO_ROOT}
fmt=""
for c in clang-format-14 clang-format; do
  if command -v "$c" >/dev/null && "$c" --version | grep -q "version 14\."; then
    fmt=$c
    break
  fi
done
if [ -z "$fmt" ]; then
  echo "SKIP: clang-format 14 is not installed (scripts/install_deps.sh installs clang-format-14)"
  exit 77
fi
cd "$root" || exit 2
mapfile -t files < <(find src tests \( -name '*.cpp' -o -name '*.hpp' -o -name '*.cu' -o -name '*.cuh' -o -name '*.h' \) | sort)
bad=()
for f in "${files[@]}"; do
  "$fmt" --dry-run --Werror "$f" >/dev/null 2>&1 || bad+=("$f")
done
if ((${#bad[@]})); then
  echo "not formatted as .clang-format says (run: $fmt -i FILE):"
  printf '  %s\n' "${bad[@]}"
  exit 1
fi
echo "format_check: ${#files[@]} files formatted as .clang-format says ($fmt)"
