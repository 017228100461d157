package main

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"
)

// readsSpec says how reads are drawn from a genome.
type readsSpec struct {
	n              int // reads
	minLen, maxLen int // lengths, uniform in [minLen, maxLen]
	errRate        float64
	nRate          float64
	format         string // fastq, fasta or lines
	seed           uint64
	chunkReads     int // reads made by one task (the output depends on it; fixed)
	threads        int
}

func defaultReadsSpec() readsSpec {
	return readsSpec{n: 1e6, minLen: 150, maxLen: 150, errRate: 0.005, nRate: 0.0005, format: "fastq", seed: 3, chunkReads: 1 << 14, threads: 1}
}

// readSampler draws reads from a genome held in memory.
type readSampler struct {
	spec      readsSpec
	g         *fasta
	recs      []int // records long enough for a read
	cum       []int // cum[k]: start positions of reads in recs[0..k]
	qualities [][]byte
}

func newReadSampler(spec readsSpec, g *fasta) (*readSampler, error) {
	s := &readSampler{spec: spec, g: g}
	total := 0
	for ri := range g.names {
		if n := len(g.record(ri)); n >= spec.maxLen {
			total += n - spec.maxLen + 1
			s.recs = append(s.recs, ri)
			s.cum = append(s.cum, total)
		}
	}
	if total == 0 {
		return nil, fmt.Errorf("no record has %d bases for a read", spec.maxLen)
	}
	// A pool of quality strings, Illumina-like (Phred+33): high at first, falling towards the
	// read's end, with the odd dip; bases made wrong or N get low values on top (see draw).
	r := newRNG(spec.seed, streamQualities, 0)
	s.qualities = make([][]byte, 1024)
	for k := range s.qualities {
		q := make([]byte, spec.maxLen)
		for i := range q {
			x := float64(i) / float64(max(1, spec.maxLen-1))
			v := 38 - int(12*x*x) + r.rangeIn(-3, 2)
			if r.chance(0.01) {
				v = r.rangeIn(8, 25)
			}
			q[i] = byte(33 + min(max(v, 2), 41))
		}
		s.qualities[k] = q
	}
	return s, nil
}

// upper maps reference bytes to read bases: ACGT in either case to uppercase, the rest to N
// (which draw then replaces by a random base).
var upper = func() (t [256]byte) {
	for i := range t {
		t[i] = 'N'
	}
	for _, c := range []byte("ACGT") {
		t[c], t[c|0x20] = c, c
	}
	return t
}()

// chunk appends reads [c*chunkReads, ...) to dst, formatted.
func (s *readSampler) chunk(dst []byte, c int) []byte {
	sp := &s.spec
	r := newRNG(sp.seed, streamReads, uint64(c))
	first := c * sp.chunkReads
	last := min(first+sp.chunkReads, sp.n)
	if need := (last - first) * (2*sp.maxLen + 64); cap(dst) < need {
		dst = make([]byte, 0, need)
	}
	seq := make([]byte, sp.maxLen)
	qual := make([]byte, sp.maxLen)
	for k := first; k < last; k++ {
		l := sp.maxLen
		if sp.minLen < sp.maxLen {
			l = r.rangeIn(sp.minLen, sp.maxLen)
		}
		rec, pos, minus := s.draw(seq[:l], qual[:l], &r)
		switch sp.format {
		case "lines":
			dst = append(dst, seq[:l]...)
			dst = append(dst, '\n')
			continue
		case "fasta":
			dst = append(dst, '>')
		default:
			dst = append(dst, '@')
		}
		// The name says where the read comes from: rINDEX_RECORD_POSITION_STRAND, the position
		// 1-based on the record's forward strand (the read's leftmost base there), the strand +
		// or - (the read is then the reverse complement).
		dst = append(dst, 'r')
		dst = strconv.AppendInt(dst, int64(k+1), 10)
		dst = append(dst, '_')
		dst = append(dst, s.g.names[rec]...)
		dst = append(dst, '_')
		dst = strconv.AppendInt(dst, int64(pos+1), 10)
		if minus {
			dst = append(dst, "_-\n"...)
		} else {
			dst = append(dst, "_+\n"...)
		}
		dst = append(dst, seq[:l]...)
		if sp.format == "fasta" {
			dst = append(dst, '\n')
			continue
		}
		dst = append(dst, "\n+\n"...)
		dst = append(dst, qual[:l]...)
		dst = append(dst, '\n')
	}
	return dst
}

