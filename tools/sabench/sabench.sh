#!/usr/bin/env bash
# Prints suffix array construction speed side by side on the same inputs: sapipe's CPU
# SuffixArray (all cores, and one thread), libdivsufsort 2.0.1 (Debian's libdivsufsort-dev, through
# peer/divsufsort_bench.c compiled here with gcc) and Go's index/suffixarray. MB/s is input MB
# (10^6 bytes) per second, the best of SA_ROUNDS rounds (default 5, 3 for inputs over 64 MB), each
# round running every tool once in turn, so that all see the same spells of a shared machine's
# load (SABENCH_CPU=1 times process CPU time instead of wall time). "same" says whether sapipe's
# suffix array equals divsufsort's byte for byte. Inputs (made once, in bench-data/sa/, not in git):
#   E. coli K-12 sequence (../shared/data, header and newlines removed), 4.6 MB
#   the first 100 MiB of the Linux 6.1 source tar (../shared/data/get-debian-data.sh --large, as root)
#   random ACGT, 32 MiB, seed 1
set -euo pipefail
cd "$(dirname "$0")/../.."
shared=${SHARED:-../shared}
data=${DEST:-bench-data}
out=$data/sa
mkdir -p "$out"

if ! command -v gcc >/dev/null || ! echo '#include <divsufsort.h>' | gcc -E - >/dev/null 2>&1; then
	echo "make bench-sa needs gcc and libdivsufsort: apt-get install gcc libdivsufsort-dev" >&2
	exit 1
fi
gcc -O3 -o "$out/divsufsort_bench" tools/sabench/peer/divsufsort_bench.c -ldivsufsort
go build -o "$out/sabench" ./tools/sabench

[ -f "$out/ecoli.seq" ] || zcat "$shared/data/ecoli_k12_mg1655.fna.gz" | grep -v '^>' | tr -d '\r\n' >"$out/ecoli.seq"
[ -f "$out/dna32M.seq" ] || "$out/sabench" -gendna $((32 << 20)) "$out/dna32M.seq"
linux=$data/debian/linux-6.1-100M.tar
if [ ! -f "$linux" ]; then
	if ! DEST=$data/debian bash "$shared/data/get-debian-data.sh" --large >/dev/null; then
		echo "sabench: could not make $linux (get-debian-data.sh --large must run as root); skipping it" >&2
	fi
fi

threads=$(nproc)
printf '%-22s %8s %10s %10s %10s %10s %8s %8s %9s %9s  %s\n' input MB "sapipe/${threads}t" "sapipe/1t" divsufsort "Go" "x dss" "x Go" "MB sapipe" "MB dss" same

# best A B: the smaller number.
best() { awk -v a="$1" -v b="$2" 'BEGIN { print (b == "" || a < b) ? a : b }'; }

row() {
	local label=$1 file=$2
	[ -f "$file" ] || return 0
	local n rounds dss="" dssk ours="" oursk one="" gos="" same=yes s k
	n=$(stat -c %s "$file")
	rounds=${SA_ROUNDS:-$((n > 64000000 ? 3 : 5))}
	# Agreement first: divsufsort writes its suffix array, sapipe compares.
	read -r s dssk < <("$out/divsufsort_bench" "$file" 1 "$out/want.sa")
	dss=$s
	if read -r s oursk < <("$out/sabench" -algo sapipe -threads "$threads" -reps 1 -check "$out/want.sa" "$file"); then
		ours=$s
	else
		same=NO
	fi
	rm -f "$out/want.sa"
	for _ in $(seq "$rounds"); do
		read -r s k < <("$out/divsufsort_bench" "$file" 1)
		dss=$(best "$s" "$dss")
		read -r s k < <("$out/sabench" -algo sapipe -threads "$threads" -reps 1 "$file")
		ours=$(best "$s" "$ours")
		oursk=${oursk:-$k}
		read -r s k < <("$out/sabench" -algo sapipe -threads 1 -reps 1 "$file")
		one=$(best "$s" "$one")
		read -r s k < <("$out/sabench" -algo go -reps 1 "$file")
		gos=$(best "$s" "$gos")
	done
	awk -v l="$label" -v n="$n" -v d="$dss" -v o="$ours" -v s="$one" -v g="$gos" -v ok="$oursk" -v dk="$dssk" -v same="$same" 'BEGIN {
		mb = n / 1e6
		printf "%-22s %8.1f %10.2f %10.2f %10.2f %10.2f %7.2fx %7.2fx %9d %9d  %s\n", l, mb, mb / o, mb / s, mb / d, mb / g, d / o, g / o, ok / 1024, dk / 1024, same
	}'
}
row "E. coli K-12" "$out/ecoli.seq"
row "Linux 6.1 tar, 100 MiB" "$linux"
row "random ACGT, 32 MiB" "$out/dna32M.seq"
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), load average $(cut -d' ' -f1-3 /proc/loadavg); MB/s best of the rounds; x dss / x Go = sapipe (${threads} threads) speed over the peer's; MB = peak RSS of the process (text + suffix array + working memory)"
