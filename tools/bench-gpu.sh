#!/usr/bin/env bash
# `sapipe mummer` on the GPU, end to end (FASTQ on disk to output file), beside one-thread `mummer`
# (MUMmer 3.23, Debian's binary) and sapipe's CPU path on all cores, on the lent GPU machine.
#
#   bash tools/bench-gpu.sh pack   # here: builds sapipe, copies mummer and zstd, compresses the
#                                  # inputs of ../shared/tools/make-bench-data.sh into .gpub/
#   bash tools/bench-gpu.sh run    # on the device (run tool, carry [".gpub"]): prints the table
#
# The 1 M simulated reads travel as compressed FASTA (the FASTQ does not fit what a call carries);
# on the device they are written back as FASTQ with a constant quality line, so sapipe parses as
# much as from the original file. mummer reads FASTA only and is slow: it gets the first 50,000
# reads, and its rate is compared. Wall times are the best of RUNS (default 2) runs.
set -euo pipefail
cd "$(dirname "$0")/.."
pack=.gpub

do_pack() {
	local data=${DEST:-bench-data}
	[ -f "$data/reads_1M.fa" ] || DEST=$data bash "${SHARED:-../shared}/tools/make-bench-data.sh" >/dev/null
	grep -qx "/$pack/" .git/info/exclude 2>/dev/null || echo "/$pack/" >>.git/info/exclude
	mkdir -p $pack/bin $pack/lib $pack/data
	# Everything travels compressed: a call carries 64 MiB with the working tree.
	CGO_ENABLED=0 go build -trimpath -ldflags '-s -w' -o $pack/sapipe ./cmd/sapipe
	zstd -q -f -19 --rm $pack/sapipe -o $pack/bin/sapipe.zst
	CGO_ENABLED=0 go build -trimpath -ldflags '-s -w' -o $pack/bin/benchpat ./tools/benchpat
	cp /usr/bin/mummer /usr/bin/zstd $pack/bin/
	for l in liblz4.so.1 liblzma.so.5 libz.so.1; do cp -L "/lib/x86_64-linux-gnu/$l" $pack/lib/; done
	for f in ecoli.fa ecoli_mut.fa; do
		[ $pack/data/$f.zst -nt "$data/$f" ] || zstd -q -f -19 "$data/$f" -o $pack/data/$f.zst
	done
	[ $pack/data/reads_1M.fa.zst -nt "$data/reads_1M.fa" ] || zstd -q -f -12 -T0 "$data/reads_1M.fa" -o $pack/data/reads_1M.fa.zst
	du -sh $pack
}

# best NAME CMD...: runs CMD (stdout to $w/NAME.out) RUNS times; sets secs to the best wall time.
best() {
	local name=$1 s e t
	shift
	secs=
	for _ in $(seq "${RUNS:-2}"); do
		s=$(date +%s%N)
		"$@" >"$w/$name.out" 2>"$w/$name.err" || { echo "$name failed:" >&2; cat "$w/$name.err" >&2; exit 1; }
		e=$(date +%s%N)
		t=$(calc "($e - $s) / 1e9")
		if [ -z "$secs" ] || [ "$(calc "$t < $secs")" = 1 ]; then secs=$t; fi
	done
}

# calc EXPR: arithmetic in awk (the device may have no bc).
calc() { awk "BEGIN { print $1 }"; }

row() { # label reads bases secs [same]
	printf '%-46s %10.2f %12.0f %9.1f  %s\n' "$1" "$4" "$(calc "$2 / $4")" "$(calc "$3 / $4 / 1e6")" "${5:-}"
}

