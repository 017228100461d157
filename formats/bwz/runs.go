package bwz

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"sync"
)

// The run coder (method methodRuns): the transform is read as runs of equal bytes. Each run is a
// byte and a length; the byte is coded as its rank in a move-to-front list (the run's byte is
// never the previous run's, so ranks start at 1), the length as itself. Both are cut into binary
// decisions: a rank's bucket (bitlen-1) down a small tree, then the bits under its top bit; a
// length in unary up to 4, then an exponent and mantissa. The tree's and the unary steps are each
// coded with a mix of adaptive counters chosen by what came just before (for ranks: the previous
// byte, the previous two bytes, and the previous two ranks with the previous length; for lengths:
// the previous two lengths with the rank, and the byte itself), the other bits with one counter
// each. The BWT of text is mostly long runs and small ranks, which this codes in about a bit per
// byte or less.
//
// Version 1 of the format mixed a fourth context into ranks (the previous rank and length) and a
// third into lengths (the byte and the previous length), coded the buckets in unary, and had its
// mixers learn more slowly; version 2 codes the Linux tar's transform 0.2% smaller, with a third
// fewer instructions when coding and a fifth fewer when decoding (counted by cachegrind).

const (
	rankBuckets = 8 // rank r goes to bucket bitlen(r)-1, 0..7, coded down a tree; then its low bits
	lenUnary    = 4 // lengths 1..4 are coded in unary, longer ones as exponent and mantissa
)

// errCorrupt is wrapped by every error of a payload that no encoder wrote.
var errCorrupt = errors.New("corrupt data")

func corruptf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", errCorrupt, fmt.Sprintf(format, args...))
}

// bucket5 sorts a run length into 1, 2, 3-4, 5-8, longer.
// (by table, without branches, since lengths are hard to guess).
func bucket5(n int) int { return int(bucket5Tab[min(uint(n), 9)]) }

var bucket5Tab = [10]uint8{0, 0, 1, 2, 2, 3, 3, 3, 3, 4}

// cap3 caps a rank at 3, without a branch.
func cap3(r int) int { return r - max(r-3, 0) }

// lenLearn is the learning rate of the mixers of run lengths. That of ranks' mixers is chosen for
// each segment (rankShift) and written at its start.
var lenLearn = learnRate{shift: 10, skip: 1}

// Rank mixers learn fast on transforms of text, where the ranks are small and what predicts them
// changes from one stretch of contexts to the next, and slowly on noisy data such as binaries,
// where most ranks are large: on the E. coli suffix array's transform shift 12 codes 0.26%
// smaller than 10, on the Linux tar's 0.15% larger. The encoder tells them apart by the share of
// large ranks (16 or more) in samples of the segment.
const (
	minRankShift = 10
	maxRankShift = 12
)

// rankShift returns the rank mixers' learning shift for src: 10 if under a third of the runs in
// samples of it (four slices of 64 KiB) have ranks of 16 or more, 12 if over two thirds do,
// else 11.
func rankShift(src []byte) uint {
	const part = 64 << 10
	mtf := newMTF()
	runs, large := 0, 0
	for k := 0; k < 4; k++ {
		lo := len(src) * k / 4
		t := src[lo:min(lo+part, len(src))]
		for i := 0; i < len(t); {
			c := t[i]
			j := i + 1
			for j < len(t) && t[j] == c {
				j++
			}
			i = j
			runs++
			if mtf.rankOf(c) >= 16 {
				large++
			}
		}
	}
	switch {
	case 3*large < runs:
		return minRankShift
	case 3*large > 2*runs:
		return maxRankShift
	}
	return minRankShift + 1
}

