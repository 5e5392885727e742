#!/usr/bin/env python3
"""slackindex's search against tantivy (a Lucene-class engine) on the same messages and the same queries.

    Benchmarks/scripts/tantivy-compare.py BINARY ARCHIVE [--queries FILE] [--runs N] [--json]

BINARY is a slackindex build (use a release build), ARCHIVE an SQLite archive it can read. The script:

1. installs tantivy (pinned below) from PyPI into a virtual environment of its own (`--venv`, default
   ~/.cache/slackindex/tantivy-venv) and re-runs itself there;
2. reads every message's search text and conversation from ARCHIVE (read-only, no tokenizer needed);
3. writes a query file unless given one (`--queries`): up to 200 queries with a fixed seed, drawn from the texts
   themselves: 60 rare words (2-20 messages), 60 medium (100-1,000), 30 common (over 1% of the messages),
   30 two-word phrases taken from messages, 20 medium words with `in:#channel`;
4. indexes the same texts in tantivy (English stemming tokenizer `en_stem`, the conversation as a raw field) in a
   temporary folder, then times each query there: top 20 by BM25 and the 20 documents read, `--runs` passes,
   the first (warm-up) pass dropped;
5. runs `BINARY --db ARCHIVE bench search --queries FILE --runs N --json` on the same file;
6. prints both: p50 / p99 per query in ms, hits per pass.

What the two do differs, and the figures should be read with it: slackindex's hits carry a snippet, the full
message row, reply counts and its recency-blended relevance with the typed word first; tantivy's are 20 stored
texts ranked by BM25. Both see the same words: slackindex with word variants (`bench search`'s default), tantivy
with its English stemmer.
"""
import argparse
import json
import os
import random
import re
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time

TANTIVY = "tantivy==0.27.0"


def ensure_tantivy(venv):
    """Re-runs this script inside a virtual environment that has tantivy (created once)."""
    try:
        import tantivy  # noqa: F401

        return
    except ImportError:
        pass
    python = os.path.join(venv, "bin", "python3")
    if os.environ.get("SLACKINDEX_TANTIVY_VENV") == venv:
        sys.exit(f"tantivy is still missing in {venv}: remove the folder and run again")
    if not os.path.exists(python):
        print(f"creating {venv} and installing {TANTIVY} from PyPI…", file=sys.stderr)
        subprocess.run([sys.executable, "-m", "venv", venv], check=True)
        subprocess.run([python, "-m", "pip", "install", "-q", TANTIVY], check=True)
    os.environ["SLACKINDEX_TANTIVY_VENV"] = venv
    os.execv(python, [python, os.path.abspath(__file__)] + sys.argv[1:])


def messages(archive):
    """(search text, conversation name) of every message not deleted, read-only."""
    db = sqlite3.connect(f"file:{archive}?mode=ro", uri=True)
    rows = db.execute(
        """
        SELECT CASE WHEN m.search_text = '' THEN m.text ELSE m.search_text END, c.name
        FROM message m JOIN conversation c ON c.id = m.conversation_id
        WHERE m.is_deleted = 0
        """
    )
    return [(text or "", name or "") for text, name in rows]


WORD = re.compile(r"[a-z]{3,}")