# prep: the inputs, decompressed into $w (WORK, default /tmp/sapipe-bench).
do_prep() {
	export LD_LIBRARY_PATH=$PWD/$pack/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
	local b=$pack/bin
	w=${WORK:-/tmp/sapipe-bench}
	mkdir -p "$w"
	[ -x $b/sapipe ] || $b/zstd -q -d $b/sapipe.zst -o $b/sapipe && chmod +x $b/sapipe
	for f in ecoli.fa ecoli_mut.fa reads_1M.fa; do [ -f "$w/$f" ] || $b/zstd -q -d $pack/data/$f.zst -o "$w/$f"; done
	[ -f "$w/reads_1M.fq" ] || awk 'NR%2==1{print "@" substr($0,2); next} {q=$0; gsub(/./,"I",q); print; print "+"; print q}' "$w/reads_1M.fa" >"$w/reads_1M.fq"
	[ -f "$w/reads_1M.fq.zst" ] || $b/zstd -q -3 -T0 "$w/reads_1M.fq" -o "$w/reads_1M.fq.zst"
	head -n 100000 "$w/reads_1M.fa" >"$w/reads_50k.fa"
	# 10 M reads: the 1 M simulated reads ten times over, renamed, as compressed FASTQ (a call
	# cannot carry 10 M distinct reads); each read is matched on its own, so the rate is that of
	# 10 M distinct reads.
	[ -f "$w/reads_10M.fq.zst" ] || for k in 0 1 2 3 4 5 6 7 8 9; do
		awk -v k=$k 'NR%4==1{print $1 "_" k; next} {print}' "$w/reads_1M.fq"
	done | $b/zstd -q -3 -T0 -o "$w/reads_10M.fq.zst"
}

