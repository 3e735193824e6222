#!/usr/bin/env python3
"""Layering check of src/ (in the spirit of LLVM's and Chromium's include checks).

Usage: check_layers.py [REPO_ROOT]     (default: two folders up from this script)

Checks, for every .hpp/.h/.cpp/.cu/.cuh/.in file under src/:
  * each `#include "..."` (paths relative to src/) resolves to a file in src/ or to the
    generated config.hpp, and names a header of the file's own layer or a lower one;
  * the top-level benchmark folders do not include each other;
  * the plain-logic files of dl_patterns include only core and each other;
  * <mpi.h>/<mpi-ext.h>, <cuda*.h> and <nccl.h> appear only where SYSTEM_HEADERS allows;
and, for the cb_* libraries of src/**/CMakeLists.txt (target_link_libraries calls), that
the link graph has no cycle and that each one links only libraries of its layer or lower.

Exit status 0 with a one-line summary when all passes; 1 with one line per violation.
Python 3 standard library only.
"""

import fnmatch
import os
import re
import sys

# ---------------------------------------------------------------------------------------
# THE LAYER TABLE: the one place that says what the layers are. Lowest first; a file may
# include headers of its own layer and of the layers before it, never of a later one.
# Each entry: (layer, folders under src/, cb_ CMake libraries of that layer). The folders
# of the last layer (the benchmarks) are siblings: each may include only itself and the
# layers below, never another of them. A cb_ target not listed belongs to the last layer.
# Files directly in src/ (config.hpp.in) count as ROOT_LAYER.
LAYERS = [
    ("core",     ["core"],     ["cb_core", "cb_flags"]),  # types, args, errors, registry
    ("gpu",      ["gpu"],      ["cb_gpu"]),               # buffers, devices, streams, kernels
    ("engine",   ["engine"],   ["cb_reduce_host", "cb_engine"]),  # collective engine
    ("backends", ["backends"], ["cb_backends"]),          # Backend, Control, make_backend
    ("harness",  ["harness"],  ["cb_harness"]),           # options, stats, report, bench_main
    # the benchmarks, and the engine preloaded into MPI programs
    ("top",      ["pt2pt", "collective", "dl_patterns", "info", "preload"], []),
]
ROOT_LAYER = "core"

# Generated headers an include may name, with the src/ file they are generated from.
GENERATED = {"config.hpp": "config.hpp.in",  # configure_file() into build/generated/
             "dl_patterns/et_def.pb.h": "dl_patterns/et_def.proto"}  # protoc (Chakra ET)

# System headers allowed only in some places: (what, regex on the header name,
# {layer: files (paths relative to src/, fnmatch patterns) allowed to include it}).
# A layer not named may include it anywhere; an empty list: nowhere in that layer.
SYSTEM_HEADERS = [
    ("MPI", r"mpi\.h|mpi-ext\.h", {
        "core": ["core/mpi_check.hpp",  # turns failed MPI calls into errors
                 "core/mpi_compat.hpp"],  # what differs between MPI implementations
        "gpu": [],
        "engine": ["engine/comm.hpp", "engine/comm.cpp",  # bootstrap
                   "engine/transport_mpi.hpp", "engine/transport_mpi.cpp",  # MPI transport
                   "engine/shm/node_shm.hpp", "engine/shm/node_shm.cpp",
                   # the MPI library's own collectives, types and version ("mpi" algorithm)
                   "engine/mpi_collective.*", "engine/mpi_half_op.*", "engine/mpi_library_info.*",
                   "engine/algos/mpi_passthrough.cpp"],
    }),
    ("CUDA", r"cuda.*", {  # cuda.h, cuda_runtime*.h, cuda_fp16.h, cudaTypedefs.h, ...
        # the host/device validation values take nvcc's half types (under __CUDACC__)
        "core": ["core/verify_values.hpp"],
        "engine": ["engine/executor_cuda.cpp"],  # the device executor
    }),
    ("NCCL", r"nccl\.h", {"core": [], "gpu": [], "engine": []}),
]

