#!/usr/bin/env bash
# The same reads `slackindex bench` measures, done by the sqlite3 shell on the same archive, so the cost of the
# Swift layers is visible. Usage: scripts/sqlite3-compare.sh [ARCHIVE.sqlite]
# Needs: sqlite3, gcc, libicu-dev, libsqlite3-dev.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
db=${1:-${SLACKINDEX_DB:-${XDG_DATA_HOME:-$HOME/.local/share}/slackindex/archive.sqlite}}
ext=$(mktemp -d)/slackindex_tokenizer.so
gcc -O2 -shared -fPIC -o "$ext" "$here/sqlite3_tokenizer_ext.c" "$here/../Sources/CSlackTokenizer/slack_tokenizer.c" \
    -I"$here/../Sources/CSlackTokenizer/include" -licuuc -lsqlite3

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
page="SELECT id, ts, ts_key, user_id, username, text, subtype, thread_ts, reply_count, edited_ts, is_deleted, flags
    FROM message m INDEXED BY message_history WHERE conversation_id = $conv AND (flags & 96) != 0 AND is_deleted = 0"

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
