package bwz

import (
	"errors"
	"fmt"
	"math/bits"
)

// The run coder (method methodRuns): the transform is read as runs of equal bytes. Each run is a
// byte and a length; the byte is coded as its rank in a move-to-front list (the run's byte is
// never the previous run's, so ranks start at 1), the length as itself. Both are cut into binary
// decisions (unary for the small values that dominate, then an exponent and mantissa), each coded
// with a mix of adaptive counters chosen by what came just before: the previous ranks and run
// lengths, the previous one and two bytes, and for lengths the byte itself. The BWT of text is mostly long
// runs and small ranks, which this codes in well under a bit per byte.

const (
	rankBuckets = 8 // rank r goes to bucket bitlen(r)-1, 0..7, coded in unary; then its low bits
	lenUnary    = 4 // lengths 1..4 are coded in unary, longer ones as exponent and mantissa
)

// errCorrupt is wrapped by every error of a payload that no encoder wrote.
var errCorrupt = errors.New("corrupt data")

func corruptf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", errCorrupt, fmt.Sprintf(format, args...))
}

// bucket5 sorts a run length into 1, 2, 3-4, 5-8, longer.
func bucket5(n int) int {
	switch {
	case n <= 2:
		return n - 1
	case n <= 4:
		return 2
	case n <= 8:
		return 3
	}
	return 4
}

func cap3(r int) int { return min(r, 3) }

// runModel is the state of the run coder for one segment.
type runModel struct {
	rankA   [rankBuckets * 4 * 5]counter     // (step, previous rank, previous length)
	rankS   [rankBuckets * 256]counter       // (step, previous byte)
	rankD   [rankBuckets * 4 * 4 * 5]counter // (step, previous two ranks, previous length)
	rankSS  []counter                        // (step, previous two bytes)
	rankMix *mixer5
	rankMan [8 * 128 * 4]counter // the bits under a rank's top bit: (bucket, bits so far, previous rank)

	lenA   [lenUnary * 5 * 5 * 4]counter // (step, previous two lengths, rank)
	lenC   [lenUnary * 256]counter       // (step, byte)
	lenMix *mixer3
	lenCL  [lenUnary * 256 * 5]counter // (step, byte, previous length)
	lenExp [32 * 4]counter             // exponent of long runs, in unary: (step, rank)
	lenMan [32 * 32]counter            // mantissa of long runs: (exponent, bit)

	// what came before
	pr, ppr, pl, ppl int
	prevSym, prev2   byte

	// the counters of the decision in flight
	ca, cs, cd, ce *counter
}

func newRunModel() *runModel {
	m := &runModel{pr: 1, ppr: 1, pl: 1, ppl: 1}
	initCounters(m.rankA[:])
	initCounters(m.rankS[:])
	initCounters(m.rankD[:])
	initCounters(m.rankMan[:])
	initCounters(m.lenA[:])
	initCounters(m.lenC[:])
	initCounters(m.lenExp[:])
	initCounters(m.lenMan[:])
	m.rankMix = newMixer5(rankBuckets*4, 12)
	m.lenMix = newMixer3(lenUnary*4, 12)
	m.rankSS = make([]counter, rankBuckets*65536)
	initCounters(m.rankSS)
	initCounters(m.lenCL[:])
	return m
}

// rankP returns the probability that the unary code of the rank's bucket ends at step k.
func (m *runModel) rankP(k int) int {
	pr, pl := cap3(m.pr), bucket5(m.pl)
	m.ca = &m.rankA[(k*4+pr)*5+pl]
	m.cs = &m.rankS[k*256+int(m.prevSym)]
	m.cd = &m.rankD[((k*4+pr)*4+cap3(m.ppr))*5+pl]
	m.ce = &m.rankSS[k*65536+int(m.prevSym)<<8|int(m.prev2)]
	return m.rankMix.mix([4]int32{m.ca.st(), m.cs.st(), m.cd.st(), m.ce.st()}, k*4+pr)
}

func (m *runModel) rankUpdate(bit int) {
	m.ca.update(bit)
	m.cs.update(bit)
	m.cd.update(bit)
	m.ce.update(bit)
	m.rankMix.update(bit)
}

// lenP returns the probability that the length's unary step k ends (the length is k+1), for a
// run of byte c at rank r.
func (m *runModel) lenP(k int, c byte, r int) int {
	m.ca = &m.lenA[((k*5+bucket5(m.pl))*5+bucket5(m.ppl))*4+cap3(r)]
	m.cs = &m.lenC[k*256+int(c)]
	m.cd = &m.lenCL[(k*256+int(c))*5+bucket5(m.pl)]
	return m.lenMix.mix(m.ca.st(), m.cs.st(), m.cd.st(), k*4+cap3(r))
}

func (m *runModel) lenUpdate(bit int) {
	m.ca.update(bit)
	m.cs.update(bit)
	m.cd.update(bit)
	m.lenMix.update(bit)
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
	r := 0
	for l[r] != c {
		r++
	}
	copy(l[1:r+1], l[:r])
	l[0] = c
	return r
}

