#!/usr/bin/env bash
# Prints suffix array construction times side by side on the same inputs: sapipe's CPU
# SuffixArray (SA_THREADS threads, default all cores, and one thread), libsais 2.10.4 (the same
# threads and one; peer/libsais_bench.c), libdivsufsort 2.0.1 (Debian's libdivsufsort-dev;
# peer/divsufsort_bench.c) and Go's index/suffixarray. Seconds are the best of SA_ROUNDS rounds
# (default 5, 3 for inputs over 64 MB), each round running every tool once in turn, so that all
# see the same spells of a shared machine's load (SABENCH_CPU=1 times process CPU time instead of
# wall time). "x" columns are a peer's time over sapipe's on as many threads (over 1: sapipe is
# faster). MB is the peak RSS of the process (text + suffix array + working memory). "same" says
# whether the suffix arrays of all the builders agree byte for byte.
#
# libsais is built here from its source, fetched outside the repository (nothing of it is in
# git): LIBSAIS_SRC is either a source tree (include/libsais.h, src/libsais.c) or a git directory
# holding the tag LIBSAIS_REF (default v2.10.4), e.g. a clone of
# https://github.com/IlyaGrebnov/libsais; default $SHARED/../.peers/libsais. Without it, or
# without divsufsort, that column is left out with a note.
#
# Inputs (made once, in bench-data/sa/, not in git):
#   E. coli K-12 sequence (../shared/data, header and newlines removed), 4.6 MB
#   the first 100 MiB of the Linux 6.1 source tar (../shared/data/get-debian-data.sh --large, as root)
#   random ACGT, 100 MiB, seed 1 (sabench -gendna)
#   DNA with repeats, 100 MiB, seed 1 (sabench -genrep: repeat families, tandem repeats,
#   segmental duplications; see tools/sabench/main.go)
# SA_INPUTS picks some of them by name: ecoli, linux, dna, repeats (default all).
set -euo pipefail
cd "$(dirname "$0")/../.."
shared=${SHARED:-../shared}
data=${DEST:-bench-data}
out=$data/sa
mkdir -p "$out"
threads=${SA_THREADS:-$(nproc)}
inputs=${SA_INPUTS:-ecoli linux dna repeats}

command -v gcc >/dev/null || { echo "make bench-sa needs gcc" >&2; exit 1; }
go build -o "$out/sabench" ./tools/sabench

have_dss=0
if echo '#include <divsufsort.h>' | gcc -E - >/dev/null 2>&1; then
	gcc -O3 -o "$out/divsufsort_bench" tools/sabench/peer/divsufsort_bench.c -ldivsufsort
	have_dss=1
else
	echo "sabench: no libdivsufsort (apt-get install libdivsufsort-dev); its column is left out" >&2
fi

# libsais: from a source tree, or archived from a git directory into a temporary one.
have_ls=0
lsrc=${LIBSAIS_SRC:-$shared/../.peers/libsais}
lref=${LIBSAIS_REF:-v2.10.4}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ -d "$lsrc" ] && git --git-dir="$lsrc" rev-parse -q --verify "$lref^{commit}" >/dev/null 2>&1; then
	git --git-dir="$lsrc" archive "$lref" include src VERSION | tar -x -C "$tmp"
	lsrc=$tmp
elif [ -d "$lsrc/.git" ] && git -C "$lsrc" rev-parse -q --verify "$lref^{commit}" >/dev/null 2>&1; then
	git -C "$lsrc" archive "$lref" include src VERSION | tar -x -C "$tmp"
	lsrc=$tmp
fi
if [ -f "$lsrc/include/libsais.h" ] && [ -f "$lsrc/src/libsais.c" ]; then
	lver=$(cat "$lsrc/VERSION" 2>/dev/null || echo unknown)
	[ "$lver" = "${lref#v}" ] || echo "sabench: libsais in $lsrc is version $lver, not ${lref#v}" >&2
	if gcc -O3 -fopenmp -DLIBSAIS_OPENMP -I"$lsrc/include" -o "$out/libsais_bench" \
		tools/sabench/peer/libsais_bench.c "$lsrc/src/libsais.c"; then
		have_ls=1
	else
		echo "sabench: libsais did not build (gcc with OpenMP needed); its column is left out" >&2
	fi
else
	echo "sabench: no libsais source (set LIBSAIS_SRC to a source tree or git directory; see the top of $0); its column is left out" >&2
fi

