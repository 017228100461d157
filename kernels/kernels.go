// Package kernels defines what the compute backends of sapipe share: the encoded reference, the
// query batch that crosses into a backend, the match records that come back, and the Backend
// interface that the CPU backend (kernels/cpu) and the GPU backend implement with identical results.
//
// Data enters as a Reference (the reference sequences, encoded once) and as Batches (flat slices of
// encoded query sequences and the segments of them to match); it leaves as flat slices of Match.
package kernels

import (
	"errors"
	"fmt"
	"sort"
)

// Symbol codes shared by every backend. Sequence bytes are encoded into small codes so that a
// suffix array and a rank structure over the reference stay compact.
const (
	// CodeEnd is the code of the virtual end-of-text row; it never occurs in a text.
	CodeEnd = 0
	// CodeNone marks a reference separator, a reference wildcard under -n, or a query byte
	// that cannot match anything: it never matches, not even itself.
	CodeNone = 1
	// FirstCode is the code of the smallest matchable byte.
	FirstCode = 2
)

// Alphabet maps lowercased sequence bytes to codes and back. Matchable bytes are those that occur in
// the reference (after -n replacement); they get codes FirstCode.. in byte order.
type Alphabet struct {
	Code [256]byte // byte -> code (CodeNone for bytes that cannot match)
	Byte [256]byte // code -> byte (for printing reference substrings)
	Size int       // number of codes in use, including CodeEnd and CodeNone
}

// Mode selects which maximal matches are reported.
type Mode int

const (
	// MumReference reports, at each query position, the longest match when it is unique in the
	// reference and left-maximal (MUMmer's -mumreference and -mumcand, its default).
	MumReference Mode = iota
	// Mum reports the MumReference candidates that are also unique in the query (-mum).
	Mum
	// MaxMatch reports every maximal match (-maxmatch).
	MaxMatch
)

// String returns the MUMmer option that selects the mode.
func (m Mode) String() string {
	switch m {
	case Mum:
		return "-mum"
	case MaxMatch:
		return "-maxmatch"
	default:
		return "-mumreference"
	}
}

// Reference is the encoded reference: its records concatenated into one text with a CodeNone
// separator between neighbours, as MUMmer concatenates them. Positions in Text are what matches
// report; RecordOf turns one back into a record and an offset.
type Reference struct {
	Text   []byte   // codes
	Starts []int    // Starts[i] is the offset of record i in Text
	Names  []string // record names (header's first word)
	Alpha  Alphabet
}

// RecordOf returns the record that holds text position pos and the offset of pos inside it.
func (r *Reference) RecordOf(pos int) (rec, off int) {
	rec = sort.SearchInts(r.Starts, pos+1) - 1
	return rec, pos - r.Starts[rec]
}

// RecordEnd is where record rec's stretch of Text ends: the next record's start (past the
// separator) or the text's end; RecordOf gives a position in [Starts[rec], RecordEnd(rec)) to rec.
func (r *Reference) RecordEnd(rec int) int {
	if rec+1 < len(r.Starts) {
		return r.Starts[rec+1]
	}
	return len(r.Text)
}

// Segment is one query sequence (a record on one strand) in a Batch, and the range of its
// positions whose matches are wanted. A long record may be cut into several segments that share
// Off and Len and differ in From and To; the matches of each position do not depend on the cut.
type Segment struct {
	Off      int // offset of the sequence in Batch.Codes
	Len      int // sequence length
	From, To int // positions [From, To) of the sequence to report matches for
}

// Batch is a group of query segments, held in flat slices so that it crosses into a backend (and
// onto a GPU) without copying.
type Batch struct {
	Codes []byte
	Segs  []Segment

	// Lines, where set, lets the matcher write the batch's text itself (Result.Text) in place of
	// its matches: each segment's head, Heads[HeadEnds[i-1]:HeadEnds[i]] (HeadEnds[-1] taken as
	// 0; none where Heads is nil), then its MUMmer match lines. A GPU writes them on the card where
	// a launch has many. Reverse (parallel to Segs, nil for none) marks the segments that are a
	// reverse strand, whose query positions Lines.ReversePositions counts from the sequence's end.
	Lines    *Lines
	Reverse  []bool
	Heads    []byte
	HeadEnds []int
}