// runModel is the state of the run coder for one segment. Each table holds, for each of its
// contexts, the counters of all the steps of one decision side by side (a rank's up to 7 unary
// steps, a length's 4), so that coding one rank or length touches one cache line per table.
type runModel struct {
	rankS   [256][8]mixCounter       // (previous byte; step)
	rankD   [4 * 4 * 5][8]mixCounter // (previous two ranks, previous length; step)
	rankSS  *[65536][8]mixCounter    // (previous two bytes; step)
	rankMix [4][8]mixWeights         // (previous rank; step)
	rankMan [4][8][128]counter       // the bits under a rank's top bit: (previous rank, bucket, bits so far)

	lenA   [5 * 5 * 4][lenUnary]mixCounter // (previous two lengths, rank; step)
	lenC   [256][lenUnary]mixCounter       // (byte; step)
	lenMix [4][lenUnary]mixWeights         // (rank; step)
	lenExp [4][32]counter                  // exponent of long runs, in unary: (rank; step)
	lenMan [32][32]counter                 // mantissa of long runs: (exponent, bit)

	// method 4 only (runsfreq.go)
	freq   runFreq                   // the bytes' recent frequencies
	pre    prefix                    // their sums over the first ranks, for the run being coded
	manSSE [5][4][freqLevels]counter // the bits under the top bit of ranks under 32: (bucket, bit, frequency level)

	// what came before
	pr, ppr, pl, ppl int
	prevSym, prev2   byte
	touched          uint16 // see touchNext

	rankLearn learnRate // the rank mixers' learning rate
}

// runModels keeps the models of finished segments (a model is large, mostly rankSS), so that a
// new segment clears one rather than allocating it.
var runModels = sync.Pool{New: func() any { return &runModel{rankSS: new([65536][8]mixCounter)} }}

// newRunModel returns a fresh model from runModels; the caller puts it back when done.
func newRunModel() *runModel {
	m := runModels.Get().(*runModel)
	ss := m.rankSS
	clear(ss[:])
	*m = runModel{}
	m.rankSS = ss
	m.pr, m.ppr, m.pl, m.ppl = 1, 1, 1, 1
	for i := range m.rankMix {
		for j := range m.rankMix[i] {
			m.rankMix[i][j].init(3, 4)
		}
	}
	for i := range m.lenMix {
		for j := range m.lenMix[i] {
			m.lenMix[i][j].init(2, 3)
		}
	}
	return m
}

// rankContexts are the counters and weights that code the unary steps of one rank's bucket.
type rankContexts struct {
	s, d, ss *[8]mixCounter
	w        *[8]mixWeights
}

func (m *runModel) rankContexts() rankContexts {
	pr, pl := cap3(m.pr), bucket5(m.pl)
	return rankContexts{
		s:  &m.rankS[m.prevSym],
		d:  &m.rankD[(pr*4+cap3(m.ppr))*5+pl],
		ss: &m.rankSS[int(m.prevSym)<<8|int(m.prev2)],
		w:  &m.rankMix[pr],
	}
}

// lenContexts are the counters and weights that code the unary steps of one run's length.
type lenContexts struct {
	a, c *[lenUnary]mixCounter
	w    *[lenUnary]mixWeights
}

func (m *runModel) lenContexts(c byte, r int) lenContexts {
	pl := bucket5(m.pl)
	return lenContexts{
		a: &m.lenA[(pl*5+bucket5(m.ppl))*4+cap3(r)],
		c: &m.lenC[c],
		w: &m.lenMix[cap3(r)],
	}
}

// touchNext loads the rankSS counters that the next run's rank will use, once this run's byte c
// is known, so that the cache miss (the table is 2 MiB) overlaps with coding this run.
func (m *runModel) touchNext(c byte) {
	m.touched += m.rankSS[int(c)<<8|int(m.prevSym)][0].q
}

// next records a coded run.
func (m *runModel) next(c byte, r, n int) {
	m.ppr, m.pr = m.pr, r
	m.ppl, m.pl = m.pl, n
	m.prev2, m.prevSym = m.prevSym, c
}

// mtfList is a move-to-front list of all 256 byte values.
type mtfList [256]byte

func newMTF() *mtfList {
	var l mtfList
	for i := range l {
		l[i] = byte(i)
	}
	return &l
}

