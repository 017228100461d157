#!/usr/bin/env bash
# Prints `sapipe compress` (default, -5: 16 MiB blocks, --fast, and -3 --fast: 4 MiB blocks) beside bzip2 -9, lbzip2, pbzip2,
# bzip3 (BWT with context-mixing coding, 16 MiB blocks), zstd -19 and xz -9 on the same files:
# compressed size, ratio, compression and decompression speed (MB/s of original data, wall time,
# best of REPS runs), and whether the round trip gives the input back. Files: the text corpus
# (first 100 MiB of the Linux 6.1 tar, from ../shared/data/get-debian-data.sh --large, which needs
# root once), the E. coli genome (FASTA) and a binary file (the u32 suffix array of E. coli); and
# the read sets of ../shared/tools/make-bench-data.sh in the same DEST (reads_200k and reads_1M,
# FASTQ and FASTA) where they are there, with the read-set peers beside them: Spring 1.x (lossless,
# order kept, and -r, reads reordered), zstd -19 --long=27, and sapipe --no-reads (the bytes'
# coding of format version 4).
# Peers missing from PATH are named and skipped (apt-get install bzip2 lbzip2 pbzip2 bzip3 zstd xz-utils).
# Spring is built from its source: SPRING_SRC names a source tree or a git directory of
# github.com/shubhamchandak94/Spring (its bundled Boost download cannot work offline: the build
# uses the system's, apt-get install cmake g++ libboost-filesystem-dev
# libboost-program-options-dev libboost-iostreams-dev); without it the Spring columns are skipped.
#   THREADS  threads for every parallel tool (default: all cores)
#   REPS     runs per measurement, the best kept (default 1)
#   FILES    the files to use instead of the ones above
#   TOOLS    the tools to run (default: all; read-set tools run on read sets only)
set -euo pipefail
cd "$(dirname "$0")/.."
shared=${SHARED:-../shared}
data=${DEST:-bench-data}
threads=${THREADS:-$(nproc)}
reps=${REPS:-1}
sapipe=${SAPIPE:-bin/sapipe}
sapipe=$(cd "$(dirname "$sapipe")" && pwd)/$(basename "$sapipe")
work=$data/compress
mkdir -p "$work"
work=$(cd "$work" && pwd)

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
	for r in reads_200k.fq reads_200k.fa reads_1M.fq reads_1M.fa; do
		[ -f "$data/$r" ] && FILES="$FILES $data/$r"
	done
	case " $FILES " in *reads_*) ;; *) echo "no read sets in $data: DEST=$data bash $shared/tools/make-bench-data.sh" >&2 ;; esac
fi

# Spring, built once from SPRING_SRC into $work/spring
spring=""
if [ -n "${SPRING_SRC:-}" ]; then
	spring=$work/spring/build/spring
	if [ ! -x "$spring" ]; then
		rm -rf "$work/spring" && mkdir -p "$work/spring/src"
		if [ -d "$SPRING_SRC/src" ]; then
			cp -r "$SPRING_SRC/." "$work/spring/src/"
		else
			# a git directory (a fetched snapshot may lack the bundled Boost archive, not needed)
			git --git-dir="$SPRING_SRC" ls-tree -r HEAD | while read -r _ type obj path; do
				[ "$type" = blob ] || continue
				mkdir -p "$work/spring/src/$(dirname "$path")"
				git --git-dir="$SPRING_SRC" cat-file blob "$obj" >"$work/spring/src/$path" 2>/dev/null || rm -f "$work/spring/src/$path"
			done
		fi
		sed -i 's|^add_subdirectory(boost-cmake)|find_package(Boost REQUIRED COMPONENTS filesystem program_options iostreams)|' "$work/spring/src/CMakeLists.txt"
		mkdir -p "$work/spring/build"
		if ! (cd "$work/spring/build" && cmake ../src -DCMAKE_BUILD_TYPE=Release >../cmake.log 2>&1 && make -j"$threads" >../make.log 2>&1); then
			echo "Spring did not build (see $work/spring/*.log): skipped" >&2
			spring=""
		fi
	fi
else
	echo "no SPRING_SRC: Spring skipped (fetch github.com/shubhamchandak94/Spring, SPRING_SRC=its source or git dir)" >&2
fi

