#!/usr/bin/env python3
"""Reads a Chakra ET file as MLCommons Chakra's own jsonizer does (src/jsonizer/jsonizer.py):
its et_def.proto compiled for Python by protoc, its protolib's length-prefixed reader
(protolib.py beside this file, unchanged) and protobuf's MessageToJson; prints
{"metadata": GlobalMetadata, "nodes": [Node, ...]} as JSON, each collective with
"comm_type_name" (CollectiveCommType's name of its comm_type) added. Independent of collbench's C++
reader: tests/integration/test_replay.py (replay_chakra_reader) compares what it reads in a
file that cb_replay --export-trace wrote with collbench's own JSON export of the same plan.

Needs protoc (protobuf-compiler) and Python's protobuf (python3-protobuf); both come from
scripts/install_deps.sh. Exits 3, saying which, when one is missing.

  chakra_reader_check.py FILE.et [--proto et_def.proto]
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
PROTO = os.path.join(HERE, "..", "..", "..", "src", "dl_patterns", "et_def.proto")


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("et")
    ap.add_argument("--proto", default=PROTO)
    args = ap.parse_args()
    try:
        from google.protobuf.json_format import MessageToJson
    except ImportError as e:
        print(f"chakra_reader_check: Python's protobuf is not importable by {sys.executable} "
              f"({e}): scripts/install_deps.sh installs python3-protobuf", file=sys.stderr)
        return 3
    protoc = shutil.which("protoc")
    if not protoc:
        print("chakra_reader_check: protoc not found: scripts/install_deps.sh installs "
              "protobuf-compiler", file=sys.stderr)
        return 3
    with tempfile.TemporaryDirectory() as out:
        proto = os.path.abspath(args.proto)
        subprocess.check_call([protoc, f"--python_out={out}", "-I", os.path.dirname(proto),
                               proto])
        sys.path[:0] = [out, HERE]
        import et_def_pb2  # Chakra's schema, generated above
        from protolib import decodeMessage, openFileRd  # Chakra's reader
        trace = openFileRd(args.et)
        meta = et_def_pb2.GlobalMetadata()
        if not decodeMessage(trace, meta):
            print(f"chakra_reader_check: {args.et}: no GlobalMetadata", file=sys.stderr)
            return 1
        nodes = []
        node = et_def_pb2.Node()
        while decodeMessage(trace, node):  # the jsonizer's loop
            doc = json.loads(MessageToJson(node))
            for a in node.attr:  # comm_type's name in Chakra's enum, beside its number
                if a.name == "comm_type":
                    doc["comm_type_name"] = et_def_pb2.CollectiveCommType.Name(a.int64_val)
            nodes.append(doc)
        trace.close()
        json.dump({"metadata": json.loads(MessageToJson(meta)), "nodes": nodes}, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
