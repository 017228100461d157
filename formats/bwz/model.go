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

// rateTab[n] is 32768/(n+1.5): the step, in 1/32768ths, of a counter that has seen n bits.
var rateTab [counterLimit + 1]int32

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
	c.n = min(n+1, counterLimit)
}

// A mixer combines the stretched probabilities of three or four counters, plus a bias input of
// 256, with a weight set (16.16 fixed point) chosen by a context, and learns the weights online.
// The coders keep their weight sets in arrays laid out for their contexts and call these
// functions on one set at a time, with the inputs in registers rather than in a mixer's state.

// mixWeights is one weight set: the inputs' weights in 0..3 (0..2 for three inputs), the bias's
// weight in biasWeight.
type mixWeights [8]int32

const biasWeight = 4

// init sets the first inputs weights to 1/parts each and the others to 0.
func (w *mixWeights) init(inputs int, parts int32) {
	*w = mixWeights{}
	for i := 0; i < inputs; i++ {
		w[i] = 65536 / parts
	}
}

// mix4 and mix3 return the mixed probability of a 1, in 1/4096ths.
func (w *mixWeights) mix4(a, b, c, d int32) int {
	dot := int64(a)*int64(w[0]) + int64(b)*int64(w[1]) + int64(c)*int64(w[2]) + int64(d)*int64(w[3]) +
		256*int64(w[biasWeight])
	return squash(int(dot >> 16))
}

func (w *mixWeights) mix3(a, b, c int32) int {
	dot := int64(a)*int64(w[0]) + int64(b)*int64(w[1]) + int64(c)*int64(w[2]) + 256*int64(w[biasWeight])
	return squash(int(dot >> 16))
}

// learn4 and learn3 move the weights of a mix that gave probability p towards the bit coded,
// each by its input times the error, shifted right by shift (rounded).
func (w *mixWeights) learn4(a, b, c, d int32, bit, p int, shift uint) {
	err := int32(bit<<probBits - p)
	r := int32(1) << (shift - 1)
	w[0] = clampWeight(w[0] + (a*err+r)>>shift)
	w[1] = clampWeight(w[1] + (b*err+r)>>shift)
	w[2] = clampWeight(w[2] + (c*err+r)>>shift)
	w[3] = clampWeight(w[3] + (d*err+r)>>shift)
	w[biasWeight] = clampWeight(w[biasWeight] + (256*err+r)>>shift)
}

func (w *mixWeights) learn3(a, b, c int32, bit, p int, shift uint) {
	err := int32(bit<<probBits - p)
	r := int32(1) << (shift - 1)
	w[0] = clampWeight(w[0] + (a*err+r)>>shift)
	w[1] = clampWeight(w[1] + (b*err+r)>>shift)
	w[2] = clampWeight(w[2] + (c*err+r)>>shift)
	w[biasWeight] = clampWeight(w[biasWeight] + (256*err+r)>>shift)
}

// encodeMix4 codes bit with the mix of four counters under weights w and updates them all;
// decodeMix4 is its twin. Each is one call doing a whole decision, so that the coder's state, the
// inputs and the weights stay in registers: the coding and learning steps are written out here
// rather than called (the compiler would not inline them).
func (e *rangeEncoder) encodeMix4(bit int, c0, c1, c2, c3 *counter, w *mixWeights, shift uint) {
	s0, s1, s2, s3 := c0.st(), c1.st(), c2.st(), c3.st()
	p := w.mix4(s0, s1, s2, s3)

	bound := (e.rng >> probBits) * uint32(p)
	one := uint32(bit) - 1
	e.low += uint64(bound & one)
	e.rng = bound + (e.rng-2*bound)&one
	if e.rng < rangeTop {
		e.renormalize()
	}

	err := int32(bit<<probBits - p)
	r := int32(1) << (shift - 1)
	w[0] = clampWeight(w[0] + (s0*err+r)>>shift)
	w[1] = clampWeight(w[1] + (s1*err+r)>>shift)
	w[2] = clampWeight(w[2] + (s2*err+r)>>shift)
	w[3] = clampWeight(w[3] + (s3*err+r)>>shift)
	w[biasWeight] = clampWeight(w[biasWeight] + (256*err+r)>>shift)
	c0.update(bit)
	c1.update(bit)
	c2.update(bit)
	c3.update(bit)
}

func (d *rangeDecoder) decodeMix4(c0, c1, c2, c3 *counter, w *mixWeights, shift uint) int {
	s0, s1, s2, s3 := c0.st(), c1.st(), c2.st(), c3.st()
	p := w.mix4(s0, s1, s2, s3)

	bound := (d.rng >> probBits) * uint32(p)
	one := uint32((int64(d.code) - int64(bound)) >> 63)
	d.code -= bound &^ one
	d.rng = bound + (d.rng-2*bound)&^one
	if d.rng < rangeTop {
		d.renormalize()
	}
	bit := int(one & 1)

	err := int32(bit<<probBits - p)
	r := int32(1) << (shift - 1)
	w[0] = clampWeight(w[0] + (s0*err+r)>>shift)
	w[1] = clampWeight(w[1] + (s1*err+r)>>shift)
	w[2] = clampWeight(w[2] + (s2*err+r)>>shift)
	w[3] = clampWeight(w[3] + (s3*err+r)>>shift)
	w[biasWeight] = clampWeight(w[biasWeight] + (256*err+r)>>shift)
	c0.update(bit)
	c1.update(bit)
	c2.update(bit)
	c3.update(bit)
	return bit
}

// encodeMix3 and decodeMix3 are encodeMix4 and decodeMix4 for three counters.
func (e *rangeEncoder) encodeMix3(bit int, c0, c1, c2 *counter, w *mixWeights, shift uint) {
	s0, s1, s2 := c0.st(), c1.st(), c2.st()
	p := w.mix3(s0, s1, s2)

	bound := (e.rng >> probBits) * uint32(p)
	one := uint32(bit) - 1
	e.low += uint64(bound & one)
	e.rng = bound + (e.rng-2*bound)&one
	if e.rng < rangeTop {
		e.renormalize()
	}

	err := int32(bit<<probBits - p)
	r := int32(1) << (shift - 1)
	w[0] = clampWeight(w[0] + (s0*err+r)>>shift)
	w[1] = clampWeight(w[1] + (s1*err+r)>>shift)
	w[2] = clampWeight(w[2] + (s2*err+r)>>shift)
	w[biasWeight] = clampWeight(w[biasWeight] + (256*err+r)>>shift)
	c0.update(bit)
	c1.update(bit)
	c2.update(bit)
}

func (d *rangeDecoder) decodeMix3(c0, c1, c2 *counter, w *mixWeights, shift uint) int {
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

	err := int32(bit<<probBits - p)
	r := int32(1) << (shift - 1)
	w[0] = clampWeight(w[0] + (s0*err+r)>>shift)
	w[1] = clampWeight(w[1] + (s1*err+r)>>shift)
	w[2] = clampWeight(w[2] + (s2*err+r)>>shift)
	w[biasWeight] = clampWeight(w[biasWeight] + (256*err+r)>>shift)
	c0.update(bit)
	c1.update(bit)
	c2.update(bit)
	return bit
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
