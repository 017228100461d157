package formats

// The index file of `sapipe index`: one reference, encoded and indexed once, loaded by later runs
// (`sapipe mummer --index`, `sapipe count`, `sapipe locate`) by memory-mapping it, so that they
// start without building anything.
//
// Version 3. A reference is indexed in pages: windows of its text, each with its own suffix array
// and the arrays built from it, so that a reference of any length (far over 2^32 bases) is indexed
// with 32-bit rows. Page p owns the text positions [start, end) and its window runs on to winEnd,
// the overlap (the header's V) past end or to the text's end, so that every occurrence of up to
// V+1 symbols that starts in a page lies in its window. A reference of up to 2^31-3 bases is one
// page (start 0, end = winEnd = n).
//
// All integers are little-endian; CRC32C is CRC-32 with the Castagnoli polynomial (as in the BWT
// stream). The file is a header, a section table and the sections:
//
//	header = 64 bytes:
//	    0  6  magic "SAPIDX"
//	    6  2  version, 3 (a reader also reads version 2: one page, 32-bit record starts)
//	    8  4  flags: bit 0 set when the reference was encoded with -n (only a, c, g, t match);
//	          the other bits are 0 (a reader rejects any other value)
//	   12  4  number of sections k, 1..4096
//	   16  8  n, the text length in codes (records and the separators between them), 1..2^40
//	   24  4  number of records, 1..n+1
//	   28  4  sigma, the number of codes in use (codes 0..sigma-1), 2..256
//	   32  8  length of the whole file in bytes
//	   40  4  K, the length of the k-mers of the KMER sections, 0..12 (0: the tables are empty)
//	   44  4  P, the number of pages, 1..409
//	   48  4  V, the pages' overlap: winEnd = min(end + V, n)
//	   52  8  zero
//	   60  4  CRC32C of header bytes 0..59
//	table  = k entries of 32 bytes, then the CRC32C of the k entries (4 bytes):
//	    0  4  tag, four ASCII bytes naming the section
//	    4  4  element size: 1, 4 or 8 bytes
//	    8  8  offset of the section from the start of the file, a multiple of 64
//	   16  8  length of the section in bytes, a multiple of the element size
//	   24  4  checksum: the section is cut into chunks of 1 MiB (the last one shorter); the
//	          checksum is the CRC32C of the chunks' CRC32Cs, each as 4 bytes, in order (so a
//	          reader checks the chunks on all its cores at once)
//	   28  4  the page the section belongs to, 0..P-1, or 0xffffffff for the whole reference's
//	          (version 2: zero)
//	then the sections, each starting at its offset, in table order, without overlap; the bytes
//	between them are zero and the file ends where the last section does.
//
// The whole reference's sections, each present once:
//
//	tag   elem  length           contents
//	NAME  1     any              the record names in order, each followed by '\n'
//	STRT  8     records          the offset of each record in TEXT: 0 first, strictly ascending
//	                             (version 2: elements of 4 bytes)
//	ALPH  1     256              the code of each byte value: 1 for bytes that never match;
//	                             matchable bytes get 2, 3, ... in byte order
//	TEXT  1     n                the reference text in codes: the records, lowercased and encoded,
//	                             one code 1 (a separator, which never matches) between neighbours
//	PAGE  8     3P               start, end and winEnd of each page: the pages tile [0, n) in
//	                             order, each window at most 2^31-3 long (not in version 2)
//	NOTE  1     up to 64 KiB     text for people (what made the index); not used
//
// Each page's sections, each present once a page; w is the page's window length, winEnd - start,
// and rows and positions are the window's:
//
//	SUFA  4     w+1              the suffix array of the window with a row 0 for the empty
//	                             suffix: SUFA[0] = w, then the start of each suffix in sorted order
//	OCCB  8     see below        the rank structure of the BWT, in blocks of 128 rows: each
//	                             block holds the number of each matchable code (2..sigma-1) in
//	                             the rows before it, two 32-bit counts to a word, then the
//	                             block's BWT symbols as bit planes (bit t of the symbol of row
//	                             r in bit r%64 of word 2t+r/64 of the planes); (w+1)/128+1 blocks
//	                             of (sigma-1)/2 + 2*bits(sigma-1) words (sigma taken as >= 2)
//	LCPB  1     w+2              the LCP of each row with the row before (rows 0, 1 and w+1:
//	                             0), 255 meaning "255 or more: see LCPX"
//	LCPX  4     any              the rows whose LCPB is 255, ascending
//	LCPV  4     as LCPX          their LCP values
//	LCM1  4     ceil((w+2)/64)   the least LCP of each 64 rows
//	LCM2  4     ceil(LCM1/64)    the least of each 64 LCM1 values
//	KMER  4     2*(sigma-2)^K    the rows [lo, hi) of the suffixes that start with each string
//	                             of K matchable codes, the strings in order (code 2 first, the
//	                             first symbol most significant); 0, 0 for one that does not occur
//	KEYS  4     0 or w+1         the key of each row, for the search of count and locate (none
//	                             when KMER is empty or sigma < 4): the m symbols of the row's
//	                             suffix after its first K as digits in base sigma-2 (code 2 the
//	                             digit 0, the first most significant; digit 0 from a separator
//	                             or the window's end on), m the most digits that fit in 31
//	                             bits (15 for DNA), times two, plus one when all m symbols are
//	                             there and matchable
//	TAIL  4     winEnd-end       the rows of the suffixes that start past what the page owns (at
//	                             window positions end-start and on), ascending (not in version 2)
//
// The BWT symbol of row r is the window's symbol before SUFA[r], or 0 where SUFA[r] = 0. The
// header and the table are checked before anything else is read, so a damaged length never makes
// a reader allocate or read much; every section's checksum is checked before its contents are
// used, and the contents are then checked for what the search needs to stay in bounds (a damaged
// or foreign file is an error, never a crash). A later, incompatible layout gets a new version
// number.

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"runtime"
	"slices"
	"sync"
	"unsafe"
)