// Head returns segment i's head (Heads[HeadEnds[i-1]:HeadEnds[i]]), where Heads is set.
func (b *Batch) Head(i int) []byte {
	start := 0
	if i > 0 {
		start = b.HeadEnds[i-1]
	}
	return b.Heads[start:b.HeadEnds[i]]
}

// Lines is the form of MUMmer 3.23's match lines (formats.MummerWriter, which is the reference
// for every byte): "  NAME<pad>  " where FourColumn, names padded to the longest of Names; then
// the reference position within its record, the query position (1-based, or under
// ReversePositions the sequence's length less the 0-based position on a reverse strand) and the
// length, each as C's "%8d", separated by two spaces; and a newline. Only -maxmatch lines
// without -s are asked of a matcher (the other modes' lines depend on more than one segment's
// matches, or on the reference's text).
type Lines struct {
	Names            []string
	FourColumn       bool
	ReversePositions bool
}

// NameWidth is the width of the name column: the longest name.
func (l *Lines) NameWidth() int {
	w := 0
	for _, n := range l.Names {
		w = max(w, len(n))
	}
	return w
}

// Match is one maximal exact match: reference text position, query position (0-based, on the
// strand's own sequence) and length. Reference positions are 64-bit: a reference may be far over
// 2^32 bases (it is indexed in pages, each of at most MaxPage bases); a query sequence and a match
// are under 2^31.
type Match struct {
	Ref        int64
	Query, Len int32
}

// Result holds the matches of a Batch: those of segment i are Matches[Ends[i-1]:Ends[i]]
// (Ends[-1] taken as 0). For MaxMatch and MumReference they are in ascending (Query, Ref) order;
// for Mum they are the MumReference candidates of the segment, in the same order, which the
// caller filters once it has every segment of a sequence.
type Result struct {
	Matches []Match
	Ends    []int

	// Where the matcher wrote the batch's text (Batch.Lines), segment i's head and lines are
	// Text[TextEnds[i-1]:TextEnds[i]] (TextEnds[-1] taken as 0) and its matches are left out.
	// TextEnds is empty where it did not: the caller then formats the matches. Where Release is
	// set, Text is the matcher's memory (a GPU's pinned buffer, the text as it came down), lent
	// until ReleaseText.
	Text     []byte
	TextEnds []int
	Release  func()
}

// Reset empties r for reuse, giving back lent text.
func (r *Result) Reset() {
	r.ReleaseText()
	r.Matches = r.Matches[:0]
	r.Ends = r.Ends[:0]
	r.Text = r.Text[:0]
	r.TextEnds = r.TextEnds[:0]
}

// ReleaseText gives lent text back to the matcher (Release), after which r has no text.
func (r *Result) ReleaseText() {
	if f := r.Release; f != nil {
		r.Release, r.Text, r.TextEnds = nil, nil, r.TextEnds[:0]
		f()
	}
}

// HasText says whether the matcher wrote the lines of the batch's nSegs segments.
func (r *Result) HasText(nSegs int) bool { return nSegs > 0 && len(r.TextEnds) == nSegs }

// SegText returns the lines of segment i, where HasText.
func (r *Result) SegText(i int) []byte {
	start := 0
	if i > 0 {
		start = r.TextEnds[i-1]
	}
	return r.Text[start:r.TextEnds[i]]
}

// Seg returns the matches of segment i.
func (r *Result) Seg(i int) []Match {
	start := 0
	if i > 0 {
		start = r.Ends[i-1]
	}
	return r.Matches[start:r.Ends[i]]
}

// MatchOptions configure a Matcher.
type MatchOptions struct {
	Mode     Mode
	MinLen   int // minimum match length, >= 1
	PageSize int // reference page length in text positions; 0 means one page for the whole reference
	// DeviceMemory bounds the device memory the reference's index takes on each GPU (0: what the
	// card has free, less room for batches). The CPU ignores it.
	DeviceMemory int64
}

