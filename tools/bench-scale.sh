#!/usr/bin/env bash
# sapipe at human scale and beyond, on the lent GPU machine (16 cores, 128 GB, 64 GB disk, no
# network): the inputs are made there by tools/genscale (deterministic: the same bytes on every
# machine), only those missing, and each row runs under `timeout -s KILL` with its log and
# /usr/bin/time -v's peak RSS kept, then a markdown table is printed (and kept in $LOG/table.md).
#
#   bash tools/bench-scale.sh                                  # every row: SIZE=3.1G READS=10M
#   ROWS=index bash tools/bench-scale.sh                       # one row per call of 10 minutes
#   ROWS="mummer count" READS=1M bash tools/bench-scale.sh
#   SIZE=5M READS=20k PATTERNS=20k DEVICES=cpu bash tools/bench-scale.sh    # a check without GPU
#
# Rows (ROWS, default "index mummer genome count"; the GPU then the CPU in each, DEVICES):
#   index    sapipe index --device D -o hs.sai hs.fa (the GPU's index serves the other rows; the
#            CPU's is compared with it byte for byte)
#   mummer   sapipe mummer of READS reads of 150 bases (FASTQ) against hs.sai: -l 20 -b (the
#            default -mumreference), and -maxmatch -l 30 -b -c of the first MMREADS of them
#            (default READS; see below)
#   genome   the first GLEN (150M) bases against their copy diverged at DIV (0.01):
#            sapipe mummer -maxmatch -l 50 -b
#   self     the first GLEN bases against themselves: sapipe mummer -mum -l 100 -b (not in the
#            default rows; a match runs to the sequence's end from every position)
#   count    sapipe count and sapipe locate of PATTERNS (10M) patterns of 20-150 bases drawn
#            from the genome without errors, one a line, against hs.sai
# A row that needs hs.sai builds it first when it is missing (on the first device of DEVICES).
#
# Settings (environment): DEST (/tmp/scale) inputs and outputs; LOG ($DEST/log) one log per
# command (command line, stderr with -v's phase times, time -v); SIZE (3.1G) genome size for
# `genscale genome`; READS (10M); MMREADS (READS); PATTERNS (10M); GLEN (150M); DIV (0.01);
# GENOME_OPTS (more options for genscale genome, e.g. "--tandem 0.01"; they name the files);
# DEVICES ("gpu cpu"); TIMEOUT (600) seconds per command, killed past it; SEED (1); KEEP (0: outputs are removed once compared, 1 keeps them);
# SINK (file: outputs go to files and are compared with cmp; hash: to a pipe into md5sum, for
# outputs that would not fit the disk, the hashing then overlapping the timed run); SAPIPE
# (bin/sapipe), GENSCALE (bin/genscale): built with go when go is there, else used as found
# (carry bin/ to a machine without Go); TIMEV (/usr/bin/time, or bin/time: GNU time for peak
# RSS; without it the RSS column is empty).
#
# Disk at SIZE=3.1G: the genome 3.2 GB, the index ~39 GB (12.5 bytes a base), 10 M reads 3.3 GB,
# 10 M patterns 0.9 GB; the CPU's index is compared through a pipe when a second one would not
# fit. Outputs: -l 20 -b about 100 bytes a read. -maxmatch -l 30 grows with the genome, as the
# repeat families' copies do: 76 lines a read at 50 Mbp (12 from interspersed repeats, the rest
# from reads in satellite arrays, a few thousand lines each), so several hundred lines a read,
# tens of GB for 10 M reads, at 3.1 Gbp (extrapolated): keep MMREADS to 100k-1M there, or
# SINK=hash.
set -uo pipefail
cd "$(dirname "$0")/.."

DEST=${DEST:-/tmp/scale}
LOG=${LOG:-$DEST/log}
SIZE=${SIZE:-3.1G}
READS=${READS:-10M}
MMREADS=${MMREADS:-$READS}
GENOME_OPTS=${GENOME_OPTS:-}
PATTERNS=${PATTERNS:-10M}
GLEN=${GLEN:-150M}
DIV=${DIV:-0.01}
ROWS=${ROWS:-index mummer genome count}
DEVICES=${DEVICES:-gpu cpu}
TIMEOUT=${TIMEOUT:-600}
SEED=${SEED:-1}
KEEP=${KEEP:-0}
SINK=${SINK:-file}
SAPIPE=${SAPIPE:-bin/sapipe}
GENSCALE=${GENSCALE:-bin/genscale}
TIMEV=${TIMEV:-/usr/bin/time}
[ -x "$TIMEV" ] || TIMEV=bin/time
[ -x "$TIMEV" ] || TIMEV=

