package bwz

import "math"

// The adaptive models: counters that learn the probability of a 1 in one context, and a mixer
// that combines the guesses of several contexts in the logistic domain, learning online which
// context to trust (the approach of the PAQ family of compressors, here in a small form).
// Everything is integer arithmetic (but for one conversion of an integer to a float32, exactly
// rounded, in runsfreq.go's lg) so that encoder and decoder agree bit for bit on every platform.

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
	return int(squashTab[min(max(x, -2047), 2047)+2048])
}

// counter is an adaptive probability of a 1, in 1/65536ths, with its own learning rate: fast while
// the context is young, settling to 1/counterLimit as it sees more bits. The probability is kept
// xor 1<<15, so that the zero counter (a fresh table is all zeros) says 1/2 and has seen nothing.
type counter struct {
	q uint16 // the probability xor 1<<15
	n uint16 // the bits seen, up to counterLimit
}

const counterLimit = 127 // a power of two less one, so that n&counterLimit needs no bounds check

// rateTab[n] is 32768/(n+1.5): the step, in 1/32768ths, of a counter that has seen n bits (the
// read-set coder's counters go up to 1023).
var rateTab [1024]int32

// stretchQ is stretchTab indexed by a counter's q>>4 rather than its probability's p>>4.
var stretchQ [probOne]int16

func init() {
	for n := range rateTab {
		rateTab[n] = int32(32768 / (float64(n) + 1.5))
	}
	for i := range stretchQ {
		stretchQ[i] = stretchTab[i^probOne/2]
	}
}

// p16 is the counter's probability of a 1 in 1/65536ths.
func (c *counter) p16() int32 { return int32(c.q ^ 1<<15) }

// p12 is the counter's probability of a 1 in 1/4096ths, never 0 or 1, for coding with it alone.
func (c *counter) p12() int {
	return min(max(int(c.q^1<<15)>>4, 1), probOne-1)
}

// st is the counter's probability, stretched, as a mixer input.
func (c *counter) st() int32 { return int32(stretchQ[c.q>>4]) }

func (c *counter) update(bit int) {
	p := int32(c.q ^ 1<<15)
	n := c.n
	// the target is 65535 for a 1, so that p stays within 16 bits (the step is below 1)
	c.q = uint16(p+((int32(-bit)&65535-p)*rateTab[n&counterLimit])>>15) ^ 1<<15
	c.n = n + 1 - (n+1)>>7 // n+1 up to counterLimit = 127, without a branch
}

// updateFast is update for counters that settle at a step of 1/16.5 rather than 1/128.5: the
// run coder of method 4 uses them for its mixers' inputs, which gain from following the data
// closely (with them the Linux tar's transform codes 0.17% smaller than with update, the E. coli
// suffix array's 0.5%).
func (c *counter) updateFast(bit int) {
	p := int32(c.q ^ 1<<15)
	n := c.n
	c.q = uint16(p+((int32(-bit)&65535-p)*rateTab[n&fastLimit])>>15) ^ 1<<15
	c.n = n + 1 - (n+1)>>4 // n+1 up to fastLimit = 15, without a branch
}

const fastLimit = 15

// mixCounter is a counter that feeds a mixer: it keeps its probability stretched as well, so that
// a mix reads its inputs straight from the counters, one load each, rather than through a table
// after the load (mixing is on the path from one decision to the next when decoding).
type mixCounter struct {
	counter
	s int16 // stretchQ[q>>4]
	_ int16
}

func (c *mixCounter) st() int32 { return int32(c.s) }

func (c *mixCounter) update(bit int) {
	c.counter.update(bit)
	c.s = stretchQ[c.q>>4]
}

func (c *mixCounter) updateFast(bit int) {
	c.counter.updateFast(bit)
	c.s = stretchQ[c.q>>4]
}

