package bwz

import (
	"bytes"
)

// A block that holds FASTQ or FASTA records is parsed into a readSet: the records' names,
// sequences and qualities in flat arrays, and what it takes to print them back byte for byte (the
// line ends, a FASTA file's line width and the records that do not follow it, what the FASTQ '+'
// lines say). parseReads refuses what it cannot print back exactly; such a block is coded as
// bytes.

// readSet is a block's records. Offsets are uint32: a block is at most MaxBlockSize bytes.
type readSet struct {
	fastq    bool
	crlf     bool // every line ends in "\r\n" (else every line in "\n")
	finalEOL bool // the block's last line ends in a line end
	n        int  // records

	names   []byte   // the header lines after '@' or '>', without their line ends
	nameEnd []uint32 // record i's name is names[nameEnd[i-1]:nameEnd[i]]
	seq     []byte   // the sequences, their line ends taken out
	seqEnd  []uint32
	qual    []byte // FASTQ: the quality lines, as long as the sequences

	// FASTQ: what each record's '+' line holds after the '+' (plusNone, plusName, or plusOther
	// with the bytes in plusText).
	plus     []byte
	plusText [][]byte

	// FASTA: width is the length of every sequence line but a record's last (0: one line a
	// record); a record whose lines are otherwise has its line lengths in lines.
	width     int
	irregular []int32 // the records with lines of their own, ascending
	lines     [][]uint32
}

// The kinds of FASTQ '+' line.
const (
	plusNone  = 0 // "+"
	plusName  = 1 // "+" and the record's name again
	plusOther = 2 // "+" and other bytes
)

// Bounds on what is coded as a read set: enough records to be worth it, and sequences short
// enough to be reads (a genome's chromosomes code better as bytes).
const (
	minReadRecords = 16
	maxReadLength  = 1 << 16
)

func (rs *readSet) name(i int) []byte { return rs.names[rs.start(rs.nameEnd, i):rs.nameEnd[i]] }
func (rs *readSet) read(i int) []byte { return rs.seq[rs.start(rs.seqEnd, i):rs.seqEnd[i]] }
func (rs *readSet) start(ends []uint32, i int) uint32 {
	if i == 0 {
		return 0
	}
	return ends[i-1]
}

// readSetKind tells from a block's first byte whether it may be FASTQ ('@') or FASTA ('>').
func readSetKind(b []byte) (fastq, ok bool) {
	if len(b) == 0 {
		return false, false
	}
	return b[0] == '@', b[0] == '@' || b[0] == '>'
}

// splitLine returns the line of b that starts at i (without its line end), where the next line
// starts, and whether the line had a line end.
func splitLine(b []byte, i int) (line []byte, next int, eol bool) {
	j := bytes.IndexByte(b[i:], '\n')
	if j < 0 {
		return b[i:], len(b), false
	}
	return b[i : i+j], i + j + 1, true
}

// RecordsEnd returns the length of the longest prefix of b that is whole records of the read set
// that b starts with (FASTQ or FASTA), or 0 when b does not start as one. A reader that cuts its
// input into blocks cuts them there, so that no record straddles two blocks; the rest of b starts
// the next block. For FASTA a record ends where the next header starts, so the last record of b
// is whole only at the input's end: the caller keeps it when b is the input's last block.
func RecordsEnd(b []byte) int {
	fastq, ok := readSetKind(b)
	if !ok {
		return 0
	}
	if fastq {
		end, i := 0, 0
		for i < len(b) {
			if b[i] != '@' {
				return end
			}
			var eol bool
			var seq, qual []byte
			_, i, _ = splitLine(b, i)
			seq, i, _ = splitLine(b, i)
			if i >= len(b) || b[i] != '+' {
				return end
			}
			_, i, _ = splitLine(b, i)
			qual, i, eol = splitLine(b, i)
			if !eol || len(qual) != len(seq) {
				return end
			}
			end = i
		}
		return end
	}
	// the start of the last header line
	for i := len(b) - 1; i > 0; i-- {
		if b[i] == '>' && b[i-1] == '\n' {
			return i
		}
	}
	return 0
}