// rankOf moves c to the front and returns where it was.
func (l *mtfList) rankOf(c byte) int {
	r := l.find(c)
	l.shift(r)
	l[0] = c
	return r
}

// find returns where c is in the list.
// It looks at eight bytes at a time: a byte of x is zero where the list holds c, and the lowest
// byte of x that is zero is the lowest whose high bit survives in (x-0x01..01)&^x&0x80..80.
func (l *mtfList) find(c byte) int {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	cc := uint64(c) * ones
	for w := 0; w < 256; w += 8 {
		x := binary.LittleEndian.Uint64(l[w:w+8]) ^ cc
		if t := (x - ones) &^ x & highs; t != 0 {
			return w + bits.TrailingZeros64(t)>>3
		}
	}
	return 0
}

// take moves the byte at rank r to the front and returns it.
func (l *mtfList) take(r int) byte {
	c := l[r&255]
	l.shift(r)
	l[0] = c
	return c
}

// shift moves the bytes at ranks 0..r-1 one place down: shift16 for ranks under 16, most of
// them, shiftLong for the others.
func (l *mtfList) shift(r int) {
	if r < 16 {
		l.shift16(r)
	} else {
		l.shiftLong(r)
	}
}

// shift16 is shift for a rank under 16, without a branch: the first 16 bytes are shifted as two
// words and merged with the old ones under a mask. It is small enough to be inlined, so that
// the coders' loops can call it and keep their values in registers.
func (l *mtfList) shift16(r int) {
	lo := binary.LittleEndian.Uint64(l[0:8])
	hi := binary.LittleEndian.Uint64(l[8:16])
	// keep bytes 0..r from the shifted words, the rest from the old ones
	m := &shiftMasks[r&15]
	binary.LittleEndian.PutUint64(l[0:8], lo<<8&m[0]|lo&^m[0])
	binary.LittleEndian.PutUint64(l[8:16], (hi<<8|lo>>56)&m[1]|hi&^m[1])
}

// shiftLong is shift for ranks of 16 and more: eight bytes at a time from the top (each word is
// loaded before the one below it is stored over its first byte).
func (l *mtfList) shiftLong(r int) {
	j := r & 255
	for ; j >= 8; j -= 8 {
		binary.LittleEndian.PutUint64(l[j-7:j+1], binary.LittleEndian.Uint64(l[j-8:j]))
	}
	for ; j > 0; j-- {
		l[j] = l[j-1]
	}
}

// shiftMasks[r] are the masks of bytes 0..r of the list's first two words: taken from a table
// rather than made with shifts by r (which Go guards against shifts of 64 and more).
var shiftMasks = func() (m [16][2]uint64) {
	for r := range m {
		for b := 0; b <= r; b++ {
			m[r][b/8] |= 0xFF << (8 * (b % 8))
		}
	}
	return m
}()

// encodeRuns appends the run coding of src to out (method 2).
func encodeRuns(src []byte, out []byte) []byte { return encodeRunsBy(src, out, false) }

// encodeRunsBy appends the coding of src to out by method 2, or with freq by method 4: each run's
// rank, then its length. Method 4 predicts the rank from the bytes' recent frequencies too
// (runsfreq.go), and updates its counters the fast way.
func encodeRunsBy(src []byte, out []byte, freq bool) []byte {
	shift := rankShift(src)
	e := newRangeEncoder(append(out, byte(shift)))
	if len(src) == 0 {
		return e.finish()
	}
	m := newRunModel()
	defer runModels.Put(m)
	m.rankLearn = learnRate{shift: shift, skip: 1}
	if freq {
		m.freq.init()
	}
	mtf := newMTF()
	for i := 0; i < len(src); {
		c := src[i]
		j := i + 1
		for j < len(src) && src[j] == c {
			j++
		}
		n := j - i
		r := mtf.find(c)
		m.touchNext(c)
		switch {
		case i == 0:
			e.encodeDirect(uint32(c), 8)
		case freq:
			m.encodeRankFreq(e, r, mtf) // reads the list before the byte moves to its front
		default:
			m.encodeRank(e, r)
		}
		mtf.shift(r)
		mtf[0] = c
		i = j
		if freq {
			m.freq.add(c)
		}
		m.encodeLen(e, n, c, r, freq)
		m.next(c, r, n)
	}
	return e.finish()
}