// Index file constants.
const (
	IndexMagic   = "SAPIDX"
	IndexVersion = 3
	// MaxIndexText is the longest text an index holds.
	MaxIndexText = 1 << 40
	// MaxIndexWindow is the longest window of a page: its suffix array has a row more than it,
	// its LCP two more, all addressed by int32.
	MaxIndexWindow = 1<<31 - 3
	// MaxIndexPages is the most pages an index holds.
	MaxIndexPages = (indexMaxSecs - 6) / 10 // six sections of the whole reference, ten a page

	indexHeaderLen = 64
	indexEntryLen  = 32
	indexAlign     = 64
	indexChunk     = 1 << 20
	indexMaxSecs   = 4096
	indexMaxNote   = 64 << 10
	indexFlagNuc   = 1
	maxIndexKmer   = 12
	wholeIndex     = 0xffffffff // the page field of the whole reference's sections
)

// ErrNotIndex reports a file that does not start with an index header.
var ErrNotIndex = errors.New("not a sapipe index file")

// ErrIndexVersion reports an index written in a format version this sapipe does not read.
var ErrIndexVersion = errors.New("unsupported index version")

// ErrIndexDamaged reports an index whose lengths, checksums or contents do not agree.
var ErrIndexDamaged = errors.New("damaged index")

// IndexError is an error in an index file: which file, where in it, and what went wrong.
type IndexError struct {
	Name  string // the file, for messages
	Where string // "header", "section table" or "section TAG" (of "page N")
	Err   error
}

func (e *IndexError) Error() string {
	if e.Where == "" {
		return fmt.Sprintf("%s: %v", e.Name, e.Err)
	}
	return fmt.Sprintf("%s: %s: %v", e.Name, e.Where, e.Err)
}

func (e *IndexError) Unwrap() error { return e.Err }

// Index is the contents of an index file. Read from a file, the slices are views of the file's
// memory mapping and must not be modified; they stay valid until the IndexFile is closed.
type Index struct {
	NucleotidesOnly bool     // the reference was encoded with -n
	Names           []string // record names
	Starts          []int64  // offset of each record in Text
	Code            [256]byte
	Sigma           int    // codes in use
	Text            []byte // codes
	KmerLen         int    // K of the k-mer tables
	Overlap         int    // V: how far each page's window runs past what it owns
	Pages           []IndexPage
	Note            string
	Version         int // the file's format version (what WriteIndex writes: IndexVersion)
}

// IndexPage is one page of an index: its bounds in the text and its window's arrays.
type IndexPage struct {
	Start, End, WinEnd int64 // owns [Start, End) of the text; the window is [Start, WinEnd)
	SA                 []int32
	Occ                []uint64
	LCPBytes           []byte
	LCPRows            []int32
	LCPValues          []int32
	LCPMin1            []int32
	LCPMin2            []int32
	Kmers              []int32 // the k-mer table: lo, hi of each k-mer
	Keys               []int32 // the key of each row (as uint32 bits), or none
	Tail               []int32 // the rows of the suffixes past what the page owns, ascending
}

// Window returns the length of the page's window.
func (pg *IndexPage) Window() int { return int(pg.WinEnd - pg.Start) }

// section is one entry of the table with its bytes.
type indexSection struct {
	tag  string
	elem int
	page uint32
	data []byte
	sum  uint32
	off  int64
}

// indexTags lists the whole reference's sections in the order the writer puts them, and
// indexPageTags each page's, which follow, page by page.
var indexTags = []struct {
	tag  string
	elem int
}{
	{"NOTE", 1}, {"NAME", 1}, {"STRT", 8}, {"ALPH", 1}, {"TEXT", 1}, {"PAGE", 8},
}

var indexPageTags = []struct {
	tag  string
	elem int
}{
	{"SUFA", 4}, {"OCCB", 8}, {"LCPB", 1}, {"LCPX", 4}, {"LCPV", 4}, {"LCM1", 4}, {"LCM2", 4}, {"KMER", 4}, {"KEYS", 4}, {"TAIL", 4},
}

// isPageTag reports whether tag is a page's section (version 2 files have one page, of their
// sections all but the reference's).
func isPageTag(tag string) bool {
	for _, t := range indexPageTags {
		if t.tag == tag {
			return true
		}
	}
	return false
}

// indexV2Tags are the sections of version 2: one page, no PAGE or TAIL, 4-byte record starts.
var indexV2Tags = []struct {
	tag  string
	elem int
}{
	{"NOTE", 1}, {"NAME", 1}, {"STRT", 4}, {"ALPH", 1}, {"TEXT", 1}, {"SUFA", 4}, {"OCCB", 8},
	{"LCPB", 1}, {"LCPX", 4}, {"LCPV", 4}, {"LCM1", 4}, {"LCM2", 4}, {"KMER", 4}, {"KEYS", 4},
}

