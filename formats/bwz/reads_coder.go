package bwz

import (
	"math"
	"math/bits"
)

// The read-set coders share one binary arithmetic coder with 16-bit probabilities (finer than the
// transform coders' 12 bits: a read's bases mostly match, at odds of thousands to one) and a few
// kinds of model. One coder type both encodes and decodes, so that every model is written once
// and the two directions cannot drift apart: code(p, bit) codes bit when encoding and returns the
// decoded bit when decoding (bit is then ignored).

// arith is a carry-less binary arithmetic coder over 32 bits: the interval [x1, x2] narrows with
// each decision, and its leading byte goes out once x1 and x2 agree on it.
type arith struct {
	dec    bool
	x1, x2 uint32
	x      uint32 // decoding: the code value, x1 <= x <= x2
	buf    []byte // encoding: the output; decoding: the input
	pos    int    // decoding: the next byte of buf
}

func newEncoder(dst []byte) *arith { return &arith{x2: math.MaxUint32, buf: dst} }

func newDecoder(src []byte) *arith {
	a := &arith{dec: true, x2: math.MaxUint32, buf: src}
	for i := 0; i < 4; i++ {
		a.x = a.x<<8 | uint32(a.next())
	}
	return a
}

// next returns the next input byte, or 0 past the end (damaged input decodes to garbage that the
// callers' checks reject; overrun tells how far it went).
func (a *arith) next() byte {
	p := a.pos
	a.pos++
	if p < len(a.buf) {
		return a.buf[p]
	}
	return 0
}

// overrun reports whether decoding has read past the end of the input: the encoder's flush
// writes the four bytes that the decoder reads ahead, so a whole stream never does.
func (a *arith) overrun() bool { return a.pos > len(a.buf) }

// code codes one decision whose probability of a 1 is p1/65536 (1 <= p1 <= 65535).
func (a *arith) code(p1 uint32, bit int) int {
	mid := a.x1 + uint32(uint64(a.x2-a.x1)*uint64(p1)>>16)
	if a.dec {
		bit = 0
		if a.x <= mid {
			bit = 1
		}
	}
	if bit != 0 {
		a.x2 = mid
	} else {
		a.x1 = mid + 1
	}
	for (a.x1^a.x2)&0xFF000000 == 0 {
		if a.dec {
			a.x = a.x<<8 | uint32(a.next())
		} else {
			a.buf = append(a.buf, byte(a.x2>>24))
		}
		a.x1 <<= 8
		a.x2 = a.x2<<8 | 0xFF
	}
	return bit
}

// finish flushes an encoder and returns its output.
func (a *arith) finish() []byte {
	return append(a.buf, byte(a.x1>>24), byte(a.x1>>16), byte(a.x1>>8), byte(a.x1))
}

// ctr is an adaptive probability of a 1 (in 1/65536ths, kept xor 1<<15 so that a zero ctr says
// 1/2) that learns fast while young and settles to a step of 1/(limit+1.5).
type ctr struct {
	q uint16
	n uint16
}

// p returns the probability of a 1, 1..65535.
func (c *ctr) p() uint32 {
	p := uint32(c.q ^ 1<<15)
	return min(max(p, 1), 65535)
}

// update moves c towards bit; limit (< 1024) bounds the count, and so the slowest step.
func (c *ctr) update(bit int, limit uint16) {
	p := int32(c.q ^ 1<<15)
	target := -int32(bit) & 65535
	p += (target - p) * rateTab[c.n&1023] >> 15
	c.q = uint16(p) ^ 1<<15
	c.n = min(c.n+1, limit)
}

// codeBit codes bit with c alone and updates c.
func (a *arith) codeBit(c *ctr, bit int, limit uint16) int {
	bit = a.code(c.p(), bit)
	c.update(bit, limit)
	return bit
}

// Logistic mixing: probabilities are stretched to ln(p/(1-p)) in 1/256ths (clamped to ±2047),
// weighted, summed and squashed back.
var (
	stretch16 [4096]int32  // stretch of the probability (i+0.5)/4096
	squash16  [4096]uint32 // the probability, in 1/65536ths, of the stretch i-2048
)

func init() {
	for i := range squash16 {
		v := math.Round(65536 / (1 + math.Exp(-float64(i-2048)/256)))
		squash16[i] = uint32(min(max(v, 1), 65535))
	}
	for i := range stretch16 {
		p := (float64(i) + 0.5) / 4096
		v := math.Round(256 * math.Log(p/(1-p)))
		stretch16[i] = int32(min(max(v, -2047), 2047))
	}
}

func squash16x(x int32) uint32 { return squash16[min(max(x, -2047), 2047)+2048] }

// st is c's probability stretched.
func (c *ctr) st() int32 { return stretch16[(c.q^1<<15)>>4] }

// numModel codes unsigned integers: the bit length in unary, then the bits below the leading 1,
// each with a probability of its own by the length and the place of the bit below the leading 1
// (the eighth and lower ones share one).
type numModel struct {
	length [64]ctr
	mant   [65][8]ctr
}

const numLimit = 255

func (a *arith) codeNum(m *numModel, v uint64) uint64 {
	n := bits.Len64(v)
	k := 0
	for ; k < 64; k++ { // a length of 64 needs no stop
		stop := 0
		if k == n {
			stop = 1
		}
		if a.codeBit(&m.length[k], stop, numLimit) == 1 {
			break
		}
	}
	n = k
	if n <= 1 {
		return uint64(n)
	}
	out := uint64(1)
	for i := n - 2; i >= 0; i-- {
		b := a.codeBit(&m.mant[n][min(n-2-i, 7)], int(v>>uint(i))&1, numLimit)
		out = out<<1 | uint64(b)
	}
	return out
}

// codeSigned codes a signed integer as a sign and a magnitude.
func (a *arith) codeSigned(sign *ctr, m *numModel, v int64) int64 {
	neg := 0
	if v < 0 {
		neg = 1
	}
	mag := uint64(v)
	if neg == 1 {
		mag = uint64(-v)
	}
	mag = a.codeNum(m, mag)
	if mag == 0 {
		return 0
	}
	if a.codeBit(sign, neg, numLimit) == 1 {
		return -int64(mag)
	}
	return int64(mag)
}

// byteModel codes bytes with a binary tree of counters.
type byteModel [256]ctr

func (a *arith) codeByte(m *byteModel, v byte) byte {
	node := 1
	for i := 7; i >= 0; i-- {
		b := a.codeBit(&m[node], int(v>>uint(i))&1, numLimit)
		node = node<<1 | b
	}
	return byte(node)
}
