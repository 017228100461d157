package formats

// The index file of `sapipe index`: one reference, encoded and indexed once, loaded by later runs
// (`sapipe mummer --index`, `sapipe count`, `sapipe locate`) by memory-mapping it, so that they
// start without building anything.
//
// Version 2 (version 1 had no KEYS section). All integers are little-endian; CRC32C is CRC-32 with the Castagnoli polynomial (as
// in the BWT stream). The file is a header, a section table and the sections:
//
//	header = 64 bytes:
//	    0  6  magic "SAPIDX"
//	    6  2  version, 2
//	    8  4  flags: bit 0 set when the reference was encoded with -n (only a, c, g, t match);
//	          the other bits are 0 (a reader rejects any other value)
//	   12  4  number of sections k, 1..64
//	   16  8  n, the text length in codes (records and the separators between them), 1..2^31-2
//	   24  4  number of records, 1..n+1
//	   28  4  sigma, the number of codes in use (codes 0..sigma-1), 2..256
//	   32  8  length of the whole file in bytes
//	   40  4  K, the length of the k-mers of the KMER section, 0..12 (0: the table is empty)
//	   44 16  zero
//	   60  4  CRC32C of header bytes 0..59
//	table  = k entries of 32 bytes, then the CRC32C of the k entries (4 bytes):
//	    0  4  tag, four ASCII bytes naming the section
//	    4  4  element size: 1, 4 or 8 bytes
//	    8  8  offset of the section from the start of the file, a multiple of 64
//	   16  8  length of the section in bytes, a multiple of the element size
//	   24  4  checksum: the section is cut into chunks of 1 MiB (the last one shorter); the
//	          checksum is the CRC32C of the chunks' CRC32Cs, each as 4 bytes, in order (so a
//	          reader checks the chunks on all its cores at once)
//	   28  4  zero
//	then the sections, each starting at its offset, in table order, without overlap; the bytes
//	between them are zero and the file ends where the last section does.
//
// Sections of version 2, each present exactly once (a reader rejects any other tag):
//
//	tag   elem  length           contents
//	NAME  1     any              the record names in order, each followed by '\n'
//	STRT  4     records          the offset of each record in TEXT: 0 first, strictly ascending
//	ALPH  1     256              the code of each byte value: 1 for bytes that never match;
//	                             matchable bytes get 2, 3, ... in byte order
//	TEXT  1     n                the reference text in codes: the records, lowercased and encoded,
//	                             one code 1 (a separator, which never matches) between neighbours
//	SUFA  4     n+1              the suffix array of TEXT with a row 0 for the empty suffix:
//	                             SUFA[0] = n, then the start of each suffix in sorted order
//	OCCB  8     see below        the rank structure of the BWT, in blocks of 128 rows: each
//	                             block holds the number of each matchable code (2..sigma-1) in
//	                             the rows before it, two 32-bit counts to a word, then the
//	                             block's BWT symbols as bit planes (bit t of the symbol of row
//	                             r in bit r%64 of word 2t+r/64 of the planes); (n+1)/128+1 blocks
//	                             of (sigma-1)/2 + 2*bits(sigma-1) words (sigma taken as >= 2)
//	LCPB  1     n+2              the LCP of each row with the row before (rows 0, 1 and n+1:
//	                             0), 255 meaning "255 or more: see LCPX"
//	LCPX  4     any              the rows whose LCPB is 255, ascending
//	LCPV  4     as LCPX          their LCP values
//	LCM1  4     ceil((n+2)/64)   the least LCP of each 64 rows
//	LCM2  4     ceil(LCM1/64)    the least of each 64 LCM1 values
//	KMER  4     2*(sigma-2)^K    the rows [lo, hi) of the suffixes that start with each string
//	                             of K matchable codes, the strings in order (code 2 first, the
//	                             first symbol most significant); 0, 0 for one that does not occur
//	KEYS  4     0 or n+1         the key of each row, for the search of count and locate (none
//	                             when KMER is empty or sigma < 4): the m symbols of the row's
//	                             suffix after its first K as digits in base sigma-2 (code 2 the
//	                             digit 0, the first most significant; digit 0 from a separator
//	                             or the end of the text on), m the most digits that fit in 31
//	                             bits (15 for DNA), times two, plus one when all m symbols are
//	                             there and matchable
//	NOTE  1     up to 64 KiB     text for people (what made the index); not used
//
// The BWT symbol of row r is TEXT[SUFA[r]-1], or 0 where SUFA[r] = 0. The header and the table
// are checked before anything else is read, so a damaged length never makes a reader allocate
// or read much; every section's checksum is checked before its contents are used, and the
// contents are then checked for what the search needs to stay in bounds (a damaged or foreign
// file is an error, never a crash). A later, incompatible layout gets a new version number.

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"runtime"
	"sync"
	"unsafe"
)