# tool NAME: the compress and decompress commands of a tool, shell text reading "$IN" and writing
# "$OUT" (the file to compress or decompress, and the output), run in $work
tool() {
	case $1 in
	sapipe) comp="$sapipe compress -q -p $threads" decomp="$sapipe decompress -q -p $threads" ;;
	sapipe-5) comp="$sapipe compress -q -5 -p $threads" decomp="$sapipe decompress -q -p $threads" ;;
	sapipe-fast) comp="$sapipe compress -q -F -p $threads" decomp="$sapipe decompress -q -p $threads" ;;
	sapipe-3F) comp="$sapipe compress -q -3 -F -p $threads" decomp="$sapipe decompress -q -p $threads" ;;
	sapipe-bytes) comp="$sapipe compress -q --no-reads -p $threads" decomp="$sapipe decompress -q -p $threads" ;;
	bzip2) comp="bzip2 -9" decomp="bzip2 -d" ;;
	lbzip2) comp="lbzip2 -9 -n $threads" decomp="lbzip2 -d -n $threads" ;;
	pbzip2) comp="pbzip2 -9 -p$threads" decomp="pbzip2 -d -p$threads" ;;
	bzip3) comp="bzip3 -j $threads" decomp="bzip3 -d -j $threads" ;;
	zstd) comp="zstd -19 -q -T$threads" decomp="zstd -d -q" ;;
	zstd-long) comp="zstd -19 --long=27 -q -T$threads" decomp="zstd -d --long=27 -q" ;;
	xz) comp="xz -9 -T$threads" decomp="xz -d" ;;
	spring | spring-r)
		local r="" fa=""
		[ "$1" = spring-r ] && r="-r"
		case $IN in *.fa | *.fasta) fa="--fasta-input" ;; esac
		comp="rm -rf sw && mkdir sw && $spring -c $r $fa -t $threads -w sw -i \"\$IN\" -o \"\$OUT\" >/dev/null"
		decomp="rm -rf sw && mkdir sw && $spring -d -t $threads -w sw -i \"\$IN\" -o \"\$OUT\" >/dev/null"
		return ;;
	*) echo "bench-compress: no tool $1 (TOOLS may name: sapipe sapipe-5 sapipe-fast sapipe-3F sapipe-bytes bzip2 lbzip2 pbzip2 bzip3 zstd zstd-long xz spring spring-r)" >&2; exit 2 ;;
	esac
	comp="$comp <\"\$IN\" >\"\$OUT\"" decomp="$decomp <\"\$IN\" >\"\$OUT\""
}

# which tools run on which files: the read-set peers only on read sets
readset_tools="spring spring-r zstd-long sapipe-bytes"
tools=${TOOLS:-"sapipe sapipe-5 sapipe-fast sapipe-3F sapipe-bytes bzip2 lbzip2 pbzip2 bzip3 zstd zstd-long xz spring spring-r"}
missing=""
run_tools=""
for t in $tools; do
	IN=x tool "$t"
	case $t in spring*) have=$spring ;; *) have=$(command -v "${comp%% *}" || true) ;; esac
	if [ -n "$have" ]; then run_tools="$run_tools $t"; else missing="$missing $t"; fi
done
[ -n "$missing" ] && echo "missing (skipped):$missing -- apt-get install bzip2 lbzip2 pbzip2 bzip3 zstd xz-utils; SPRING_SRC for spring" >&2

# best SECONDS of REPS runs of a command with IN=$1 and OUT=$2
best() {
	local in=$1 out=$2 cmd=$3 b="" s
	for _ in $(seq "$reps"); do
		s=$( { cd "$work" && IN=$in OUT=$out /usr/bin/time -f %e sh -c "$cmd" ; } 2>&1 | tail -n1)
		if [ -z "$b" ] || [ "$(echo "$s < $b" | bc -l)" = 1 ]; then b=$s; fi
	done
	echo "$b"
}

printf '%-22s %-12s %12s %8s %9s %10s %10s  %s\n' file tool bytes ratio "% of in" "comp MB/s" "dec MB/s" ok
for f in $FILES; do
	[ -f "$f" ] || { echo "no $f, skipped" >&2; continue; }
	f=$(cd "$(dirname "$f")" && pwd)/$(basename "$f")
	size=$(stat -c %s "$f")
	mb=$(echo "$size / 1000000" | bc -l)
	reads=""
	case $(basename "$f") in reads_*) reads=yes ;; esac
	for t in $run_tools; do
		case " $readset_tools " in *" $t "*) [ -n "$reads" ] || continue ;; esac
		IN=$f tool "$t"
		c=$(best "$f" "$work/out.z" "$comp")
		d=$(best "$work/out.z" "$work/out.d" "$decomp")
		z=$(stat -c %s "$work/out.z")
		if cmp -s "$f" "$work/out.d"; then ok=yes; else ok=NO; fi
		[ "$t" = spring-r ] && ok="$ok (order not kept: not compared)" && cmp -s <(sort "$f") <(sort "$work/out.d") && ok="yes, reordered"
		printf '%-22s %-12s %12d %8.3f %8.2f%% %10.1f %10.1f  %s\n' "$(basename "$f")" "$t" "$z" \
			"$(echo "$size / $z" | bc -l)" "$(echo "100 * $z / $size" | bc -l)" \
			"$(echo "$mb / $c" | bc -l)" "$(echo "$mb / $d" | bc -l)" "$ok"
	done
	# where sapipe's compression time goes: sorting (the backend's suffix arrays) and the rest; a
	# read set's parts
	case " $run_tools " in *" sapipe "*)
		"$sapipe" compress -v -p "$threads" <"$f" 2>&1 >/dev/null | grep -o 'in [0-9.]*m\?s, .*' | sed "s|^|  sapipe $(basename "$f"): |" ;;
	esac
done
rm -rf "$work/out.z" "$work/out.d" "$work/sw"
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), load $(cut -d' ' -f1-3 /proc/loadavg); $threads threads; MB = 10^6 bytes of original data"