// littleEndian says whether the host stores integers as the file does, so that sections can be
// used in place.
var littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// sections returns the sections of ix in writing order.
func (ix *Index) sections() []indexSection {
	var names []byte
	for _, s := range ix.Names {
		names = append(names, s...)
		names = append(names, '\n')
	}
	bounds := make([]uint64, 0, 3*len(ix.Pages))
	for _, pg := range ix.Pages {
		bounds = append(bounds, uint64(pg.Start), uint64(pg.End), uint64(pg.WinEnd))
	}
	starts := make([]uint64, len(ix.Starts))
	for i, s := range ix.Starts {
		starts[i] = uint64(s)
	}
	data := map[string][]byte{
		"NOTE": []byte(ix.Note), "NAME": names, "STRT": uint64Bytes(starts), "ALPH": ix.Code[:], "TEXT": ix.Text,
		"PAGE": uint64Bytes(bounds),
	}
	secs := make([]indexSection, 0, len(indexTags)+len(indexPageTags)*len(ix.Pages))
	for _, t := range indexTags {
		secs = append(secs, indexSection{tag: t.tag, elem: t.elem, page: wholeIndex, data: data[t.tag]})
	}
	for p, pg := range ix.Pages {
		data := map[string][]byte{
			"SUFA": int32Bytes(pg.SA), "OCCB": uint64Bytes(pg.Occ), "LCPB": pg.LCPBytes,
			"LCPX": int32Bytes(pg.LCPRows), "LCPV": int32Bytes(pg.LCPValues),
			"LCM1": int32Bytes(pg.LCPMin1), "LCM2": int32Bytes(pg.LCPMin2), "KMER": int32Bytes(pg.Kmers),
			"KEYS": int32Bytes(pg.Keys), "TAIL": int32Bytes(pg.Tail),
		}
		for _, t := range indexPageTags {
			secs = append(secs, indexSection{tag: t.tag, elem: t.elem, page: uint32(p), data: data[t.tag]})
		}
	}
	return secs
}

// WriteIndex writes ix as an index file (version 3), computing the checksums on up to threads
// goroutines.
func WriteIndex(w io.Writer, ix *Index, threads int) error {
	secs, fileLen, err := ix.layout()
	if err != nil {
		return err
	}
	sums := sectionSums(secs, threads)
	for i := range secs {
		secs[i].sum = sums[i]
	}
	if _, err := w.Write(ix.head(secs, fileLen)); err != nil {
		return err
	}
	pos := secs[0].off
	var pad [indexAlign]byte
	for _, s := range secs {
		if _, err := w.Write(pad[:s.off-pos]); err != nil {
			return err
		}
		if _, err := w.Write(s.data); err != nil {
			return err
		}
		pos = s.off + int64(len(s.data))
	}
	return nil
}

// WriteIndexAt writes ix as an index file into w from offset 0 (a regular file, empty or to be
// overwritten), on up to threads goroutines, each checksumming a chunk of a section and writing
// it at its offset, the header and table last; the padding between sections is left unwritten
// (a hole reads as zeros), and the file is then cut (or extended) to its length, which it
// returns. One pass over the arrays, where WriteIndex makes two (the checksums, then the
// writing) and writes from one goroutine.
func WriteIndexAt(w WriterAtTruncater, ix *Index, threads int) (int64, error) {
	secs, fileLen, err := ix.layout()
	if err != nil {
		return 0, err
	}
	crcs, err := sectionChunks(secs, threads, func(s *indexSection, off int64, d []byte) error {
		_, err := w.WriteAt(d, s.off+off)
		return err
	})
	if err != nil {
		return 0, err
	}
	for s := range secs {
		secs[s].sum = sumOfChunks(crcs[s])
	}
	if _, err := w.WriteAt(ix.head(secs, fileLen), 0); err != nil {
		return 0, err
	}
	return fileLen, w.Truncate(fileLen) // the last sections may be empty, after padding
}

// WriterAtTruncater is a file that WriteIndexAt writes: *os.File.
type WriterAtTruncater interface {
	io.WriterAt
	Truncate(size int64) error
}

// IndexFileSize returns the length of the file that WriteIndex writes for ix.
func IndexFileSize(ix *Index) (int64, error) {
	_, n, err := ix.layout()
	return n, err
}

// layout checks ix and returns its sections with their offsets, and the file's length.
func (ix *Index) layout() ([]indexSection, int64, error) {
	if err := ix.checkShape(); err != nil {
		return nil, 0, err
	}
	if len(ix.Note) > indexMaxNote {
		return nil, 0, fmt.Errorf("index note of %d bytes (at most %d)", len(ix.Note), indexMaxNote)
	}
	secs := ix.sections()
	off := alignUp(int64(indexHeaderLen + len(secs)*indexEntryLen + 4))
	for i := range secs {
		secs[i].off = off
		off = alignUp(off + int64(len(secs[i].data)))
	}
	last := secs[len(secs)-1]
	return secs, last.off + int64(len(last.data)), nil
}

