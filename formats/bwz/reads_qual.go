package bwz

import (
	"math/bits"
	"slices"
)

// Quality lines are coded symbol by symbol, each a rank in the block's alphabet of quality bytes
// (commonest first), binarised as up to qualUnary "is it this rank?" decisions and then the rank's
// remaining bits. Each decision mixes two models: by the position in the read alone (what a
// simulator that draws each position's quality on its own leaves to predict), and by the two
// previous qualities and the position's 32-wide band (instruments' qualities drift and repeat).
// Reads are coded in chunks of about readsChunkBases symbols, each from fresh models, so that
// chunks code and decode in parallel.

const (
	qualUnary    = 3    // ranks asked about one by one before the rest's bits
	qualMaxPos   = 1023 // positions past this share its model
	qualCtx2Bits = 13
	qualLimit    = 1023
)

// qualAlphabet returns the quality bytes of q by count, commonest first (ties by byte value).
func qualAlphabet(q []byte) []byte {
	var count [256]int
	for _, c := range q {
		count[c]++
	}
	var alpha []byte
	for c := range count {
		if count[c] > 0 {
			alpha = append(alpha, byte(c))
		}
	}
	slices.SortStableFunc(alpha, func(a, b byte) int { return count[b] - count[a] })
	return alpha
}

// qualModel is the state of one chunk's coding.
type qualModel struct {
	unary, depth int // decisions: unary ones, then depth bits
	nodes        int
	m1           []ctr // [pos][node]
	m2           []ctr // [ctx2][node]
	w            [][3]int32
}

func newQualModel(alphabet int) *qualModel {
	m := &qualModel{unary: max(min(qualUnary, alphabet-1), 0)}
	if rest := alphabet - m.unary; rest > 1 {
		m.depth = bits.Len(uint(rest - 1))
	}
	m.nodes = m.unary + 1<<m.depth
	m.m1 = make([]ctr, (qualMaxPos+1)*m.nodes)
	m.m2 = make([]ctr, (1<<qualCtx2Bits)*m.nodes)
	m.w = make([][3]int32, m.nodes*4)
	for i := range m.w {
		m.w[i] = [3]int32{1 << 15, 1 << 15, 0}
	}
	return m
}

// codeBit codes one decision of a symbol: node is the decision's place in the binarisation and
// c1, c2 the models' context rows.
func (m *qualModel) codeBit(a *arith, node, c1, c2, ws int, bit int) int {
	k1, k2 := &m.m1[c1+node], &m.m2[c2+node]
	s1, s2 := k1.st(), k2.st()
	w := &m.w[ws*m.nodes+node]
	dot := int64(s1)*int64(w[0]) + int64(s2)*int64(w[1]) + 256*int64(w[2])
	p := squash16x(int32(dot >> 16))
	bit = a.code(p, bit)
	// A slow mixer: on simulated reads, whose qualities the position alone predicts, faster
	// ones lost 0.5% (twice this rate) to 7% (12 times) to the noise of their weights.
	err := (int32(bit)<<16 - int32(p)) >> 4
	w[0] = clampW(w[0] + (s1*err)>>10)
	w[1] = clampW(w[1] + (s2*err)>>10)
	w[2] = clampW(w[2] + (256*err)>>10)
	k1.update(bit, qualLimit)
	k2.update(bit, 255)
	return bit
}

func clampW(v int32) int32 { return min(max(v, -1<<22), 1<<22) }

// codeQualities codes (or, decoding, fills) the quality symbols q, ranks in the alphabet, of
// reads whose lengths ends gives (ends are cumulative, from q's start).
func (m *qualModel) codeQualities(a *arith, q []byte, ends []uint32) {
	start := 0
	for _, e := range ends {
		end := int(e)
		var q1, q2 int // previous ranks, capped at 15
		for i := start; i < end; i++ {
			pos := min(i-start, qualMaxPos)
			c1 := pos * m.nodes
			c2 := ((q1<<4|q2)<<5 | min(pos>>5, 31)) & (1<<qualCtx2Bits - 1) * m.nodes
			ws := min(pos>>4, 3)
			sym := int(q[i])
			// the unary decisions, then the bits
			r := 0
			for ; r < m.unary; r++ {
				bit := 0
				if sym == r {
					bit = 1
				}
				if m.codeBit(a, r, c1, c2, ws, bit) == 1 {
					break
				}
			}
			if r == m.unary {
				v := sym - m.unary
				node := 1
				for b := m.depth - 1; b >= 0; b-- {
					bit := m.codeBit(a, m.unary+node, c1, c2, ws, v>>uint(b)&1)
					node = node<<1 | bit
				}
				r = m.unary + node - 1<<m.depth
			}
			if a.dec {
				q[i] = byte(r)
			}
			q2, q1 = q1, min(r, 15)
		}
		start = end
	}
}
