#!/usr/bin/env python3
"""Rewrites an unpacked Slack export as what API-based tools leave behind, for import benchmarks (issue 17).

    scripts/export-to-dump.py EXPORT OUT --layout tree|api-script|lines|slackdump [--page-size 200]

tree       OUT/messages/<channel id>/<n>.json  conversations.history pages, newest first
           OUT/threads/<channel id>/<ts>.json  conversations.replies responses (parent, then replies)
           OUT/users.json, OUT/channels.json   users.list and conversations.list responses
api-script as scripts that call the Web API leave it (issue 55): OUT/channels.json an array of conversation
           ids, OUT/names.json id -> name, OUT/messages/<id>/<n>.json pages {"cursor": n, "messages": [...]},
           OUT/threads/<id>/<ts>.json {"messages": [...]}, OUT/users/<user id>.json one user object each
lines      OUT (one file): the same responses, one per line, each message with its "channel"
slackdump  OUT/slackdump.sqlite in slackdump's archive layout (scripts/slackdump-schema.sql):
           one CHUNK per history page or thread, each message in MESSAGE with its JSON in DATA

The messages are the export's, unchanged apart from order, so importing OUT gives the export's archive.
Memory: one conversation at a time.
"""
import argparse
import json
import os
import sqlite3
import sys
import time


def load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def conversations(export):
    """(id, folder, object for conversations.list) for every listed conversation."""
    found = []
    for listing, flags in [("channels.json", {"is_channel": True}), ("groups.json", {"is_private": True, "is_group": True}),
                           ("dms.json", {"is_im": True}), ("mpims.json", {"is_mpim": True, "is_private": True})]:
        path = os.path.join(export, listing)
        if not os.path.exists(path):
            continue
        for c in load(path):
            obj = dict(c)
            obj.update(flags)
            if flags.get("is_im"):
                obj["user"] = (c.get("members") or ["", ""])[-1]
            folder = c["id"] if flags.get("is_im") else c.get("name", c["id"])
            found.append((c["id"], folder, obj))
    return found


def messages_of(export, folder):
    path = os.path.join(export, folder)
    if not os.path.isdir(path):
        return []
    out = []
    for name in sorted(os.listdir(path)):
        if name.endswith(".json"):
            out += load(os.path.join(path, name))
    out.sort(key=lambda m: m.get("ts", ""))
    return out


def split(messages):
    """History (top level, parents, broadcasts; newest first) and threads (parent ts -> [parent, replies...])."""
    history, replies, parents = [], {}, {}
    for m in messages:
        thread = m.get("thread_ts")
        if thread and thread != m.get("ts"):
            replies.setdefault(thread, []).append(m)
            if m.get("subtype") == "thread_broadcast":
                history.append(m)
        else:
            history.append(m)
            if thread:
                parents[thread] = m
    threads = {ts: [parents[ts]] + rs for ts, rs in replies.items() if ts in parents}
    history.reverse()
    return history, threads


def pages(history, size):
    for start in range(0, max(len(history), 1), size):
        page = history[start:start + size]
        more = start + size < len(history)
        yield {"ok": True, "messages": page, "has_more": more,
               "response_metadata": {"next_cursor": ""}}


def dumps(value):
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def write(path, value):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(dumps(value))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("export")
    parser.add_argument("out")
    parser.add_argument("--layout", choices=["tree", "api-script", "lines", "slackdump"], required=True)
    parser.add_argument("--page-size", type=int, default=200)
    parser.add_argument("--schema", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "slackdump-schema.sql"),
                        help="slackdump's tables (default: scripts/slackdump-schema.sql)")
    args = parser.parse_args()
    started = time.time()
    users = load(os.path.join(args.export, "users.json"))
    listed = conversations(args.export)
    users_list = {"ok": True, "members": users}
    channels_list = {"ok": True, "channels": [obj for _, _, obj in listed], "response_metadata": {"next_cursor": ""}}
    lines = db = None
    if args.layout == "tree":
        write(os.path.join(args.out, "users.json"), users_list)
        write(os.path.join(args.out, "channels.json"), channels_list)
    elif args.layout == "api-script":
        write(os.path.join(args.out, "channels.json"), [cid for cid, _, _ in listed])
        write(os.path.join(args.out, "names.json"), {cid: obj.get("name", folder) for cid, folder, obj in listed})
        for user in users:
            write(os.path.join(args.out, "users", user["id"] + ".json"), user)
    elif args.layout == "lines":
        os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
        lines = open(args.out, "w", encoding="utf-8")
        lines.write(dumps(users_list) + "\n" + dumps(channels_list) + "\n")
    else:
        db = slackdump_open(args)
        slackdump_listings(db, users, listed)
    total = 0
    for cid, folder, _ in listed:
        history, threads = split(messages_of(args.export, folder))
        total += len(history) + sum(len(t) - 1 for t in threads.values())
        if args.layout == "tree":
            for n, page in enumerate(pages(history, args.page_size), 1):
                write(os.path.join(args.out, "messages", cid, "%04d.json" % n), page)
            for ts, thread in threads.items():
                write(os.path.join(args.out, "threads", cid, ts + ".json"), {"ok": True, "messages": thread})
        elif args.layout == "api-script":
            for n, page in enumerate(pages(history, args.page_size)):
                write(os.path.join(args.out, "messages", cid, "%d.json" % n), {"cursor": n, "messages": page["messages"]})
            for ts, thread in threads.items():
                write(os.path.join(args.out, "threads", cid, ts + ".json"), {"messages": thread})
        elif args.layout == "lines":
            for page in pages(history, args.page_size):
                for m in page["messages"]:
                    m["channel"] = cid
                lines.write(dumps(page) + "\n")
            for thread in threads.values():
                lines.write(dumps({"ok": True, "messages": [dict(m, channel=cid) for m in thread]}) + "\n")
        else:
            slackdump_conversation(db, cid, pages(history, args.page_size), threads)
    if lines:
        lines.close()
    if db:
        db.commit()
        db.close()
    print("%d messages in %.1f s" % (total, time.time() - started), file=sys.stderr)