// A mixer combines the stretched probabilities of two or three counters, plus a bias input of
// 256, with a weight set (16.16 fixed point) chosen by a context, and learns the weights online.
// The coders keep their weight sets in arrays laid out for their contexts, and code each decision
// with one call (encodeMix3, decodeMix2, ...) that mixes, codes the bit and learns, with the
// inputs, weights and coder state in registers: the steps are written out in each of these
// functions rather than called, since the compiler would not inline them.
//
// A mix that was nearly right (its error under skip/4096) may leave its weights alone: on the
// direct coder's DNA, where most steps are such noise, that codes a little smaller.

// mixWeights is one weight set: the inputs' weights in 0..2, the bias's weight in biasWeight.
type mixWeights [4]int32

const biasWeight = 3

// learnRate is how a mixer learns: its weights move by the error times the input, shifted right
// by shift, unless the error is under skip.
type learnRate struct {
	shift uint
	skip  int32
}

// init sets the first inputs weights to 65536/parts each and the others to 0.
func (w *mixWeights) init(inputs int, parts int32) {
	*w = mixWeights{}
	for i := 0; i < inputs; i++ {
		w[i] = 65536 / parts
	}
}

// mix3 and mix2 return the mixed probability of a 1, in 1/4096ths.
func (w *mixWeights) mix3(a, b, c int32) int {
	dot := int64(a)*int64(w[0]) + int64(b)*int64(w[1]) + int64(c)*int64(w[2]) + 256*int64(w[biasWeight])
	return squash(int(dot >> 16))
}

func (w *mixWeights) mix2(a, b int32) int {
	dot := int64(a)*int64(w[0]) + int64(b)*int64(w[1]) + 256*int64(w[biasWeight])
	return squash(int(dot >> 16))
}

// learns tells whether a mix with error err (the bit in 1/4096ths less the probability) moves its
// weights.
func (lr learnRate) learns(err int32) bool { return uint32(err+lr.skip-1) > uint32(2*lr.skip-2) }

// step is one weight's move for input x and error err, rounded.
func (lr learnRate) step(w, x, err int32) int32 {
	s := lr.shift & 31 // (a shift the compiler knows is under 32 needs no checks)
	return clampWeight(w + (x*err+1<<(s-1))>>s)
}

// learn3 and learn2 move the weights of a mix that gave probability p towards the bit coded (the
// coders do the same, written out).
func (w *mixWeights) learn3(s0, s1, s2 int32, bit, p int, lr learnRate) {
	err := int32(bit<<probBits - p)
	w[0] = lr.step(w[0], s0, err)
	w[1] = lr.step(w[1], s1, err)
	w[2] = lr.step(w[2], s2, err)
	w[biasWeight] = lr.step(w[biasWeight], 256, err)
}

func (w *mixWeights) learn2(s0, s1 int32, bit, p int, lr learnRate) {
	err := int32(bit<<probBits - p)
	w[0] = lr.step(w[0], s0, err)
	w[1] = lr.step(w[1], s1, err)
	w[biasWeight] = lr.step(w[biasWeight], 256, err)
}

// encodeMix3 codes bit with the mix of three counters under weights w and updates them all;
// decodeMix3 is its twin.
func (e *rangeEncoder) encodeMix3(bit int, c0, c1, c2 *mixCounter, w *mixWeights, lr learnRate) {
	s0, s1, s2 := c0.st(), c1.st(), c2.st()
	p := w.mix3(s0, s1, s2)

	bound := (e.rng >> probBits) * uint32(p)
	one := uint32(bit) - 1
	e.low += uint64(bound & one)
	e.rng = bound + (e.rng-2*bound)&one
	if e.rng < rangeTop {
		e.renormalize()
	}

	if err := int32(bit<<probBits - p); lr.learns(err) {
		w[0] = lr.step(w[0], s0, err)
		w[1] = lr.step(w[1], s1, err)
		w[2] = lr.step(w[2], s2, err)
		w[biasWeight] = lr.step(w[biasWeight], 256, err)
	}
	c0.update(bit)
	c1.update(bit)
	c2.update(bit)
}