# dl_patterns' plain logic (what cb_dl_patterns and the preloaded libcb_record.so compile,
# neither linking more than core): it may include only core and these files.
PLAIN_FILES = [
    "dl_patterns/record.cpp", "dl_patterns/record_log.*", "dl_patterns/trace*",
    "dl_patterns/models.*", "dl_patterns/fusion.*",
    "dl_patterns/replay_plan.*", "dl_patterns/replay_stats.*",
]

SOURCE_EXTENSIONS = (".hpp", ".h", ".cpp", ".cu", ".cuh", ".in")
# ---------------------------------------------------------------------------------------

LAYER_NAMES = [name for name, _, _ in LAYERS]
RANK = {name: i for i, name in enumerate(LAYER_NAMES)}
FOLDER_LAYER = {folder: name for name, folders, _ in LAYERS for folder in folders}
TOP_LAYER = LAYER_NAMES[-1]
LIBRARY_LAYER = {lib: name for name, _, libs in LAYERS for lib in libs}

INCLUDE_RE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')


def layer_of_path(rel):
    """(layer, folder) of a path relative to src/; layer None for an unknown folder."""
    parts = rel.split("/")
    if len(parts) == 1:
        return ROOT_LAYER, ""
    return FOLDER_LAYER.get(parts[0]), parts[0]


def library_layer(target):
    return LIBRARY_LAYER.get(target, TOP_LAYER)


def below_or_same(layer):
    return ", ".join(LAYER_NAMES[: RANK[layer] + 1])


def matches(rel, patterns):
    return any(fnmatch.fnmatchcase(rel, p) for p in patterns)


