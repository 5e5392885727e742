#!/usr/bin/env bash
# The same work `slackindex` does, done by the sqlite3 shell, so the cost of the Swift layers is visible.
#
#   scripts/sqlite3-compare.sh [ARCHIVE.sqlite]
#       the reads `slackindex bench` measures (history pages, searches), on the same archive.
#   scripts/sqlite3-compare.sh --load EXPORT.zip [RUNS] [SLACKINDEX]
#       the import against SQLite's own speed, RUNS times (default 3), interleaved: `slackindex import` of the
#       export into a new archive, then the shell writing the very rows that import stored (messages, packed JSON,
#       the full-text index with the same tokenizer, reactions, files, names; read from that archive, so no parsing)
#       into a new database with the same schema and page size, in one transaction. Prints both times and the ratio.
# Needs: sqlite3, gcc, libicu-dev, libsqlite3-dev.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
ext=$(mktemp -d)/slackindex_tokenizer.so
gcc -O2 -shared -fPIC -o "$ext" "$here/sqlite3_tokenizer_ext.c" "$here/../Sources/CSlackTokenizer/slack_tokenizer.c" \
    "$here/../Sources/CSlackTokenizer/english_stemmer.c" "$here/../Sources/CSlackTokenizer/slack_rank.c" \
    -I"$here/../Sources/CSlackTokenizer/include" -I"$here/../Sources/CSlackTokenizer" -licuuc -lsqlite3

if [ "${1:-}" = "--load" ]; then
    export_path=${2:?usage: sqlite3-compare.sh --load EXPORT.zip [RUNS] [SLACKINDEX]}
    runs=${3:-3}
    bin=${4:-$here/../.build/release/slackindex}
    work=$(mktemp -d)
    load="$ext"
    seconds() { echo "scale=2; ($2 - $1) / 1000000000" | bc; }
    for run in $(seq "$runs"); do
        rm -f "$work"/a.sqlite* "$work"/b.sqlite*
        start=$(date +%s%N)
        "$bin" --db "$work/a.sqlite" import "$export_path" --quiet > /dev/null
        mid=$(date +%s%N)
        # The same schema (tables, indexes, the index's settings), then the same rows in one transaction.
        schema=$(sqlite3 "$work/a.sqlite" ".schema --nosys" | grep -v "message_fts_\|message_vocab\|sqlite_stat")
        rows=$(sqlite3 "$work/a.sqlite" "SELECT count(*) FROM message")
        sqlite3 -cmd ".load ${load%.so} sqlite3_slackindextokenizer_init" "$work/b.sqlite" > /dev/null <<SQL
PRAGMA page_size = 16384;
PRAGMA journal_mode = WAL;
PRAGMA synchronous = NORMAL;
$schema
INSERT INTO message_fts (message_fts, rank) VALUES ('pgsz', 16000);
INSERT INTO message_fts (message_fts, rank) VALUES ('automerge', 16);
INSERT INTO message_fts (message_fts, rank) VALUES ('crisismerge', 32);
SQL
        start_b=$(date +%s%N)
        sqlite3 -cmd ".load ${load%.so} sqlite3_slackindextokenizer_init" "$work/b.sqlite" > /dev/null <<SQL
PRAGMA synchronous = NORMAL;
PRAGMA cache_size = -32768;
ATTACH '$work/a.sqlite' AS src;
BEGIN;
INSERT INTO main.user SELECT * FROM src.user;
INSERT INTO main.workspace SELECT * FROM src.workspace;
INSERT INTO main.conversation SELECT * FROM src.conversation;
INSERT INTO main.raw_block SELECT * FROM src.raw_block ORDER BY id;
INSERT INTO main.message SELECT * FROM src.message ORDER BY id;
INSERT INTO main.message_fts (rowid, search_text, search_extra)
    SELECT id, CASE WHEN search_text = '' THEN text ELSE search_text END, search_extra
    FROM src.message WHERE is_deleted = 0 ORDER BY id;
