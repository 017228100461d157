package formats

import "bytes"

// The byte loops of ReadReference: walking a piece of FASTA that starts outside any header, and
// counting or translating its sequence bytes. A piece of FASTA can be read on its own from any
// position outside a header line (see cutFASTA), which is what lets a file be read on many cores.

// walkFASTA calls seq with each run of sequence bytes of data (white space included, never a
// '>') and rec with the name and offset in data of the '>' of each record that starts in data, in
// order. data must start outside a header line: its bytes before its first '>' continue the record
// before it (or, at the start of a file, are the first record's first bytes).
func walkFASTA(data []byte, seq func([]byte), rec func(name []byte, at int)) {
	off := 0
	for off < len(data) {
		// The next '>' is looked for a window at a time, so that seq reads the bytes while the
		// search has left them in the cache.
		end := min(off+walkWindow, len(data))
		g := bytes.IndexByte(data[off:end], '>')
		if g < 0 {
			seq(data[off:end])
			off = end
			continue
		}
		if g > 0 {
			seq(data[off : off+g])
		}
		h := off + g + 1
		n := nonSpaceRun(data[h:])
		rec(data[h:h+n], off+g)
		k := bytes.IndexByte(data[h+n:], '\n')
		if k < 0 {
			return // a header without a newline at the end of the input
		}
		off = h + n + k + 1
	}
}

// walkWindow is how far walkFASTA looks for a '>' at a time: well inside a core's L2 cache.
const walkWindow = 64 << 10

// keep is 1 for the bytes that are sequence (not white space), 0 for white space.
var keep = func() (t [256]byte) {
	for i := range t {
		if !isSpace[i] {
			t[i] = 1
		}
	}
	return t
}()

// countSeq marks in seen every byte of b (white space too) and returns how many bytes of b are
// not white space.
func countSeq(b []byte, seen *[256]bool) int {
	n := 0
	for len(b) >= 8 {
		c0, c1, c2, c3 := b[0], b[1], b[2], b[3]
		c4, c5, c6, c7 := b[4], b[5], b[6], b[7]
		seen[c0], seen[c1], seen[c2], seen[c3] = true, true, true, true
		seen[c4], seen[c5], seen[c6], seen[c7] = true, true, true, true
		n += int(keep[c0]) + int(keep[c1]) + int(keep[c2]) + int(keep[c3]) +
			int(keep[c4]) + int(keep[c5]) + int(keep[c6]) + int(keep[c7])
		b = b[8:]
	}
	for _, c := range b {
		seen[c] = true
		n += int(keep[c])
	}
	return n
}

// translateSeq writes to dst tab[c] for each byte c of b that is not white space and returns how
// many it wrote. dst must hold them all; nothing past them is written.
//
// Kept out of line: inlined into a caller with more live values, its loop kept its counters on
// the stack, a store and a load a byte, and ran at a fifth of its speed.
//
//go:noinline
func translateSeq(dst, b []byte, tab *[256]byte) int {
	for len(b) > 0 && isSpace[b[len(b)-1]] {
		b = b[:len(b)-1]
	}
	// Every byte is written where the next sequence byte goes and the count moves on only past
	// sequence bytes, so a white space byte is written over by the sequence byte after it (there
	// is one, the trailing white space being gone): no branch on the byte.
	w := 0
	for _, c := range b {
		dst[w] = tab[c]
		w += int(keep[c])
	}
	return w
}