def include_lines(path):
    """(line number, '<' or '"', name) for each #include outside block comments."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            lines = f.read().split("\n")
    except OSError:
        return
    in_comment = False
    for number, line in enumerate(lines, 1):
        visible = []
        i = 0
        while i < len(line):
            if in_comment:
                end = line.find("*/", i)
                if end < 0:
                    i = len(line)
                else:
                    in_comment = False
                    visible.append(" ")
                    i = end + 2
            else:
                start = line.find("/*", i)
                slashes = line.find("//", i)
                if start < 0 or (0 <= slashes < start):
                    visible.append(line[i:])
                    break
                visible.append(line[i:start])
                in_comment = True
                i = start + 2
        m = INCLUDE_RE.match("".join(visible))
        if m:
            yield number, m.group(1), m.group(2).strip()


def source_files(src):
    found = []
    for dirpath, dirnames, filenames in os.walk(src):
        dirnames.sort()
        for name in sorted(filenames):
            if name.endswith(SOURCE_EXTENSIONS):
                full = os.path.join(dirpath, name)
                found.append(os.path.relpath(full, src).replace(os.sep, "/"))
    return found


class Result:
    def __init__(self):
        self.violations = []  # ("file:line", message)
        self.files = 0
        self.project_includes = 0
        self.system_includes = 0
        self.libraries = set()
        self.links = 0

    def add(self, where, message):
        self.violations.append((where, message))


def check_project_include(res, rel, number, text, target):
    """src/`rel` includes src/`target` (an existing file)."""
    layer, folder = layer_of_path(rel)
    to_layer, to_folder = layer_of_path(target)
    where = f"src/{rel}:{number}"
    if to_layer is None:
        res.add(where, f"{text}: folder src/{to_folder}/ is not in the layer table "
                       f"(LAYERS in tests/layering/check_layers.py)")
    elif layer is None:
        pass  # reported once for the file
    elif RANK[to_layer] > RANK[layer]:
        res.add(where, f"{text}: header of layer '{to_layer}', above this file's layer "
                       f"'{layer}', which may include only: {below_or_same(layer)}")
    elif layer == TOP_LAYER and to_layer == TOP_LAYER and folder != to_folder:
        res.add(where, f"{text}: header of benchmark folder src/{to_folder}/, a sibling of "
                       f"src/{folder}/: benchmark folders may not include each other")
    elif matches(rel, PLAIN_FILES) and to_layer != "core" and not matches(target, PLAIN_FILES):
        res.add(where, f"{text}: header of layer '{to_layer}', but this file is dl_patterns' "
                       f"plain logic (PLAIN_FILES): it may include only core and the "
                       f"other plain files")


def check_system_include(res, rel, number, text, name):
    layer, _ = layer_of_path(rel)
    for what, pattern, rules in SYSTEM_HEADERS:
        if re.fullmatch(pattern, name) and layer in rules and not matches(rel, rules[layer]):
            allowed = rules[layer]
            why = (f"only in {', '.join('src/' + a for a in allowed)}" if allowed
                   else "nowhere")
            res.add(f"src/{rel}:{number}",
                    f"{text}: {what} header in layer '{layer}', where it is allowed {why}")


def check_includes(root, res):
    src = os.path.join(root, "src")
    for rel in source_files(src):
        res.files += 1
        layer, folder = layer_of_path(rel)
        if layer is None:
            res.add(f"src/{rel}:1", f"folder src/{folder}/ is not in the layer table "
                                    f"(LAYERS in tests/layering/check_layers.py)")
        here = os.path.dirname(rel)
        for number, delim, name in include_lines(os.path.join(src, rel)):
            text = f'#include "{name}"' if delim == '"' else f"#include <{name}>"
            target = os.path.normpath(name).replace(os.sep, "/")
            inside = not os.path.isabs(name) and not target.startswith("..")
            exists = inside and os.path.isfile(os.path.join(src, target))
            if delim == "<":
                # <core/types.hpp> still names a project header: check it as one.
                if exists and target.split("/")[0] in FOLDER_LAYER:
                    res.project_includes += 1
                    check_project_include(res, rel, number, text, target)
                else:
                    res.system_includes += 1
                    check_system_include(res, rel, number, text, name)
                continue
            res.project_includes += 1
            if name in GENERATED:
                if not os.path.isfile(os.path.join(src, GENERATED[name])):
                    res.add(f"src/{rel}:{number}",
                            f"{text}: generated from src/{GENERATED[name]}, which is missing")
                continue
            if exists:
                check_project_include(res, rel, number, text, target)
                continue
            beside = os.path.normpath(os.path.join(here, name)).replace(os.sep, "/")
            if here and not beside.startswith("..") and os.path.isfile(os.path.join(src, beside)):
                why = f'resolves only beside the file; write it relative to src/ ("{beside}")'
            else:
                why = "does not resolve to a file in src/ (paths are relative to src/)"
            res.add(f"src/{rel}:{number}", f"{text}: {why}")


# --- CMake ------------------------------------------------------------------------------

def strip_cmake_comments(text):
    """Blank out # comments (outside quotes), keeping offsets and line numbers."""
    out = []
    for line in text.split("\n"):
        quoted = False
        cut = len(line)
        for i, c in enumerate(line):
            if c == '"' and (i == 0 or line[i - 1] != "\\"):
                quoted = not quoted
            elif c == "#" and not quoted:
                cut = i
                break
        out.append(line[:cut] + " " * (len(line) - cut))
    return "\n".join(out)


def cmake_calls(text, command):
    """(offset, [arguments]) of each call of `command` (case-insensitive)."""
    for m in re.finditer(r"\b" + command + r"\s*\(", text, re.IGNORECASE):
        depth, i = 1, m.end()
        while i < len(text) and depth:
            depth += {"(": 1, ")": -1}.get(text[i], 0)
            i += 1
        args = [a.strip('"') for a in text[m.end(): i - 1].split()]
        yield m.start(), m.end(), i, args


def foreach_blocks(text):
    """(start, end, variable, items) of each foreach() with literal items."""
    tokens = sorted([(s, e, "foreach", a) for s, _, e, a in cmake_calls(text, "foreach")] +
                    [(s, e, "end", a) for s, _, e, a in cmake_calls(text, "endforeach")])
    stack, blocks = [], []
    for start, end, kind, args in tokens:
        if kind == "foreach":
            stack.append((start, args))
        elif stack:
            begin, args_open = stack.pop()
            if args_open:
                var, items = args_open[0], args_open[1:]
                if items[:1] == ["IN"]:
                    items = items[2:] if items[1:2] == ["ITEMS"] else None
                if items is not None:
                    blocks.append((begin, end, var, items))
    return blocks