// take moves the byte at rank r to the front and returns it.
func (l *mtfList) take(r int) byte {
	c := l[r]
	copy(l[1:r+1], l[:r])
	l[0] = c
	return c
}

// encodeRuns appends the run coding of src to out.
func encodeRuns(src []byte, out []byte) []byte {
	e := newRangeEncoder(out)
	if len(src) == 0 {
		return e.finish()
	}
	m := newRunModel()
	mtf := newMTF()
	first := true
	for i := 0; i < len(src); {
		c := src[i]
		j := i + 1
		for j < len(src) && src[j] == c {
			j++
		}
		n := j - i
		i = j
		r := mtf.rankOf(c)
		if first {
			e.encodeDirect(uint32(c), 8)
			first = false
		} else {
			m.encodeRank(e, r)
		}
		m.encodeLen(e, n, c, r)
		m.next(c, r, n)
	}
	return e.finish()
}

// encodeRank codes r (1..255): its bucket bitlen(r)-1 in unary, then the bits under its top bit.
func (m *runModel) encodeRank(e *rangeEncoder, r int) {
	nb := bits.Len(uint(r)) - 1
	for k := 0; k < rankBuckets-1; k++ {
		bit := 0
		if k == nb {
			bit = 1
		}
		e.encode(bit, m.rankP(k))
		m.rankUpdate(bit)
		if bit == 1 {
			break
		}
	}
	node := 1
	pr := cap3(m.pr)
	for t := nb - 1; t >= 0; t-- {
		bit := (r >> uint(t)) & 1
		c := &m.rankMan[(nb*128+node)*4+pr]
		e.encode(bit, c.p12())
		c.update(bit)
		node = node<<1 | bit
	}
}

func (m *runModel) encodeLen(e *rangeEncoder, n int, c byte, r int) {
	for k := 0; k < lenUnary; k++ {
		bit := 0
		if n == k+1 {
			bit = 1
		}
		e.encode(bit, m.lenP(k, c, r))
		m.lenUpdate(bit)
		if bit == 1 {
			return
		}
	}
	y := n - lenUnary // >= 1
	nb := bits.Len(uint(y)) - 1
	rc := cap3(r)
	for t := 0; t < 31; t++ {
		bit := 0
		if t < nb {
			bit = 1
		}
		ct := &m.lenExp[t*4+rc]
		e.encode(bit, ct.p12())
		ct.update(bit)
		if bit == 0 {
			break
		}
	}
	for t := nb - 1; t >= 0; t-- {
		bit := (y >> uint(t)) & 1
		ct := &m.lenMan[nb*32+t]
		e.encode(bit, ct.p12())
		ct.update(bit)
	}
}

// decodeRuns fills dst from the run coding in src.
func decodeRuns(src []byte, dst []byte) error {
	if len(dst) == 0 {
		return nil
	}
	d := newRangeDecoder(src)
	m := newRunModel()
	mtf := newMTF()
	var c byte
	r := 0
	for i := 0; i < len(dst); {
		if i == 0 {
			c = byte(d.decodeDirect(8))
			r = mtf.rankOf(c)
		} else {
			var err error
			if r, err = m.decodeRank(d); err != nil {
				return err
			}
			c = mtf.take(r)
		}
		n, err := m.decodeLen(d, c, r, len(dst)-i)
		if err != nil {
			return err
		}
		fill(dst[i:i+n], c)
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

func (m *runModel) decodeRank(d *rangeDecoder) (int, error) {
	nb := rankBuckets - 1
	for k := 0; k < rankBuckets-1; k++ {
		bit := d.decode(m.rankP(k))
		m.rankUpdate(bit)
		if bit == 1 {
			nb = k
			break
		}
	}
	node := 1
	pr := cap3(m.pr)
	for t := nb - 1; t >= 0; t-- {
		c := &m.rankMan[(nb*128+node)*4+pr]
		bit := d.decode(c.p12())
		c.update(bit)
		node = node<<1 | bit
	}
	return node, nil
}

func (m *runModel) decodeLen(d *rangeDecoder, c byte, r, left int) (int, error) {
	for k := 0; k < lenUnary; k++ {
		bit := d.decode(m.lenP(k, c, r))
		m.lenUpdate(bit)
		if bit == 1 {
			if k+1 > left {
				return 0, corruptf("run of %d bytes overruns the segment (%d left)", k+1, left)
			}
			return k + 1, nil
		}
	}
	rc := cap3(r)
	nb := 0
	for t := 0; t < 31; t++ {
		ct := &m.lenExp[t*4+rc]
		bit := d.decode(ct.p12())
		ct.update(bit)
		if bit == 0 {
			break
		}
		nb++
	}
	y := 1
	for t := nb - 1; t >= 0; t-- {
		ct := &m.lenMan[nb*32+t]
		bit := d.decode(ct.p12())
		ct.update(bit)
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
	if len(b) <= 16 {
		for i := range b {
			b[i] = c
		}
		return
	}
	b[0] = c
	for k := 1; k < len(b); k *= 2 {
		copy(b[k:], b[:k])
	}
}
