package formats

// The tables of `sapipe count` and `sapipe locate`: tab-separated text, one line per pattern
// (count) or per occurrence (locate), in the patterns' input order; no header line.
//
//	count:  pattern name, occurrences            e.g. "read1\t3"
//	locate: pattern name, sequence name, 1-based position on the sequence's forward strand of
//	        the occurrence's leftmost base, strand ('+': the pattern, '-': its reverse
//	        complement)                          e.g. "read1\tchr2\t10457\t-"

import (
	"bufio"
	"strconv"
)

// HitWriter writes count and locate lines.
type HitWriter struct {
	w   *bufio.Writer
	buf []byte
}

// NewHitWriter returns a writer of count and locate lines to w.
func NewHitWriter(w *bufio.Writer) *HitWriter { return &HitWriter{w: w} }

// Count writes the line of a pattern that occurs n times.
func (h *HitWriter) Count(name []byte, n int) error {
	h.buf = AppendCount(h.buf[:0], name, n)
	_, err := h.w.Write(h.buf)
	return err
}

// Locate writes the line of one occurrence of a pattern: on sequence seq, at 1-based position
// pos, on strand '+' or '-'.
func (h *HitWriter) Locate(name []byte, seq string, pos int, strand byte) error {
	h.buf = AppendLocate(h.buf[:0], name, seq, pos, strand)
	_, err := h.w.Write(h.buf)
	return err
}

// AppendCount appends to b the count line of a pattern that occurs n times, as Count writes it.
func AppendCount(b, name []byte, n int) []byte {
	b = append(b, name...)
	if uint(n) < 10 { // most patterns of a genome
		return append(b, '\t', byte('0'+n), '\n')
	}
	b = append(b, '\t')
	b = strconv.AppendInt(b, int64(n), 10)
	return append(b, '\n')
}

// AppendLocatePrefix appends to b what the lines of one pattern's occurrences in one record start
// with (AppendLocate's): the pattern's name and the record's, each followed by a tab.
func AppendLocatePrefix(b, name []byte, seq string) []byte {
	b = append(b, name...)
	b = append(b, '\t')
	b = append(b, seq...)
	return append(b, '\t')
}

// AppendLocateAt appends to b the line of one occurrence, as AppendLocate writes it, from its
// prefix (AppendLocatePrefix): one copy of the names for the line instead of two appends and
// their tabs, which a pattern with thousands of occurrences repeats.
func AppendLocateAt(b, prefix []byte, pos int, strand byte) []byte {
	return appendLocateEnd(append(b, prefix...), pos, strand)
}

// AppendLocate appends to b the line of one occurrence, as Locate writes it.
func AppendLocate(b, name []byte, seq string, pos int, strand byte) []byte {
	return appendLocateEnd(AppendLocatePrefix(b, name, seq), pos, strand)
}

// appendLocateEnd appends the rest of a locate line after its prefix: the position, a tab, the
// strand and the newline.
func appendLocateEnd(b []byte, pos int, strand byte) []byte {
	if pos < 0 {
		b = strconv.AppendInt(b, int64(pos), 10)
	} else {
		b = appendDecimal(b, uint64(pos))
	}
	return append(b, '\t', strand, '\n')
}