// parseReads parses block b as FASTQ or FASTA records. It returns nil when b is not a read set
// that it can print back exactly (and that is worth coding as one): mixed line ends, a FASTQ
// record of other than four lines, a quality line not as long as its sequence, too few records,
// too long sequences, or sequences of which more than a quarter is not A, C, G or T.
func parseReads(b []byte) *readSet {
	fastq, ok := readSetKind(b)
	if !ok {
		return nil
	}
	rs := &readSet{fastq: fastq}
	// line ends: those of the first line, for every line
	first, _, eol := splitLine(b, 0)
	rs.crlf = eol && len(first) > 0 && first[len(first)-1] == '\r'
	rs.finalEOL = b[len(b)-1] == '\n'
	// room for what b holds, so that nothing grows
	lines := bytes.Count(b, []byte{'\n'}) + 1
	recs := lines/2 + 1
	rs.seq = make([]byte, 0, len(b))
	if fastq {
		recs = lines/4 + 1
		rs.seq = make([]byte, 0, len(b)/2)
		rs.qual = make([]byte, 0, len(b)/2)
		rs.plus = make([]byte, 0, recs)
	}
	rs.nameEnd = make([]uint32, 0, recs)
	rs.seqEnd = make([]uint32, 0, recs)
	rs.names = make([]byte, 0, len(b)/8)
	var ok2 bool
	if fastq {
		ok2 = rs.parseFASTQ(b)
	} else {
		ok2 = rs.parseFASTA(b)
	}
	if !ok2 || rs.n < minReadRecords {
		return nil
	}
	// sequences that are not DNA code better as bytes
	other := 0
	for _, c := range rs.seq {
		if baseCode[c] < 0 {
			other++
		}
	}
	if other > len(rs.seq)/4 {
		return nil
	}
	return rs
}

// line returns the line of b at i without its line end, where the next starts, and false when the
// line's end is not the set's (a "\r\n" in a file of "\n" ends is left in the line, whose '\r'
// then fails the caller's checks where it matters; a "\n" in a file of "\r\n" fails here). The
// block's last line may have no end.
func (rs *readSet) line(b []byte, i int) ([]byte, int, bool) {
	l, next, eol := splitLine(b, i)
	if !eol && next != len(b) {
		return nil, 0, false
	}
	if rs.crlf && eol {
		if len(l) == 0 || l[len(l)-1] != '\r' {
			return nil, 0, false
		}
		l = l[:len(l)-1]
	}
	if !rs.crlf && len(l) > 0 && l[len(l)-1] == '\r' {
		return nil, 0, false // a "\r\n" end in a file of "\n" ends
	}
	return l, next, true
}

func (rs *readSet) addName(name []byte) {
	rs.names = append(rs.names, name...)
	rs.nameEnd = append(rs.nameEnd, uint32(len(rs.names)))
}

func (rs *readSet) parseFASTQ(b []byte) bool {
	for i := 0; i < len(b); {
		var h, s, p, q []byte
		var ok bool
		if h, i, ok = rs.line(b, i); !ok || len(h) == 0 || h[0] != '@' {
			return false
		}
		if i >= len(b) {
			return false
		}
		if s, i, ok = rs.line(b, i); !ok || len(s) > maxReadLength || i >= len(b) {
			return false
		}
		if p, i, ok = rs.line(b, i); !ok || len(p) == 0 || p[0] != '+' || i >= len(b) {
			return false
		}
		if q, i, ok = rs.line(b, i); !ok || len(q) != len(s) {
			return false
		}
		rs.addName(h[1:])
		rs.seq = append(rs.seq, s...)
		rs.seqEnd = append(rs.seqEnd, uint32(len(rs.seq)))
		rs.qual = append(rs.qual, q...)
		switch {
		case len(p) == 1:
			rs.plus = append(rs.plus, plusNone)
		case bytes.Equal(p[1:], h[1:]):
			rs.plus = append(rs.plus, plusName)
		default:
			rs.plus = append(rs.plus, plusOther)
			rs.plusText = append(rs.plusText, p[1:])
		}
		rs.n++
	}
	return true
}

func (rs *readSet) parseFASTA(b []byte) bool {
	var lens [][]uint32 // each record's line lengths
	var widths = map[uint32]int{}
	for i := 0; i < len(b); {
		h, next, ok := rs.line(b, i)
		if !ok || len(h) == 0 || h[0] != '>' {
			return false
		}
		i = next
		rs.addName(h[1:])
		var ll []uint32
		seqLen := 0
		for i < len(b) && b[i] != '>' {
			var l []byte
			if l, i, ok = rs.line(b, i); !ok {
				return false
			}
			rs.seq = append(rs.seq, l...)
			ll = append(ll, uint32(len(l)))
			seqLen += len(l)
		}
		if seqLen > maxReadLength {
			return false
		}
		rs.seqEnd = append(rs.seqEnd, uint32(len(rs.seq)))
		if len(ll) > 1 {
			widths[ll[0]]++
		}
		lens = append(lens, ll)
		rs.n++
	}
	// the width: the commonest first line of records of several lines
	best := 0
	for w, c := range widths {
		if c > best || c == best && int(w) < rs.width {
			rs.width, best = int(w), c
		}
	}
	for i, ll := range lens {
		if !equalLines(ll, fastaLines(nil, int(rs.seqEnd[i]-rs.start(rs.seqEnd, i)), rs.width)) {
			rs.irregular = append(rs.irregular, int32(i))
			rs.lines = append(rs.lines, ll)
		}
	}
	return true
}

