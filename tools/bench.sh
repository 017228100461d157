#!/usr/bin/env bash
# Prints `mummer` (MUMmer 3.23) and `sapipe mummer` side by side on the same inputs: wall time,
# peak RSS, their ratios, and whether the outputs agree (up to the order of lines tied on one
# query position). Inputs come from ../shared/tools/make-bench-data.sh (made once, in bench-data/).
set -euo pipefail
cd "$(dirname "$0")/.."
shared=${SHARED:-../shared}
data=${DEST:-bench-data}
DEST=$data bash "$shared/tools/make-bench-data.sh" >/dev/null
sapipe=${SAPIPE:-bin/sapipe}
out=$data/out
mkdir -p "$out"
if ! command -v mummer >/dev/null || [ ! -x /usr/bin/time ]; then
	echo "make bench needs mummer and GNU time: apt-get install mummer time" >&2
	exit 1
fi

# measure NAME CMD...: runs CMD with stdout to $out/NAME, sets secs and mb.
measure() {
	local name=$1
	shift
	/usr/bin/time -f '%e %M' -o "$out/$name.time" "$@" >"$out/$name" 2>/dev/null
	read -r secs kb <"$out/$name.time"
	mb=$((kb / 1024))
}

printf '%-34s %-22s %9s %8s %9s %8s %8s %8s  %s\n' input options "mummer s" "MB" "sapipe s" "MB" speedup "mem" same
row() {
	local label=$1 opts=$2 ref=$3 mq=$4 sq=$5
	local ms mm ss sm same
	if [ "${SKIP_MUMMER:-}" = "$label" ]; then
		ms=- mm=-
	else
		measure mummer.out mummer $opts "$ref" "$mq"
		ms=$secs mm=$mb
	fi
	measure sapipe.out "$sapipe" mummer -q $opts "$ref" "$sq"
	ss=$secs sm=$mb
	if [ "$ms" = - ]; then
		printf '%-34s %-22s %9s %8s %9.2f %8d %8s %8s  %s\n' "$label" "$opts" - - "$ss" "$sm" - - -
		return
	fi
	if python3 tools/mumcanon.py "$out/mummer.out" "$out/sapipe.out"; then same=yes; else same=NO; fi
	printf '%-34s %-22s %9.2f %8d %9.2f %8d %7.1fx %7.2fx  %s\n' "$label" "$opts" "$ms" "$mm" "$ss" "$sm" \
		"$(echo "$ms / $ss" | bc -l)" "$(echo "$sm / $mm" | bc -l)" "$same"
}

o="-maxmatch -l 20 -b -c"
row "E. coli vs mutated copy" "$o" "$data/ecoli.fa" "$data/ecoli_mut.fa" "$data/ecoli_mut.fa"
row "E. coli vs Drosophila 1%" "$o" "$data/ecoli.fa" "$data/dm1pct.fa" "$data/dm1pct.fa"
row "200k reads (FASTA) vs E. coli" "$o" "$data/ecoli.fa" "$data/reads_200k.fa" "$data/reads_200k.fa"
SKIP_MUMMER="200k reads (FASTQ) vs E. coli" row "200k reads (FASTQ) vs E. coli" "$o" "$data/ecoli.fa" - "$data/reads_200k.fq"
SKIP_MUMMER="1M reads (FASTQ) vs E. coli" row "1M reads (FASTQ) vs E. coli" "$o" "$data/ecoli.fa" - "$data/reads_1M.fq"
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); speedup = mummer s / sapipe s, mem = sapipe MB / mummer MB"
