#!/usr/bin/env python3
"""A stand-in for Slack's file host, for measuring `slackindex files` (docs/files.md).

Reads an export's day files (as gen-export writes them), and answers GET on each file's url_private and
url_private_download path with bytes of the file's `size`: a magic number for its type (PNG, PDF, ...) or text for
text types, then deterministic pseudo-random bytes, different for every file. Every request must carry
`Authorization: Bearer <token>` (403 otherwise); unknown paths answer 404. HTTP/1.1 keep-alive, one thread per
connection.

The workspace's images too: each member's profile image (users.json's image_72 path: a PNG of --avatar-bytes,
no token needed, as Slack's avatar host) and `/api/emoji.list` (with the token): --emoji custom emoji, one in ten
an alias, each image at `/emoji/<name>.gif` (a GIF of --emoji-bytes, no token needed).

Usage: scripts/files-standin.py EXPORT_DIR [--port 8765 (0: any free port)] [--token xoxp-bench]
Then:  SLACK_TOKEN=xoxp-bench slackindex files --file-host http://127.0.0.1:8765
"""
import argparse
import glob
import hashlib
import json
import os
import random
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

MAGIC = {
    "image/png": b"\x89PNG\r\n\x1a\n",
    "image/jpeg": b"\xff\xd8\xff\xe0",
    "image/gif": b"GIF89a",
    "application/pdf": b"%PDF-1.4\n",
    "application/zip": b"PK\x03\x04",
}


def load(export):
    files = {}
    for path in glob.glob(os.path.join(export, "*", "*.json")):
        with open(path, encoding="utf-8") as f:
            try:
                messages = json.load(f)
            except ValueError:
                continue
        if not isinstance(messages, list):
            continue
        for m in messages:
            for file in m.get("files") or []:
                size = file.get("size")
                if not isinstance(size, int):
                    continue
                for key in ("url_private", "url_private_download"):
                    if file.get(key):
                        files[urlsplit(file[key]).path] = (file.get("id", ""), size, file.get("mimetype", ""))
    return files


def load_avatars(export):
    try:
        with open(os.path.join(export, "users.json"), encoding="utf-8") as f:
            users = json.load(f)
    except (OSError, ValueError):
        return set()
    return {urlsplit(u["profile"]["image_72"]).path for u in users
            if isinstance(u, dict) and isinstance(u.get("profile"), dict) and u["profile"].get("image_72")}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("export")
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--token", default="xoxp-bench")
    parser.add_argument("--emoji", type=int, default=500)
    parser.add_argument("--avatar-bytes", type=int, default=6000)
    parser.add_argument("--emoji-bytes", type=int, default=8000)
    args = parser.parse_args()
    files = load(args.export)
    avatars = load_avatars(args.export)
    names = ["custom%04d" % i for i in range(args.emoji)]
    emoji = {n: ("alias:" + names[i - 1] if i % 10 == 9 else "https://emoji.slack-edge.com/T0/%s.gif" % n)
             for i, n in enumerate(names)}
    emoji_paths = {"/T0/%s.gif" % n for n, v in emoji.items() if not v.startswith("alias:")}
    emoji_list = json.dumps({"ok": True, "emoji": emoji, "cache_ts": "1700000000.000000"}).encode()
    noise = random.Random(1).randbytes(16 << 20)
    words = b"deploy release the build notes rollback quokka schema index latency incident review "

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *a):
            pass

        def image(self, magic, key, size):
            start = int(hashlib.sha256(key.encode()).hexdigest()[:8], 16) % (len(noise) // 2)
            return (magic + noise[start:start + size])[:size]

        def do_GET(self):
            path = urlsplit(self.path).path
            if path in avatars:
                return self.reply(200, self.image(MAGIC["image/png"], path, args.avatar_bytes), "image/png")
            if path in emoji_paths:
                return self.reply(200, self.image(MAGIC["image/gif"], path, args.emoji_bytes), "image/gif")
            if self.headers.get("Authorization") != "Bearer " + args.token:
                return self.reply(403, b"")
            if path == "/api/emoji.list":
                return self.reply(200, emoji_list, "application/json")
            entry = files.get(path)
            if entry is None:
                return self.reply(404, b"")
            fid, size, mime = entry
            head = MAGIC.get(mime, b"") + fid.encode() + b"\n"
            if mime.startswith("text/"):
                body = (head + words * (size // len(words) + 1))[:size]
            else:
                start = int(hashlib.sha256(fid.encode()).hexdigest()[:8], 16) % (len(noise) // 2)
                body = (head + noise[start:start + size])[:size]
                while len(body) < size:
                    body += noise[: size - len(body)]
            self.reply(200, body, mime or "application/octet-stream")

        def reply(self, status, body, mime="text/plain"):
            self.send_response(status)
            self.send_header("Content-Type", mime)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    print(f"{len(files)} file URLs, {len(avatars)} avatars, {len(emoji_paths)} emoji images; listening on http://127.0.0.1:{server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