// fastaLines appends the line lengths of a sequence of n bytes in lines of width (0: one line).
func fastaLines(dst []uint32, n, width int) []uint32 {
	if n == 0 {
		return dst
	}
	if width == 0 {
		return append(dst, uint32(n))
	}
	for n > width {
		dst = append(dst, uint32(width))
		n -= width
	}
	return append(dst, uint32(n))
}

func equalLines(a, b []uint32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// size returns the length of the block that rs prints to.
func (rs *readSet) size() int {
	eol := 1
	if rs.crlf {
		eol = 2
	}
	n := len(rs.names) + len(rs.seq) + rs.n*(1+eol)
	if rs.fastq {
		n += len(rs.qual) + rs.n*(1+3*eol)
		for i, p := range rs.plus {
			if p == plusName {
				n += len(rs.name(i))
			}
		}
		for _, t := range rs.plusText {
			n += len(t)
		}
	} else {
		lines := 0
		k := 0
		for i := 0; i < rs.n; i++ {
			if k < len(rs.irregular) && int(rs.irregular[k]) == i {
				lines += len(rs.lines[k])
				k++
				continue
			}
			lines += len(fastaLines(nil, int(rs.seqEnd[i]-rs.start(rs.seqEnd, i)), rs.width))
		}
		n += lines * eol
	}
	if !rs.finalEOL {
		n -= eol
	}
	return n
}

// printsAs tells whether rs prints to b, printing a few records at a time.
func (rs *readSet) printsAs(b []byte) bool {
	var buf []byte
	var pr printer
	off := 0
	for i := 0; i < rs.n; {
		j := min(i+256, rs.n)
		buf = rs.appendRecords(buf[:0], &pr, i, j)
		if len(buf) > len(b)-off || string(buf) != string(b[off:off+len(buf)]) {
			return false
		}
		off += len(buf)
		i = j
	}
	return off == len(b)
}

// appendText prints rs to dst.
func (rs *readSet) appendText(dst []byte) []byte {
	return rs.appendRecords(dst, &printer{}, 0, rs.n)
}

// printer is where printing is in a read set's lists: the next irregular FASTA record and the
// next '+' line of other bytes.
type printer struct{ irregular, plus int }

// appendRecords prints records [from, to) of rs to dst (the last without its line end, if the
// set's has none), going on from pr, which says where the records before from left off.
func (rs *readSet) appendRecords(dst []byte, pr *printer, from, to int) []byte {
	eol := "\n"
	if rs.crlf {
		eol = "\r\n"
	}
	k, po := pr.irregular, pr.plus
	defer func() { pr.irregular, pr.plus = k, po }()
	var ll, regular []uint32
	for i := from; i < to; i++ {
		name, s := rs.name(i), rs.read(i)
		if rs.fastq {
			dst = append(append(append(dst, '@'), name...), eol...)
			dst = append(append(dst, s...), eol...)
			dst = append(dst, '+')
			switch rs.plus[i] {
			case plusName:
				dst = append(dst, name...)
			case plusOther:
				dst = append(dst, rs.plusText[po]...)
				po++
			}
			dst = append(dst, eol...)
			q := rs.qual[rs.start(rs.seqEnd, i):rs.seqEnd[i]]
			dst = append(append(dst, q...), eol...)
			continue
		}
		dst = append(append(append(dst, '>'), name...), eol...)
		if k < len(rs.irregular) && int(rs.irregular[k]) == i {
			ll = rs.lines[k]
			k++
		} else {
			regular = fastaLines(regular[:0], len(s), rs.width)
			ll = regular
		}
		for _, l := range ll {
			dst = append(append(dst, s[:l]...), eol...)
			s = s[l:]
		}
	}
	if !rs.finalEOL && to == rs.n {
		dst = dst[:len(dst)-len(eol)]
	}
	return dst
}

// baseCode maps A, C, G, T (either case) to 0..3 and every other byte to -1.
var baseCode = func() (t [256]int8) {
	for i := range t {
		t[i] = -1
	}
	for i, c := range "ACGT" {
		t[c], t[c+'a'-'A'] = int8(i), int8(i)
	}
	return t
}()

// LooksLikeReads tells from the first bytes of an input (64 KiB, say) whether it is a read set:
// they hold at least minReadRecords whole FASTQ or FASTA records of DNA (a genome's FASTA, of
// few long records, is not one). all says that head is the whole input.
func LooksLikeReads(head []byte, all bool) bool {
	cut := len(head)
	if !all {
		cut = RecordsEnd(head)
	}
	return cut > 0 && parseReads(head[:cut]) != nil
}