for name in $inputs; do
	case $name in
	ecoli) [ -f "$out/ecoli.seq" ] || zcat "$shared/data/ecoli_k12_mg1655.fna.gz" | grep -v '^>' | tr -d '\r\n' >"$out/ecoli.seq" ;;
	dna) [ -f "$out/dna100M.seq" ] || "$out/sabench" -gendna $((100 << 20)) "$out/dna100M.seq" ;;
	repeats) [ -f "$out/repeats100M.seq" ] || "$out/sabench" -genrep $((100 << 20)) "$out/repeats100M.seq" ;;
	linux)
		linux=$data/debian/linux-6.1-100M.tar
		if [ ! -f "$linux" ] && ! DEST=$data/debian bash "$shared/data/get-debian-data.sh" --large >/dev/null; then
			echo "sabench: could not make $linux (get-debian-data.sh --large must run as root); skipping it" >&2
		fi
		;;
	*) echo "sabench: unknown input $name in SA_INPUTS" >&2; exit 1 ;;
	esac
done

printf '%-22s %6s %9s %9s %9s %9s %9s %9s %7s %7s %7s %7s %7s %7s %7s  %s\n' input MB \
	"sapipe/${threads}t" sapipe/1t "lsais/${threads}t" lsais/1t dss Go \
	"x lsais" "x ls/1t" "x dss" "x Go" "MB sap" "MB ls" "MB dss" same

# best A B: the smaller number.
best() { awk -v a="$1" -v b="$2" 'BEGIN { print (b == "" || a < b) ? a : b }'; }

row() {
	local label=$1 file=$2
	[ -f "$file" ] || return 0
	local n rounds ours="" oursk="" one="" ls="" lsk="" ls1="" dss="" dssk="" gos="" same=yes s k
	n=$(stat -c %s "$file")
	rounds=${SA_ROUNDS:-$((n > 64000000 ? 3 : 5))}
	# Agreement first: each peer writes its suffix array; sapipe's is compared with the first.
	local want=""
	if [ $have_ls = 1 ]; then
		read -r ls lsk < <("$out/libsais_bench" "$file" "$threads" 1 "$out/want.ls")
		want=$out/want.ls
	fi
	if [ $have_dss = 1 ]; then
		read -r dss dssk < <("$out/divsufsort_bench" "$file" 1 "$out/want.dss")
		if [ -z "$want" ]; then
			want=$out/want.dss
		elif ! cmp -s "$want" "$out/want.dss"; then
			same=NO
		fi
	fi
	if [ -n "$want" ]; then
		if read -r s oursk < <("$out/sabench" -algo sapipe -threads "$threads" -reps 1 -check "$want" "$file"); then
			ours=$s
		else
			same=NO
		fi
	else
		same=-
	fi
	rm -f "$out/want.ls" "$out/want.dss"
	for _ in $(seq "$rounds"); do
		read -r s k < <("$out/sabench" -algo sapipe -threads "$threads" -reps 1 "$file")
		ours=$(best "$s" "$ours")
		oursk=${oursk:-$k}
		if [ $have_ls = 1 ]; then
			read -r s k < <("$out/libsais_bench" "$file" "$threads" 1)
			ls=$(best "$s" "$ls")
		fi
		read -r s k < <("$out/sabench" -algo sapipe -threads 1 -reps 1 "$file")
		one=$(best "$s" "$one")
		if [ $have_ls = 1 ]; then
			read -r s k < <("$out/libsais_bench" "$file" 1 1)
			ls1=$(best "$s" "$ls1")
		fi
		if [ $have_dss = 1 ]; then
			read -r s k < <("$out/divsufsort_bench" "$file" 1)
			dss=$(best "$s" "$dss")
		fi
		read -r s k < <("$out/sabench" -algo go -reps 1 "$file")
		gos=$(best "$s" "$gos")
	done
	awk -v l="$label" -v n="$n" -v o="$ours" -v s="$one" -v ls="$ls" -v ls1="$ls1" -v d="$dss" -v g="$gos" \
		-v ok="$oursk" -v lk="$lsk" -v dk="$dssk" -v same="$same" '
	function t(x) { return x == "" ? "-" : sprintf("%.3f", x) }
	function r(x, y) { return x == "" || y == "" ? "-" : sprintf("%.2fx", x / y) }
	function m(x) { return x == "" ? "-" : sprintf("%d", x / 1024) }
	BEGIN {
		printf "%-22s %6.1f %9s %9s %9s %9s %9s %9s %7s %7s %7s %7s %7s %7s %7s  %s\n", l, n / 1e6,
			t(o), t(s), t(ls), t(ls1), t(d), t(g), r(ls, o), r(ls1, s), r(d, o), r(g, o), m(ok), m(lk), m(dk), same
	}'
}
for name in $inputs; do
	case $name in
	ecoli) row "E. coli K-12" "$out/ecoli.seq" ;;
	linux) row "Linux 6.1 tar, 100 MiB" "$data/debian/linux-6.1-100M.tar" ;;
	dna) row "random ACGT, 100 MiB" "$out/dna100M.seq" ;;
	repeats) row "DNA repeats, 100 MiB" "$out/repeats100M.seq" ;;
	esac
done
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), load average $(cut -d' ' -f1-3 /proc/loadavg); seconds: best of the rounds; x = the peer's time over sapipe's (x ls/1t: both on one thread); MB = peak RSS"