die() {
	echo "bench-scale: $*" >&2
	exit 1
}

# num SIZE: a count with a decimal suffix (k, M, G, T) as an integer.
num() {
	awk -v s="$1" 'BEGIN {
		m = 1; u = substr(s, length(s)); v = s
		if (u == "k" || u == "K") m = 1e3; else if (u == "M") m = 1e6; else if (u == "G") m = 1e9; else if (u == "T") m = 1e12
		if (m != 1) v = substr(s, 1, length(s) - 1)
		if (v !~ /^[0-9]+(\.[0-9]+)?$/) exit 1
		printf "%.0f\n", v * m }' || die "bad size $1"
}
calc() { awk "BEGIN { print $1 }"; }

bases=$(num "$SIZE")
nreads=$(num "$READS")
nmm=$(num "$MMREADS")
npat=$(num "$PATTERNS")
glen=$(num "$GLEN")
[ "$glen" -gt "$bases" ] && glen=$bases
hum() { awk -v n="$1" 'BEGIN { if (n >= 1e9) printf "%g Gbp", n / 1e9; else if (n >= 1e6) printf "%g Mbp", n / 1e6; else printf "%g kbp", n / 1e3 }'; }
case $SINK in file | hash) ;; *) die "SINK=$SINK: want file or hash" ;; esac
mkdir -p "$DEST/out" "$LOG" || die "cannot make $DEST"

# The binaries: built from this tree when Go is there (fast when nothing changed).
if command -v go >/dev/null; then
	if [ "$SAPIPE" = bin/sapipe ] && command -v make >/dev/null; then
		make -s build >/dev/null || die "make build failed"
	else
		CGO_ENABLED=0 go build -trimpath -o "$SAPIPE" ./cmd/sapipe || die "building sapipe"
	fi
	CGO_ENABLED=0 go build -trimpath -o "$GENSCALE" ./tools/genscale || die "building genscale"
fi
[ -x "$SAPIPE" ] || die "$SAPIPE missing (no go here to build it: carry bin/)"
[ -x "$GENSCALE" ] || die "$GENSCALE missing (no go here to build it: carry bin/)"

# Inputs made by another genscale (its code changed) are stale: they are removed, to be made
# again. (Builds are reproducible: the same source gives the same binary.)
gsid=$(md5sum <"$GENSCALE" | cut -c1-16)
if [ -f "$DEST/genscale.id" ] && [ "$(cat "$DEST/genscale.id")" != "$gsid" ]; then
	echo "bench-scale: $GENSCALE changed since the inputs in $DEST were made: making them again" >&2
	rm -f "$DEST"/hs-*.fa "$DEST"/hs-*.sai "$DEST"/reads-*.fq "$DEST"/patterns-*.txt
fi
echo "$gsid" >"$DEST/genscale.id"

# The inputs, named by what they depend on.
hs=hs-$SIZE-s$SEED
[ -n "$GENOME_OPTS" ] && hs=$hs$(printf '%s' " $GENOME_OPTS" | tr -cs 'A-Za-z0-9.' '_')
fa=$DEST/$hs.fa
sai=$DEST/$hs.sai
reads=$DEST/reads-$hs-$READS.fq
mmreads=$DEST/reads-$hs-$MMREADS.fq # the first MMREADS of the READS (the same seed)
pats=$DEST/patterns-$hs-$PATTERNS.txt
gref=$DEST/$hs-first$glen.fa
gdiv=$DEST/$hs-first$glen-div$DIV.fa

table=$LOG/table.md
has_row() { case " $ROWS " in *" $1 "*) return 0 ;; esac; return 1; }
first_dev=${DEVICES%% *}

