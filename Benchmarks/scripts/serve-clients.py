#!/usr/bin/env python3
"""Many clients at once, each with its own token: every client loops for SECONDS over two searches (a word of a
fixed list, 20 hits) and one history page (50), against a `serve` of ARCHIVE started here; prints each kind's HTTP
statuses and latency percentiles (of the answered ones) and the requests per second, as JSON (issue 51).

    Benchmarks/scripts/serve-clients.py BINARY ARCHIVE USER_ID CHANNEL_ID CLIENTS SECONDS

One address holds at most 32 connections (`serve`'s per-address limit): keep CLIENTS at 30 or fewer from one host.
"""
import json, subprocess, sys, threading, time, urllib.request, urllib.parse, statistics
binary, db, user, channel = sys.argv[1:5]
clients = int(sys.argv[5]); seconds = float(sys.argv[6])
words = ["deploy", "error", "the", "release", "meeting", "test", "build", "data", "python", "class"]
toks = [subprocess.check_output([binary, "--db", db, "token", "create", "--user", user, "--admin"], text=True).strip() for _ in range(clients)]
server = subprocess.Popen([binary, "--db", db, "serve", "--listen", "127.0.0.1:0", "--rate-limit", "100000/1", "--ui", "off"], stdout=subprocess.PIPE, text=True)
base = server.stdout.readline().split(" at ")[1].strip()
results = []
lock = threading.Lock()
def call(method, params, tok):
    data = urllib.parse.urlencode(params).encode()
    req = urllib.request.Request(base + method, data=data, headers={"Authorization": "Bearer " + tok})
    t = time.time()
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            r.read(); code = r.status
    except urllib.error.HTTPError as e:
        code = e.code
    return code, (time.time() - t) * 1000
def client(i):
    end = time.time() + seconds; n = 0
    while time.time() < end:
        n += 1
        if n % 3 == 0:
            code, ms = call("conversations.history", {"channel": channel, "limit": "50"}, toks[i]); kind = "history"
        else:
            code, ms = call("search.messages", {"query": words[(i + n) % len(words)], "count": "20"}, toks[i]); kind = "search"
        with lock: results.append((kind, code, ms))
threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
start = time.time()
for t in threads: t.start()
for t in threads: t.join()
elapsed = time.time() - start
server.terminate()
out = {"clients": clients, "seconds": round(elapsed, 1), "requests_per_s": round(len(results) / elapsed, 1)}
for kind in ["search", "history"]:
    rows = [r for r in results if r[0] == kind]
    ok = sorted(r[2] for r in rows if r[1] == 200)
    codes = {}
    for r in rows: codes[str(r[1])] = codes.get(str(r[1]), 0) + 1
    q = lambda p: round(ok[min(len(ok) - 1, int(p * len(ok)))], 1) if ok else None
    out[kind] = {"statuses": codes, "p50_ms": q(0.5), "p99_ms": q(0.99)}
print(json.dumps(out))