func (d *rangeDecoder) decodeMix3(c0, c1, c2 *mixCounter, w *mixWeights, lr learnRate) int {
	s0, s1, s2 := c0.st(), c1.st(), c2.st()
	p := w.mix3(s0, s1, s2)

	bound := (d.rng >> probBits) * uint32(p)
	one := uint32((int64(d.code) - int64(bound)) >> 63)
	d.code -= bound &^ one
	d.rng = bound + (d.rng-2*bound)&^one
	if d.rng < rangeTop {
		d.renormalize()
	}
	bit := int(one & 1)

	if err := int32(bit<<probBits - p); lr.learns(err) {
		w[0] = lr.step(w[0], s0, err)
		w[1] = lr.step(w[1], s1, err)
		w[2] = lr.step(w[2], s2, err)
		w[biasWeight] = lr.step(w[biasWeight], 256, err)
	}
	c0.update(bit)
	c1.update(bit)
	c2.update(bit)
	return bit
}

// encodeMix2 and decodeMix2 are encodeMix3 and decodeMix3 for two counters.
func (e *rangeEncoder) encodeMix2(bit int, c0, c1 *mixCounter, w *mixWeights, lr learnRate) {
	s0, s1 := c0.st(), c1.st()
	p := w.mix2(s0, s1)

	bound := (e.rng >> probBits) * uint32(p)
	one := uint32(bit) - 1
	e.low += uint64(bound & one)
	e.rng = bound + (e.rng-2*bound)&one
	if e.rng < rangeTop {
		e.renormalize()
	}

	if err := int32(bit<<probBits - p); lr.learns(err) {
		w[0] = lr.step(w[0], s0, err)
		w[1] = lr.step(w[1], s1, err)
		w[biasWeight] = lr.step(w[biasWeight], 256, err)
	}
	c0.update(bit)
	c1.update(bit)
}

func (d *rangeDecoder) decodeMix2(c0, c1 *mixCounter, w *mixWeights, lr learnRate) int {
	s0, s1 := c0.st(), c1.st()
	p := w.mix2(s0, s1)

	bound := (d.rng >> probBits) * uint32(p)
	one := uint32((int64(d.code) - int64(bound)) >> 63)
	d.code -= bound &^ one
	d.rng = bound + (d.rng-2*bound)&^one
	if d.rng < rangeTop {
		d.renormalize()
	}
	bit := int(one & 1)

	if err := int32(bit<<probBits - p); lr.learns(err) {
		w[0] = lr.step(w[0], s0, err)
		w[1] = lr.step(w[1], s1, err)
		w[biasWeight] = lr.step(w[biasWeight], 256, err)
	}
	c0.update(bit)
	c1.update(bit)
	return bit
}

// encodeMix2v and decodeMix2v are encodeMix2 and decodeMix2 for a first input given as a value,
// s0 (already stretched), and a counter updated with updateFast: method 4's rank decisions.
func (e *rangeEncoder) encodeMix2v(bit int, s0 int32, c1 *mixCounter, w *mixWeights, lr learnRate) {
	s1 := c1.st()
	p := w.mix2(s0, s1)

	bound := (e.rng >> probBits) * uint32(p)
	one := uint32(bit) - 1
	e.low += uint64(bound & one)
	e.rng = bound + (e.rng-2*bound)&one
	if e.rng < rangeTop {
		e.renormalize()
	}

	if err := int32(bit<<probBits - p); lr.learns(err) {
		w[0] = lr.step(w[0], s0, err)
		w[1] = lr.step(w[1], s1, err)
		w[biasWeight] = lr.step(w[biasWeight], 256, err)
	}
	c1.updateFast(bit)
}

func (d *rangeDecoder) decodeMix2v(s0 int32, c1 *mixCounter, w *mixWeights, lr learnRate) int {
	s1 := c1.st()
	p := w.mix2(s0, s1)

	bound := (d.rng >> probBits) * uint32(p)
	one := uint32((int64(d.code) - int64(bound)) >> 63)
	d.code -= bound &^ one
	d.rng = bound + (d.rng-2*bound)&^one
	if d.rng < rangeTop {
		d.renormalize()
	}
	bit := int(one & 1)

	if err := int32(bit<<probBits - p); lr.learns(err) {
		w[0] = lr.step(w[0], s0, err)
		w[1] = lr.step(w[1], s1, err)
		w[biasWeight] = lr.step(w[biasWeight], 256, err)
	}
	c1.updateFast(bit)
	return bit
}

