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

// QueryEncoder encodes query sequences against one alphabet by table lookup on either strand.
// Build it once per run; it is safe for concurrent use.
type QueryEncoder struct {
	fwd, rev [256]byte // code of each byte, and of its complement
	vec      vecTables // the vector path's tables (encode_amd64.s)
	useVec   bool      // vec gives fwd's and rev's codes, and the processor has the vector path
}

// vecTables are the 16-entry tables of the vector path, which looks bytes up by their low four bits
// after folding case (b | 0x20): a byte is taken there when it equals expect at its low bits (a, c,
// g, t and n have distinct ones), and its codes are fwd's and rev's entries there. Other bytes
// stop the vector path for their block of 32, which is then looked up in the 256-entry tables.
type vecTables struct {
	expect, fwd, rev [16]byte
	backwards        [16]byte // 15 down to 0: reverses the bytes of a 16-byte lane
	fold             [16]byte // 0x20s
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
	v := &e.vec
	for k := range 16 {
		v.expect[k] = byte(k+1) & 15 // no byte whose low bits are k equals it
		v.backwards[k] = byte(15 - k)
		v.fold[k] = 0x20
	}
	for _, c := range []byte("acgtn") {
		k := c & 15
		v.expect[k], v.fwd[k], v.rev[k] = c, e.fwd[c], e.rev[c]
	}
	// The vector path is used only where it gives every byte it takes the tables' codes.
	e.useVec = vecFill
	for b := range 256 {
		x := byte(b) | 0x20
		if x < 0x80 && v.expect[x&15] == x && (v.fwd[x&15] != e.fwd[b] || v.rev[x&15] != e.rev[b]) {
			e.useVec = false
		}
	}
	return e
}

// Fill writes to dst (len(dst) == len(seq)) the codes of seq on the forward strand or, if
// reverse, of its reverse complement. Where the processor has a vector path (AVX2), 32 bytes of
// a, c, g, t and n are encoded at a time; other bytes, and the last few, by fillWords.
func (e *QueryEncoder) Fill(dst, seq []byte, reverse bool) {
	dst = dst[:len(seq)]
	n := len(seq)
	if !e.useVec || n < 32 {
		e.fillWords(dst, seq, reverse)
		return
	}
	i := 0
	for n-i >= 32 {
		if reverse {
			i += fillRevVec(dst[:n-i], seq[i:], &e.vec)
		} else {
			i += fillFwdVec(dst[i:], seq[i:], &e.vec)
		}
		if n-i >= 32 { // the block the vector path stopped at
			e.fillPart(dst, seq, i, i+32, reverse)
			i += 32
		}
	}
	if i == n {
		return
	}
	// The last bytes: as the last 32, again in part, where the vector path takes them.
	k := 0
	if reverse {
		k = fillRevVec(dst[:32], seq[n-32:], &e.vec)
	} else {
		k = fillFwdVec(dst[n-32:], seq[n-32:], &e.vec)
	}
	if k == 0 {
		e.fillPart(dst, seq, i, n, reverse)
	}
}

// fillPart encodes seq[i:j] into its place in dst, on the strand asked.
func (e *QueryEncoder) fillPart(dst, seq []byte, i, j int, reverse bool) {
	if reverse {
		e.fillWords(dst[len(seq)-j:len(seq)-i], seq[i:j], true)
	} else {
		e.fillWords(dst[i:j], seq[i:j], false)
	}
}

// fillWords is Fill by the 256-entry tables: eight bytes are looked up at a time and stored as
// one word (a store a byte took most of the time: 1.4 ns a base in a profile of 10 M reads).
func (e *QueryEncoder) fillWords(dst, seq []byte, reverse bool) {
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