# measure NAME CMD...: runs CMD under timeout and time -v, its stdout into $LOG/NAME.out; an
# argument "@OUT@" in CMD is replaced by $MOUT (with SINK=hash: by "-", the output going through
# md5sum into $MOUT.md5). Sets secs (wall), rss (peak, GB), status (ok, "killed after TIMEOUT
# s" or "exit N: last line of stderr"). What a killed run leaves (temporary files) is removed.
measure() {
	local name=$1 s e rc tv=() args=() a piped=0
	shift
	for a in "$@"; do
		if [ "$a" = @OUT@ ]; then
			if [ "$SINK" = hash ]; then a=-; piped=1; else a=$MOUT; fi
		fi
		args+=("$a")
	done
	[ -n "$TIMEV" ] && tv=("$TIMEV" -v -o "$LOG/$name.time")
	{ printf '%q ' "${args[@]}"; echo; } >"$LOG/$name.cmd"
	rm -f "$LOG/$name.time"
	s=$(date +%s%N)
	if [ $piped = 1 ]; then
		"${tv[@]}" timeout -s KILL "$TIMEOUT" "${args[@]}" 2>"$LOG/$name.err" | md5sum >"$MOUT.md5"
		rc=${PIPESTATUS[0]}
	else
		"${tv[@]}" timeout -s KILL "$TIMEOUT" "${args[@]}" >"$LOG/$name.out" 2>"$LOG/$name.err"
		rc=$?
	fi
	e=$(date +%s%N)
	secs=$(calc "($e - $s) / 1e9")
	secs=$(printf '%.2f' "$secs")
	rss=
	if [ -s "$LOG/$name.time" ]; then
		rss=$(awk -F': ' '/Maximum resident set size/ { printf "%.2f", $2 / 1048576 }' "$LOG/$name.time")
	fi
	case $rc in
	0) status=ok ;;
	137 | 124) status="killed after $TIMEOUT s" rss= ;; # timeout dies with it: no usage of the command
	*) status="exit $rc: $(grep -v '^\s*$' "$LOG/$name.err" | tail -n 1 | cut -c1-120)" ;;
	esac
	[ $rc = 0 ] || rm -f "$DEST"/.*.tmp* "$DEST"/out/.*.tmp*
}

# row LABEL DEVICE RATE NOTE: one line of the table (wall and RSS from the last measure).
row() {
	local wall=$secs
	[ "$status" = ok ] || wall="($secs)"
	local line
	line=$(printf '| %s | %s | %s | %s | %s | %s |' "$1" "$2" "$wall" "${rss:--}" "$3" "$4")
	echo "$line" | tee -a "$table"
}
rate() { # amount unit: amount per second of the last measure
	[ "$status" = ok ] || { echo -; return; }
	awk -v a="$1" -v s="$secs" -v u="$2" 'BEGIN { r = a / s; sp = (u == "bp") ? "" : " "
		if (r >= 1e9) printf "%.2f G%s%s/s", r / 1e9, sp, u; else if (r >= 1e6) printf "%.2f M%s%s/s", r / 1e6, sp, u
		else if (r >= 1e3) printf "%.1f k%s%s/s", r / 1e3, sp, u; else printf "%.0f %s/s", r, u }'
}
note() { [ "$status" = ok ] && echo "${1:-}" || echo "$status"; }

# same A B: whether two outputs of the same command on two devices agree.
same() {
	if [ "$SINK" = hash ] && [ -f "$1.md5" ]; then
		cmp -s "$1.md5" "$2.md5" && echo "same as $3" || echo "DIFFERS from $3"
	else
		cmp -s "$1" "$2" && echo "same as $3" || echo "DIFFERS from $3"
	fi
}
size_of() { # bytes of an output (or "-")
	[ -f "$1" ] && awk -v b="$(stat -c %s "$1")" 'BEGIN { if (b >= 1e9) printf "%.2f GB", b / 1e9; else printf "%.1f MB", b / 1e6 }' || echo -
}
drop() { [ "$KEEP" = 1 ] || rm -f "$@"; }

