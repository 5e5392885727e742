#!/usr/bin/env python3
"""What the archive gives back, at any size: imports SOURCE into a new archive, serves it, walks every
conversation's `conversations.history` and every thread's `conversations.replies`, and compares each message with
the export's object for it (the fields the source wrote; `channel`, an export's `replies` list and `user_profile`,
which the store drops by design, aside).

    scripts/serve-roundtrip.py BINARY EXPORT_DIR SOURCE [IMPORT FLAGS...]

EXPORT_DIR is an unpacked export (e.g. `gen-export --messages 60000 ...`), SOURCE what to import: the export itself,
or the same messages as a dump (`scripts/export-to-dump.py EXPORT OUT --layout tree|api-script|lines|slackdump`).
Sizes past 20,000 messages cross a dump import's transactions (issue 47's D1 was past the first one).
Exit 0 when every message is given back unchanged, 1 otherwise; the first differences are printed.
"""
import glob
import json
import os
import subprocess
import sys
import tempfile
import urllib.parse
import urllib.request

IGNORED = ("channel", "replies", "user_profile")


def expected_messages(export):
    ids = {}
    for listing in ["channels.json", "groups.json", "dms.json", "mpims.json"]:
        path = os.path.join(export, listing)
        if os.path.exists(path):
            with open(path, encoding="utf-8") as f:
                for c in json.load(f):
                    ids[c.get("name") or c["id"]] = c["id"]
    expected = {}
    for folder, cid in ids.items():
        for day in glob.glob(os.path.join(export, folder, "*.json")):
            with open(day, encoding="utf-8") as f:
                for m in json.load(f):
                    expected[(cid, m["ts"])] = {k: v for k, v in m.items() if k not in IGNORED}
    return ids, expected


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    binary, export, source = sys.argv[1:4]
    work = tempfile.mkdtemp()
    db = os.path.join(work, "archive.sqlite")
    imported = subprocess.run([binary, "--db", db, "import", source, "--quiet"] + sys.argv[4:], capture_output=True, text=True)
    print(f"import: exit {imported.returncode} {imported.stderr.strip()[-300:]}")
    ids, expected = expected_messages(export)
    with open(os.path.join(export, "users.json"), encoding="utf-8") as f:
        user = json.load(f)[0]["id"]
    token = subprocess.run([binary, "--db", db, "token", "create", "--user", user, "--admin"],
                           capture_output=True, text=True, check=True).stdout.strip()
    server = subprocess.Popen([binary, "--db", db, "serve", "--listen", "127.0.0.1:0", "--ui", "off",
                               "--rate-limit", "100000/1"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    api = None
    try:
        while api is None:
            line = server.stdout.readline()
            if not line:
                sys.exit("serve ended before it listened")
            api = next((w for w in line.split() if w.startswith("http://") and "/api/" in w), None)

        def call(method, **params):
            request = urllib.request.Request(api + method, data=urllib.parse.urlencode(params).encode(),
                                             headers={"Authorization": "Bearer " + token})
            with urllib.request.urlopen(request, timeout=60) as answer:
                return json.load(answer)

        def pages(method, **params):
            cursor = ""
            while True:
                page = call(method, limit=200, cursor=cursor, **params)
                if not page.get("ok"):
                    raise RuntimeError(f"{method} {params}: {page}")
                yield from page["messages"]
                cursor = page.get("response_metadata", {}).get("next_cursor", "")
                if not cursor:
                    return

        seen, differing = set(), 0
        for cid in ids.values():
            for m in pages("conversations.history", channel=cid):
                given = [m]
                if m.get("reply_count"):
                    given += list(pages("conversations.replies", channel=cid, ts=m["ts"]))
                for g in given:
                    key = (cid, g.get("ts"))
                    seen.add(key)
                    want = expected.get(key)
                    got = {k: v for k, v in g.items() if k not in IGNORED}
                    if want != got:
                        differing += 1
                        if differing <= 5:
                            keys = set(want or {}) | set(got)
                            diff = {k: [(want or {}).get(k), got.get(k)] for k in keys if (want or {}).get(k) != got.get(k)}
                            print("DIFF", key, json.dumps(diff)[:400])
    finally:
        server.kill()
    missing = len(set(expected) - seen)
    print(f"expected {len(expected)}, given back {len(seen)}, differing {differing}, missing {missing}")
    sys.exit(0 if differing == 0 and missing == 0 and imported.returncode == 0 else 1)


if __name__ == "__main__":
    main()
