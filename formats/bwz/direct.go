package bwz

import (
	"slices"
)

// The direct coder (method methodDirect) codes every byte of the transform as itself, for data
// with few distinct bytes and short runs, such as DNA, where ranks and runs lose the identity of
// the bytes. The 15 most frequent bytes of the segment get codes 0..14 (code 15 escapes to the
// others); a code is 3 to 5 binary decisions (3 for the 4 most frequent bytes, as in DNA), each
// predicted by a mix of contexts made of the codes of the last 0 to 3 bytes.

const (
	directCodes  = 16
	directEscape = directCodes - 1
	directOrders = 4  // contexts of 0..3 previous codes
	directNodes  = 32 // inner nodes of the code tree, numbered from 1 as node<<1|bit along a path
)

type directModel struct {
	t      []counter    // the context tables of orders 0..directOrders-1, one after the other
	escape [256]counter // the rank of an escaped byte among the rest: (tree node)
	mix    *mixer5
	cur    [directOrders]int32 // the counters of the decision in flight
}

// directOffset[k] is where the table of order k starts in directModel.t: it has a row of
// directNodes counters for each of the 16^k contexts.
var directOffset = [directOrders + 1]int{0, 1 * directNodes, 17 * directNodes, 273 * directNodes, 4369 * directNodes}

func newDirectModel() *directModel {
	m := &directModel{mix: newMixer5(directNodes*16, 14), t: make([]counter, directOffset[directOrders])}
	initCounters(m.t)
	initCounters(m.escape[:])
	return m
}

// p returns the probability of a 1 at tree node (1..31) after the codes in hist (4 bits each,
// the latest lowest).
func (m *directModel) p(node int, hist uint32) int {
	h := int(hist)
	i0 := node
	i1 := directOffset[1] + (h&0xF)<<5 | node
	i2 := directOffset[2] + (h&0xFF)<<5 | node
	i3 := directOffset[3] + (h&0xFFF)<<5 | node
	t := m.t[:directOffset[directOrders]]
	m.cur = [directOrders]int32{int32(i0), int32(i1), int32(i2), int32(i3)}
	return m.mix.mix([4]int32{t[i0].st(), t[i1].st(), t[i2].st(), t[i3].st()}, node<<4|h&15)
}

func (m *directModel) update(bit int) {
	t := m.t[:directOffset[directOrders]]
	for _, i := range m.cur {
		t[i].update(bit)
	}
	m.mix.update(bit)
}

// directPath returns the path of code x (0..15) in the code tree, as bits most significant
// first, and its length: 0bb for 0..3, 10bb for 4..7, 11bbb for 8..15.
func directPath(x int) (path, n int) {
	switch {
	case x < 4:
		return x, 3
	case x < 8:
		return 0b1000 | (x - 4), 4
	}
	return 0b11000 | (x - 8), 5
}

// directAlphabet returns the bytes of src by falling frequency (ties by value).
func directAlphabet(src []byte) []byte {
	var count [256]int
	for _, c := range src {
		count[c]++
	}
	var syms []byte
	for c := range count {
		if count[c] > 0 {
			syms = append(syms, byte(c))
		}
	}
	slices.SortStableFunc(syms, func(a, b byte) int { return count[b] - count[a] })
	return syms
}

// encodeDirect appends the direct coding of src to out.
func encodeDirectMethod(src []byte, out []byte) []byte {
	e := newRangeEncoder(out)
	if len(src) == 0 {
		return e.finish()
	}
	syms := directAlphabet(src)
	e.encodeDirect(uint32(len(syms)-1), 8)
	for _, c := range syms {
		e.encodeDirect(uint32(c), 8)
	}
	var index [256]int
	for i, c := range syms {
		index[c] = i
	}
	m := newDirectModel()
	var hist uint32
	for _, c := range src {
		x := index[c]
		code := min(x, directEscape)
		path, n := directPath(code)
		node := 1
		for t := n - 1; t >= 0; t-- {
			bit := (path >> uint(t)) & 1
			e.encode(bit, m.p(node, hist))
			m.update(bit)
			node = node<<1 | bit
		}
		if code == directEscape {
			// the rank among the rest, 0..240, in 8 bits
			y := x - directEscape
			node := 1
			for t := 7; t >= 0; t-- {
				bit := (y >> uint(t)) & 1
				ct := &m.escape[node]
				e.encode(bit, ct.p12())
				ct.update(bit)
				node = node<<1 | bit
			}
		}
		hist = hist<<4 | uint32(code)
	}
	return e.finish()
}

// decodeDirectMethod fills dst from the direct coding in src.
func decodeDirectMethod(src []byte, dst []byte) error {
	if len(dst) == 0 {
		return nil
	}
	d := newRangeDecoder(src)
	nsyms := int(d.decodeDirect(8)) + 1
	syms := make([]byte, nsyms)
	var seen [256]bool
	for i := range syms {
		c := byte(d.decodeDirect(8))
		if seen[c] {
			return corruptf("byte %d listed twice in the alphabet", c)
		}
		seen[c] = true
		syms[i] = c
	}
	m := newDirectModel()
	var hist uint32
	for i := range dst {
		node := 1
		for {
			bit := d.decode(m.p(node, hist))
			m.update(bit)
			node = node<<1 | bit
			if node >= 8 && node < 12 || node >= 24 && node < 28 || node >= 56 {
				break
			}
		}
		var code int
		switch {
		case node < 12: // 0bb
			code = node - 8
		case node < 28: // 10bb
			code = node - 24 + 4
		default: // 11bbb
			code = node - 56 + 8
		}
		x := code
		if code == directEscape {
			node := 1
			for t := 0; t < 8; t++ {
				ct := &m.escape[node]
				bit := d.decode(ct.p12())
				ct.update(bit)
				node = node<<1 | bit
			}
			x = directEscape + node - 256
		}
		if x >= nsyms {
			return corruptf("byte code %d beyond the alphabet of %d", x, nsyms)
		}
		dst[i] = syms[x]
		hist = hist<<4 | uint32(code)
		if i&0xFFF == 0 && d.overrun() {
			return corruptf("coded data ends early")
		}
	}
	if d.overrun() {
		return corruptf("coded data ends early")
	}
	return nil
}