def slackdump_open(args):
    if not args.schema:
        sys.exit("--layout slackdump needs --schema FILE (slackdump's DDL)")
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, "slackdump.sqlite")
    if os.path.exists(path):
        os.remove(path)
    db = sqlite3.connect(path)
    with open(args.schema, encoding="utf-8") as f:
        db.executescript(f.read())
    db.execute("INSERT INTO SESSION (ID, FINISHED, MODE) VALUES (1, 1, 'archive')")
    return db


CHUNK_ID = [0]


def slackdump_chunk(db, type_code, channel_id=None, thread_ts=None, count=0, final=True):
    CHUNK_ID[0] += 1
    db.execute("INSERT INTO CHUNK (ID, SESSION_ID, UNIX_TS, TYPE_ID, NUM_REC, FINAL) VALUES (?, 1, ?, ?, ?, ?)",
               (CHUNK_ID[0], int(time.time() * 1000) + CHUNK_ID[0], type_code, count, final))
    return CHUNK_ID[0]


def slackdump_listings(db, users, listed):
    chunk = slackdump_chunk(db, 3, count=len(users))
    for i, u in enumerate(users):
        db.execute("INSERT INTO S_USER (ID, CHUNK_ID, USERNAME, DISPLAY_NAME, IDX, DATA) VALUES (?, ?, ?, ?, ?, ?)",
                   (u["id"], chunk, u.get("name", ""), (u.get("profile") or {}).get("display_name", ""), i,
                    dumps(u).encode()))
    chunk = slackdump_chunk(db, 4, count=len(listed))
    for i, (cid, _, obj) in enumerate(listed):
        db.execute("INSERT INTO CHANNEL (ID, CHUNK_ID, NAME, IDX, DATA) VALUES (?, ?, ?, ?, ?)",
                   (cid, chunk, obj.get("name"), i, dumps(obj).encode()))


def ts_key(ts):
    seconds, _, micros = ts.partition(".")
    return int(seconds) * 1000000 + int((micros + "000000")[:6])


def slackdump_conversation(db, cid, history_pages, threads):
    for page in history_pages:
        chunk = slackdump_chunk(db, 0, cid, count=len(page["messages"]), final=not page["has_more"])
        for i, m in enumerate(page["messages"]):
            thread = m.get("thread_ts")
            db.execute("INSERT INTO MESSAGE (ID, CHUNK_ID, CHANNEL_ID, TS, PARENT_ID, THREAD_TS, IS_PARENT, IDX, NUM_FILES, TXT, DATA)"
                       " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                       (ts_key(m["ts"]), chunk, cid, m["ts"], ts_key(thread) if thread and thread != m["ts"] else None,
                        thread, thread == m["ts"], i, len(m.get("files", [])), m.get("text", ""), dumps(m).encode()))
    for ts, thread in threads.items():
        chunk = slackdump_chunk(db, 1, cid, ts, count=len(thread))
        for i, m in enumerate(thread):
            db.execute("INSERT INTO MESSAGE (ID, CHUNK_ID, CHANNEL_ID, TS, PARENT_ID, THREAD_TS, IS_PARENT, IDX, NUM_FILES, TXT, DATA)"
                       " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                       (ts_key(m["ts"]), chunk, cid, m["ts"], ts_key(ts) if m["ts"] != ts else None, ts,
                        m["ts"] == ts, i, len(m.get("files", [])), m.get("text", ""), dumps(m).encode()))


if __name__ == "__main__":
    main()