// A rank's bucket (bitlen(rank)-1, 0..7) is coded down a binary tree shaped for the buckets'
// frequencies in transforms of text (about 28, 19, 18, 16, 11, 5.5, 1.3 and 0.1%), in 2.6
// decisions on average where unary codes took 2.8. Its inner nodes, each with its own counters:
//
//	0: buckets 0-1 | 2-7    1: 0 | 1    2: 2-3 | 4-7    3: 2 | 3
//	4: 4 | 5-7              5: 5 | 6-7  6: 6 | 7
//
// The coders walk it in code rather than through a table, so that the processor can guess the
// next node's counters from the branch taken before the bit is known.

// encodeRank codes r (1..255): its bucket down the tree, then the bits under its top bit.
func (m *runModel) encodeRank(e *rangeEncoder, r int) {
	nb := bits.Len(uint(r)) - 1
	x := m.rankContexts()
	code := func(j, bit int) {
		e.encodeMix3(bit, &x.s[j], &x.d[j], &x.ss[j], &x.w[j], m.rankLearn)
	}
	if nb < 2 {
		code(0, 0)
		code(1, nb)
	} else {
		code(0, 1)
		if nb < 4 {
			code(2, 0)
			code(3, nb-2)
		} else {
			code(2, 1)
			code(4, min(nb-4, 1))
			if nb > 4 {
				code(5, min(nb-5, 1))
				if nb > 5 {
					code(6, nb-6)
				}
			}
		}
	}
	node := 1
	man := &m.rankMan[cap3(m.pr)][nb&7]
	for t := nb - 1; t >= 0; t-- {
		bit := (r >> uint(t)) & 1
		e.encodeCounter(bit, &man[node&127])
		node = node<<1 | bit
	}
}

// encodeLen codes the length n of a run of c at rank r; with fast (method 4) the counters are
// updated with updateFast.
func (m *runModel) encodeLen(e *rangeEncoder, n int, c byte, r int, fast bool) {
	x := m.lenContexts(c, r)
	for k := 0; k < lenUnary; k++ {
		bit := 0
		if n == k+1 {
			bit = 1
		}
		if fast {
			e.encodeMix2f(bit, &x.a[k], &x.c[k], &x.w[k], lenLearn)
		} else {
			e.encodeMix2(bit, &x.a[k], &x.c[k], &x.w[k], lenLearn)
		}
		if bit == 1 {
			return
		}
	}
	m.encodeLongLen(e, n, r)
}

// encodeLongLen codes a length n over lenUnary, after its unary steps: the exponent of
// n-lenUnary in unary, then the bits under its top bit.
func (m *runModel) encodeLongLen(e *rangeEncoder, n int, r int) {
	y := n - lenUnary // >= 1
	nb := bits.Len(uint(y)) - 1
	exp := &m.lenExp[cap3(r)]
	for t := 0; t < 31; t++ {
		bit := 0
		if t < nb {
			bit = 1
		}
		e.encodeCounter(bit, &exp[t])
		if bit == 0 {
			break
		}
	}
	man := &m.lenMan[nb&31]
	for t := nb - 1; t >= 0; t-- {
		bit := (y >> uint(t)) & 1
		e.encodeCounter(bit, &man[t&31])
	}
}

// decodeRuns fills dst from the method-2 coding in src.
func decodeRuns(src []byte, dst []byte) error { return decodeRunsBy(src, dst, false) }