// draw fills seq (and qual) with a read of len(seq) bases and returns where it comes from.
// Sequencing errors: substitutions with a rate rising along the read from 0.4 to 1.6 times
// errRate (errRate on average), and Ns with rate nRate.
func (s *readSampler) draw(seq, qual []byte, r *rng) (rec, pos int, minus bool) {
	l := len(seq)
	x := r.intn(s.cum[len(s.cum)-1])
	k := sort.SearchInts(s.cum, x+1)
	if k > 0 {
		x -= s.cum[k-1]
	}
	rec, pos = s.recs[k], x
	for i, c := range s.g.record(rec)[pos : pos+l] {
		seq[i] = upper[c]
		if seq[i] == 'N' {
			// What the assembly lacks was sequenced all the same: a read over a gap has bases
			// there, not Ns (a read of Ns would match every run of N).
			seq[i] = bases[r.next()>>62]
		}
	}
	minus = r.next()&1 == 1
	if minus {
		reverseComplement(seq)
	}
	copy(qual, s.qualities[r.intn(len(s.qualities))])
	if e := s.spec.errRate; e > 0 {
		peak := 1.6 * e
		for i := r.skip(peak); i < l; i += 1 + r.skip(peak) {
			rate := e * (0.4 + 1.2*float64(i)/float64(max(1, l-1)))
			if r.float()*peak < rate {
				seq[i] = substitute(seq[i], r)
				qual[i] = byte(33 + r.rangeIn(5, 20))
			}
		}
	}
	for i := r.skip(s.spec.nRate); i < l; i += 1 + r.skip(s.spec.nRate) {
		seq[i], qual[i] = 'N', '#'
	}
	for i, c := range seq {
		if c == 'N' {
			qual[i] = '#'
		}
	}
	return rec, pos, minus
}

func (s *readSampler) write(w io.Writer) error {
	nChunks := (s.spec.n + s.spec.chunkReads - 1) / s.spec.chunkReads
	return ordered(nChunks, s.spec.threads, func(c int, buf []byte) []byte { return s.chunk(buf, c) }, func(b []byte) error {
		_, err := w.Write(b)
		return err
	})
}

// parseLength reads "150" or a range "20:150".
func parseLength(v string) (lo, hi int, err error) {
	a, b, isRange := strings.Cut(v, ":")
	if !isRange {
		b = a
	}
	lo, err1 := strconv.Atoi(a)
	hi, err2 := strconv.Atoi(b)
	if err1 != nil || err2 != nil || lo < 1 || hi < lo || hi > 1<<24 {
		return 0, 0, fmt.Errorf("--len %q: want a length or MIN:MAX, at least 1", v)
	}
	return lo, hi, nil
}

func readsCmd(args []string) error {
	spec := defaultReadsSpec()
	fs, out, threads, verbose := newFlags("reads", "genscale reads -i GENOME.fa [--n 10M] [--len 150] [--error 0.005] [--seed S] [-o FILE]")
	in := fs.String("i", "", "genome FASTA to sample (- is stdin)")
	n := sizeValue(spec.n)
	fs.Var(&n, "n", "number of reads")
	fs.Var(&n, "reads", "number of reads (same as --n)")
	length := fs.String("len", "150", "read length, or MIN:MAX for lengths uniform in that range")
	fs.Float64Var(&spec.errRate, "error", spec.errRate, "substitution errors per base (rising along the read)")
	fs.Float64Var(&spec.nRate, "n-rate", spec.nRate, "N calls per base")
	format := fs.String("format", "", "fastq, fasta or lines (one sequence a line, no names); default from -o's ending (.fa .fasta .fna: fasta, .txt: lines), else fastq")
	fs.Uint64Var(&spec.seed, "seed", spec.seed, "random seed")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	spec.n, spec.threads = int(n), max(1, *threads)
	var err error
	if spec.minLen, spec.maxLen, err = parseLength(*length); err != nil {
		return usageError{err.Error()}
	}
	spec.format = *format
	if spec.format == "" {
		spec.format = "fastq"
		switch {
		case strings.HasSuffix(*out, ".fa"), strings.HasSuffix(*out, ".fasta"), strings.HasSuffix(*out, ".fna"):
			spec.format = "fasta"
		case strings.HasSuffix(*out, ".txt"):
			spec.format = "lines"
		}
	}
	switch {
	case *in == "":
		return usageError{"-i GENOME.fa is needed"}
	case spec.format != "fastq" && spec.format != "fasta" && spec.format != "lines":
		return usageError{fmt.Sprintf("--format %q: want fastq, fasta or lines", spec.format)}
	case spec.errRate < 0 || spec.errRate > 0.5, spec.nRate < 0 || spec.nRate > 0.5:
		return usageError{"--error and --n-rate: want 0 to 0.5"}
	}
	t := timer{*verbose, time.Now()}
	g, err := readFasta(*in, 0)
	if err != nil {
		return err
	}
	t.step("read %d records, %d bases", len(g.names), len(g.seq))
	s, err := newReadSampler(spec, g)
	if err != nil {
		return fmt.Errorf("%s: %w", *in, err)
	}
	err = writeOutput(*out, s.write)
	t.step("wrote %d reads to %s", spec.n, *out)
	return err
}
