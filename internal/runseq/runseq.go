// Package runseq makes test sequences with runs of one symbol (gaps of N, homopolymers) for the
// matchers' tests: records with runs put in, and a query made of them with each run made longer
// or shorter, so that a query's runs meet the reference's of every length around their own.
package runseq

import "slices"

// Records returns records (1 to maxRecords) of random a, c, g and t, each of size/2 to
// size*3/2 bases (at least minSize), with 1 to maxRuns runs of one of a, c, g, t or n, each 1 to
// maxRun long, put in at random places; intn(n) is a random number in [0, n).
func Records(intn func(int) int, maxRecords, minSize, size, maxRuns, maxRun int) [][]byte {
	var recs [][]byte
	for range 1 + intn(maxRecords) {
		s := make([]byte, max(minSize, size/2+intn(size)))
		for i := range s {
			s[i] = "acgt"[intn(4)]
		}
		for range 1 + intn(maxRuns) {
			i := intn(len(s))
			s = slices.Insert(s, i, slices.Repeat([]byte{"acgtn"[intn(5)]}, 1+intn(maxRun))...)
		}
		recs = append(recs, s)
	}
	return recs
}

// Stretch returns seq with each run of one symbol longer than 3 made up to by longer or shorter
// (at least 1 long), one run in two.
func Stretch(intn func(int) int, seq []byte, by int) []byte {
	var out []byte
	for i := 0; i < len(seq); {
		j := i + 1
		for j < len(seq) && seq[j] == seq[i] {
			j++
		}
		n := j - i
		if n > 3 && intn(2) == 0 {
			n = max(1, n+intn(2*by+1)-by)
		}
		out = append(out, slices.Repeat(seq[i:i+1], n)...)
		i = j
	}
	return out
}