// decodeRunsBy fills dst from the coding in src by method 2, or with freq by method 4.
func decodeRunsBy(src []byte, dst []byte, freq bool) error {
	if len(dst) == 0 {
		return nil
	}
	if len(src) == 0 || src[0] < minRankShift || src[0] > maxRankShift {
		return corruptf("no valid learning rate at the start of a run-coded segment")
	}
	shift := uint(src[0])
	d := newRangeDecoder(src[1:])
	m := newRunModel()
	defer runModels.Put(m)
	m.rankLearn = learnRate{shift: shift, skip: 1}
	if freq {
		m.freq.init()
	}
	mtf := newMTF()
	var c byte
	r := 0
	for i := 0; i < len(dst); {
		switch {
		case i == 0:
			c = byte(d.decodeDirect(8))
			r = mtf.rankOf(c)
		case freq:
			r = m.decodeRankFreq(d, mtf)
			c = mtf.take(r)
		default:
			r = m.decodeRank(d)
			c = mtf.take(r)
		}
		m.touchNext(c)
		if freq {
			m.freq.add(c)
		}
		n, err := m.decodeLen(d, c, r, len(dst)-i, freq)
		if err != nil {
			return err
		}
		fillRun(dst, i, n, c)
		i += n
		m.next(c, r, n)
		if d.overrun() {
			return corruptf("coded data ends early")
		}
	}
	if d.overrun() {
		return corruptf("coded data ends early")
	}
	return nil
}

func (m *runModel) decodeRank(d *rangeDecoder) int {
	x := m.rankContexts()
	code := func(j int) int {
		return d.decodeMix3(&x.s[j], &x.d[j], &x.ss[j], &x.w[j], m.rankLearn)
	}
	var nb int
	if code(0) == 0 {
		nb = code(1)
	} else if code(2) == 0 {
		nb = 2 + code(3)
	} else if code(4) == 0 {
		nb = 4
	} else if code(5) == 0 {
		nb = 5
	} else {
		nb = 6 + code(6)
	}
	return d.decodeTree(&m.rankMan[cap3(m.pr)][nb&7], nb)
}

// decodeLen decodes what encodeLen codes, at most left.
func (m *runModel) decodeLen(d *rangeDecoder, c byte, r, left int, fast bool) (int, error) {
	x := m.lenContexts(c, r)
	for k := 0; k < lenUnary; k++ {
		var bit int
		if fast {
			bit = d.decodeMix2f(&x.a[k], &x.c[k], &x.w[k], lenLearn)
		} else {
			bit = d.decodeMix2(&x.a[k], &x.c[k], &x.w[k], lenLearn)
		}
		if bit == 1 {
			if k+1 > left {
				return 0, corruptf("run of %d bytes overruns the segment (%d left)", k+1, left)
			}
			return k + 1, nil
		}
	}
	return m.decodeLongLen(d, r, left)
}

// decodeLongLen decodes what encodeLongLen codes.
func (m *runModel) decodeLongLen(d *rangeDecoder, r, left int) (int, error) {
	exp := &m.lenExp[cap3(r)]
	nb := 0
	for t := 0; t < 31; t++ {
		bit := d.decodeCounter(&exp[t])
		if bit == 0 {
			break
		}
		nb++
	}
	y := 1
	man := &m.lenMan[nb&31]
	for t := nb - 1; t >= 0; t-- {
		bit := d.decodeCounter(&man[t&31])
		y = y<<1 | bit
	}
	n := y + lenUnary
	if n > left || n < 0 {
		return 0, corruptf("run of %d bytes overruns the segment (%d left)", n, left)
	}
	return n, nil
}

// fill sets every byte of b to c.
func fill(b []byte, c byte) {
	b[0] = c
	for k := 1; k < len(b); k *= 2 {
		copy(b[k:], b[:k])
	}
}

// fillRun sets dst[i:i+n] to c. Runs of up to 8 bytes, most of them, are one 8-byte store when
// dst has room after the run (the bytes after it are written again by the runs that follow).
func fillRun(dst []byte, i, n int, c byte) {
	if n <= 8 && i+8 <= len(dst) {
		binary.LittleEndian.PutUint64(dst[i:i+8], uint64(c)*0x0101010101010101)
		return
	}
	fill(dst[i:i+n], c)
}