do_run() {
	do_prep
	local b=$pack/bin
	nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm --format=csv,noheader || true
	echo "host: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
	local s="$b/sapipe mummer -q" reads=1000000 bases=150000000 o="-maxmatch -l 20 -b -c"
	printf '%-46s %10s %12s %9s  %s\n' "run" "wall s" "reads/s" "Mbp/s" "output"
	best mummer50k $b/mummer $o "$w/ecoli.fa" "$w/reads_50k.fa"
	local mum=$secs
	row "mummer $o, 50k reads FASTA" 50000 7500000 "$secs"
	best cpu50k $s --device cpu $o "$w/ecoli.fa" "$w/reads_50k.fa"
	row "sapipe cpu, same 50k reads" 50000 7500000 "$secs" "$(python3 tools/mumcanon.py "$w/mummer50k.out" "$w/cpu50k.out" && echo "same as mummer" || echo DIFFERS)"
	best gpu50k $s --device gpu $o "$w/ecoli.fa" "$w/reads_50k.fa"
	row "sapipe gpu, same 50k reads" 50000 7500000 "$secs" "$(cmp -s "$w/cpu50k.out" "$w/gpu50k.out" && echo "same as cpu" || echo DIFFERS)"
	best cpu $s --device cpu -o "$w/cpu.mums" $o "$w/ecoli.fa" "$w/reads_1M.fq"
	local cpu=$secs
	row "sapipe cpu -t $(nproc) $o, 1M reads FASTQ" $reads $bases "$secs"
	best gpu $s --device gpu -o "$w/gpu.mums" $o "$w/ecoli.fa" "$w/reads_1M.fq"
	local gpu=$secs
	row "sapipe gpu, same" $reads $bases "$secs" "$(cmp -s "$w/cpu.mums" "$w/gpu.mums" && echo "same as cpu ($(wc -l <"$w/gpu.mums") lines)" || echo DIFFERS)"
	best gpuz $s --device gpu -o "$w/gpuz.mums" $o "$w/ecoli.fa" "$w/reads_1M.fq.zst"
	row "sapipe gpu, same reads as FASTQ.zst" $reads $bases "$secs" "$(cmp -s "$w/cpu.mums" "$w/gpuz.mums" && echo "same as cpu" || echo DIFFERS)"
	best cpuref $s --device cpu "$w/ecoli.fa" "$w/reads_1M.fq"
	row "sapipe cpu -mumreference -l 20, 1M reads" $reads $bases "$secs"
	best gpuref $s --device gpu "$w/ecoli.fa" "$w/reads_1M.fq"
	row "sapipe gpu -mumreference -l 20, same" $reads $bases "$secs" "$(cmp -s "$w/cpuref.out" "$w/gpuref.out" && echo "same as cpu" || echo DIFFERS)"
	echo "1M reads, GPU end to end: $(calc "($reads / $gpu) / (50000 / $mum)")x one-thread mummer's rate, $(calc "$cpu / $gpu")x sapipe's CPU path"
	RUNS=1 best cpu10 $s --device cpu -o "$w/cpu10.mums" $o "$w/ecoli.fa" "$w/reads_10M.fq.zst"
	local cpu10=$secs
	row "sapipe cpu -t $(nproc), 10M reads FASTQ.zst" $((10 * reads)) $((10 * bases)) "$secs"
	RUNS=1 best gpu10 $s --device gpu -o "$w/gpu10.mums" $o "$w/ecoli.fa" "$w/reads_10M.fq.zst"
	row "sapipe gpu, same" $((10 * reads)) $((10 * bases)) "$secs" "$(cmp -s "$w/cpu10.mums" "$w/gpu10.mums" && echo "same as cpu" || echo DIFFERS)"
	echo "10M reads .zst, GPU end to end: $(calc "(10 * $reads / $secs) / (50000 / $mum)")x one-thread mummer's rate, $(calc "$cpu10 / $secs")x sapipe's CPU path"
	[ -f "$w/reads_10M.fq" ] || $b/zstd -q -d "$w/reads_10M.fq.zst" -o "$w/reads_10M.fq"
	RUNS=1 best cpu10p $s --device cpu -o "$w/cpu10p.mums" $o "$w/ecoli.fa" "$w/reads_10M.fq"
	cpu10=$secs
	row "sapipe cpu -t $(nproc), 10M reads plain FASTQ" $((10 * reads)) $((10 * bases)) "$secs" "$(cmp -s "$w/cpu10.mums" "$w/cpu10p.mums" && echo "same as from .zst" || echo DIFFERS)"
	best gpu10p $s --device gpu -o "$w/gpu10p.mums" $o "$w/ecoli.fa" "$w/reads_10M.fq"
	row "sapipe gpu, same" $((10 * reads)) $((10 * bases)) "$secs" "$(cmp -s "$w/cpu10p.mums" "$w/gpu10p.mums" && echo "same as cpu" || echo DIFFERS)"
	echo "10M reads plain, GPU end to end: $(calc "(10 * $reads / $secs) / (50000 / $mum)")x one-thread mummer's rate, $(calc "$cpu10 / $secs")x sapipe's CPU path"
	local g=4641652
	for o in "-mum -b -c" "-maxmatch -l 20 -b -c"; do
		best gm $b/mummer $o "$w/ecoli.fa" "$w/ecoli_mut.fa"
		row "mummer $o, E. coli vs mutated copy" 1 $g "$secs"
		best gc $s --device cpu $o "$w/ecoli.fa" "$w/ecoli_mut.fa"
		row "sapipe cpu, same" 1 $g "$secs" "$(python3 tools/mumcanon.py "$w/gm.out" "$w/gc.out" && echo "same as mummer" || echo DIFFERS)"
		best gg $s --device gpu $o "$w/ecoli.fa" "$w/ecoli_mut.fa"
		row "sapipe gpu, same" 1 $g "$secs" "$(cmp -s "$w/gc.out" "$w/gg.out" && echo "same as cpu" || echo DIFFERS)"
	done
	# Pattern search (sapipe count): 10 M patterns of 20-150 bases drawn from E. coli, one a line.
	$b/sapipe index -q -o "$w/ecoli.sai" "$w/ecoli.fa"
	[ -f "$w/patterns.txt" ] || $b/benchpat -n 10000000 -min 20 -max 150 "$w/ecoli.fa" >"$w/patterns.txt"
	local np=10000000 nc=$(($(wc -c <"$w/patterns.txt") - 10000000))
	printf '%-46s %10s %12s %9s  %s\n' "count" "wall s" "patterns/s" "Mchar/s" ""
	best countcpu $b/sapipe count -q --device cpu -i "$w/ecoli.sai" -o "$w/count-cpu.tsv" "$w/patterns.txt"
	row "sapipe count cpu -t $(nproc), 10M patterns" $np $nc "$secs"
	best countgpu $b/sapipe count -q --device gpu -i "$w/ecoli.sai" -o "$w/count-gpu.tsv" "$w/patterns.txt"
	row "sapipe count gpu, same" $np $nc "$secs" "$(cmp -s "$w/count-cpu.tsv" "$w/count-gpu.tsv" && echo "same as cpu" || echo DIFFERS)"
	echo "--- GPU profile, 1M reads $o (device time per stage summed over the workers; -v timings):"
	SAPIPE_GPU_PROFILE=1 $b/sapipe mummer -v --device gpu -o "$w/prof.mums" -maxmatch -l 20 -b -c "$w/ecoli.fa" "$w/reads_1M.fq" 2>&1 | sed 's/; /\n    /g'
}

case "${1:-run}" in
pack) do_pack ;;
prep) do_prep ;;
run) do_run ;;
*)
	echo "usage: $0 pack|prep|run" >&2
	exit 2
	;;
esac
