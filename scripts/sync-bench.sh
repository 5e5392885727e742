#!/usr/bin/env bash
# Measures (build first: swift build -c release) `slackindex sync` against `slackindex serve` on loopback; prints requests vs the minimum.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-.build/release/slackindex}
EXPORT=${1:?usage: scripts/sync-bench.sh EXPORT.zip USER_ID}
USER_ID=${2:?usage: scripts/sync-bench.sh EXPORT.zip USER_ID}
A=/tmp/sync-a.sqlite; B=/tmp/sync-b.sqlite
rm -f $A $A-wal $A-shm $B $B-wal $B-shm
$BIN --db $A import "$EXPORT" --quiet | tail -3
TOKEN=$($BIN --db $A token create --user "$USER_ID" --admin)
$BIN --db $A serve --listen 127.0.0.1:18080 --rate-limit 1000000/1 > /tmp/serve.out 2>/tmp/serve.err &
SERVE=$!
sleep 2
SLACK_TOKEN=$TOKEN /usr/bin/time -v $BIN --db $B sync --api http://127.0.0.1:18080/api/ --page-size 200 --json --quiet > /tmp/sync1.json 2>/tmp/sync1.time
SLACK_TOKEN=$TOKEN /usr/bin/time -v $BIN --db $B sync --api http://127.0.0.1:18080/api/ --page-size 200 --json --quiet > /tmp/sync2.json 2>/tmp/sync2.time
kill $SERVE
cat /tmp/sync1.json; grep -E 'Elapsed|Maximum resident' /tmp/sync1.time
cat /tmp/sync2.json; grep -E 'Elapsed' /tmp/sync2.time
sqlite3 $A "
SELECT 'users', count(*) FROM user;
SELECT 'conversations', count(*) FROM conversation;
SELECT 'history_pages_min', sum(max(1, (h + 199) / 200)) FROM (SELECT c.id, (SELECT count(*) FROM message m WHERE m.conversation_id = c.id AND (m.flags & 96) != 0 AND m.is_deleted = 0) AS h FROM conversation c);
SELECT 'threads_with_replies', count(*), sum((r + 199) / 200) FROM (SELECT thread_key, count(*) - 1 AS r FROM message WHERE thread_key IS NOT NULL GROUP BY conversation_id, thread_key HAVING r > 0);
SELECT 'messages', count(*) FROM message WHERE is_deleted = 0;"
sqlite3 $B "SELECT 'b_messages', count(*) FROM message WHERE is_deleted = 0;"