// Index file constants.
const (
	IndexMagic   = "SAPIDX"
	IndexVersion = 2
	// MaxIndexText is the longest text an index holds: positions are 32-bit, and the suffix
	// array has a row more than the text.
	MaxIndexText = 1<<31 - 2

	indexHeaderLen = 64
	indexEntryLen  = 32
	indexAlign     = 64
	indexChunk     = 1 << 20
	indexMaxSecs   = 64
	indexMaxNote   = 64 << 10
	indexFlagNuc   = 1
	maxIndexKmer   = 12
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
	Where string // "header", "section table" or "section TAG"
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
	Starts          []int32  // offset of each record in Text
	Code            [256]byte
	Sigma           int    // codes in use
	Text            []byte // codes
	SA              []int32
	Occ             []uint64
	LCPBytes        []byte
	LCPRows         []int32
	LCPValues       []int32
	LCPMin1         []int32
	LCPMin2         []int32
	KmerLen         int     // K of the k-mer table
	Kmers           []int32 // the k-mer table: lo, hi of each k-mer
	Keys            []int32 // the key of each row (as uint32 bits), or none
	Note            string
}

// section is one entry of the table with its bytes.
type indexSection struct {
	tag  string
	elem int
	data []byte
	sum  uint32
	off  int64
}

// indexTags lists the sections of version 2 in the order the writer puts them.
var indexTags = []struct {
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
	data := map[string][]byte{
		"NOTE": []byte(ix.Note), "NAME": names, "STRT": int32Bytes(ix.Starts), "ALPH": ix.Code[:],
		"TEXT": ix.Text, "SUFA": int32Bytes(ix.SA), "OCCB": uint64Bytes(ix.Occ), "LCPB": ix.LCPBytes,
		"LCPX": int32Bytes(ix.LCPRows), "LCPV": int32Bytes(ix.LCPValues),
		"LCM1": int32Bytes(ix.LCPMin1), "LCM2": int32Bytes(ix.LCPMin2), "KMER": int32Bytes(ix.Kmers),
		"KEYS": int32Bytes(ix.Keys),
	}
	secs := make([]indexSection, len(indexTags))
	for i, t := range indexTags {
		secs[i] = indexSection{tag: t.tag, elem: t.elem, data: data[t.tag]}
	}
	return secs
}

