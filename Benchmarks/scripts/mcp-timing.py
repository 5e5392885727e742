#!/usr/bin/env python3
"""Times `slackindex mcp`: start-up to the first answer, and search calls against the CLI's `search`.

usage: mcp-timing.py BINARY DB USER QUERY [RUNS]

Start-up: from spawning `BINARY --db DB mcp --as USER` to the answer of the first tool call (`initialize`, then
`archive_facts`), RUNS times (default 10); the median and the worst are printed. Search: the same QUERY as an MCP
`search` call in one running server (the call's round trip) and as `BINARY --db DB search QUERY --tz UTC` (the
whole process), RUNS times each, medians printed. Newline-delimited JSON-RPC on the pipes, as MCP's stdio
transport frames it.
"""
import json
import statistics
import subprocess
import sys
import time

binary, db, user, query = sys.argv[1:5]
runs = int(sys.argv[5]) if len(sys.argv) > 5 else 10


def request(process, ident, method, params):
    process.stdin.write(json.dumps({"jsonrpc": "2.0", "id": ident, "method": method, "params": params}) + "\n")
    process.stdin.flush()
    while True:
        answer = json.loads(process.stdout.readline())
        if answer.get("id") == ident:
            if "error" in answer or answer.get("result", {}).get("isError"):
                sys.exit(f"{method} failed: {answer}")
            return answer


def start():
    process = subprocess.Popen(
        [binary, "--db", db, "mcp", "--as", user], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    request(process, 1, "initialize", {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "mcp-timing", "version": "1"}})
    process.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")
    process.stdin.flush()
    return process


def stop(process):
    process.stdin.close()
    process.wait(timeout=10)


startups = []
for _ in range(runs):
    began = time.perf_counter()
    process = start()
    request(process, 2, "tools/call", {"name": "archive_facts", "arguments": {}})
    startups.append((time.perf_counter() - began) * 1000)
    stop(process)

process = start()
calls = []
for index in range(runs + 1):
    began = time.perf_counter()
    request(process, 10 + index, "tools/call", {"name": "search", "arguments": {"query": query}})
    if index > 0:  # the first call warms the page cache, as the CLI's runs below warm each other
        calls.append((time.perf_counter() - began) * 1000)
stop(process)

cli = []
for _ in range(runs):
    began = time.perf_counter()
    subprocess.run([binary, "--db", db, "search", query, "--tz", "UTC"], stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, check=False)
    cli.append((time.perf_counter() - began) * 1000)

print(json.dumps({
    "startup_to_first_answer_ms": {"median": round(statistics.median(startups), 1), "max": round(max(startups), 1)},
    "mcp_search_call_ms": {"median": round(statistics.median(calls), 1)},
    "cli_search_ms": {"median": round(statistics.median(cli), 1)},
    "runs": runs,
}))
