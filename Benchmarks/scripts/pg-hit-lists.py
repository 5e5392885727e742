#!/usr/bin/env python3
"""Date-sorted hit lists of the same queries on two archives of one export (SQLite and PostgreSQL): equal?

Usage: pg-hit-lists.py ARCHIVE_A ARCHIVE_B (paths or postgresql:// URLs); $SLACKINDEX names the binary."""
import json, os, subprocess, sys
B = os.environ.get("SLACKINDEX", ".build/release/slackindex")
a, b = sys.argv[1], sys.argv[2]
queries = ["deploy", "exception", "python", '"data descriptor"', "class -python", "iter*", "the", "error in:#general",
           "release after:2024-01-01", "has:link merged", "has:reaction thanks", "is:thread deadline", "東京",
           "meeting before:2023-06-01", "migration -rollback", "bug fix", "descriptor*", "has:file", "sort", "cache miss"]
same = 0
for q in queries:
    for order in ["newest", "oldest"]:
        out = []
        for db in (a, b):
            r = subprocess.run([B, "--db", db, "search", q, "--sort", order, "--limit", "100", "--json"],
                               capture_output=True, text=True)
            lines = [json.loads(l) for l in r.stdout.splitlines() if l.strip()]
            hits = [(h.get("conversation_id") or h.get("channel"), h.get("ts")) for h in lines if "ts" in h]
            out.append((r.returncode, hits))
        ok = out[0] == out[1]
        same += ok
        if not ok:
            print("DIFFER", q, order, out[0][0], out[1][0], len(out[0][1]), len(out[1][1]))
print(f"{same} of {2*len(queries)} hit lists equal (up to 100 hits each)")