def make_queries(texts, seed=54):
    """200 queries of five kinds drawn from the texts (see the module's doc)."""
    rng = random.Random(seed)
    df = {}
    for text, _ in texts:
        for word in set(WORD.findall(text.lower())):
            df[word] = df.get(word, 0) + 1
    n = len(texts)
    words = sorted(df)

    def pick(lo, hi, k):
        pool = [w for w in words if lo <= df[w] <= hi]
        return rng.sample(pool, min(k, len(pool)))

    queries = pick(2, 20, 60) + pick(100, 1_000, 60) + pick(max(1_001, n // 100), n, 30)
    phrases = []
    while len(phrases) < 30:
        found = WORD.findall(rng.choice(texts)[0].lower())
        if len(found) >= 2:
            i = rng.randrange(len(found) - 1)
            phrases.append(f'"{found[i]} {found[i + 1]}"')
    channels = sorted({name for _, name in texts if name and re.fullmatch(r"[a-z0-9_-]+", name)})
    scoped = [f"{w} in:#{rng.choice(channels)}" for w in pick(100, 1_000, 20)] if channels else []
    return queries + phrases + scoped


def tantivy_query(tantivy, index, line):
    """The tantivy query for one line of our syntax: words (all of them), "phrases", in:#channel."""
    clauses = []
    channel = re.search(r"in:#(\S+)", line)
    if channel:
        clauses.append((tantivy.Occur.Must, tantivy.Query.term_query(index.schema, "channel", channel.group(1))))
    rest = re.sub(r"in:#\S+", "", line)
    for phrase in re.findall(r'"([^"]+)"', rest):
        clauses.append((tantivy.Occur.Must, index.parse_query(f'"{phrase}"', ["text"])))
    for word in re.sub(r'"[^"]*"', "", rest).split():
        clauses.append((tantivy.Occur.Must, index.parse_query(word, ["text"])))
    return tantivy.Query.boolean_query(clauses)


def time_tantivy(texts, queries, runs):
    import tantivy

    builder = tantivy.SchemaBuilder()
    builder.add_text_field("text", stored=True, tokenizer_name="en_stem")
    builder.add_text_field("channel", stored=False, tokenizer_name="raw")
    schema = builder.build()
    folder = tempfile.mkdtemp(prefix="tantivy-compare-")
    index = tantivy.Index(schema, path=folder)
    writer = index.writer(heap_size=512_000_000)
    started = time.perf_counter()
    for text, channel in texts:
        writer.add_document(tantivy.Document(text=text, channel=channel))
    writer.commit()
    writer.wait_merging_threads()
    index.reload()
    indexed = time.perf_counter() - started
    searcher = index.searcher()
    compiled = [tantivy_query(tantivy, index, q) for q in queries]
    times, hits = [], 0
    for run in range(runs + 1):
        for query in compiled:
            t0 = time.perf_counter()
            result = searcher.search(query, 20)
            docs = [searcher.doc(address) for _, address in result.hits]
            elapsed = time.perf_counter() - t0
            if run > 0:
                times.append(elapsed * 1000)
                hits += len(docs)
    return {"index_seconds": round(indexed, 2), "p50_ms": percentile(times, 50), "p99_ms": percentile(times, 99),
            "hits_per_pass": hits // max(1, runs)}


def percentile(values, p):
    ordered = sorted(values)
    if not ordered:
        return None
    k = max(0, min(len(ordered) - 1, round(p / 100 * len(ordered)) - 1))
    return round(ordered[k], 3)


def time_slackindex(binary, archive, query_file, runs):
    out = subprocess.run(
        [binary, "--db", archive, "bench", "search", "--queries", query_file, "--runs", str(runs), "--json"],
        check=True, capture_output=True, text=True,
    ).stdout
    result = json.loads(out)
    found = result.get("search", result)
    return {"p50_ms": round(found["p50_ms"], 3), "p99_ms": round(found["p99_ms"], 3), "hits_per_pass": found.get("hits")}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("binary")
    parser.add_argument("archive")
    parser.add_argument("--queries", help="one query per line (our syntax); default: 200 drawn from the archive")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--venv", default=os.path.expanduser("~/.cache/slackindex/tantivy-venv"))
    args = parser.parse_args()
    ensure_tantivy(args.venv)
    texts = messages(args.archive)
    query_file = args.queries
    if query_file:
        queries = [line.strip() for line in open(query_file, encoding="utf-8") if line.strip()]
    else:
        queries = make_queries(texts)
        handle, query_file = tempfile.mkstemp(prefix="tantivy-compare-", suffix=".txt")
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write("\n".join(queries) + "\n")
    ours = time_slackindex(args.binary, args.archive, query_file, args.runs)
    theirs = time_tantivy(texts, queries, args.runs)
    report = {"messages": len(texts), "queries": len(queries), "query_file": query_file, "runs": args.runs,
              "slackindex": ours, "tantivy": theirs}
    if args.json:
        print(json.dumps(report))
    else:
        print(f"{len(texts):,} messages, {len(queries)} queries ({query_file}), {args.runs} runs")
        print(f"  slackindex  p50 {ours['p50_ms']} ms  p99 {ours['p99_ms']} ms")
        print(f"  tantivy     p50 {theirs['p50_ms']} ms  p99 {theirs['p99_ms']} ms"
              f"  (indexed in {theirs['index_seconds']} s)")


if __name__ == "__main__":
    main()
