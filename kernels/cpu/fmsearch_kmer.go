package cpu

import (
	"encoding/binary"
	"fmt"

	"github.com/sapipe/sapipe/kernels"
)

// KmerTable holds the suffix-array rows of every string of K matchable codes: a backward search
// starts from the interval of its pattern's last K symbols, one lookup instead of K rank steps.
// Short patterns of a genome become unique within a dozen steps, so the table saves most of a
// search's random accesses.
type KmerTable struct {
	K    int
	base int     // matchable codes: sigma - FirstCode
	Rows []int32 // lo, hi of k-mer j at 2j, 2j+1; a k-mer's code is its symbols in base `base`, first symbol most significant
	// Keys holds the key of every suffix-array row (RowKeys) for the keyed search, or is nil:
	// then a search that wants them computes them.
	Keys []int32
}

// maxKmer bounds K: 4^12 k-mers are 128 MiB of table.
const maxKmer = 12

// KmerLength returns the k-mer length for a text of n codes < sigma: the longest whose table has
// at most n/4 entries (two bytes of table per base), at most 12; 0 for no table.
func KmerLength(n, sigma int) int {
	base := sigma - kernels.FirstCode
	if base < 1 {
		return 0
	}
	// A table of up to a quarter of the rows: for count and locate's keyed search, which serves
	// texts of up to maxKeyedText bases. Past those the table is a start of the search only, and
	// one of up to a sixteenth of the rows keeps the index near 6.6 bytes a base (a window of 1.5
	// billion bases over a, c, g, n, t: 11-mers, 0.4 GB, where a quarter would be 12-mers, 2 GB).
	most := n / 4
	if n > maxKeyedText {
		most = n / 16
	}
	k, entries := 0, 1
	for k < maxKmer && entries*base <= most {
		k++
		entries *= base
	}
	return k
}

// BuildKmerTable computes the table of the k-mers of p's window.
func BuildKmerTable(p *Page, k int) *KmerTable { return BuildKmerTableThreads(p, k, 1) }

// BuildKmerTableThreads computes the table of the k-mers of p's window on up to threads
// goroutines, from the suffix array: the rows of one k-mer are a run, and each goroutine scans a
// part of the rows, setting the start of the runs that start in its part and the end of those that
// end there (a k-mer that does not occur keeps the empty interval 0, 0). It reads each row's text
// once, a random access, where a depth-first backward search from every k-mer would make a rank
// query a symbol tried at every node: minutes for a window of a billion bases and a large k.
func BuildKmerTableThreads(p *Page, k, threads int) *KmerTable {
	kr := newKmerRuns(p, p.occ.sigma, k, threads)
	if kr == nil {
		return nil
	}
	storeParallel(p.n+1, threads, func(t, lo, hi int) error {
		for r := lo; r < hi; r++ {
			kr.row(t, r)
		}
		return nil
	})
	kr.finish()
	return kr.t
}

// newKmerTable returns an empty table of k-mers over the matchable codes of sigma, or nil for
// none.
func newKmerTable(sigma, k int) *KmerTable {
	base := sigma - kernels.FirstCode
	if k < 1 || base < 1 {
		return nil
	}
	entries := 1
	for range k {
		entries *= base
	}
	return &KmerTable{K: k, base: base, Rows: make([]int32, 2*entries)}
}

// rowKmer is the table index of the k-mer that row r of p starts with, or -1 (a suffix shorter
// than K, or one with a code that is not matchable in its first K).
func (t *KmerTable) rowKmer(p *Page, r int) int {
	s := int(p.sa[r])
	if s+t.K > p.n {
		return -1
	}
	code := 0
	for _, x := range p.w[s : s+t.K] {
		if x < kernels.FirstCode {
			return -1
		}
		code = code*t.base + int(x-kernels.FirstCode)
	}
	return code
}

// kmerRuns fills a table of k-mers row by row, in parts of consecutive rows visited in order
// (newOccParts' parts), as BuildKmerTableThreads does: a part sets the start of the runs that
// start in it and the end of those that end in it, so no two parts write one entry.
type kmerRuns struct {
	p     *Page
	t     *KmerTable
	parts []kmerPart
}

// kmerPart is where the visit of one part stands: its first and last rows so far, and the k-mer
// of the last (-1 for none).
type kmerPart struct {
	started     bool
	first, last int
	prev        int
}

// newKmerRuns returns the visitor of p's rows for its table of k-mers over sigma, for up to
// threads parts; nil for no table.
func newKmerRuns(p *Page, sigma, k, threads int) *kmerRuns {
	t := newKmerTable(sigma, k)
	if t == nil {
		return nil
	}
	return &kmerRuns{p: p, t: t, parts: make([]kmerPart, threads)}
}

