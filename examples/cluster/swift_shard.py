#!/usr/bin/env python3
"""shard.py's command line, run by `typingd-cluster shard` (the Swift shard, engine
in-process): for check.sh and faults.sh, `SHARD=examples/cluster/swift_shard.py`.
The binary: $TYPINGD_CLUSTER, else cluster/.build/release/typingd-cluster."""
import os
import sys

root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
binary = os.environ.get("TYPINGD_CLUSTER") or os.path.join(root, "cluster", ".build", "release", "typingd-cluster")
os.execv(binary, [binary, "shard"] + sys.argv[1:])
