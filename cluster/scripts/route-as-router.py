#!/usr/bin/env python3
"""Runs `typingd-cluster route` in place of examples/cluster/router.py, for the
example's harness, which starts its router as `python WATCH OPTIONS...`:

    ROUTER=cluster/scripts/route-as-router.py examples/cluster/faults.sh steady

The binary: $TYPINGD_CLUSTER, else cluster/.build/release/typingd-cluster, else
the debug build."""
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
binary = os.environ.get("TYPINGD_CLUSTER")
if not binary:
    for kind in ("release", "debug"):
        binary = os.path.join(here, "..", ".build", kind, "typingd-cluster")
        if os.path.exists(binary):
            break
os.execv(binary, [binary, "route"] + sys.argv[1:])