// WriteIndex writes ix as an index file, computing the checksums on up to threads goroutines.
func WriteIndex(w io.Writer, ix *Index, threads int) error {
	if err := ix.checkShape(); err != nil {
		return err
	}
	if len(ix.Note) > indexMaxNote {
		return fmt.Errorf("index note of %d bytes (at most %d)", len(ix.Note), indexMaxNote)
	}
	secs := ix.sections()
	sums := sectionSums(secs, threads)
	off := alignUp(int64(indexHeaderLen + len(secs)*indexEntryLen + 4))
	for i := range secs {
		secs[i].sum = sums[i]
		secs[i].off = off
		off = alignUp(off + int64(len(secs[i].data)))
	}
	last := secs[len(secs)-1]
	fileLen := last.off + int64(len(last.data))

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
	binary.LittleEndian.PutUint32(head[60:], crc32.Checksum(head[:60], Castagnoli))
	for _, s := range secs {
		var e [indexEntryLen]byte
		copy(e[:4], s.tag)
		binary.LittleEndian.PutUint32(e[4:], uint32(s.elem))
		binary.LittleEndian.PutUint64(e[8:], uint64(s.off))
		binary.LittleEndian.PutUint64(e[16:], uint64(len(s.data)))
		binary.LittleEndian.PutUint32(e[24:], s.sum)
		head = append(head, e[:]...)
	}
	head = binary.LittleEndian.AppendUint32(head, crc32.Checksum(head[indexHeaderLen:], Castagnoli))
	head = head[:secs[0].off] // zero padding up to the first section
	if _, err := w.Write(head); err != nil {
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

// checkShape checks the lengths that the header and the reader rely on, so that the writer never
// writes a file its reader would refuse.
func (ix *Index) checkShape() error {
	n := len(ix.Text)
	switch {
	case n < 1 || n > MaxIndexText:
		return fmt.Errorf("index of a text of %d codes (1..%d)", n, MaxIndexText)
	case len(ix.Names) < 1 || len(ix.Names) > n+1 || len(ix.Starts) != len(ix.Names):
		return fmt.Errorf("index of %d records with %d starts", len(ix.Names), len(ix.Starts))
	case ix.Sigma < 2 || ix.Sigma > 256:
		return fmt.Errorf("index with an alphabet of %d codes", ix.Sigma)
	case ix.KmerLen < 0 || ix.KmerLen > maxIndexKmer:
		return fmt.Errorf("index with %d-mers", ix.KmerLen)
	case len(ix.SA) != n+1 || len(ix.LCPBytes) != n+2 || len(ix.LCPRows) != len(ix.LCPValues) ||
		len(ix.Keys) != 0 && len(ix.Keys) != n+1:
		return fmt.Errorf("index arrays of the wrong length for a text of %d codes", n)
	}
	for _, s := range ix.Names {
		if bytes.IndexByte([]byte(s), '\n') >= 0 {
			return fmt.Errorf("record name %q holds a newline", s)
		}
	}
	return nil
}

// sectionSums returns the checksum of each section, computing the chunks on up to threads
// goroutines.
func sectionSums(secs []indexSection, threads int) []uint32 {
	type chunk struct{ sec, i int }
	var chunks []chunk
	crcs := make([][]uint32, len(secs))
	for s := range secs {
		nc := (len(secs[s].data) + indexChunk - 1) / indexChunk
		crcs[s] = make([]uint32, nc)
		for i := range nc {
			chunks = append(chunks, chunk{s, i})
		}
	}
	var next sync.Mutex
	k := 0
	var wg sync.WaitGroup
	for range max(1, min(threads, len(chunks))) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				next.Lock()
				if k == len(chunks) {
					next.Unlock()
					return
				}
				c := chunks[k]
				k++
				next.Unlock()
				d := secs[c.sec].data
				crcs[c.sec][c.i] = crc32.Checksum(d[c.i*indexChunk:min((c.i+1)*indexChunk, len(d))], Castagnoli)
			}
		}()
	}
	wg.Wait()
	sums := make([]uint32, len(secs))
	for s, cs := range crcs {
		b := make([]byte, 0, 4*len(cs))
		for _, c := range cs {
			b = binary.LittleEndian.AppendUint32(b, c)
		}
		sums[s] = crc32.Checksum(b, Castagnoli)
	}
	return sums
}

func alignUp(x int64) int64 { return (x + indexAlign - 1) &^ (indexAlign - 1) }

