// Command benchpat writes search patterns for `make bench`: n patterns, one a line, each a
// stretch of a random length in [min, max] from a random place of a genome (the concatenated
// sequence of a FASTA file, plain or gzip-compressed), with -rc half of them reverse
// complemented, from a seeded generator so that runs compare.
//
//	go run ./tools/benchpat -n 1000000 -min 20 -max 150 genome.fa.gz > patterns.txt
package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
)

func main() {
	n := flag.Int("n", 1000000, "patterns")
	lo := flag.Int("min", 20, "shortest pattern")
	hi := flag.Int("max", 150, "longest pattern")
	seed := flag.Uint64("seed", 1, "random seed")
	rc := flag.Bool("rc", false, "reverse complement half of the patterns")
	flag.Parse()
	if flag.NArg() != 1 || *lo < 1 || *hi < *lo {
		fmt.Fprintln(os.Stderr, "usage: benchpat [-n N] [-min L] [-max L] [-seed S] genome.fa[.gz]")
		os.Exit(2)
	}
	seq, err := readSequence(flag.Arg(0))
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchpat:", err)
		os.Exit(1)
	}
	if len(seq) < *hi {
		fmt.Fprintf(os.Stderr, "benchpat: %s has %d bases, fewer than -max\n", flag.Arg(0), len(seq))
		os.Exit(1)
	}
	comp := [256]byte{'A': 'T', 'C': 'G', 'G': 'C', 'T': 'A', 'a': 't', 'c': 'g', 'g': 'c', 't': 'a'}
	rng := rand.New(rand.NewPCG(*seed, 7))
	w := bufio.NewWriterSize(os.Stdout, 1<<20)
	buf := make([]byte, 0, *hi+1)
	for range *n {
		l := *lo + rng.IntN(*hi-*lo+1)
		a := rng.IntN(len(seq) - l + 1)
		buf = append(buf[:0], seq[a:a+l]...)
		if *rc && rng.IntN(2) == 0 {
			for i, j := 0, len(buf)-1; i <= j; i, j = i+1, j-1 {
				ci, cj := comp[buf[i]], comp[buf[j]]
				if ci == 0 {
					ci = 'N'
				}
				if cj == 0 {
					cj = 'N'
				}
				buf[i], buf[j] = cj, ci
			}
		}
		buf = append(buf, '\n')
		w.Write(buf)
	}
	if err := w.Flush(); err != nil {
		fmt.Fprintln(os.Stderr, "benchpat:", err)
		os.Exit(1)
	}
}

// readSequence returns the sequence lines of every record of a FASTA file, concatenated.
func readSequence(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var r io.Reader = bufio.NewReader(f)
	if head, _ := r.(*bufio.Reader).Peek(2); bytes.Equal(head, []byte{0x1f, 0x8b}) {
		z, err := gzip.NewReader(r)
		if err != nil {
			return nil, err
		}
		r = z
	}
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	var seq []byte
	for _, line := range bytes.Split(data, []byte{'\n'}) {
		line = bytes.TrimSpace(line)
		if len(line) > 0 && line[0] != '>' {
			seq = append(seq, line...)
		}
	}
	return seq, nil
}