// head returns the header and the section table (secs with their checksums), zero-padded up to the
// first section.
func (ix *Index) head(secs []indexSection, fileLen int64) []byte {
	head := make([]byte, indexHeaderLen, int(secs[0].off))
	copy(head, IndexMagic)
	binary.LittleEndian.PutUint16(head[6:], IndexVersion)
	if ix.NucleotidesOnly {
		binary.LittleEndian.PutUint32(head[8:], indexFlagNuc)
	}
	binary.LittleEndian.PutUint32(head[12:], uint32(len(secs)))
	binary.LittleEndian.PutUint64(head[16:], uint64(len(ix.Text)))
	binary.LittleEndian.PutUint32(head[24:], uint32(len(ix.Names)))
	binary.LittleEndian.PutUint32(head[28:], uint32(ix.Sigma))
	binary.LittleEndian.PutUint64(head[32:], uint64(fileLen))
	binary.LittleEndian.PutUint32(head[40:], uint32(ix.KmerLen))
	binary.LittleEndian.PutUint32(head[44:], uint32(len(ix.Pages)))
	binary.LittleEndian.PutUint32(head[48:], uint32(ix.Overlap))
	binary.LittleEndian.PutUint32(head[60:], crc32.Checksum(head[:60], Castagnoli))
	for _, s := range secs {
		var e [indexEntryLen]byte
		copy(e[:4], s.tag)
		binary.LittleEndian.PutUint32(e[4:], uint32(s.elem))
		binary.LittleEndian.PutUint64(e[8:], uint64(s.off))
		binary.LittleEndian.PutUint64(e[16:], uint64(len(s.data)))
		binary.LittleEndian.PutUint32(e[24:], s.sum)
		binary.LittleEndian.PutUint32(e[28:], s.page)
		head = append(head, e[:]...)
	}
	head = binary.LittleEndian.AppendUint32(head, crc32.Checksum(head[indexHeaderLen:], Castagnoli))
	return head[:secs[0].off] // zero padding up to the first section
}

// checkShape checks the lengths that the header and the reader rely on, so that the writer never
// writes a file its reader would refuse.
func (ix *Index) checkShape() error {
	n := int64(len(ix.Text))
	switch {
	case n < 1 || n > MaxIndexText:
		return fmt.Errorf("index of a text of %d codes (1..%d)", n, int64(MaxIndexText))
	case len(ix.Names) < 1 || int64(len(ix.Names)) > n+1 || len(ix.Starts) != len(ix.Names) || len(ix.Names) > 1<<32-1:
		return fmt.Errorf("index of %d records with %d starts", len(ix.Names), len(ix.Starts))
	case ix.Sigma < 2 || ix.Sigma > 256:
		return fmt.Errorf("index with an alphabet of %d codes", ix.Sigma)
	case ix.KmerLen < 0 || ix.KmerLen > maxIndexKmer:
		return fmt.Errorf("index with %d-mers", ix.KmerLen)
	case len(ix.Pages) < 1 || len(ix.Pages) > MaxIndexPages:
		return fmt.Errorf("index of %d pages (1..%d)", len(ix.Pages), MaxIndexPages)
	case ix.Overlap < 0 || ix.Overlap > MaxIndexWindow/2:
		return fmt.Errorf("index pages overlapping by %d", ix.Overlap)
	}
	if err := checkPageBounds(ix.Pages, n, int64(ix.Overlap)); err != nil {
		return err
	}
	for p := range ix.Pages {
		pg := &ix.Pages[p]
		w := pg.Window()
		if len(pg.SA) != w+1 || len(pg.LCPBytes) != w+2 || len(pg.LCPRows) != len(pg.LCPValues) ||
			len(pg.Keys) != 0 && len(pg.Keys) != w+1 || int64(len(pg.Tail)) != pg.WinEnd-pg.End {
			return fmt.Errorf("page %d: arrays of the wrong length for a window of %d codes", p, w)
		}
	}
	for _, s := range ix.Names {
		if bytes.IndexByte([]byte(s), '\n') >= 0 {
			return fmt.Errorf("record name %q holds a newline", s)
		}
	}
	return nil
}

// checkPageBounds checks that the pages tile [0, n) in order, each window running overlap past
// what the page owns (or to the end) and no longer than MaxIndexWindow.
func checkPageBounds(pages []IndexPage, n, overlap int64) error {
	next := int64(0)
	for p, pg := range pages {
		switch {
		case pg.Start != next || pg.End <= pg.Start || pg.End > n:
			return fmt.Errorf("page %d owns [%d, %d) after %d, in a text of %d", p, pg.Start, pg.End, next, n)
		case pg.WinEnd != min(pg.End+overlap, n):
			return fmt.Errorf("page %d's window ends at %d, want %d", p, pg.WinEnd, min(pg.End+overlap, n))
		case pg.WinEnd-pg.Start > MaxIndexWindow:
			return fmt.Errorf("page %d's window of %d codes (at most %d)", p, pg.WinEnd-pg.Start, MaxIndexWindow)
		}
		next = pg.End
	}
	if next != n {
		return fmt.Errorf("the pages end at %d, the text at %d", next, n)
	}
	return nil
}

// sectionSums returns the checksum of each section, computing the chunks on up to threads
// goroutines.
func sectionSums(secs []indexSection, threads int) []uint32 {
	crcs, _ := sectionChunks(secs, threads, nil)
	sums := make([]uint32, len(secs))
	for s, cs := range crcs {
		sums[s] = sumOfChunks(cs)
	}
	return sums
}

