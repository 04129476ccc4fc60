#!/usr/bin/env bash
# Big bodies through examples/httpbin beside net/http doing the same (servers/nethttpbin), in
# one run: a 256 MiB upload hashed by POST /anything and a 100 MiB download from GET /bytes, with
# each server alone on CPU 0 and curl on CPU 1, the two taking turns for ROUNDS rounds. Prints
# every sample, then the medians and their ratio. Usage (from the repository root):
#
#	bash bench/bodies.sh [ROUNDS]
set -euo pipefail
rounds=${1:-5}
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
go build -o "$work/httpbin" ./examples/httpbin
(cd bench && go build -o "$work/nethttpbin" ./servers/nethttpbin)
head -c $((256 << 20)) /dev/urandom > "$work/body"

# serve NAME PORT: starts a server on CPU 0 and sets pid.
serve() {
	case $1 in
	dwell) taskset -c 0 "$work/httpbin" -addr 127.0.0.1:$2 -max-body 300000000 > "$work/out" 2>&1 & ;;
	nethttp) taskset -c 0 "$work/nethttpbin" -addr 127.0.0.1:$2 > "$work/out" 2>&1 & ;;
	esac
	pid=$!
	for _ in $(seq 100); do grep -q listening "$work/out" 2>/dev/null && return; sleep 0.05; done
	echo "server $1 did not start" >&2; exit 1
}
rss() { awk '/VmRSS/ {print $2}' /proc/$1/status; }
hwm() { awk '/VmHWM/ {print $2}' /proc/$1/status; }

for r in $(seq "$rounds"); do
	for s in nethttp dwell; do
		serve $s 18770
		before=$(rss $pid)
		up=$(taskset -c 1 curl -s -o /dev/null -w '%{speed_upload}' --data-binary @"$work/body" http://127.0.0.1:18770/anything)
		down=$(taskset -c 1 curl -s -o /dev/null -w '%{speed_download}' http://127.0.0.1:18770/bytes/104857600)
		growth=$(( $(hwm $pid) - before ))
		kill $pid; wait $pid 2>/dev/null || true
		printf '%s round %d: upload %.0f MB/s, download %.0f MB/s, peak RSS growth %d KiB\n' \
			$s $r "$(echo "$up / 1000000" | bc -l)" "$(echo "$down / 1000000" | bc -l)" $growth | tee -a "$work/samples"
	done
done
median() { sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
for what in upload download; do
	n=$(grep "^nethttp" "$work/samples" | sed -E "s/.*$what ([0-9]+) MB.*/\1/" | median)
	d=$(grep "^dwell" "$work/samples" | sed -E "s/.*$what ([0-9]+) MB.*/\1/" | median)
	printf 'median %s: net/http %s MB/s, dwell %s MB/s, ratio %.2f\n' $what "$n" "$d" "$(echo "$d / $n" | bc -l)"
done
