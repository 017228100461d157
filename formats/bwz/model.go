package bwz

import "math"

// The adaptive models: counters that learn the probability of a 1 in one context, and a mixer
// that combines the guesses of several contexts in the logistic domain, learning online which
// context to trust (the approach of the PAQ family of compressors, here in a small form).
// Everything is integer arithmetic so that encoder and decoder agree bit for bit on every
// platform.

// stretch(p) = ln(p/(1-p)) and squash, its inverse, in fixed point: probabilities in 1/4096ths,
// the logistic domain in 1/256ths, clamped to ±2047.
var (
	stretchTab [probOne]int16
	squashTab  [4096]int16 // squash(x) for x in -2048..2047, at x+2048
)

func init() {
	for i := range squashTab {
		x := float64(i-2048) / 256
		v := int(math.Round(probOne / (1 + math.Exp(-x))))
		squashTab[i] = int16(min(max(v, 1), probOne-1))
	}
	// stretch is the inverse of squash on the table's grid, so that squash(stretch(p)) ≈ p.
	pi := 0
	for x := -2047; x <= 2047; x++ {
		v := int(squashTab[x+2048])
		for j := pi; j <= v; j++ {
			stretchTab[j] = int16(x)
		}
		pi = v + 1
	}
	for j := pi; j < probOne; j++ {
		stretchTab[j] = 2047
	}
}

func squash(x int) int {
	if x > 2047 {
		x = 2047
	}
	if x < -2047 {
		x = -2047
	}
	return int(squashTab[x+2048])
}

// counter is an adaptive probability of a 1, in 1/65536ths, with its own learning rate: fast while
// the context is young, settling to 1/counterLimit as it sees more bits.
type counter struct {
	p uint16
	n uint16
}

const counterLimit = 127

// rateTab[n] is 32768/(n+1.5): the step, in 1/32768ths, of a counter that has seen n bits.
var rateTab [counterLimit + 1]int32

func init() {
	for n := range rateTab {
		rateTab[n] = int32(32768 / (float64(n) + 1.5))
	}
}

func newCounter() counter { return counter{p: 1 << 15} }

// p12 is the counter's probability of a 1 in 1/4096ths, never 0 or 1, for coding with it alone.
func (c *counter) p12() int {
	return min(max(int(c.p>>4), 1), probOne-1)
}

// st is the counter's probability, stretched, as a mixer input.
func (c *counter) st() int32 { return int32(stretchTab[c.p>>4]) }

func (c *counter) update(bit int) {
	p := int32(c.p)
	// the target is 65535 for a 1, so that p stays within 16 bits (the step is below 1)
	c.p = uint16(p + ((int32(bit)*65535-p)*rateTab[c.n])>>15)
	if c.n < counterLimit {
		c.n++
	}
}

func initCounters(cs []counter) {
	for i := range cs {
		cs[i] = newCounter()
	}
}

// mixer3 and mixer5 combine the stretched probabilities of a fixed number of counters, plus a
// bias input, with one of several weight sets (16.16 fixed point), learning the weights online.

type mixer3 struct {
	w     [][4]int32
	x     [4]int32
	cur   int // the weight set of the last mix
	pr    int
	shift uint
}

func newMixer3(nsets int, shift uint) *mixer3 {
	m := &mixer3{w: make([][4]int32, nsets), shift: shift}
	for i := range m.w {
		m.w[i] = [4]int32{65536 / 3, 65536 / 3, 65536 / 3, 0}
	}
	return m
}

func (m *mixer3) mix(a, b, c int32, set int) int {
	w := &m.w[set]
	m.cur = set
	m.x = [4]int32{a, b, c, 256}
	dot := int64(a)*int64(w[0]) + int64(b)*int64(w[1]) + int64(c)*int64(w[2]) + 256*int64(w[3])
	m.pr = squash(int(dot >> 16))
	return m.pr
}

func (m *mixer3) update(bit int) {
	err := int32(bit<<probBits - m.pr)
	w := &m.w[m.cur]
	r := int32(1) << (m.shift - 1)
	w[0] = clampWeight(w[0] + (m.x[0]*err+r)>>m.shift)
	w[1] = clampWeight(w[1] + (m.x[1]*err+r)>>m.shift)
	w[2] = clampWeight(w[2] + (m.x[2]*err+r)>>m.shift)
	w[3] = clampWeight(w[3] + (m.x[3]*err+r)>>m.shift)
}

type mixer5 struct {
	w     [][6]int32
	x     [6]int32
	cur   int // the weight set of the last mix
	pr    int
	shift uint
}

func newMixer5(nsets int, shift uint) *mixer5 {
	m := &mixer5{w: make([][6]int32, nsets), shift: shift}
	for i := range m.w {
		m.w[i] = [6]int32{65536 / 5, 65536 / 5, 65536 / 5, 65536 / 5, 65536 / 5, 0}
	}
	return m
}

func (m *mixer5) mix(x [4]int32, set int) int {
	w := &m.w[set]
	m.cur = set
	m.x = [6]int32{x[0], x[1], x[2], x[3], 0, 256}
	dot := int64(x[0])*int64(w[0]) + int64(x[1])*int64(w[1]) + int64(x[2])*int64(w[2]) +
		int64(x[3])*int64(w[3]) + 256*int64(w[5])
	m.pr = squash(int(dot >> 16))
	return m.pr
}

func (m *mixer5) update(bit int) {
	err := int32(bit<<probBits - m.pr)
	w := &m.w[m.cur]
	r := int32(1) << (m.shift - 1)
	for i := range w {
		w[i] = clampWeight(w[i] + (m.x[i]*err+r)>>m.shift)
	}
}

// maxWeight bounds a weight (16 in 16.16 fixed point), so that no run of data can overflow one.
const maxWeight = 16 << 16

func clampWeight(v int32) int32 { return min(max(v, -maxWeight), maxWeight) }