// sectionChunks returns the CRC32C of every chunk of every section, computed on up to threads
// goroutines, each of which also calls f (unless nil) with the chunk's section, its offset in
// the section and its bytes; the first error of f stops the work and is returned.
func sectionChunks(secs []indexSection, threads int, f func(s *indexSection, off int64, d []byte) error) ([][]uint32, error) {
	type chunk struct{ sec, i int }
	var chunks []chunk
	crcs := make([][]uint32, len(secs))
	for s := range secs {
		crcs[s] = make([]uint32, (len(secs[s].data)+indexChunk-1)/indexChunk)
		for i := range crcs[s] {
			chunks = append(chunks, chunk{s, i})
		}
	}
	var mu sync.Mutex
	k := 0
	var ferr error
	var wg sync.WaitGroup
	for range max(1, min(threads, len(chunks))) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				if k == len(chunks) || ferr != nil {
					mu.Unlock()
					return
				}
				c := chunks[k]
				k++
				mu.Unlock()
				sec := &secs[c.sec]
				d := sec.data[c.i*indexChunk : min((c.i+1)*indexChunk, len(sec.data))]
				crcs[c.sec][c.i] = crc32.Checksum(d, Castagnoli)
				if f != nil {
					if err := f(sec, int64(c.i*indexChunk), d); err != nil {
						mu.Lock()
						ferr = cmp.Or(ferr, err)
						mu.Unlock()
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	return crcs, ferr
}

// sumOfChunks is a section's checksum: the CRC32C of its chunks' CRC32Cs, each as 4 bytes.
func sumOfChunks(crcs []uint32) uint32 {
	b := make([]byte, 0, 4*len(crcs))
	for _, c := range crcs {
		b = binary.LittleEndian.AppendUint32(b, c)
	}
	return crc32.Checksum(b, Castagnoli)
}

func alignUp(x int64) int64 { return (x + indexAlign - 1) &^ (indexAlign - 1) }

// ParseIndex reads the index in data (a whole file; name is used in messages), checking the
// header, the table and every section's checksum on up to threads goroutines, and the records,
// names, alphabet and page bounds (the codes of the text are for the text's user to check). The
// returned Index shares data's memory where the host's byte order and data's alignment allow, and
// copies the arrays otherwise. What the arrays hold beyond their lengths (the suffix arrays, the
// rank structures, the LCP) is for their user to check. Versions 3 and 2 are read.
func ParseIndex(name string, data []byte, threads int) (*Index, error) {
	ix, verify, err := ParseIndexLate(name, data, threads)
	if err != nil {
		return nil, err
	}
	if err := verify(nil); err != nil {
		return nil, err
	}
	return ix, nil
}

// ParseIndexLate is ParseIndex without the sections' checksums, which the returned function
// checks (on up to threads goroutines) with ParseIndex's error for a mismatch: what is returned
// can be put to work that reads the arrays (a copy to a GPU) while the checksums are computed,
// and must not be trusted before that function returns nil. Where another check fails first, the
// checksums are checked before the error is returned, so that a damaged file is reported as
// ParseIndex reports it. The function leaves out the sections whose tags are in skip (for a user
// that never reads them, as count and locate never read the LCP: LCPSections), and calls visit
// (unless nil) with each chunk it checks.
func ParseIndexLate(name string, data []byte, threads int, skip ...string) (*Index, func(visit ChunkVisit) error, error) {
	var verify func(ChunkVisit) error
	ix, err := parseIndex(name, data, threads, &verify, skip)
	if err != nil {
		return nil, nil, err
	}
	return ix, verify, nil
}

// ChunkVisit is called by an index's checksum pass (ParseIndexLate's function) with each chunk of
// the sections it checks, on the pass's goroutines once the chunk's checksum is computed, so that
// a check of a section's contents reads it while it is in the caches: the section's tag, its page
// (-1 for the sections of the whole reference), the chunk's offset in the section (a multiple of
// 1 MiB) and its bytes, little-endian as in the file.
type ChunkVisit func(tag string, page int, off int64, d []byte)

// LCPSections are the tags of a page's LCP arrays, which count and locate never read.
var LCPSections = []string{"LCPB", "LCPX", "LCPV", "LCM1", "LCM2"}

// parseIndex is ParseIndexLate, setting *verify to the checksums' check (of the sections not in
// skip).
func parseIndex(name string, data []byte, threads int, verify *func(ChunkVisit) error, skip []string) (ixOut *Index, errOut error) {
	fail := func(where string, format string, args ...any) error {
		return &IndexError{Name: name, Where: where, Err: fmt.Errorf("%w: "+format, append([]any{ErrIndexDamaged}, args...)...)}
	}
	if len(data) == 0 {
		return nil, &IndexError{Name: name, Err: fmt.Errorf("%w (the file is empty)", ErrNotIndex)}
	}
	if !bytes.HasPrefix(data, []byte(IndexMagic)[:min(len(data), len(IndexMagic))]) {
		return nil, &IndexError{Name: name, Err: fmt.Errorf("%w (it starts with %q, not %q)", ErrNotIndex, data[:min(len(data), 8)], IndexMagic)}
	}
	if len(data) < 8 {
		return nil, fail("header", "truncated: the file has %d bytes", len(data))
	}
	version := int(binary.LittleEndian.Uint16(data[6:]))
	if version != IndexVersion && version != 2 {
		return nil, &IndexError{Name: name, Err: fmt.Errorf("%w %d: this sapipe reads versions 2 and %d (rebuild the index with this sapipe's sapipe index)", ErrIndexVersion, version, IndexVersion)}
	}
	v2 := version == 2
	if len(data) < indexHeaderLen {
		return nil, fail("header", "truncated: the file has %d bytes", len(data))
	}
	h := data[:indexHeaderLen]
	if got, want := crc32.Checksum(h[:60], Castagnoli), binary.LittleEndian.Uint32(h[60:]); got != want {
		return nil, fail("header", "checksum mismatch")
	}
	flags := binary.LittleEndian.Uint32(h[8:])
	k := int(binary.LittleEndian.Uint32(h[12:]))
	n := binary.LittleEndian.Uint64(h[16:])
	records := uint64(binary.LittleEndian.Uint32(h[24:]))
	sigma := int(binary.LittleEndian.Uint32(h[28:]))
	fileLen := binary.LittleEndian.Uint64(h[32:])
	kmer := binary.LittleEndian.Uint32(h[40:])
	npages := uint64(binary.LittleEndian.Uint32(h[44:]))
	overlap := uint64(binary.LittleEndian.Uint32(h[48:]))
	reserved := h[52:60]
	maxText, maxSecs := uint64(MaxIndexText), indexMaxSecs
	if v2 {
		npages, overlap, reserved = 1, 0, h[44:60]
		maxText, maxSecs = MaxIndexWindow+1, len(indexV2Tags)
	}
	switch {
	case flags&^indexFlagNuc != 0:
		return nil, fail("header", "unknown flags %#x", flags)
	case k < 1 || k > maxSecs:
		return nil, fail("header", "%d sections (1..%d)", k, maxSecs)
	case n < 1 || n > maxText:
		return nil, fail("header", "text length %d (1..%d)", n, maxText)
	case records < 1 || records > n+1:
		return nil, fail("header", "%d records for a text of %d", records, n)
	case sigma < 2 || sigma > 256:
		return nil, fail("header", "alphabet of %d codes (2..256)", sigma)
	case kmer > maxIndexKmer:
		return nil, fail("header", "%d-mers (0..%d)", kmer, maxIndexKmer)
	case npages < 1 || npages > MaxIndexPages || npages > n:
		return nil, fail("header", "%d pages for a text of %d (1..%d)", npages, n, MaxIndexPages)
	case overlap > MaxIndexWindow/2:
		return nil, fail("header", "pages overlapping by %d", overlap)
	case !bytes.Equal(reserved, make([]byte, len(reserved))):
		return nil, fail("header", "reserved bytes are not zero")
	case fileLen != uint64(len(data)):
		if fileLen > uint64(len(data)) {
			return nil, fail("", "truncated: the file has %d bytes, its header says %d", len(data), fileLen)
		}
		return nil, fail("", "the file has %d bytes, its header says %d", len(data), fileLen)
	}
	tableEnd := indexHeaderLen + k*indexEntryLen
	if len(data) < tableEnd+4 {
		return nil, fail("section table", "truncated")
	}
	table := data[indexHeaderLen:tableEnd]
	if crc32.Checksum(table, Castagnoli) != binary.LittleEndian.Uint32(data[tableEnd:]) {
		return nil, fail("section table", "checksum mismatch")
	}
	// The sections, by tag, of the whole reference (page -1) and of each page.
	type key struct {
		tag  string
		page int
	}
	secs := make(map[key]*indexSection, k)
	list := make([]indexSection, k)
	end := uint64(tableEnd + 4)
	for i := range k {
		e := table[i*indexEntryLen : (i+1)*indexEntryLen]
		s := &list[i]
		s.tag = string(e[:4])
		elem := uint64(binary.LittleEndian.Uint32(e[4:]))
		off := binary.LittleEndian.Uint64(e[8:])
		length := binary.LittleEndian.Uint64(e[16:])
		s.sum = binary.LittleEndian.Uint32(e[24:])
		s.page = binary.LittleEndian.Uint32(e[28:])
		where := fmt.Sprintf("section %d (%q)", i+1, s.tag)
		want, page := -1, -1
		if v2 {
			for _, t := range indexV2Tags {
				if t.tag == s.tag {
					want = t.elem
				}
			}
			if s.page != 0 {
				return nil, fail(where, "reserved bytes are not zero")
			}
			if isPageTag(s.tag) {
				page = 0
			}
		} else if s.page == wholeIndex {
			for _, t := range indexTags {
				if t.tag == s.tag {
					want = t.elem
				}
			}
		} else {
			for _, t := range indexPageTags {
				if t.tag == s.tag {
					want = t.elem
				}
			}
			if uint64(s.page) >= npages {
				return nil, fail(where, "of page %d, in an index of %d pages", s.page, npages)
			}
			page = int(s.page)
		}
		switch {
		case want < 0:
			return nil, fail(where, "unknown section")
		case secs[key{s.tag, page}] != nil:
			return nil, fail(where, "repeated section")
		case uint64(want) != elem:
			return nil, fail(where, "element size %d, want %d", elem, want)
		case off%indexAlign != 0 || off < end || off > fileLen || length > fileLen-off:
			return nil, fail(where, "%d bytes at offset %d do not fit the file (%d bytes) after byte %d", length, off, fileLen, end)
		case length%elem != 0:
			return nil, fail(where, "length %d is not a multiple of %d", length, elem)
		}
		for _, c := range data[end:off] {
			if c != 0 {
				return nil, fail(where, "the bytes before the section are not zero")
			}
		}
		s.elem = want
		s.off = int64(off)
		s.data = data[off : off+length]
		end = off + length
		secs[key{s.tag, page}] = s
	}
	if end != fileLen {
		return nil, fail("section table", "the sections end at byte %d, the file at %d", end, fileLen)
	}
	whole := []string{"NOTE", "NAME", "STRT", "ALPH", "TEXT", "PAGE"}
	pageTags := []string{"SUFA", "OCCB", "LCPB", "LCPX", "LCPV", "LCM1", "LCM2", "KMER", "KEYS", "TAIL"}
	if v2 {
		whole, pageTags = whole[:5], pageTags[:9]
	}
	for _, t := range whole {
		if secs[key{t, -1}] == nil {
			return nil, fail("section table", "no %s section", t)
		}
	}
	for p := range int(npages) {
		for _, t := range pageTags {
			if secs[key{t, p}] == nil {
				return nil, fail("section table", "no %s section for page %d", t, p)
			}
		}
	}
	// Lengths first (cheap), then the checksums of everything (one pass over the file).
	nn := int64(n)
	startLen := int64(8)
	if v2 {
		startLen = 4
	}
	lens := map[string]int64{"STRT": startLen * int64(records), "ALPH": 256, "TEXT": nn, "PAGE": 24 * int64(npages)}
	if v2 {
		delete(lens, "PAGE")
	}
	for tag, want := range lens {
		if got := int64(len(secs[key{tag, -1}].data)); got != want {
			return nil, fail("section "+tag, "%d bytes, want %d", got, want)
		}
	}
	if len(secs[key{"NOTE", -1}].data) > indexMaxNote {
		return nil, fail("section NOTE", "%d bytes (at most %d)", len(secs[key{"NOTE", -1}].data), indexMaxNote)
	}
	ix := &Index{NucleotidesOnly: flags&indexFlagNuc != 0, Sigma: sigma, Note: string(secs[key{"NOTE", -1}].data),
		KmerLen: int(kmer), Overlap: int(overlap), Version: version}
	ix.Pages = make([]IndexPage, npages)
	if v2 {
		ix.Pages[0] = IndexPage{Start: 0, End: nn, WinEnd: nn}
	} else {
		b := uint64View(secs[key{"PAGE", -1}].data)
		for p := range ix.Pages {
			pg := &ix.Pages[p]
			pg.Start, pg.End, pg.WinEnd = int64(b[3*p]), int64(b[3*p+1]), int64(b[3*p+2])
			if pg.Start < 0 || pg.End < 0 || pg.WinEnd < 0 {
				return nil, fail("section PAGE", "page %d: bounds past 2^63", p)
			}
		}
		if err := checkPageBounds(ix.Pages, nn, int64(overlap)); err != nil {
			return nil, fail("section PAGE", "%v", err)
		}
	}
	for p := range ix.Pages {
		w := int64(ix.Pages[p].Window())
		sec := func(tag string) []byte { return secs[key{tag, p}].data }
		where := func(tag string) string {
			if v2 {
				return "section " + tag
			}
			return fmt.Sprintf("page %d: section %s", p, tag)
		}
		min1 := 4 * ((w + 2 + 63) / 64)
		plens := map[string]int64{"SUFA": 4 * (w + 1), "LCPB": w + 2, "LCM1": min1, "LCM2": 4 * ((min1/4 + 63) / 64)}
		if !v2 {
			pg := &ix.Pages[p]
			plens["TAIL"] = 4 * (pg.WinEnd - pg.End)
		}
		for tag, want := range plens {
			if got := int64(len(sec(tag))); got != want {
				return nil, fail(where(tag), "%d bytes, want %d", got, want)
			}
		}
		if got := int64(len(sec("KEYS"))); got != 0 && got != 4*(w+1) {
			return nil, fail(where("KEYS"), "%d bytes, want 0 or %d", got, 4*(w+1))
		}
		if len(sec("LCPX")) != len(sec("LCPV")) {
			return nil, fail(where("LCPV"), "%d bytes for %d in LCPX", len(sec("LCPV")), len(sec("LCPX")))
		}
	}
	sumList := list
	if len(skip) > 0 {
		sumList = slices.DeleteFunc(slices.Clone(list), func(s indexSection) bool { return slices.Contains(skip, s.tag) })
	}
	checkSums := func(visit ChunkVisit) error {
		var each func(s *indexSection, off int64, d []byte) error
		if visit != nil {
			each = func(s *indexSection, off int64, d []byte) error {
				page := int(s.page)
				if s.page == wholeIndex || v2 && !isPageTag(s.tag) {
					page = -1
				}
				visit(s.tag, page, off, d)
				return nil
			}
		}
		crcs, _ := sectionChunks(sumList, threads, each)
		for i, s := range sumList {
			if sumOfChunks(crcs[i]) != s.sum {
				where := "section " + s.tag
				if !v2 && s.page != wholeIndex {
					where = fmt.Sprintf("page %d: section %s", s.page, s.tag)
				}
				return fail(where, "checksum mismatch")
			}
		}
		return nil
	}
	*verify = checkSums
	// A check below that fails is reported as a checksum's mismatch where there is one.
	defer func() {
		if errOut != nil {
			if err := checkSums(nil); err != nil {
				errOut = err
			}
		}
	}()
	ix.Text = secs[key{"TEXT", -1}].data
	copy(ix.Code[:], secs[key{"ALPH", -1}].data)
	if v2 {
		for _, s := range int32View(secs[key{"STRT", -1}].data) {
			ix.Starts = append(ix.Starts, int64(s))
		}
	} else {
		for _, s := range uint64View(secs[key{"STRT", -1}].data) {
			ix.Starts = append(ix.Starts, int64(min(s, 1<<63-1)))
		}
	}
	for p := range ix.Pages {
		pg := &ix.Pages[p]
		sec := func(tag string) []byte { return secs[key{tag, p}].data }
		pg.SA = int32View(sec("SUFA"))
		pg.Occ = uint64View(sec("OCCB"))
		pg.LCPBytes = sec("LCPB")
		pg.LCPRows = int32View(sec("LCPX"))
		pg.LCPValues = int32View(sec("LCPV"))
		pg.LCPMin1 = int32View(sec("LCM1"))
		pg.LCPMin2 = int32View(sec("LCM2"))
		pg.Kmers = int32View(sec("KMER"))
		pg.Keys = int32View(sec("KEYS"))
		if !v2 {
			pg.Tail = int32View(sec("TAIL"))
		}
	}
	names := secs[key{"NAME", -1}].data
	if len(names) > 0 && names[len(names)-1] != '\n' || uint64(bytes.Count(names, []byte{'\n'})) != records {
		return nil, fail("section NAME", "want %d names, each ending in a newline", records)
	}
	ix.Names = make([]string, 0, records)
	for len(names) > 0 {
		i := bytes.IndexByte(names, '\n')
		ix.Names = append(ix.Names, string(names[:i]))
		names = names[i+1:]
	}
	if err := ix.checkRecords(); err != nil {
		return nil, &IndexError{Name: name, Where: "section STRT", Err: fmt.Errorf("%w: %v", ErrIndexDamaged, err)}
	}
	if err := ix.checkAlphabet(); err != nil {
		return nil, &IndexError{Name: name, Where: "section ALPH", Err: fmt.Errorf("%w: %v", ErrIndexDamaged, err)}
	}
	return ix, nil
}

// checkRecords checks that the records tile the text with one separator between neighbours.
func (ix *Index) checkRecords() error {
	n := int64(len(ix.Text))
	for i, s := range ix.Starts {
		switch {
		case i == 0 && s != 0:
			return fmt.Errorf("record 1 starts at %d, not 0", s)
		case i > 0 && (s <= ix.Starts[i-1] || s > n):
			return fmt.Errorf("record %d starts at %d, after %d, in a text of %d", i+1, s, ix.Starts[i-1], n)
		case i > 0 && ix.Text[s-1] != 1:
			return fmt.Errorf("no separator before record %d", i+1)
		}
	}
	return nil
}

// checkAlphabet checks that the matchable bytes have the codes 2..sigma-1 in byte order.
func (ix *Index) checkAlphabet() error {
	next := 2
	for c, code := range ix.Code {
		switch {
		case code == 1:
		case int(code) != next || c == 0:
			return fmt.Errorf("byte %#x has code %d", c, code)
		default:
			next++
		}
	}
	if next != ix.Sigma {
		return fmt.Errorf("%d codes in use, the header says %d", next, ix.Sigma)
	}
	return nil
}

// Int32View returns b's little-endian int32 values (an index file's arrays): b's memory where the
// host is little-endian and b aligned, else a copy.
func Int32View(b []byte) []int32 { return int32View(b) }

// int32View returns b as int32s, in place when the host is little-endian and b is aligned.
func int32View(b []byte) []int32 {
	if len(b) == 0 {
		return nil
	}
	if littleEndian && uintptr(unsafe.Pointer(unsafe.SliceData(b)))%4 == 0 {
		return unsafe.Slice((*int32)(unsafe.Pointer(unsafe.SliceData(b))), len(b)/4)
	}
	s := make([]int32, len(b)/4)
	for i := range s {
		s[i] = int32(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return s
}

// uint64View returns b as uint64s, in place when the host is little-endian and b is aligned.
func uint64View(b []byte) []uint64 {
	if len(b) == 0 {
		return nil
	}
	if littleEndian && uintptr(unsafe.Pointer(unsafe.SliceData(b)))%8 == 0 {
		return unsafe.Slice((*uint64)(unsafe.Pointer(unsafe.SliceData(b))), len(b)/8)
	}
	s := make([]uint64, len(b)/8)
	for i := range s {
		s[i] = binary.LittleEndian.Uint64(b[8*i:])
	}
	return s
}

// int32Bytes returns the little-endian bytes of s, in place on a little-endian host.
func int32Bytes(s []int32) []byte {
	if len(s) == 0 {
		return nil
	}
	if littleEndian {
		return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), 4*len(s))
	}
	b := make([]byte, 0, 4*len(s))
	for _, v := range s {
		b = binary.LittleEndian.AppendUint32(b, uint32(v))
	}
	return b
}

// uint64Bytes returns the little-endian bytes of s, in place on a little-endian host.
func uint64Bytes(s []uint64) []byte {
	if len(s) == 0 {
		return nil
	}
	if littleEndian {
		return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), 8*len(s))
	}
	b := make([]byte, 0, 8*len(s))
	for _, v := range s {
		b = binary.LittleEndian.AppendUint64(b, v)
	}
	return b
}

