#!/usr/bin/env bash
# The persistent index and FM-index search, beside the peers: index build time and memory of
# `sapipe index` against `bwa index` (and `bowtie2-build` when installed) on the same genome, the
# start-up of a run that maps a ready index against one that builds it, and count/locate
# throughput (patterns/s and characters/s) for PATTERNS patterns of 20-150 bases drawn from the
# largest genome in ../shared/data (tools/benchpat, seeded). Wall times are the best of RUNS runs.
#
#   bash tools/bench-index.sh                 # PATTERNS=10000000 RUNS=3 by default
#   DEVICE=gpu bash tools/bench-index.sh      # also sapipe count --device gpu (on a GPU machine)
set -euo pipefail
cd "$(dirname "$0")/.."
shared=${SHARED:-../shared}
dir=${DEST:-bench-data}/index
sapipe=${SAPIPE:-bin/sapipe}
npat=${PATTERNS:-10000000}
runs=${RUNS:-3}
mkdir -p "$dir"
if [ ! -x /usr/bin/time ]; then
	echo "bench-index needs GNU time: apt-get install time" >&2
	exit 1
fi
[ -x "$sapipe" ] || CGO_ENABLED=0 go build -trimpath -o "$sapipe" ./cmd/sapipe

# The largest genome of the shared data, by its uncompressed size.
genome="" best=0
for f in "$shared"/data/*.fa "$shared"/data/*.fa.gz "$shared"/data/*.fna "$shared"/data/*.fna.gz; do
	[ -e "$f" ] || continue
	case $f in
	*.gz) size=$(gzip -dc "$f" | wc -c) ;;
	*) size=$(wc -c <"$f") ;;
	esac
	if [ "$size" -gt "$best" ]; then best=$size genome=$f; fi
done
[ -n "$genome" ] || { echo "no genome in $shared/data" >&2; exit 1; }
fa=$dir/genome.fa
case $genome in
*.gz) gzip -dc "$genome" >"$fa" ;;
*) cp "$genome" "$fa" ;;
esac
pats=$dir/patterns-$npat.txt
[ -s "$pats" ] || go run ./tools/benchpat -n "$npat" -min 20 -max 150 "$fa" >"$pats"
chars=$(($(wc -c <"$pats") - npat))

# best NAME CMD...: runs CMD RUNS times (stdout to $dir/NAME.out), sets secs (best wall time) and
# mb (its peak RSS).
best() {
	local name=$1 s k
	shift
	secs="" mb=""
	for _ in $(seq "$runs"); do
		/usr/bin/time -f '%e %M' -o "$dir/$name.time" "$@" >"$dir/$name.out" 2>/dev/null
		read -r s k <"$dir/$name.time"
		if [ -z "$secs" ] || [ "$(echo "$s < $secs" | bc -l)" = 1 ]; then secs=$s mb=$((k / 1024)); fi
	done
}

echo "genome: $genome ($(grep -v '>' "$fa" | tr -d '\n' | wc -c) bases); $npat patterns of 20-150 bases ($chars characters)"
printf '%-44s %10s %8s  %s\n' step "wall s" "RSS MB" note

best sapipe-index "$sapipe" index -q -o "$dir/genome.sai" "$fa"
sai_s=$secs
printf '%-44s %10.2f %8d  %s\n' "sapipe index" "$secs" "$mb" "$(($(wc -c <"$dir/genome.sai") / 1048576)) MiB index file"
bwa_s=-
if command -v bwa >/dev/null; then
	best bwa-index bwa index -p "$dir/bwa-genome" "$fa"
	bwa_s=$secs
	printf '%-44s %10.2f %8d  %s\n' "bwa index" "$secs" "$mb" "$(bwa 2>&1 | grep -m1 Version || true)"
else
	printf '%-44s %10s %8s  %s\n' "bwa index" - - "not installed (apt-get install bwa)"
fi
bt2_s=-
if command -v bowtie2-build >/dev/null; then
	best bowtie2-build bowtie2-build --threads "$(nproc)" -q "$fa" "$dir/bt2-genome"
	bt2_s=$secs
	printf '%-44s %10.2f %8d\n' "bowtie2-build --threads $(nproc)" "$secs" "$mb"
else
	printf '%-44s %10s %8s  %s\n' "bowtie2-build" - - "not installed"
fi

# Start-up: an empty run against the mapped index, and mummer building its index from the FASTA
# file against mummer loading the .sai (one 30-base query).
RUNS=$((runs * 3)) best startup "$sapipe" count -q -i "$dir/genome.sai" /dev/null
printf '%-44s %10.3f %8d  %s\n' "sapipe count, no patterns (map + check)" "$secs" "$mb" "start-up against the index file"
head -c 30 <(grep -v '>' "$fa" | tr -d '\n') | sed '1s/^/>q\n/;$a\' >"$dir/q.fa"
best mummer-fasta "$sapipe" mummer -q -maxmatch "$fa" "$dir/q.fa"
printf '%-44s %10.3f %8d\n' "sapipe mummer genome.fa (builds the index)" "$secs" "$mb"
best mummer-sai "$sapipe" mummer -q -maxmatch "$dir/genome.sai" "$dir/q.fa"
printf '%-44s %10.3f %8d  %s\n' "sapipe mummer genome.sai (maps it)" "$secs" "$mb" \
	"$(cmp -s "$dir/mummer-fasta.out" "$dir/mummer-sai.out" && echo "same output" || echo "OUTPUT DIFFERS")"

# Search throughput.
search() { # label device command options...
	local label=$1 device=$2 cmd=$3
	shift 3
	best "$cmd-$device" "$sapipe" "$cmd" -q --device "$device" -i "$dir/genome.sai" "$@" "$pats"
	printf '%-44s %10.2f %8d  %s\n' "$label" "$secs" "$mb" \
		"$(echo "$npat / $secs / 1000000" | bc -l | xargs printf '%.2f') M patterns/s, $(echo "$chars / $secs / 1000000" | bc -l | xargs printf '%.0f') M characters/s"
}
search "sapipe count (cpu, $(nproc) threads)" cpu count
count_s=$secs
search "sapipe count -b (cpu, both strands)" cpu count -b
search "sapipe locate (cpu)" cpu locate
if [ -n "${DEVICE:-}" ]; then
	search "sapipe count ($DEVICE)" "$DEVICE" count
	cmp -s "$dir/count-cpu.out" "$dir/count-$DEVICE.out" && echo "count on $DEVICE: same output as the CPU" || echo "count on $DEVICE: OUTPUT DIFFERS from the CPU"
fi
hits=$(awk '$2 > 0' "$dir/count-cpu.out" | wc -l)
echo "patterns found: $hits of $npat"
for peer in bwa:$bwa_s bowtie2-build:$bt2_s; do
	s=${peer#*:}
	[ "$s" = - ] && continue
	echo "counting $npat patterns took $count_s s; ${peer%%:*} takes $s s just to index the genome ($(echo "$s / $count_s" | bc -l | xargs printf '%.1f')x)"
done
echo "sapipe index vs bwa index: $sai_s s vs $bwa_s s"
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), load average $(cut -d' ' -f1-3 /proc/loadavg) (shared)"
