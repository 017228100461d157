#!/usr/bin/env bash
# Prints `sapipe compress` (default, -5: 16 MiB blocks, --fast, and -3 --fast: 4 MiB blocks) beside bzip2 -9, lbzip2, pbzip2,
# bzip3 (BWT with context-mixing coding, 16 MiB blocks), zstd -19 and xz -9 on the same files:
# compressed size, ratio, compression and decompression speed (MB/s of original data, wall time,
# best of REPS runs), and whether the round trip gives the input back. Files: the text corpus
# (first 100 MiB of the Linux 6.1 tar, from ../shared/data/get-debian-data.sh --large, which needs
# root once), the E. coli genome (FASTA) and a binary file (the u32 suffix array of E. coli).
# Peers missing from PATH are named and skipped (apt-get install bzip2 lbzip2 pbzip2 bzip3 zstd xz-utils).
#   THREADS  threads for every parallel tool (default: all cores)
#   REPS     runs per measurement, the best kept (default 1)
#   FILES    the files to use instead of the three above
#   TOOLS    the tools to run (default: all)
set -euo pipefail
cd "$(dirname "$0")/.."
shared=${SHARED:-../shared}
data=${DEST:-bench-data}
threads=${THREADS:-$(nproc)}
reps=${REPS:-1}
sapipe=${SAPIPE:-bin/sapipe}
work=$data/compress
mkdir -p "$work"

if [ -z "${FILES:-}" ]; then
	tar=$data/debian/linux-6.1-100M.tar
	if [ ! -f "$tar" ]; then
		if [ "$(id -u)" = 0 ]; then
			DEST=$data/debian bash "$shared/data/get-debian-data.sh" --large >/dev/null
		else
			echo "no $tar: run as root once: DEST=$data/debian bash $shared/data/get-debian-data.sh --large" >&2
		fi
	fi
	ecoli=$shared/data/ecoli.fa
	sa=$work/ecoli.sa
	[ -f "$sa" ] || "$sapipe" sa -q --device cpu -o "$sa" "$ecoli"
	FILES="$tar $ecoli $sa"
fi

# tool NAME: the compress and decompress commands of a tool (reading stdin, writing stdout)
tool() {
	case $1 in
	sapipe) comp="$sapipe compress -q -p $threads" decomp="$sapipe decompress -q -p $threads" ;;
	sapipe-5) comp="$sapipe compress -q -5 -p $threads" decomp="$sapipe decompress -q -p $threads" ;;
	sapipe-fast) comp="$sapipe compress -q -F -p $threads" decomp="$sapipe decompress -q -p $threads" ;;
	sapipe-3F) comp="$sapipe compress -q -3 -F -p $threads" decomp="$sapipe decompress -q -p $threads" ;;
	bzip2) comp="bzip2 -9" decomp="bzip2 -d" ;;
	lbzip2) comp="lbzip2 -9 -n $threads" decomp="lbzip2 -d -n $threads" ;;
	pbzip2) comp="pbzip2 -9 -p$threads" decomp="pbzip2 -d -p$threads" ;;
	bzip3) comp="bzip3 -j $threads" decomp="bzip3 -d -j $threads" ;;
	zstd) comp="zstd -19 -q -T$threads" decomp="zstd -d -q" ;;
	xz) comp="xz -9 -T$threads" decomp="xz -d" ;;
	*) echo "bench-compress: no tool $1 (TOOLS may name: sapipe sapipe-5 sapipe-fast sapipe-3F bzip2 lbzip2 pbzip2 bzip3 zstd xz)" >&2; exit 2 ;;
	esac
}

tools=${TOOLS:-"sapipe sapipe-5 sapipe-fast sapipe-3F bzip2 lbzip2 pbzip2 bzip3 zstd xz"}
missing=""
run_tools=""
for t in $tools; do
	tool "$t"
	if command -v "${comp%% *}" >/dev/null; then run_tools="$run_tools $t"; else missing="$missing $t"; fi
done
[ -n "$missing" ] && echo "missing (skipped):$missing -- apt-get install bzip2 lbzip2 pbzip2 bzip3 zstd xz-utils" >&2

# best SECONDS of REPS runs of a command line with stdin $1 and stdout $2
best() {
	local in=$1 out=$2 cmd=$3 b="" s
	for _ in $(seq "$reps"); do
		s=$( { /usr/bin/time -f %e sh -c "$cmd <'$in' >'$out'" ; } 2>&1 | tail -n1)
		if [ -z "$b" ] || [ "$(echo "$s < $b" | bc -l)" = 1 ]; then b=$s; fi
	done
	echo "$b"
}

printf '%-22s %-11s %12s %8s %9s %10s %10s  %s\n' file tool bytes ratio "% of in" "comp MB/s" "dec MB/s" ok
for f in $FILES; do
	[ -f "$f" ] || { echo "no $f, skipped" >&2; continue; }
	size=$(stat -c %s "$f")
	mb=$(echo "$size / 1000000" | bc -l)
	for t in $run_tools; do
		tool "$t"
		c=$(best "$f" "$work/out.z" "$comp")
		d=$(best "$work/out.z" "$work/out.d" "$decomp")
		z=$(stat -c %s "$work/out.z")
		if cmp -s "$f" "$work/out.d"; then ok=yes; else ok=NO; fi
		printf '%-22s %-11s %12d %8.3f %8.2f%% %10.1f %10.1f  %s\n' "$(basename "$f")" "$t" "$z" \
			"$(echo "$size / $z" | bc -l)" "$(echo "100 * $z / $size" | bc -l)" \
			"$(echo "$mb / $c" | bc -l)" "$(echo "$mb / $d" | bc -l)" "$ok"
	done
	# where sapipe's compression time goes: sorting (the backend's suffix arrays) and the rest
	case " $run_tools " in *" sapipe "*)
		"$sapipe" compress -v -p "$threads" <"$f" 2>&1 >/dev/null | grep -o 'in [0-9.]*m\?s, .*' | sed "s|^|  sapipe $(basename "$f"): |" ;;
	esac
done
rm -f "$work/out.z" "$work/out.d"
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), load $(cut -d' ' -f1-3 /proc/loadavg); $threads threads; MB = 10^6 bytes of original data"
