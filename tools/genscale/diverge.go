package main

import (
	"fmt"
	"io"
	"time"
)

// divergeSpec says how the diverged copy differs from the genome.
type divergeSpec struct {
	rate      float64 // substitutions per base
	indelFrac float64 // small indels (1-10 bases) per substitution
	invRate   float64 // inversions (1-100 kbp) per base
	seed      uint64
	chunkSize int // bases mutated by one task (the output depends on it; fixed)
	threads   int
}

func defaultDivergeSpec() divergeSpec {
	return divergeSpec{rate: 0.01, indelFrac: 0.1, invRate: 2e-7, seed: 2, chunkSize: 1 << 20, threads: 1}
}

// invert reverse-complements, in place, inversions of 1-100 kbp (at most a tenth of the record)
// spaced exponentially with rate invRate per base, in every record of g. It returns them as
// {record, start, end}, start and end within the record, for tests.
func (s *divergeSpec) invert(g *fasta) [][3]int {
	var out [][3]int
	if s.invRate <= 0 {
		return out
	}
	for ri := range g.names {
		seq := g.record(ri)
		maxLen := min(100000, len(seq)/10)
		if maxLen < 1000 {
			continue
		}
		r := newRNG(s.seed, streamInversions, uint64(ri))
		pos := 0
		for {
			pos += int(r.exp(1 / s.invRate))
			n := r.logUniform(1000, maxLen)
			if pos < 0 || pos+n > len(seq) {
				break
			}
			reverseComplement(seq[pos : pos+n])
			out = append(out, [3]int{ri, pos, pos + n})
			pos += n
		}
	}
	return out
}

// divergeChunk appends to dst the mutated copy of chunk c of record ri (src).
func (s *divergeSpec) divergeChunk(dst, src []byte, ri, c int, log *[]edit) []byte {
	r := newRNG(s.seed, streamDiverge, uint64(ri)<<32|uint64(c))
	start := len(dst)
	dst = mutate(dst, src, mutation{sub: s.rate, indel: s.rate * s.indelFrac, maxIndel: 10}, &r, log)
	// Another assembly has its gaps elsewhere: where the genome has N (or another code), the
	// copy has random bases. (Runs of N in both would match each other in every offset.)
	for i, b := range dst[start:] {
		if baseIndex[b] == 4 {
			dst[start+i] = bases[r.next()>>62] | b&0x20
		}
	}
	return dst
}

// write writes the diverged copy of g (already inverted) as FASTA, the chunks mutated in
// parallel and written in order.
func (s *divergeSpec) write(w io.Writer, g *fasta, width int) error {
	type job struct{ ri, c int }
	var jobs []job
	for ri := range g.names {
		n := len(g.record(ri))
		for c := 0; c == 0 || c*s.chunkSize < n; c++ {
			jobs = append(jobs, job{ri, c})
		}
	}
	fw := newFastaWriter(w, width)
	next := 0
	err := ordered(len(jobs), s.threads, func(i int, buf []byte) []byte {
		j := jobs[i]
		seq := g.record(j.ri)
		a := j.c * s.chunkSize
		return s.divergeChunk(buf, seq[a:min(a+s.chunkSize, len(seq))], j.ri, j.c, nil)
	}, func(b []byte) error {
		j := jobs[next]
		next++
		if j.c == 0 {
			fw.header(g.names[j.ri])
		}
		fw.seq(b)
		return fw.err
	})
	if err != nil {
		return err
	}
	return fw.close()
}

func divergeCmd(args []string) error {
	spec := defaultDivergeSpec()
	fs, out, threads, verbose := newFlags("diverge", "genscale diverge -i GENOME.fa [--length 150M] [--rate 0.01] [--seed S] [-o FILE] [--ref-out FILE]")
	in := fs.String("i", "", "genome FASTA to copy (- is stdin)")
	var length sizeValue
	fs.Var(&length, "length", "copy only the first bases of the genome (0: all); the last record is cut short")
	refOut := fs.String("ref-out", "", "also write the genome's copied bases unchanged (the prefix --length takes) to this file")
	width := fs.Int("line", 60, "bases a line")
	fs.Float64Var(&spec.rate, "rate", spec.rate, "substitutions per base")
	fs.Float64Var(&spec.indelFrac, "indel", spec.indelFrac, "small indels (1-10 bases) per substitution")
	fs.Float64Var(&spec.invRate, "inversions", spec.invRate, "inversions (1-100 kbp) per base")
	fs.Uint64Var(&spec.seed, "seed", spec.seed, "random seed")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	spec.threads = max(1, *threads)
	switch {
	case *in == "":
		return usageError{"-i GENOME.fa is needed"}
	case spec.rate < 0 || spec.rate > 0.5:
		return usageError{fmt.Sprintf("--rate %g: want 0 to 0.5", spec.rate)}
	case spec.indelFrac < 0 || spec.rate*(1+spec.indelFrac) > 0.9:
		return usageError{fmt.Sprintf("--indel %g: want 0 or more, with rate*(1+indel) under 0.9", spec.indelFrac)}
	case spec.invRate < 0 || spec.invRate > 1e-3:
		return usageError{fmt.Sprintf("--inversions %g: want 0 to 1e-3", spec.invRate)}
	case *width < 1:
		return usageError{fmt.Sprintf("--line %d: want at least 1", *width)}
	}
	t := timer{*verbose, time.Now()}
	g, err := readFasta(*in, int(length))
	if err != nil {
		return err
	}
	t.step("read %d records, %d bases", len(g.names), len(g.seq))
	if *refOut != "" {
		if err := writeOutput(*refOut, func(w io.Writer) error { return writeRecords(w, g.names, g.record, *width, spec.threads) }); err != nil {
			return err
		}
		t.step("wrote %s", *refOut)
	}
	inv := spec.invert(g)
	t.step("%d inversions", len(inv))
	err = writeOutput(*out, func(w io.Writer) error { return spec.write(w, g, *width) })
	t.step("wrote %s", *out)
	return err
}