// row visits row r of part t.
func (kr *kmerRuns) row(t, r int) {
	st := &kr.parts[t]
	c := kr.t.rowKmer(kr.p, r)
	if !st.started {
		st.started, st.first, st.prev = true, r, -1
		if r > 0 {
			st.prev = kr.t.rowKmer(kr.p, r-1)
		}
	}
	if c != st.prev {
		if c >= 0 {
			kr.t.Rows[2*c] = int32(r)
		}
		if st.prev >= 0 && r > st.first {
			kr.t.Rows[2*st.prev+1] = int32(r)
		}
	}
	st.last, st.prev = r, c
}

// finish ends the runs that end at the last row of each part, once every part is visited.
func (kr *kmerRuns) finish() {
	for _, st := range kr.parts {
		if st.started && st.prev >= 0 && (st.last == kr.p.n || kr.t.rowKmer(kr.p, st.last+1) != st.prev) {
			kr.t.Rows[2*st.prev+1] = int32(st.last + 1)
		}
	}
}

// LoadKmerTable wraps the table of k-mers of length k over a text of nrows-1 codes < sigma, and
// the rows' keys (or none), as an index file holds them, checking that every interval lies within
// the rows and that there is a key for each row.
func LoadKmerTable(k, sigma int, rows, keys []int32, nrows int) (*KmerTable, error) {
	base := sigma - kernels.FirstCode
	if k == 0 && len(rows) == 0 {
		if len(keys) != 0 {
			return nil, fmt.Errorf("%d row keys without a k-mer table", len(keys))
		}
		return nil, nil
	}
	if len(keys) != 0 && (len(keys) != nrows || KeyLength(base) == 0) {
		return nil, fmt.Errorf("%d row keys for %d rows", len(keys), nrows)
	}
	entries := 1
	for range k {
		entries *= base
		if k > maxKmer || base < 1 || entries > 1<<30 {
			return nil, fmt.Errorf("k-mer table of %d-mers over %d symbols", k, base)
		}
	}
	if len(rows) != 2*entries {
		return nil, fmt.Errorf("k-mer table of %d rows, want %d", len(rows), 2*entries)
	}
	err := storeParallel(entries, 2, func(_, lo, hi int) error {
		for j := lo; j < hi; j++ {
			a, b := rows[2*j], rows[2*j+1]
			if a < 0 || a > b || int(b) > nrows {
				return fmt.Errorf("k-mer %d has rows %d..%d (0..%d)", j, a, b, nrows)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	t := &KmerTable{K: k, base: base, Rows: rows}
	if len(keys) > 0 {
		t.Keys = keys
	}
	return t, nil
}

// code returns the index in the table of the k-mer pat (len(pat) == K), and false if pat holds
// a code that is not matchable.
func (t *KmerTable) code(pat []byte) (int, bool) {
	code := 0
	if t.base == 4 && len(pat) >= 8 && len(pat) <= 16 {
		// DNA, 8 to 16 symbols: the first eight and the last eight, which overlap.
		hi, okh := dnaBits8(binary.BigEndian.Uint64(pat))
		lo, okl := dnaBits8(binary.BigEndian.Uint64(pat[len(pat)-8:]))
		rest := 2 * (len(pat) - 8)
		return hi<<rest | lo&(1<<rest-1), okh && okl
	}
	if t.base == 4 {
		// DNA: eight symbols at a time, two bits each.
		for len(pat) >= 8 {
			v, ok := dnaBits8(binary.BigEndian.Uint64(pat))
			if !ok {
				return 0, false
			}
			code = code<<16 | v
			pat = pat[8:]
		}
	}
	for _, x := range pat {
		s := int(x) - kernels.FirstCode
		if s < 0 || s >= t.base {
			return 0, false
		}
		code = code*t.base + s
	}
	return code, true
}

// dnaBits8 returns the 16-bit k-mer code of the eight codes of v (the first most significant),
// and false if one is not in FirstCode..FirstCode+3. A code below FirstCode borrows from the code
// before it, but shows itself (the lowest such code has nothing to borrow from it).
func dnaBits8(v uint64) (int, bool) {
	v -= 0x0101010101010101 * kernels.FirstCode
	if v&0xfcfcfcfcfcfcfcfc != 0 {
		return 0, false
	}
	v = (v | v>>6) & 0x000f000f000f000f
	v = (v | v>>12) & 0x000000ff000000ff
	v = (v | v>>24) & 0xffff
	return int(v), true
}
