package formats

import (
	"bufio"
	"encoding/binary"
	"math/bits"
	"slices"
	"strconv"
)

// MummerWriter writes MUMmer 3.23's text output: a header line per query sequence and strand,
// then one line per match, optionally followed by the matching substring.
type MummerWriter struct {
	W          *bufio.Writer
	RefNames   []string // reference record names
	FourColumn bool     // name column: the reference has several records, or -F
	ShowLen    bool     // -L
	ShowString bool     // -s
	maxName    int
	buf        []byte
}

// NewMummerWriter returns a writer for matches against a reference with the given record names.
func NewMummerWriter(w *bufio.Writer, refNames []string, forceFour, showLen, showString bool) *MummerWriter {
	m := &MummerWriter{W: w, RefNames: refNames, ShowLen: showLen, ShowString: showString}
	m.FourColumn = forceFour || len(refNames) > 1
	for _, n := range refNames {
		m.maxName = max(m.maxName, len(n))
	}
	return m
}

// Header writes "> NAME[ Reverse][  Len = N]".
func (m *MummerWriter) Header(name []byte, reverse bool, length int) error {
	m.buf = m.AppendHeader(m.buf[:0], name, reverse, length)
	_, err := m.W.Write(m.buf)
	return err
}

// AppendHeader appends to b the header line Header writes. It changes nothing in m, so that
// several goroutines may format at once.
func (m *MummerWriter) AppendHeader(b, name []byte, reverse bool, length int) []byte {
	b = append(b, "> "...)
	b = append(b, name...)
	if reverse {
		b = append(b, " Reverse"...)
	}
	if m.ShowLen {
		b = append(b, "  Len = "...)
		b = strconv.AppendInt(b, int64(length), 10)
	}
	return append(b, '\n')
}

// Match writes one match line: rec and refPos (1-based, within the record) are the reference
// side, queryPos the 1-based query position as it is to be printed. substr, when ShowString is on,
// is the matched reference text, written on the next line.
func (m *MummerWriter) Match(rec, refPos, queryPos, length int, substr []byte) error {
	m.buf = m.AppendMatch(m.buf[:0], rec, refPos, queryPos, length, substr)
	_, err := m.W.Write(m.buf)
	return err
}

// AppendMatch appends to b the lines Match writes. It changes nothing in m.
func (m *MummerWriter) AppendMatch(b []byte, rec, refPos, queryPos, length int, substr []byte) []byte {
	if m.FourColumn {
		name := m.RefNames[rec]
		b = append(b, ' ', ' ')
		b = append(b, name...)
		for pad := m.maxName - len(name); pad > 0; pad -= len(spaces) {
			b = append(b, spaces[:min(pad, len(spaces))]...)
		}
		b = append(b, ' ', ' ')
	}
	if uint(refPos|queryPos|length) <= maxField {
		// The three fields of eight and their separators as one 28-byte store.
		n := len(b)
		b = slices.Grow(b, matchLine)[:n+matchLine]
		f := b[n : n+matchLine]
		binary.LittleEndian.PutUint64(f[0:], field8(uint32(refPos)))
		binary.LittleEndian.PutUint16(f[8:], 0x2020)
		binary.LittleEndian.PutUint64(f[10:], field8(uint32(queryPos)))
		binary.LittleEndian.PutUint16(f[18:], 0x2020)
		binary.LittleEndian.PutUint64(f[20:], field8(uint32(length)))
		f[28] = '\n'
	} else {
		b = appendPadded(b, refPos)
		b = append(b, ' ', ' ')
		b = appendPadded(b, queryPos)
		b = append(b, ' ', ' ')
		b = appendPadded(b, length)
		b = append(b, '\n')
	}
	if m.ShowString {
		b = append(b, substr...)
		b = append(b, '\n')
	}
	return b
}

// LineBytes is the length of a match line whose three values fit eight digits, the substring
// of ShowString not counted: what a batch's output is reserved at before any batch tells more.
func (m *MummerWriter) LineBytes() int {
	if m.FourColumn {
		return 2 + m.maxName + 2 + matchLine
	}
	return matchLine
}

// matchLine is the length of a match line's three fields of eight, their separators and the
// newline; maxField the largest value a field of eight holds as "%8d" prints it. (Any of the three
// above it sets a bit above maxField's highest, so one test of their OR decides.)
const (
	matchLine = 8 + 2 + 8 + 2 + 8 + 1
	maxField  = 1<<26 - 1
)

// field8 returns v (at most 99,999,999) as "%8d" prints it: eight bytes, the first in the
// lowest; the zero bytes before the first digit become spaces.
func field8(v uint32) uint64 {
	x := digits8(v)
	lead := leadBits(x)
	return x + 0x3030303030303030 - (0x1010101010101010 & (1<<lead - 1))
}

// digits8 returns v (at most 99,999,999) as eight decimal digits, one a byte (0 to 9, not yet
// characters), the first in the lowest byte. The digits are made in parallel lanes of one word:
// v's halves of four digits, each cut into two of two, each into its tens and units (division by
// 100 and by 10 as multiplications that are exact over these ranges).
func digits8(v uint32) uint64 {
	x := uint64(v/10000) | uint64(v%10000)<<32  // 32-bit lanes < 10000, the first digits low
	q := (x * 10486 >> 20) & 0x0000007f0000007f // each lane / 100
	x = q | (x-q*100)<<16                       // 16-bit lanes < 100
	t := (x * 103 >> 10) & 0x000f000f000f000f   // each lane / 10
	return t | (x-t*10)<<8                      // a digit a byte
}

// leadBits is the bits of digits8's zero bytes before the first digit (the last byte is a
// digit even when 0).
func leadBits(x uint64) int { return bits.TrailingZeros64(x|1<<56) &^ 7 }

// appendDecimal appends v in decimal, as strconv.AppendUint does, writing the digits in place
// (digits8) rather than through a buffer of its own: locate's lines are mostly their positions.
func appendDecimal(b []byte, v uint64) []byte {
	if v >= 1e16 {
		return strconv.AppendUint(b, v, 10)
	}
	if v > 99999999 {
		switch hi := v / 1e8; {
		case hi < 10: // positions of a genome: mostly nine or ten digits
			b = append(b, '0'+byte(hi))
		case hi < 100:
			b = append(b, '0'+byte(hi/10), '0'+byte(hi%10))
		default:
			b = appendDecimal(b, hi)
		}
		n := len(b)
		b = slices.Grow(b, 8)[:n+8]
		binary.LittleEndian.PutUint64(b[n:], digits8(uint32(v%1e8))+0x3030303030303030)
		return b
	}
	x := digits8(uint32(v))
	lead := leadBits(x)
	n := len(b)
	b = slices.Grow(b, 8)[:n+8]
	binary.LittleEndian.PutUint64(b[n:], (x+0x3030303030303030)>>lead)
	return b[:n+8-lead/8]
}

// appendPadded appends v as C's "%8d" does: 0 to 99,999,999 as field8's one word, larger values
// (nine digits or more, no padding) by appendDecimal, negative ones through strconv.
func appendPadded(b []byte, v int) []byte {
	if v > 99999999 {
		return appendDecimal(b, uint64(v))
	}
	if v < 0 {
		var tmp [20]byte
		d := strconv.AppendInt(tmp[:0], int64(v), 10)
		for i := len(d); i < 8; i++ {
			b = append(b, ' ')
		}
		return append(b, d...)
	}
	return binary.LittleEndian.AppendUint64(b, field8(uint32(v)))
}

// spaces pads record names.
const spaces = "                                                                "