INSERT INTO main.reaction SELECT * FROM src.reaction;
INSERT INTO main.file SELECT * FROM src.file;
INSERT INTO main.message_count SELECT * FROM src.message_count;
COMMIT;
PRAGMA wal_checkpoint(TRUNCATE);
SQL
        end=$(date +%s%N)
        a=$(seconds "$start" "$mid")
        b=$(seconds "$start_b" "$end")
        printf 'run %d: slackindex import %6.2f s (%d messages/s)   sqlite3 shell load %6.2f s (%d/s)   ratio %.2f\n' \
            "$run" "$a" "$(echo "$rows / $a" | bc)" "$b" "$(echo "$rows / $b" | bc)" "$(echo "$a / $b" | bc -l)"
    done
    rm -rf "$work"
    exit 0
fi

db=${1:-${SLACKINDEX_DB:-${XDG_DATA_HOME:-$HOME/.local/share}/slackindex/archive.sqlite}}

conv=$(sqlite3 "$db" "SELECT conversation_id FROM message WHERE (flags & 96) != 0 GROUP BY 1 ORDER BY count(*) DESC LIMIT 1")
visible=$(sqlite3 "$db" "SELECT count(*) FROM message WHERE conversation_id = $conv AND (flags & 96) != 0 AND is_deleted = 0")
deep=$((visible - 50))
read -r deep_ts deep_id < <(sqlite3 -separator ' ' "$db" "SELECT ts_key, id FROM message INDEXED BY message_key
    WHERE conversation_id = $conv AND (flags & 96) != 0 AND is_deleted = 0 ORDER BY ts_key DESC, id DESC
    LIMIT 1 OFFSET $deep")
common=$(sqlite3 -cmd ".load ${ext%.so} sqlite3_slackindextokenizer_init" "$db" \
    "SELECT term FROM message_vocab ORDER BY doc DESC LIMIT 1")
medium=$(sqlite3 -cmd ".load ${ext%.so} sqlite3_slackindextokenizer_init" "$db" \
    "SELECT term FROM message_vocab WHERE doc BETWEEN 500 AND 20000 AND term GLOB '[a-z][a-z][a-z][a-z]*'
     ORDER BY term LIMIT 1")
page="SELECT id, ts, ts_key, user_id, username, text, search_text, subtype, thread_ts, reply_count, edited_ts,
    is_deleted, flags FROM message m INDEXED BY message_history WHERE conversation_id = $conv AND (flags & 96) != 0 AND is_deleted = 0"

run() {  # label, sql: the shell runs the statement 1 and 51 times; the difference / 50 is one run, in ms
    local label=$1 sql=$2
    time_of() {
        local n=$1 start end
        start=$(date +%s%N)
        for _ in $(seq "$n"); do echo "SELECT count(*) FROM ($sql);"; done |
            sqlite3 -cmd ".load ${ext%.so} sqlite3_slackindextokenizer_init" "$db" > /dev/null
        end=$(date +%s%N)
        echo $((end - start))
    }
    local one many
    time_of 1 > /dev/null  # warm the OS cache
    one=$(time_of 1)
    many=$(time_of 51)
    printf '  %-46s %9.3f ms\n' "$label" "$(echo "($many - $one) / 50 / 1000000" | bc -l)"
}
echo "sqlite3 shell on $db (mean of 50 runs in one process, page of 50, conversation $conv with $visible history messages)"
run "history page, depth 0 (keyset)" "$page ORDER BY ts_key DESC, id DESC LIMIT 50"
run "history page, depth $deep (keyset)" "$page AND ts_key <= $deep_ts AND (ts_key < $deep_ts OR id < $deep_id) ORDER BY ts_key DESC, id DESC LIMIT 50"
run "history page, depth $deep (OFFSET)" "$page ORDER BY ts_key DESC, id DESC LIMIT 50 OFFSET $deep"
run "search '$medium' (newest 500 + bm25)" "SELECT rowid, bm25(message_fts, 1.0, 0.4) FROM message_fts WHERE message_fts MATCH '\"$medium\"' ORDER BY rowid DESC LIMIT 500"
run "search '$common' (newest 500 + bm25)" "SELECT rowid, bm25(message_fts, 1.0, 0.4) FROM message_fts WHERE message_fts MATCH '\"$common\"' ORDER BY rowid DESC LIMIT 500"
run "search '$common' (bm25 over every match)" "SELECT rowid FROM message_fts WHERE message_fts MATCH '\"$common\"' ORDER BY bm25(message_fts) LIMIT 20"
