#!/usr/bin/env bash
# The import's CPU work as a number this VM's speed cannot move: the instructions valgrind's callgrind counts while
# `slackindex import` reads a generated 50,000-message export into a new archive, checked against the budget in
# Thresholds/import-instructions.json. The wall-clock thresholds must stay loose (this VM drifts by up to half
# within a day); an instruction count repeats to within a few hundredths of a percent, so a small tolerance catches
# an import that does more work.
#
#   Benchmarks/scripts/import-instructions.sh [--update] [SLACKINDEX]
#
# SLACKINDEX: the binary to measure (default: the repository's .build/release/slackindex). --update writes its count
# as the new budget. Needs valgrind, binutils' strip, sqlite3, python3 and the export generator (as the benchmarks:
# $SLACKINDEX_GEN_EXPORT, else ../shared/tools/gen-export beside the repository). Takes about a minute.
#
# Exit status: 0 within the tolerance, 2 more instructions than the budget allows (a regression), 4 fewer (an
# improvement: update the budget in the same commit), 1 could not measure (or the generator changed: update).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
budget="$(cd "$here/.." && pwd)/Thresholds/import-instructions.json"
messages=50000
seed=42

update=false
if [ "${1:-}" = "--update" ]; then update=true; shift; fi
bin=${1:-$repo/.build/release/slackindex}
fail() { echo "import-instructions: $*" >&2; exit 1; }
[ -x "$bin" ] || fail "no binary at $bin: build it first (swift build -c release) or name one"
for tool in valgrind strip sqlite3 python3; do
    command -v "$tool" >/dev/null 2>&1 || fail "$tool is missing (apt-get install valgrind binutils sqlite3 python3)"
done
generator=${SLACKINDEX_GEN_EXPORT:-$repo/../shared/tools/gen-export}
[ -x "$generator" ] || fail "the export generator was not found at $generator: set SLACKINDEX_GEN_EXPORT to its path"

# The export, made once per generator version (its md5 names the file).
stamp=$(md5sum "$generator" | cut -c1-12)
cache=${SLACKINDEX_BENCH_CACHE:-${TMPDIR:-/tmp}/slackindex-benchmarks}
zip="$cache/instructions-export-$messages-seed$seed-$stamp.zip"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [ ! -f "$zip" ]; then
    mkdir -p "$cache"
    "$generator" --out "$work/ws" --messages "$messages" --seed "$seed" --zip --quiet > /dev/null \
        || fail "$generator failed"
    mv "$work/ws.zip" "$zip.partial" && mv "$zip.partial" "$zip"
fi

# valgrind cannot read the static binary's debug information: measure a copy without it (the same code).
cp "$bin" "$work/slackindex" && strip --strip-debug "$work/slackindex"
status=0
valgrind --tool=callgrind --separate-threads=yes --callgrind-out-file="$work/cg.out" \
    "$work/slackindex" --db "$work/archive.sqlite" import "$zip" --quiet > "$work/import.out" 2> "$work/valgrind.log" \
    || status=$?
[ "$status" -eq 0 ] || fail "the import exited with status $status under valgrind: $(tail -3 "$work/valgrind.log")"
stored=$(sqlite3 "$work/archive.sqlite" "SELECT count(*) FROM message")
[ "$stored" -eq "$messages" ] || fail "the import stored $stored messages, not $messages"

# What else moves the count: the libraries the binary loads (their packages' versions) and the counter itself.
version() {
    local path package=""
    path=$(ldd "$bin" | awk -v name="$1" 'index($1, name) == 1 { print $3; exit }') || true
    if [ -n "$path" ]; then
        package=$( (dpkg -S "$path" || dpkg -S "$(readlink -f "$path")") 2>/dev/null | head -1 | cut -d: -f1) || true
    fi
    echo "$1 $(dpkg-query -W -f='${Version}' "${package:-unknown}" 2>/dev/null || echo unknown)"
}
libraries="valgrind $(valgrind --version | sed 's/valgrind-//'), $(version libsqlite3), $(version libdeflate), \
$(version libicuuc), $(version libc.so.6)"
python3 - "$work" "$budget" "$update" "$stamp" "$messages" "$libraries" <<'PY'
import glob, json, os, re, sys
work, budget_path, update, stamp, messages, libraries = sys.argv[1:7]
messages = int(messages)
threads = {}
for path in sorted(glob.glob(os.path.join(work, "cg.out-*"))):
    text = open(path, encoding="utf-8", errors="replace").read()
    total = re.search(r"^(?:summary|totals):\s*(\d+)", text, re.M)
    if total and int(total.group(1)) > 0:
        threads[path.rsplit("-", 1)[1]] = int(total.group(1))
if not threads:
    sys.exit("import-instructions: callgrind wrote no counts")
total = sum(threads.values())
per_thread = ", ".join(f"thread {k} {v / 1e9:.3f} G" if v >= 1e7 else f"thread {k} {v:,}" for k, v in threads.items())
print(f"import of {messages:,} messages: {total:,} instructions ({total / messages:,.0f} a message; {per_thread})")
if update == "true":
    budget = {
        "export": f"gen-export --messages {messages} --seed 42 --zip",
        "generator_md5_prefix": stamp,
        "messages": messages,
        "instructions": total,
        "tolerance_percent": 1.0,
        "measured_with": libraries,
    }
    with open(budget_path, "w") as f:
        json.dump(budget, f, indent=2)
        f.write("\n")
    print(f"budget written to {budget_path}")
    sys.exit(0)
try:
    budget = json.load(open(budget_path))
except (OSError, ValueError) as error:
    print(f"import-instructions: no budget to check against ({error}): run with --update", file=sys.stderr)
    sys.exit(1)
if budget.get("generator_md5_prefix") != stamp or budget.get("messages") != messages:
    print("import-instructions: the budget was measured on another generator's export: run with --update",
          file=sys.stderr)
    sys.exit(1)
if budget.get("measured_with") != libraries:
    print(f"note: the budget was measured with {budget.get('measured_with')}, this run with {libraries}")
allowed = float(budget["tolerance_percent"])
change = (total - budget["instructions"]) / budget["instructions"] * 100
print(f"budget {budget['instructions']:,}: {change:+.2f}% (tolerance ±{allowed}%)")
if change > allowed:
    print("REGRESSION: the import does more work than its budget allows")
    sys.exit(2)
if change < -allowed:
    print("IMPROVEMENT: fewer instructions than the budget; update it (--update) in the same commit")
    sys.exit(4)
PY
