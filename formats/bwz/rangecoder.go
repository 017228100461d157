package bwz

import (
	"encoding/binary"
	"math/bits"
)

// A binary arithmetic coder (a range coder over bits, carry propagated through a cached byte) with
// 12-bit probabilities. The models in model.go supply, for every bit, the probability that it is
// a 1; the better they guess, the fewer bytes come out.

const (
	probBits = 12
	probOne  = 1 << probBits // probabilities are in (0, probOne)
	rangeTop = 1 << 24       // the range is renormalised whenever it falls below this
)

// rangeEncoder appends coded bytes to out.
type rangeEncoder struct {
	low       uint64
	rng       uint32
	cache     byte
	cacheSize int64
	out       []byte
}

func newRangeEncoder(out []byte) *rangeEncoder {
	return &rangeEncoder{rng: 0xFFFFFFFF, cacheSize: 1, out: out}
}

// encode codes bit (0 or 1) with p1, the probability of a 1 in 1/4096ths (1..4095).
// It has no branch on the bit; the coders write the same steps out in their own functions.
func (e *rangeEncoder) encode(bit int, p1 int) {
	bound := (e.rng >> probBits) * uint32(p1)
	one := uint32(bit) - 1 // 0 for a 1, all ones for a 0
	e.low += uint64(bound & one)
	e.rng = bound + (e.rng-2*bound)&one // bound for a 1, rng-bound for a 0
	if e.rng < rangeTop {
		e.renormalize()
	}
}

func (e *rangeEncoder) renormalize() {
	for e.rng < rangeTop {
		e.rng <<= 8
		e.shiftLow()
	}
}

// encodeDirect codes the low n bits of v, most significant first, each with probability 1/2.
func (e *rangeEncoder) encodeDirect(v uint32, n int) {
	for i := n - 1; i >= 0; i-- {
		e.encode(int(v>>uint(i))&1, probOne/2)
	}
}

func (e *rangeEncoder) shiftLow() {
	if uint32(e.low) < 0xFF000000 || e.low>>32 != 0 {
		carry := byte(e.low >> 32)
		b := e.cache
		for {
			e.out = append(e.out, b+carry)
			b = 0xFF
			e.cacheSize--
			if e.cacheSize == 0 {
				break
			}
		}
		e.cache = byte(e.low >> 24)
	}
	e.cacheSize++
	e.low = (e.low & 0x00FFFFFF) << 8
}

// finish flushes the coder and returns the coded bytes.
func (e *rangeEncoder) finish() []byte {
	for i := 0; i < 5; i++ {
		e.shiftLow()
	}
	return e.out
}

// rangeDecoder reads what rangeEncoder wrote. Past the end of its input it reads zeros and counts
// them, so that damaged input decodes to garbage (which the caller's checks reject) but never
// reads out of bounds; overrun tells the caller how far it went.
type rangeDecoder struct {
	in   []byte // the input followed by inPad zeros
	n    int    // the input's length
	pos  int
	rng  uint32
	code uint32
}

const inPad = 8

func newRangeDecoder(src []byte) *rangeDecoder {
	in := make([]byte, len(src)+inPad)
	copy(in, src)
	d := &rangeDecoder{in: in, n: len(src), rng: 0xFFFFFFFF}
	for i := 0; i < 5; i++ {
		d.code = d.code<<8 | uint32(d.next())
	}
	return d
}

func (d *rangeDecoder) next() byte {
	p := d.pos
	d.pos++
	if p < d.n {
		return d.in[p]
	}
	return 0
}

// decode returns the next bit, coded with probability p1 of a 1, without a branch on the bit.
func (d *rangeDecoder) decode(p1 int) int {
	bound := (d.rng >> probBits) * uint32(p1)
	diff := int64(d.code) - int64(bound)
	one := uint32(diff >> 63) // all ones for a 1 (code < bound), 0 for a 0
	d.code -= bound &^ one
	d.rng = bound + (d.rng-2*bound)&^one
	if d.rng < rangeTop {
		d.renormalize()
	}
	return int(one & 1)
}

// renormalize shifts in bytes until the range is rangeTop or more again: after a decision the
// range is at least rangeTop>>probBits, so that is 0, 1 or 2 bytes. It is called only when a
// byte is due (about once in 20 decisions on text), which costs less than doing its work without
// a branch on every decision. Past the end of the input it reads the padding's zeros (pos is
// clamped for the read, not for overrun's count).
func (d *rangeDecoder) renormalize() {
	k := uint(bits.LeadingZeros32(d.rng)>>3) & 3
	w := binary.BigEndian.Uint32(d.in[min(d.pos, d.n+inPad-4):])
	d.rng <<= 8 * k
	d.code = d.code<<(8*k) | uint32(uint64(w)>>(32-8*k))
	d.pos += int(k)
}

// decodeDirect reads n bits of probability 1/2, most significant first.
func (d *rangeDecoder) decodeDirect(n int) uint32 {
	var v uint32
	for i := 0; i < n; i++ {
		v = v<<1 | uint32(d.decode(probOne/2))
	}
	return v
}

// overrun reports whether the decoder has read past the end of its input by more than the
// encoder's flush could explain; a stream that does so is damaged.
func (d *rangeDecoder) overrun() bool { return d.pos > d.n+4 }
