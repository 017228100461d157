package bwz

import "slices"

// The direct coder (method methodDirect) codes every byte of the transform as itself, for data
// with few distinct bytes and short runs, such as DNA, where ranks and runs lose the identity of
// the bytes. The 15 most frequent bytes of the segment get codes 0..14 (code 15 escapes to the
// others); a code is 3 to 5 binary decisions (3 for the 4 most frequent bytes, as in DNA), each
// predicted by a mix of two counters, one for the decision alone and one in the context of the
// codes of the last two bytes, with weights chosen by the last code. (Contexts of one and of three
// codes were mixed in too in version 1, but changed the size of DNA by less than 0.03%.)

const (
	directCodes  = 16
	directEscape = directCodes - 1
	directNodes  = 32 // inner nodes of the code tree, numbered from 1 as node<<1|bit along a path
)

// directModel holds a row of directNodes counters for each context, so that the decisions of one
// byte touch one or two cache lines of each table.
type directModel struct {
	o0     [directNodes]mixCounter
	o2     [256][directNodes]mixCounter // (last two codes; tree node)
	escape [256]counter                 // the rank of an escaped byte among the rest: (tree node)
	mix    [16][directNodes]mixWeights  // (last code; tree node)
}

// directLearn is the direct coder's mixer's learning rate.
var directLearn = learnRate{shift: 14, skip: 32}

func newDirectModel() *directModel {
	m := new(directModel)
	for i := range m.mix {
		for j := range m.mix[i] {
			m.mix[i][j].init(2, 3)
		}
	}
	return m
}

// directContexts are the rows of counters and weights that code one byte after the codes in
// hist (4 bits each, the latest lowest).
type directContexts struct {
	o0, o2 *[directNodes]mixCounter
	w      *[directNodes]mixWeights
}

func (m *directModel) contexts(hist uint32) directContexts {
	return directContexts{&m.o0, &m.o2[hist&0xFF], &m.mix[hist&0xF]}
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
		ctx := m.contexts(hist)
		node := 1
		for t := n - 1; t >= 0; t-- {
			bit := (path >> uint(t)) & 1
			j := node & (directNodes - 1)
			e.encodeMix2(bit, &ctx.o0[j], &ctx.o2[j], &ctx.w[j], directLearn)
			node = node<<1 | bit
		}
		if code == directEscape {
			// the rank among the rest, 0..240, in 8 bits
			y := x - directEscape
			node := 1
			for t := 7; t >= 0; t-- {
				bit := (y >> uint(t)) & 1
				e.encodeCounter(bit, &m.escape[node&255])
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
		ctx := m.contexts(hist)
		node := 1
		for {
			j := node & (directNodes - 1)
			bit := d.decodeMix2(&ctx.o0[j], &ctx.o2[j], &ctx.w[j], directLearn)
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
				bit := d.decodeCounter(&m.escape[node&255])
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