// IndexFile is an index file opened for reading, its bytes memory-mapped where the system allows
// (read into memory otherwise).
type IndexFile struct {
	*Index
	Size   int64 // bytes in the file
	Mapped bool  // the file is memory-mapped, not read
	unmap  func() error
}

// OpenIndex opens and checks the index file at path (see ParseIndex), checking the checksums on
// up to threads goroutines (0: all cores).
func OpenIndex(path string, threads int) (*IndexFile, error) {
	f, verify, err := OpenIndexLate(path, threads)
	if err != nil {
		return nil, err
	}
	if err := verify(nil); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// OpenIndexLate is OpenIndex with the checksums left to the returned function (see
// ParseIndexLate).
func OpenIndexLate(path string, threads int, skip ...string) (*IndexFile, func(visit ChunkVisit) error, error) {
	if threads <= 0 {
		threads = runtime.NumCPU()
	}
	data, unmap, mapped, err := mapFile(path)
	if err != nil {
		return nil, nil, err
	}
	ix, verify, err := ParseIndexLate(path, data, threads, skip...)
	if err != nil {
		unmap()
		return nil, nil, err
	}
	return &IndexFile{Index: ix, Size: int64(len(data)), Mapped: mapped, unmap: unmap}, verify, nil
}

// Close releases the file's memory. Nothing of its Index may be used afterwards.
func (f *IndexFile) Close() error {
	if f.unmap == nil {
		return nil
	}
	err := f.unmap()
	f.unmap = nil
	f.Index = nil
	return err
}