// encodeMix2f and decodeMix2f are encodeMix2 and decodeMix2 with counters updated with
// updateFast.
func (e *rangeEncoder) encodeMix2f(bit int, c0, c1 *mixCounter, w *mixWeights, lr learnRate) {
	s0, s1 := c0.st(), c1.st()
	p := w.mix2(s0, s1)

	bound := (e.rng >> probBits) * uint32(p)
	one := uint32(bit) - 1
	e.low += uint64(bound & one)
	e.rng = bound + (e.rng-2*bound)&one
	if e.rng < rangeTop {
		e.renormalize()
	}

	if err := int32(bit<<probBits - p); lr.learns(err) {
		w[0] = lr.step(w[0], s0, err)
		w[1] = lr.step(w[1], s1, err)
		w[biasWeight] = lr.step(w[biasWeight], 256, err)
	}
	c0.updateFast(bit)
	c1.updateFast(bit)
}

func (d *rangeDecoder) decodeMix2f(c0, c1 *mixCounter, w *mixWeights, lr learnRate) int {
	s0, s1 := c0.st(), c1.st()
	p := w.mix2(s0, s1)

	bound := (d.rng >> probBits) * uint32(p)
	one := uint32((int64(d.code) - int64(bound)) >> 63)
	d.code -= bound &^ one
	d.rng = bound + (d.rng-2*bound)&^one
	if d.rng < rangeTop {
		d.renormalize()
	}
	bit := int(one & 1)

	if err := int32(bit<<probBits - p); lr.learns(err) {
		w[0] = lr.step(w[0], s0, err)
		w[1] = lr.step(w[1], s1, err)
		w[biasWeight] = lr.step(w[biasWeight], 256, err)
	}
	c0.updateFast(bit)
	c1.updateFast(bit)
	return bit
}

// decodeTree reads n bits, most significant first, each coded with counter t[node] alone where
// node is 1 followed by the bits before it (as encodeCounter codes them), and returns 1<<n|bits.
// It reads both children's probabilities while the bit is being decoded, so that the next bit
// need not wait for a load from an address that depends on this one.
func (d *rangeDecoder) decodeTree(t *[128]counter, n int) int {
	node := 1
	p := t[1].p12()
	for i := 0; i < n; i++ {
		p0, p1 := t[node<<1&127].p12(), t[(node<<1|1)&127].p12()

		bound := (d.rng >> probBits) * uint32(p)
		one := uint32((int64(d.code) - int64(bound)) >> 63)
		d.code -= bound &^ one
		d.rng = bound + (d.rng-2*bound)&^one
		if d.rng < rangeTop {
			d.renormalize()
		}
		bit := int(one & 1)

		t[node&127].update(bit)
		node = node<<1 | bit
		p = p0 ^ (p0^p1)&-bit // p1 after a 1, without a branch
	}
	return node
}

// encodeCounter and decodeCounter code a bit with one counter alone, and update it.
func (e *rangeEncoder) encodeCounter(bit int, c *counter) {
	bound := (e.rng >> probBits) * uint32(c.p12())
	one := uint32(bit) - 1
	e.low += uint64(bound & one)
	e.rng = bound + (e.rng-2*bound)&one
	if e.rng < rangeTop {
		e.renormalize()
	}
	c.update(bit)
}

func (d *rangeDecoder) decodeCounter(c *counter) int {
	bound := (d.rng >> probBits) * uint32(c.p12())
	one := uint32((int64(d.code) - int64(bound)) >> 63)
	d.code -= bound &^ one
	d.rng = bound + (d.rng-2*bound)&^one
	if d.rng < rangeTop {
		d.renormalize()
	}
	bit := int(one & 1)
	c.update(bit)
	return bit
}

// maxWeight bounds a weight (16 in 16.16 fixed point), so that no run of data can overflow one.
const maxWeight = 16 << 16

func clampWeight(v int32) int32 { return min(max(v, -maxWeight), maxWeight) }