// Matcher matches query batches against one reference. It is safe for concurrent use.
type Matcher interface {
	// Match appends the matches of every segment of b to res (one Ends entry per segment), or,
	// where b asks for its text (Batch.Lines) and the matcher writes it, the text (one TextEnds
	// entry per segment, and no matches).
	Match(b *Batch, res *Result) error
	Close() error
}

// CodeMemory is implemented by a Matcher that copies a batch's codes to its device fastest from
// memory of its own (a GPU's pinned host memory): codes grown through GrowCodes are copied up from
// where they are, with no copy on the host first. Its buffers stay valid until the matcher's Close.
type CodeMemory interface {
	// GrowCodes is slices.Grow(codes, n) into the matcher's memory: codes itself where it is the
	// matcher's and has room for n more, else a buffer of the matcher's (or Go's, where it has
	// none to give) holding codes' bytes. A buffer of the matcher's that is replaced is freed, so
	// the caller must hold no other slice of it.
	GrowCodes(codes []byte, n int) []byte
}

// Backend is a compute device: the CPU or a GPU. Every backend gives identical results; they
// differ only in speed. Selection happens once per run, in package kernels/device.
type Backend interface {
	// Name says what the backend runs on ("cpu", or the GPU's name and ordinal).
	Name() string
	// NewMatcher indexes ref for matching query batches with opts.
	NewMatcher(ref *Reference, opts MatchOptions) (Matcher, error)
	// SuffixArray fills sa (len(sa) == len(text)) with the suffix array of text: the start
	// positions of its suffixes in lexicographic byte order, a suffix before the longer ones it
	// prefixes.
	SuffixArray(text []byte, sa []int32) error
	// BWT writes the Burrows-Wheeler transform of each src[i] to dst[i] (of the same length)
	// and its primary index to primary[i]; see BWT's definition in this package.
	BWT(src, dst [][]byte, primary []int) error
	Close() error
}

// The Burrows-Wheeler transform used throughout sapipe is that of the text followed by a virtual
// sentinel smaller than every byte. Its rows are the suffixes of text+sentinel in sorted order;
// row 0 is the sentinel alone. The transform lists, for rows 0..n, the byte before each row's
// suffix, leaving out the sentinel, which stands before the whole text; primary is that row's
// index (1..n, or 0 for an empty text). So len(BWT) == len(text), and the text is recovered from
// the transform and primary alone (see kernels/cpu.InverseBWT).

// BWTFromSA writes to dst the transform of text whose suffix array is sa, and returns primary.
func BWTFromSA(text []byte, sa []int32, dst []byte) (primary int) {
	n := len(text)
	if n == 0 {
		return 0
	}
	dst[0] = text[n-1] // row 0, the sentinel alone, is preceded by the last byte
	j := 1
	for i, s := range sa {
		if s == 0 {
			primary = i + 1
			continue
		}
		dst[j] = text[s-1]
		j++
	}
	return primary
}

// ErrTooLarge reports a text beyond what one suffix array of 32-bit entries can address: a block
// of sa, bwt or compress, or one page of a reference (a reference itself is cut into pages).
var ErrTooLarge = errors.New("text too large (over 2^31-2 bases)")

// MaxWindow is the most text one page's index covers, its overlap included: its suffix array has a
// row for the empty suffix and its LCP array two more, all addressed by int32.
const MaxWindow = 1<<31 - 3

// MaxPageSize returns the largest page (the positions a page owns) whose window, with the overlap
// that minLen asks for, fits MaxWindow.
func MaxPageSize(overlap int) int { return MaxWindow - overlap }

// Validate checks opts against ref.
func (o MatchOptions) Validate(ref *Reference) error {
	if o.MinLen < 1 {
		return fmt.Errorf("minimum match length %d is not a positive integer", o.MinLen)
	}
	if o.MinLen > MaxWindow/2 {
		return fmt.Errorf("minimum match length %d is over %d", o.MinLen, MaxWindow/2)
	}
	if o.PageSize < 0 {
		return fmt.Errorf("page size %d is negative", o.PageSize)
	}
	return nil
}