// ParseIndex reads the index in data (a whole file; name is used in messages), checking the
// header, the table and every section's checksum on up to threads goroutines, and the records,
// names and alphabet (the codes of the text are for the text's user to check). The returned Index shares data's memory where the host's byte order and
// data's alignment allow, and copies the arrays otherwise. What the arrays hold beyond their
// lengths (the suffix array, the rank structure, the LCP) is for their user to check.
func ParseIndex(name string, data []byte, threads int) (*Index, error) {
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
	if v := binary.LittleEndian.Uint16(data[6:]); v != IndexVersion {
		return nil, &IndexError{Name: name, Err: fmt.Errorf("%w %d: this sapipe reads version %d (rebuild the index with this sapipe's sapipe index)", ErrIndexVersion, v, IndexVersion)}
	}
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
	switch {
	case flags&^indexFlagNuc != 0:
		return nil, fail("header", "unknown flags %#x", flags)
	case k < 1 || k > indexMaxSecs:
		return nil, fail("header", "%d sections (1..%d)", k, indexMaxSecs)
	case n < 1 || n > MaxIndexText:
		return nil, fail("header", "text length %d (1..%d)", n, MaxIndexText)
	case records < 1 || records > n+1:
		return nil, fail("header", "%d records for a text of %d", records, n)
	case sigma < 2 || sigma > 256:
		return nil, fail("header", "alphabet of %d codes (2..256)", sigma)
	case kmer > maxIndexKmer:
		return nil, fail("header", "%d-mers (0..%d)", kmer, maxIndexKmer)
	case !bytes.Equal(h[44:60], make([]byte, 16)):
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
	secs := make(map[string]*indexSection, k)
	list := make([]indexSection, k)
	end := uint64(tableEnd + 4)
	for i := range k {
		e := table[i*indexEntryLen : (i+1)*indexEntryLen]
		s := &list[i]
		s.tag = string(e[:4])
		where := fmt.Sprintf("section %d (%q)", i+1, s.tag)
		elem := uint64(binary.LittleEndian.Uint32(e[4:]))
		off := binary.LittleEndian.Uint64(e[8:])
		length := binary.LittleEndian.Uint64(e[16:])
		s.sum = binary.LittleEndian.Uint32(e[24:])
		want := -1
		for _, t := range indexTags {
			if t.tag == s.tag {
				want = t.elem
			}
		}
		switch {
		case want < 0:
			return nil, fail(where, "unknown section")
		case secs[s.tag] != nil:
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
		secs[s.tag] = s
	}
	if end != fileLen {
		return nil, fail("section table", "the sections end at byte %d, the file at %d", end, fileLen)
	}
	for _, t := range indexTags {
		if secs[t.tag] == nil {
			return nil, fail("section table", "no %s section", t.tag)
		}
	}
	// Lengths first (cheap), then the checksums of everything (one pass over the file).
	nn := int(n)
	lens := map[string]int{"STRT": 4 * int(records), "ALPH": 256, "TEXT": nn, "SUFA": 4 * (nn + 1), "LCPB": nn + 2,
		"LCM1": 4 * ((nn + 2 + 63) / 64)}
	lens["LCM2"] = 4 * ((lens["LCM1"]/4 + 63) / 64)
	for tag, want := range lens {
		if got := len(secs[tag].data); got != want {
			return nil, fail("section "+tag, "%d bytes, want %d", got, want)
		}
	}
	if got := len(secs["KEYS"].data); got != 0 && got != 4*(nn+1) {
		return nil, fail("section KEYS", "%d bytes, want 0 or %d", got, 4*(nn+1))
	}
	if len(secs["LCPX"].data) != len(secs["LCPV"].data) {
		return nil, fail("section LCPV", "%d bytes for %d in LCPX", len(secs["LCPV"].data), len(secs["LCPX"].data))
	}
	if len(secs["NOTE"].data) > indexMaxNote {
		return nil, fail("section NOTE", "%d bytes (at most %d)", len(secs["NOTE"].data), indexMaxNote)
	}
	sums := sectionSums(list, threads)
	for i, s := range list {
		if sums[i] != s.sum {
			return nil, fail("section "+s.tag, "checksum mismatch")
		}
	}
	ix := &Index{NucleotidesOnly: flags&indexFlagNuc != 0, Sigma: sigma, Note: string(secs["NOTE"].data)}
	ix.Text = secs["TEXT"].data
	copy(ix.Code[:], secs["ALPH"].data)
	ix.Starts = int32View(secs["STRT"].data)
	ix.SA = int32View(secs["SUFA"].data)
	ix.Occ = uint64View(secs["OCCB"].data)
	ix.LCPBytes = secs["LCPB"].data
	ix.LCPRows = int32View(secs["LCPX"].data)
	ix.LCPValues = int32View(secs["LCPV"].data)
	ix.LCPMin1 = int32View(secs["LCM1"].data)
	ix.LCPMin2 = int32View(secs["LCM2"].data)
	ix.KmerLen = int(kmer)
	ix.Kmers = int32View(secs["KMER"].data)
	ix.Keys = int32View(secs["KEYS"].data)
	names := secs["NAME"].data
	if len(names) > 0 && names[len(names)-1] != '\n' || bytes.Count(names, []byte{'\n'}) != int(records) {
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
	n := int32(len(ix.Text))
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
	if threads <= 0 {
		threads = runtime.NumCPU()
	}
	data, unmap, mapped, err := mapFile(path)
	if err != nil {
		return nil, err
	}
	ix, err := ParseIndex(path, data, threads)
	if err != nil {
		unmap()
		return nil, err
	}
	return &IndexFile{Index: ix, Size: int64(len(data)), Mapped: mapped, unmap: unmap}, nil
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
