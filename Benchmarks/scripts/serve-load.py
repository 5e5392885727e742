#!/usr/bin/env python3
"""serve under one greedy client: N threads of deep search.messages from token A while token B reads
conversations.history; prints B's latency percentiles without and with the load (JSON)."""
import json, subprocess, sys, threading, time, urllib.request, urllib.parse, statistics

binary, db, user, channel, query = sys.argv[1:6]
seconds = float(sys.argv[6]) if len(sys.argv) > 6 else 20
greedy_threads = int(sys.argv[7]) if len(sys.argv) > 7 else 20

def token():
    return subprocess.check_output([binary, "--db", db, "token", "create", "--user", user, "--admin"], text=True).strip()

a, b = token(), token()
server = subprocess.Popen([binary, "--db", db, "serve", "--listen", "127.0.0.1:0", "--rate-limit", "100000/1"],
                          stdout=subprocess.PIPE, text=True)
line = server.stdout.readline()
base = line.split(" at ")[1].strip()

def call(method, params, tok):
    data = urllib.parse.urlencode(params).encode()
    req = urllib.request.Request(base + method, data=data, headers={"Authorization": "Bearer " + tok})
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, None

def reads(duration):
    lat = []
    end = time.time() + duration
    while time.time() < end:
        t = time.perf_counter()
        status, body = call("conversations.history", {"channel": channel, "limit": "100"}, b)
        lat.append((time.perf_counter() - t) * 1000)
        assert status == 200 and body["ok"], body
    lat.sort()
    return {"n": len(lat), "p50_ms": round(statistics.median(lat), 2),
            "p99_ms": round(lat[int(len(lat) * 0.99) - 1], 2), "max_ms": round(lat[-1], 2)}

result = {"idle": reads(5)}
stop = threading.Event()
counts = {"ok": 0, "ratelimited": 0, "other": 0}
lock = threading.Lock()
def greedy():
    while not stop.is_set():
        status, body = call("search.messages", {"query": query, "page": "100", "count": "100"}, a)
        with lock:
            if status == 429: counts["ratelimited"] += 1
            elif body and body.get("ok"): counts["ok"] += 1
            else: counts["other"] += 1
        if status == 429: time.sleep(0.05)
threads = [threading.Thread(target=greedy) for _ in range(greedy_threads)]
for t in threads: t.start()
time.sleep(1)
result["under_load"] = reads(seconds)
stop.set()
for t in threads: t.join()
result["greedy"] = counts
server.terminate()
server.wait()
print(json.dumps(result))