def expand(tokens, offset, blocks):
    """The tokens with ${var} of every enclosing literal foreach() substituted."""
    variants = [tokens]
    for begin, end, var, items in blocks:
        if begin < offset < end and any("${" + var + "}" in t for v in variants for t in v):
            variants = [[t.replace("${" + var + "}", item) for t in v]
                        for v in variants for item in items]
    return variants


def link_graph(root):
    """{target: {dependency: 'file:line'}} of the cb_ targets of src/**/CMakeLists.txt."""
    graph = {}
    src = os.path.join(root, "src")
    for dirpath, dirnames, filenames in os.walk(src):
        dirnames.sort()
        if "CMakeLists.txt" not in filenames:
            continue
        path = os.path.join(dirpath, "CMakeLists.txt")
        rel = os.path.relpath(path, root).replace(os.sep, "/")
        with open(path, encoding="utf-8", errors="replace") as f:
            text = strip_cmake_comments(f.read())
        blocks = foreach_blocks(text)
        for start, _, _, args in cmake_calls(text, "target_link_libraries"):
            line = text.count("\n", 0, start) + 1
            for tokens in expand(args, start, blocks):
                if not tokens or not tokens[0].startswith("cb_"):
                    continue
                deps = graph.setdefault(tokens[0], {})
                for dep in tokens[1:]:
                    if dep.startswith("cb_"):
                        deps.setdefault(dep, f"{rel}:{line}")
    return graph


def find_cycles(graph):
    """One cycle (list of targets, first repeated last) per strongly connected component."""
    index, low, on_stack, stack, sccs = {}, {}, set(), [], []
    counter = [0]

    def visit(v):  # Tarjan
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, {})):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            scc = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                scc.append(w)
                if w == v:
                    break
            sccs.append(set(scc))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    cycles = []
    for scc in sccs:
        first = min(scc)
        if len(scc) == 1 and first not in graph.get(first, {}):
            continue
        # shortest path first -> ... -> first inside the component
        paths, seen = [[first]], set()
        while paths:
            path = paths.pop(0)
            nxt = [w for w in sorted(graph.get(path[-1], {})) if w in scc]
            if first in nxt:
                cycles.append(path + [first])
                break
            for w in nxt:
                if w not in seen:
                    seen.add(w)
                    paths.append(path + [w])
    return cycles


def check_cmake(root, res):
    graph = link_graph(root)
    for target, deps in sorted(graph.items()):
        res.libraries.add(target)
        res.libraries.update(deps)
        res.links += len(deps)
        layer = library_layer(target)
        for dep, where in sorted(deps.items()):
            if RANK[library_layer(dep)] > RANK[layer]:
                res.add(where, f"target_link_libraries({target} ... {dep}): {dep} is in "
                                  f"layer '{library_layer(dep)}', above {target}'s "
                                  f"'{layer}'; '{layer}' may link only: {below_or_same(layer)}")
    for cycle in find_cycles(graph):
        where = [graph[a][b] for a, b in zip(cycle, cycle[1:])]
        res.add(where[0], f"CMake link cycle: {' -> '.join(cycle)} "
                             f"(links at {', '.join(where)})")


def check(root):
    res = Result()
    if not os.path.isdir(os.path.join(root, "src")):
        res.add(root, "no src/ folder here")
        return res
    check_includes(root, res)
    check_cmake(root, res)
    return res


def main(argv):
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.abspath(argv[1] if len(argv) > 1 else os.path.join(here, "..", ".."))
    res = check(root)
    for where, message in res.violations:
        print(f"{where}: {message}")
    counts = (f"{res.files} files, {res.project_includes} project and {res.system_includes} "
              f"system includes, {len(res.libraries)} cb_ targets with {res.links} links")
    if res.violations:
        print(f"check_layers: FAILED: {len(res.violations)} violation(s) ({counts})")
        return 1
    print(f"check_layers: OK: {counts}; layers {' <- '.join(LAYER_NAMES)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
