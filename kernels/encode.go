package kernels

import (
	"encoding/binary"
	"errors"
	"slices"
)

// isACGT reports whether a lowercased byte is one of the four nucleotides.
func isACGT(c byte) bool { return c == 'a' || c == 'c' || c == 'g' || c == 't' }

// complement is MUMmer's complement of a lowercased base, IUPAC codes included; anything else
// becomes 'n'.
var complement = func() (t [256]byte) {
	for i := range t {
		t[i] = 'n'
	}
	for _, p := range []string{"at", "cg", "ry", "ss", "ww", "mk", "bv", "dh"} {
		t[p[0]], t[p[1]] = p[1], p[0]
	}
	return t
}()

func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// ErrEmptyReference is returned for a reference of one empty record, which MUMmer refuses (several
// records that are all empty it accepts, and so does Build).
var ErrEmptyReference = errors.New("empty sequence in multiple fasta file")

// FoldTable returns what each byte of a reference record stands for in its text before encoding, as
// ReferenceBuilder folds it: lowercased, and 0 (a separator, which matches nothing) for the byte 0
// and, under -n (nucleotidesOnly), for anything but a, c, g and t.
func FoldTable(nucleotidesOnly bool) (t [256]byte) {
	for i := range t {
		c := lower(byte(i))
		if nucleotidesOnly && !isACGT(c) {
			c = 0
		}
		t[i] = c
	}
	return t
}

// NewAlphabet returns the alphabet of a reference text whose folded bytes (see FoldTable) are
// those set in seen: codes FirstCode.. in byte order; 0, the separator, and bytes not seen are
// CodeNone.
func NewAlphabet(seen *[256]bool) Alphabet {
	var a Alphabet
	for i := range a.Code {
		a.Code[i] = CodeNone
	}
	a.Size = FirstCode
	for c := 1; c < 256; c++ {
		if seen[c] {
			a.Code[c] = byte(a.Size)
			a.Byte[a.Size] = byte(c)
			a.Size++
		}
	}
	a.Byte[CodeNone] = '#'
	return a
}

// ReferenceBuilder encodes reference records one at a time into a Reference.
type ReferenceBuilder struct {
	nucOnly bool
	seen    [256]bool
	raw     []byte // lowercased bytes, 0 for separators and -n wildcards
	starts  []int
	names   []string
}

// NewReferenceBuilder starts a reference; nucleotidesOnly is MUMmer's -n (only a, c, g, t match).
func NewReferenceBuilder(nucleotidesOnly bool) *ReferenceBuilder {
	return &ReferenceBuilder{nucOnly: nucleotidesOnly}
}

// Add appends one record (its bytes as in the file; case is ignored).
func (b *ReferenceBuilder) Add(name string, seq []byte) {
	if len(b.starts) > 0 {
		b.raw = append(b.raw, 0)
	}
	b.starts = append(b.starts, len(b.raw))
	b.names = append(b.names, name)
	for _, c := range seq {
		c = lower(c)
		if c == 0 || (b.nucOnly && !isACGT(c)) {
			c = 0
		} else {
			b.seen[c] = true
		}
		b.raw = append(b.raw, c)
	}
}

// Len returns the text length so far, separators included.
func (b *ReferenceBuilder) Len() int { return len(b.raw) }

// Records returns the number of records added.
func (b *ReferenceBuilder) Records() int { return len(b.starts) }

// Build encodes the text. The builder must not be used afterwards.
func (b *ReferenceBuilder) Build() (*Reference, error) {
	if len(b.starts) == 0 || (len(b.starts) == 1 && len(b.raw) == 0) {
		return nil, ErrEmptyReference
	}
	ref := &Reference{Starts: b.starts, Names: b.names, Alpha: NewAlphabet(&b.seen)}
	a := &ref.Alpha
	text := b.raw // encoded in place
	for i, c := range text {
		text[i] = a.Code[c]
	}
	ref.Text = text
	b.raw = nil
	return ref, nil
}

// QueryEncoder encodes query sequences against one alphabet by table lookup, a byte at a time on
// either strand. Build it once per run; it is safe for concurrent use.
type QueryEncoder struct {
	fwd, rev [256]byte // code of each byte, and of its complement
}

// NewQueryEncoder returns the encoder for alphabet a; nucleotidesOnly is -n: bytes other than
// a, c, g, t (either case) never match.
func NewQueryEncoder(a *Alphabet, nucleotidesOnly bool) *QueryEncoder {
	e := &QueryEncoder{}
	for i := range 256 {
		c := lower(byte(i))
		if nucleotidesOnly && !isACGT(c) {
			e.fwd[i], e.rev[i] = CodeNone, CodeNone
			continue
		}
		e.fwd[i], e.rev[i] = a.Code[c], a.Code[complement[c]]
	}
	return e
}

// Fill writes to dst (len(dst) == len(seq)) the codes of seq on the forward strand or, if
// reverse, of its reverse complement.
// Eight bytes are looked up at a time and stored as one word (a store a byte took most of the
// time: 1.4 ns a base in a profile of 10 M reads).
func (e *QueryEncoder) Fill(dst, seq []byte, reverse bool) {
	dst = dst[:len(seq)]
	n := len(seq)
	whole := n &^ 7
	if !reverse {
		t := &e.fwd
		for i := 0; i < whole; i += 8 {
			s := seq[i : i+8 : i+8]
			w := uint64(t[s[0]]) | uint64(t[s[1]])<<8 | uint64(t[s[2]])<<16 | uint64(t[s[3]])<<24 |
				uint64(t[s[4]])<<32 | uint64(t[s[5]])<<40 | uint64(t[s[6]])<<48 | uint64(t[s[7]])<<56
			binary.LittleEndian.PutUint64(dst[i:], w)
		}
		for i := whole; i < n; i++ {
			dst[i] = t[seq[i]]
		}
		return
	}
	// seq[i:i+8] lands reversed at dst[n-8-i:n-i].
	t := &e.rev
	for i := 0; i < whole; i += 8 {
		s := seq[i : i+8 : i+8]
		w := uint64(t[s[7]]) | uint64(t[s[6]])<<8 | uint64(t[s[5]])<<16 | uint64(t[s[4]])<<24 |
			uint64(t[s[3]])<<32 | uint64(t[s[2]])<<40 | uint64(t[s[1]])<<48 | uint64(t[s[0]])<<56
		binary.LittleEndian.PutUint64(dst[n-8-i:], w)
	}
	for i := whole; i < n; i++ {
		dst[n-1-i] = t[seq[i]]
	}
}

// EncodeQuery appends to dst the codes of a query sequence as matched against alphabet a, on the
// forward strand or, if reverse, as its reverse complement. nucleotidesOnly is -n: bytes other than
// a, c, g, t never match. It returns the extended slice. A QueryEncoder does the same for many
// sequences without building its tables each time.
func EncodeQuery(dst, seq []byte, a *Alphabet, reverse, nucleotidesOnly bool) []byte {
	n := len(dst)
	dst = slices.Grow(dst, len(seq))[:n+len(seq)]
	NewQueryEncoder(a, nucleotidesOnly).Fill(dst[n:], seq, reverse)
	return dst
}
