#!/usr/bin/env python3
"""Many users at once against one or more `serve` processes over one archive (issue 51's load run).

    Benchmarks/scripts/serve-load-run.py BINARY DB [--servers N] [--replica URL] [--clients 50] [--seconds 60]
                                         [--rate 10] [--exact-total true|false] [--label TEXT]

Starts N `slackindex --db DB serve` processes (default 1; `--replica` is passed to each), makes one admin token
per client, and runs CLIENTS clients for SECONDS, each on its own keep-alive connection from its own loopback
address (127.0.0.2, .3, …: `serve` admits at most 32 connections per address), assigned to the servers in turn.
Each client loops over three kinds of request, in turn: a search (`search.messages`, a word of a fixed list,
20 hits), a history page (`conversations.history`, 50 messages, of one of the 20 busiest channels, following its
cursor a few pages deep) and a thread read (`conversations.replies` of a thread parent met in its pages). A client
never exceeds RATE requests a second (the default token rate, `--rate-limit 100/10`, is 10): it waits out the rest
of each 1/RATE s slot, so any refusal (429, 503) is one a client within its token's rate was given.

`--exact-total false` asks searches as the web UI does (no exact count of every match: a common word's count is
most of its search on PostgreSQL). Prints JSON: requests per second, and per kind the statuses and p50/p99 of the answered ones (ms).
"""
import argparse, http.client, json, random, subprocess, sys, threading, time, urllib.parse

WORDS = ["deploy", "error", "the", "release", "meeting", "test", "build", "data", "python", "class",
         "function", "value", "return", "object", "module", "string", "exception", "list", "type", "method"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binary"); ap.add_argument("db")
    ap.add_argument("--servers", type=int, default=1); ap.add_argument("--replica")
    ap.add_argument("--clients", type=int, default=50); ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--rate", type=float, default=10); ap.add_argument("--label", default="")
    ap.add_argument("--exact-total", choices=["true", "false"], default="true",
                    help="search.messages' exact_total: false as the web UI asks (no exact count of the matches)")
    args = ap.parse_args()
    lines = lambda *command: [json.loads(l) for l in subprocess.check_output(
        [args.binary, "--db", args.db, *command], text=True).splitlines() if l.strip()]
    user = next(u["id"] for u in lines("users", "--json") if not u["is_bot"] and not u["is_placeholder"])
    tokens = [subprocess.check_output([args.binary, "--db", args.db, "token", "create", "--user", user, "--admin",
                                       "--label", "load-run"], text=True).strip() for _ in range(args.clients)]
    servers = []
    for _ in range(args.servers):
        command = [args.binary, "--db", args.db, "serve", "--listen", "127.0.0.1:0", "--ui", "off"]
        if args.replica: command += ["--replica", args.replica]
        process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
        url = urllib.parse.urlparse(process.stdout.readline().split(" at ")[1].strip())
        servers.append((process, url.hostname, url.port))
    conversations = lines("conversations", "--json")
    busiest = [c["id"] for c in sorted(conversations, key=lambda c: -c["messages"]) if c["kind"] == "channel"][:20]
    results, lock = [], threading.Lock()

    def client(index):
        _, host, port = servers[index % len(servers)]
        connection = http.client.HTTPConnection(host, port, timeout=60, source_address=(f"127.0.0.{2 + index % 250}", 0))
        headers = {"Authorization": "Bearer " + tokens[index], "Content-Type": "application/x-www-form-urlencoded"}
        rng = random.Random(index)
        channel, cursor, threads, n = rng.choice(busiest), None, [], 0
        end = time.time() + args.seconds
        while time.time() < end:
            slot = time.time()
            n += 1
            if n % 3 == 1:
                kind, method, params = "search", "search.messages", {"query": rng.choice(WORDS), "count": "20",
                                                            "exact_total": args.exact_total}
            elif n % 3 == 2 or not threads:
                if cursor is None or rng.random() < 0.25: channel, cursor = rng.choice(busiest), None
                kind, method, params = "history", "conversations.history", {"channel": channel, "limit": "50"}
                if cursor: params["cursor"] = cursor
            else:
                kind, method = "thread", "conversations.replies"
                params = dict(zip(("channel", "ts"), threads.pop(rng.randrange(len(threads)))))
            started = time.time()
            try:
                connection.request("POST", "/api/" + method, urllib.parse.urlencode(params), headers)
                response = connection.getresponse(); body = response.read(); code = response.status
            except Exception:
                connection.close(); code, body = 0, b""
            ms = (time.time() - started) * 1000
            if kind == "history" and code == 200:
                answer = json.loads(body)
                cursor = (answer.get("response_metadata") or {}).get("next_cursor") or None
                threads += [(channel, m["ts"]) for m in answer.get("messages", []) if m.get("reply_count")][:5]
                threads = threads[-20:]
            with lock: results.append((kind, code, ms))
            rest = 1 / args.rate - (time.time() - slot)
            if rest > 0: time.sleep(rest)

    workers = [threading.Thread(target=client, args=(i,)) for i in range(args.clients)]
    start = time.time()
    for worker in workers: worker.start()
    for worker in workers: worker.join()
    elapsed = time.time() - start
    for process, _, _ in servers: process.terminate()
    for process, _, _ in servers: process.wait()
    out = {"label": args.label, "servers": args.servers, "clients": args.clients, "seconds": round(elapsed, 1),
           "requests_per_s": round(len(results) / elapsed, 1),
           "refused": sum(1 for r in results if r[1] in (429, 503)),
           "failed": sum(1 for r in results if r[1] not in (200, 429, 503))}
    for kind in ["search", "history", "thread"]:
        rows = [r for r in results if r[0] == kind]
        ok = sorted(r[2] for r in rows if r[1] == 200)
        codes = {}
        for r in rows: codes[str(r[1])] = codes.get(str(r[1]), 0) + 1
        q = lambda p: round(ok[min(len(ok) - 1, int(p * len(ok)))], 1) if ok else None
        out[kind] = {"statuses": codes, "p50_ms": q(0.5), "p99_ms": q(0.99)}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
