#!/usr/bin/env bash
# sapipe on one GPU against all of them, on a lent machine of several cards: the same command and
# inputs, output compared byte for byte (md5 of each run's output), a markdown table printed.
#
#   make bench-multigpu (or bash tools/bench-multigpu.sh)   # builds bin/sapipe and bin/genscale
#   where Go is, else uses them as found; E. coli from ECOLI
#
# Rows (ROWS, default "mummer compress"):
#   mummer    READS (10M) reads of 150 bases made by genscale from E. coli, the file given REPEAT
#             (10) times over (100 M reads by default; with PIPE=1 through one pipe from cat
#             instead), sapipe mummer -maxmatch -l 20 -b -c; -v's stage times go to $DEST/*.log; the
#             output to a file in DEST (about 15 GB for 100 M reads), hashed after the timing
#   compress  sapipe compress of a CSIZE (1G) genome made by genscale (DNA with repeats)
#   pages     PREADS (2M) reads of 150 bases against the index of a PSIZE (3.1G) genome made by
#             genscale, sapipe mummer -l 20 -b: each card of CARDS with the whole index, then with
#             --gpu-memory PMEM (default 62% of the index file: room for half of the pages), where
#             one card pages through the halves in turn and several cards hold a half each
#   The table starts with the host's memory bandwidth (tools/hostbw, one thread and every thread):
#   hosts differ from call to call, and it bounds the mummer row on the lent two-H200 hosts.
# Settings (environment): DEST (/tmp/multigpu) inputs; ECOLI (E. coli FASTA, plain or gzip);
# CARDS ("gpu:0 gpu:all"); SAPIPE (bin/sapipe); GENSCALE (bin/genscale); TIMEOUT (300) seconds a
# command; EXTRA_CPU (1: the compress row also runs on the CPU, for its bytes).
# The mummer row can also compare builds and settings, run after run in turn, ROUNDS (1) times:
# BUILDS ("NAME=BINARY ...", default SAPIPE alone) and VARIANTS ("NAME:VAR=VALUE,VAR=VALUE ...",
# default none; "default" for none; ARGS=X gives sapipe the argument X instead), e.g.
# BUILDS="main=bin/sapipe next=bin/sapipe-next" VARIANTS="default w12:SAPIPE_GPU_WORKERS=12
# t48:ARGS=-t=48"; with NULL=1 its output goes to /dev/null (no md5).
set -uo pipefail
cd "$(dirname "$0")/.."
DEST=${DEST:-/tmp/multigpu}
ECOLI=${ECOLI:-../shared/data/ecoli_k12_mg1655.fna.gz}
READS=${READS:-10M}
REPEAT=${REPEAT:-10}
CSIZE=${CSIZE:-1G}
ROWS=${ROWS:-mummer compress}
CARDS=${CARDS:-gpu:0 gpu:all}
SAPIPE=${SAPIPE:-bin/sapipe}
GENSCALE=${GENSCALE:-bin/genscale}
HOSTBW=${HOSTBW:-bin/hostbw}
TIMEOUT=${TIMEOUT:-300}
EXTRA_CPU=${EXTRA_CPU:-1}
PSIZE=${PSIZE:-3.1G}
PREADS=${PREADS:-2M}
mkdir -p "$DEST"

# The binaries: built from this tree when Go is there, else used as found (carried to the GPU machine).
if command -v go >/dev/null; then
	CGO_ENABLED=0 go build -trimpath -o "$SAPIPE" ./cmd/sapipe || exit 1
	CGO_ENABLED=0 go build -trimpath -o "$GENSCALE" ./tools/genscale || exit 1
	CGO_ENABLED=0 go build -trimpath -o "$HOSTBW" ./tools/hostbw || exit 1
fi
[ -x "$SAPIPE" ] && [ -x "$GENSCALE" ] || { echo "bench-multigpu: $SAPIPE or $GENSCALE missing" >&2; exit 1; }

secs() { awk -v s="$1" -v e="$2" 'BEGIN { printf "%.2f", (e - s) / 1e9 }'; }

echo "| row | device | wall s | rate | output md5 |"
echo "|---|---|---|---|---|"
if [ -x "$HOSTBW" ]; then
	"$HOSTBW" | while read -r n unit gbs _; do
		echo "| host memory: 256 MiB buffers copied on $n ${unit%:} | host | | $gbs GB/s | |"
	done
fi

