#!/usr/bin/env python3
"""Search as you type against a `serve` of ARCHIVE started here (`--read-only`): for each word, every prefix of two
letters or more as the web UI asks for it on a keystroke (`search.messages` with the parameters the page sends:
highlight, variants, 20 hits, relevance, `exact_total=false`, `suggest=false`), then, as the page does once typing
pauses on a result of (almost) no hits, the same query with `suggest=true` and one hit. Two passes; the second is
timed (loopback, one client: the request's time is the server's plus well under a millisecond). Prints JSON:
keystrokes p50 / p90 / max and the slowest, and the pauses' p50 / max (issue 54: < 50 ms a keystroke at 1M).

    Benchmarks/scripts/search-as-you-type.py BINARY ARCHIVE USER_ID WORD...
"""
import json, statistics, subprocess, sys, time, urllib.parse, urllib.request

binary, db, user, words = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
token = subprocess.check_output([binary, "--db", db, "token", "create", "--user", user, "--admin"], text=True).strip()
server = subprocess.Popen(
    [binary, "--db", db, "serve", "--read-only", "--listen", "127.0.0.1:0", "--rate-limit", "100000/1", "--ui", "off"],
    stdout=subprocess.PIPE, text=True)
base = server.stdout.readline().split(" at ")[1].strip()


def call(params):
    data = urllib.parse.urlencode(params).encode()
    req = urllib.request.Request(base + "search.messages", data=data, headers={"Authorization": "Bearer " + token})
    started = time.perf_counter()
    with urllib.request.urlopen(req, timeout=60) as answer:
        body = json.loads(answer.read())
    return (time.perf_counter() - started) * 1000, body


def keystroke(query):
    return call({"query": query, "highlight": "true", "variants": "true", "count": "20", "page": "1",
                 "sort": "score", "sort_dir": "desc", "exact_total": "false", "suggest": "false"})


def pause(query):
    return call({"query": query, "variants": "true", "count": "1", "exact_total": "false", "suggest": "true"})


try:
    for timed in (False, True):
        typed, paused = [], []
        for word in words:
            for end in range(2, len(word) + 1):
                ms, body = keystroke(word[:end])
                assert body.get("ok"), body
                typed.append((ms, word[:end], "suggestion" in body))
                if len(body["messages"]["matches"]) <= 2:
                    ms, body = pause(word[:end])
                    paused.append((ms, word[:end], body.get("suggestion")))
    times = sorted(ms for ms, _, _ in typed)
    print(json.dumps({
        "keystrokes": len(typed),
        "keystroke_ms": {"p50": round(statistics.median(times), 1), "p90": round(times[int(len(times) * 0.9)], 1),
                         "max": round(times[-1], 1)},
        "slowest_keystrokes": [[round(ms, 1), q] for ms, q, _ in sorted(typed, reverse=True)[:5]],
        # A server before `suggest=false` (issue 54) still answers "did you mean" on keystrokes: counted here.
        "keystrokes_with_a_suggestion": sum(1 for _, _, suggested in typed if suggested),
        "pauses": len(paused),
        "pause_ms": {"p50": round(statistics.median(ms for ms, _, _ in paused), 1) if paused else None,
                     "max": round(max(ms for ms, _, _ in paused), 1) if paused else None},
        "suggestions": [[q, s] for _, q, s in paused if s][:3],
    }))
finally:
    server.terminate()
    server.wait()
