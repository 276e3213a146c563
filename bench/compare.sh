#!/usr/bin/env bash
# Compares `logtally replay -dry-run` with GoAccess and cat on the same
# generated combined log and prints lines/s and ratios.
#
#   bench/compare.sh [LINES]          (default 1000000; the log is kept in
#                                      $BENCH_DIR, default /tmp/logtally-bench)
#
# GoAccess is the Debian package (apt-get install -y goaccess); without it
# its rows say so.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"
LINES=${1:-1000000}
DIR=${BENCH_DIR:-/tmp/logtally-bench}
mkdir -p "$DIR"
LOG="$DIR/access-$LINES.log"
[ -s "$LOG" ] || go run ./bench/gen -lines "$LINES" -o "$LOG"
BYTES=$(stat -c %s "$LOG")

BIN="$DIR/logtally"
go build -o "$BIN" ./cmd/logtally
LT=("$BIN" replay)

# seconds CMD...: wall-clock seconds of the best of $RUNS runs (default
# 3), output discarded.
seconds() {
  local best=""
  for _ in $(seq "${RUNS:-3}"); do
    local s e
    s=$(date +%s.%N)
    "$@" >/dev/null 2>&1
    e=$(date +%s.%N)
    best=$(echo "$s $e ${best:-1e9}" | awk '{d=$2-$1; print (d<$3)?d:$3}')
  done
  echo "$best"
}

cat "$LOG" >/dev/null # warm the page cache
printf 'log: %s: %d lines, %d bytes (%d bytes/line), %s, %d cores\n' "$LOG" "$LINES" "$BYTES" $((BYTES / LINES)) "$(go env GOVERSION)" "$(nproc)"
T_CAT=$(seconds cat "$LOG")
T_LT=$(seconds "${LT[@]}" -dry-run -site example.com -format combined "$LOG")
T_LT1=$(GOMAXPROCS=1 seconds "${LT[@]}" -dry-run -site example.com -format combined "$LOG")
rows=("cat|$T_CAT" "logtally replay -dry-run|$T_LT" "logtally replay -dry-run, GOMAXPROCS=1|$T_LT1")
if command -v goaccess >/dev/null; then
  T_GA=$(RUNS=1 seconds goaccess "$LOG" --log-format=COMBINED -o "$DIR/report.html")
  T_GAR=$(RUNS=1 seconds goaccess "$LOG" --log-format=COMBINED --ignore-panel=VISITORS --ignore-panel=REQUESTS_STATIC \
    --ignore-panel=NOT_FOUND --ignore-panel=HOSTS --ignore-panel=OS --ignore-panel=BROWSERS --ignore-panel=VISIT_TIMES \
    --ignore-panel=REFERRERS --ignore-panel=REFERRING_SITES --ignore-panel=KEYPHRASES --ignore-panel=STATUS_CODES \
    --ignore-panel=REMOTE_USER --ignore-panel=CACHE_STATUS --ignore-panel=GEO_LOCATION --ignore-panel=MIME_TYPE \
    --ignore-panel=TLS_TYPE -o "$DIR/report-requests.html")
  rows+=("goaccess (full report)|$T_GA" "goaccess (requests panel only)|$T_GAR")
else
  echo "goaccess: not installed (apt-get install -y goaccess); its rows are skipped"
fi
printf '%-42s %9s %14s %10s\n' tool seconds lines/s "vs logtally"
for r in "${rows[@]}"; do
  name=${r%%|*} t=${r##*|}
  echo "$name $t $LINES $T_LT" | awk -v n="$name" '{printf "%-42s %9.3f %14.0f %9.2fx\n", n, $(NF-2), $(NF-1)/$(NF-2), $NF/$(NF-2)}'
done
echo "(vs logtally: logtally's time / the tool's time; above 1 means faster than logtally)"