if [[ " $ROWS " == *" mummer "* ]]; then
	ref=$DEST/ecoli.fa
	[ -s "$ref" ] || { if [[ $ECOLI == *.gz ]]; then zcat "$ECOLI"; else cat "$ECOLI"; fi >"$ref"; }
	reads=$DEST/reads_$READS.fq
	[ -s "$reads" ] || "$GENSCALE" reads -i "$ref" --n "$READS" --len 150 --seed 5 -o "$reads"
	n=$(($(wc -l <"$reads") / 4 * REPEAT))
	files=()
	for _ in $(seq "$REPEAT"); do files+=("$reads"); done
	cat "$reads" >/dev/null # in the page cache before the first run
	builds=${BUILDS:-sapipe=$SAPIPE}
	variants=${VARIANTS:-default}
	for round in $(seq "${ROUNDS:-1}"); do
		for build in $builds; do
			for variant in $variants; do
				for dev in $CARDS; do
					bin=${build#*=}
					envs=()
					[[ $variant == *:* ]] && IFS=, read -ra envs <<<"${variant#*:}"
					# ARGS=... in a variant is an argument of sapipe's, not the environment's.
					args=()
					for i in "${!envs[@]}"; do
						if [[ ${envs[$i]} == ARGS=* ]]; then
							args+=("${envs[$i]#ARGS=}")
							unset 'envs[i]'
						fi
					done
					tag=${build%%=*}-${variant%%:*}-${dev//:/_}-$round
					# The output goes to a file and is hashed after the timing: md5sum reads about
					# 0.5 GB/s, a third of what the cards and the host write.
					out=$DEST/mummer.out
					[ "${NULL:-0}" = 1 ] && out=/dev/null
					s=$(date +%s%N)
					if [ "${PIPE:-0}" = 1 ]; then
						(for _ in $(seq "$REPEAT"); do cat "$reads"; done) |
							env "${envs[@]}" timeout -s KILL "$TIMEOUT" "$bin" mummer -v "${args[@]}" -maxmatch -l 20 -b -c --device "$dev" "$ref" - 2>"$DEST/mummer-$tag.log" >"$out"
					else
						env "${envs[@]}" timeout -s KILL "$TIMEOUT" "$bin" mummer -v "${args[@]}" -maxmatch -l 20 -b -c --device "$dev" "$ref" "${files[@]}" 2>"$DEST/mummer-$tag.log" >"$out"
					fi
					e=$(date +%s%N)
					sum=-
					if [ "$out" != /dev/null ]; then
						sum=$(md5sum <"$out" | cut -c1-12)
						rm -f "$out"
					fi
					t=$(secs "$s" "$e")
					what=""
					[ "$builds$variants" != "sapipe=${SAPIPE}default" ] && what=" (${build%%=*}, ${variant%%:*})"
					echo "| mummer -maxmatch -l 20 -b -c, $n reads of E. coli$what | $dev | $t | $(awk -v n="$n" -v t="$t" 'BEGIN { printf "%.2f M reads/s", n / t / 1e6 }') | $sum |"
				done
			done
		done
	done
fi

if [[ " $ROWS " == *" compress "* ]]; then
	in=$DEST/genome_$CSIZE.fa
	[ -s "$in" ] || "$GENSCALE" genome --size "$CSIZE" --seed 9 -o "$in"
	bytes=$(stat -c %s "$in")
	devs=$CARDS
	[ "$EXTRA_CPU" = 1 ] && devs="$devs cpu"
	for dev in $devs; do
		s=$(date +%s%N)
		timeout -s KILL "$TIMEOUT" "$SAPIPE" compress -c --device "$dev" "$in" >"$DEST/compress.out"
		e=$(date +%s%N)
		sum=$(md5sum <"$DEST/compress.out" | cut -c1-12)
		rm -f "$DEST/compress.out"
		t=$(secs "$s" "$e")
		echo "| compress, $bytes bytes of genome | $dev | $t | $(awk -v b="$bytes" -v t="$t" 'BEGIN { printf "%.0f MB/s", b / t / 1e6 }') | $sum |"
	done
fi

if [[ " $ROWS " == *" pages "* ]]; then
	g=$DEST/genome_$PSIZE.fa
	[ -s "$g" ] || "$GENSCALE" genome --size "$PSIZE" --seed 7 -o "$g"
	ix=$DEST/genome_$PSIZE.sai
	[ -s "$ix" ] || timeout -s KILL "$TIMEOUT" "$SAPIPE" index -q --device "${CARDS%% *}" -o "$ix" "$g"
	preads=$DEST/preads_$PREADS.fq
	[ -s "$preads" ] || "$GENSCALE" reads -i "$g" --n "$PREADS" --len 150 --seed 6 -o "$preads"
	n=$(($(wc -l <"$preads") / 4))
	pmem=${PMEM:-$(($(stat -c %s "$ix") * 62 / 100))}
	cat "$preads" >/dev/null
	for mem in "" "$pmem"; do
		for dev in $CARDS; do
			args=(-v -l 20 -b --device "$dev")
			[ -n "$mem" ] && args+=(--gpu-memory "$mem")
			log=$DEST/pages-${dev//:/_}-${mem:-all}.log
			s=$(date +%s%N)
			timeout -s KILL "$TIMEOUT" "$SAPIPE" mummer "${args[@]}" "$ix" "$preads" 2>"$log" >"$DEST/pages.out"
			e=$(date +%s%N)
			sum=$(md5sum <"$DEST/pages.out" | cut -c1-12)
			rm -f "$DEST/pages.out"
			t=$(secs "$s" "$e")
			what="whole index on a card"
			[ -n "$mem" ] && what="--gpu-memory $mem"
			echo "| mummer -l 20 -b, $n reads against the $PSIZE index, $what | $dev | $t | $(awk -v n="$n" -v t="$t" 'BEGIN { printf "%.2f M reads/s", n / t / 1e6 }') | $sum |"
		done
	done
fi