# gen LABEL FILE CMD...: makes FILE with CMD (which writes it atomically) unless it exists.
gen() {
	local label=$1 file=$2
	shift 2
	[ -s "$file" ] && return 0
	measure "gen-$(basename "$file")" "$@"
	row "$label" cpu "$(rate "$GEN_AMOUNT" "$GEN_UNIT")" "$(note "$(size_of "$file")")"
	[ "$status" = ok ] && [ -s "$file" ] || die "generating $file failed: see $LOG/gen-$(basename "$file").err"
}

# The header.
{
	echo
	echo "## sapipe at scale: genome $SIZE ($bases bases, seed $SEED${GENOME_OPTS:+, $GENOME_OPTS}), $READS reads, $PATTERNS patterns"
	echo
	echo "$(date -u '+%Y-%m-%d %H:%M UTC'); $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(awk '/MemTotal/ { printf "%.0f GB", $2 / 1048576 }' /proc/meminfo); load $(cut -d' ' -f1-3 /proc/loadavg)"
	command -v nvidia-smi >/dev/null && echo "GPU: $(nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>/dev/null | head -n 1)"
	echo "$("$SAPIPE" --version 2>/dev/null | head -n 2 | tr '\n' ' ')"
	echo "disk: $(df -h --output=avail "$DEST" | tail -n 1 | tr -d ' ') free in $DEST; rows: $ROWS; devices: $DEVICES; timeout $TIMEOUT s a command; outputs: $SINK"
	echo
	echo "| run | device | wall s | peak RSS GB | rate | note |"
	echo "|---|---|---|---|---|---|"
} | tee -a "$table"

# Inputs needed by the rows asked for.
need_fa=0 need_reads=0 need_pats=0 need_div=0 need_sai=0
has_row index && need_fa=1
has_row mummer && need_fa=1 need_reads=1 need_sai=1
has_row count && need_fa=1 need_pats=1 need_sai=1
has_row genome && need_fa=1 need_div=1
has_row self && need_fa=1 need_div=1
if [ $need_fa = 1 ]; then
	# shellcheck disable=SC2086 # GENOME_OPTS are words
	GEN_AMOUNT=$bases GEN_UNIT=bp gen "genscale genome --size $SIZE${GENOME_OPTS:+ $GENOME_OPTS}" "$fa" "$GENSCALE" genome --size "$SIZE" --seed "$SEED" $GENOME_OPTS -o "$fa"
fi
if [ $need_reads = 1 ]; then
	GEN_AMOUNT=$nreads GEN_UNIT=reads gen "genscale reads --n $READS --len 150" "$reads" "$GENSCALE" reads -i "$fa" --n "$READS" --len 150 --seed $((SEED + 2)) -o "$reads"
	GEN_AMOUNT=$nmm GEN_UNIT=reads gen "genscale reads --n $MMREADS --len 150" "$mmreads" "$GENSCALE" reads -i "$fa" --n "$MMREADS" --len 150 --seed $((SEED + 2)) -o "$mmreads"
fi
if [ $need_pats = 1 ]; then
	GEN_AMOUNT=$npat GEN_UNIT=patterns gen "genscale reads --n $PATTERNS --len 20:150 (patterns)" "$pats" "$GENSCALE" reads -i "$fa" --n "$PATTERNS" --len 20:150 --error 0 --n-rate 0 --format lines --seed $((SEED + 3)) -o "$pats"
fi
if [ $need_div = 1 ]; then
	GEN_AMOUNT=$glen GEN_UNIT=bp gen "genscale diverge --length $glen --rate $DIV" "$gdiv" "$GENSCALE" diverge -i "$fa" --length "$glen" --rate "$DIV" --seed $((SEED + 1)) -o "$gdiv" --ref-out "$gref"
fi

# index: the first device's file serves the other rows; the others' are compared with it.
if has_row index; then
	ref_dev=
	for dev in $DEVICES; do
		if [ -z "$ref_dev" ]; then
			measure "index-$dev" "$SAPIPE" index -v --device "$dev" -o "$sai" "$fa"
			row "sapipe index $SIZE" "$dev" "$(rate "$bases" bp)" "$(note "$(size_of "$sai") index")"
			[ "$status" = ok ] && ref_dev=$dev
			continue
		fi
		avail=$(df -B1 --output=avail "$DEST" | tail -n 1)
		if [ "$avail" -gt $((bases * 14 + 2000000000)) ]; then
			measure "index-$dev" "$SAPIPE" index -v --device "$dev" -o "$DEST/out/index-$dev.sai" "$fa"
			row "sapipe index $SIZE" "$dev" "$(rate "$bases" bp)" "$(note "$(same "$DEST/out/index-$dev.sai" "$sai" "$ref_dev")")"
			drop "$DEST/out/index-$dev.sai"
		else
			# No room for a second index: it goes through a pipe into cmp (which reads hs.sai too).
			measure "index-$dev" bash -c '"$1" index -v --device "$2" -o - "$3" | cmp -s - "$4"
				s=("${PIPESTATUS[@]}"); [ "${s[1]}" = 1 ] && { echo DIFFERS; exit 0; }
				[ "${s[0]}" = 0 ] || exit "${s[0]}"; [ "${s[1]}" = 0 ] && echo same' _ "$SAPIPE" "$dev" "$fa" "$sai"
			row "sapipe index $SIZE" "$dev" "$(rate "$bases" bp)" "$(note "$([ "$(cat "$LOG/index-$dev.out")" = same ] && echo "same as $ref_dev" || echo "DIFFERS from $ref_dev") (piped into cmp: no room for a second index)")"
		fi
	done
fi
if [ $need_sai = 1 ] && [ ! -s "$sai" ]; then
	measure "index-prereq" "$SAPIPE" index -v --device "$first_dev" -o "$sai" "$fa"
	row "sapipe index $SIZE (for the rows below)" "$first_dev" "$(rate "$bases" bp)" "$(note "$(size_of "$sai") index")"
	[ -s "$sai" ] || die "no index: see $LOG/index-prereq.err"
fi

# device_rows NAME LABEL AMOUNT UNIT COMMAND ARGS...: sapipe COMMAND --device D -o OUT ARGS on
# each device, each output compared with the first device's.
device_rows() {
	local name=$1 label=$2 amount=$3 unit=$4 cmd=$5 first= dev out
	shift 5
	for dev in $DEVICES; do
		out=$DEST/out/$name-$dev.out
		MOUT=$out measure "$name-$dev" "$SAPIPE" "$cmd" --device "$dev" -o @OUT@ "$@"
		local n
		n="$(size_of "$out")"
		[ "$SINK" = hash ] && n="hashed"
		if [ -z "$first" ]; then
			row "$label" "$dev" "$(rate "$amount" "$unit")" "$(note "output $n")"
			[ "$status" = ok ] && first=$dev
		else
			row "$label" "$dev" "$(rate "$amount" "$unit")" "$(note "$(same "$out" "$DEST/out/$name-$first.out" "$first")")"
			drop "$out" "$out.md5"
		fi
	done
	[ -n "$first" ] && drop "$DEST/out/$name-$first.out" "$DEST/out/$name-$first.out.md5"
	return 0
}

if has_row mummer; then
	device_rows mummer-l20 "sapipe mummer -l 20 -b, $READS reads vs $SIZE" "$nreads" reads mummer -v -l 20 -b "$sai" "$reads"
	device_rows mummer-mm30 "sapipe mummer -maxmatch -l 30 -b -c, $MMREADS reads vs $SIZE" "$nmm" reads mummer -v -maxmatch -l 30 -b -c "$sai" "$mmreads"
fi
if has_row genome; then
	device_rows genome "sapipe mummer -maxmatch -l 50 -b, $(hum "$glen") vs its $DIV copy" "$glen" bp mummer -v -maxmatch -l 50 -b "$gref" "$gdiv"
fi
if has_row self; then
	device_rows self "sapipe mummer -mum -l 100 -b, $(hum "$glen") against itself" "$glen" bp mummer -v -mum -l 100 -b "$gref" "$gref"
fi
if has_row count; then
	device_rows count "sapipe count, $PATTERNS patterns vs $SIZE" "$npat" patterns count -v -i "$sai" "$pats"
	device_rows locate "sapipe locate, $PATTERNS patterns vs $SIZE" "$npat" patterns locate -v -i "$sai" "$pats"
fi
echo
echo "logs: $LOG (NAME.cmd, NAME.err, NAME.time); table: $table"
