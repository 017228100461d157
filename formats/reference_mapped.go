package formats

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"sync"
	"sync/atomic"
)

// readReferenceMapped reads a plain FASTA file on opts.Threads goroutines (see the top of
// reference.go). ok is false when the file is not one it reads (not a regular file, not mappable,
// compressed, FASTQ): the stream reader then reads it from its start.
func readReferenceMapped(name string, f *os.File, opts *ReferenceOptions) (t *ReferenceText, ok bool, err error) {
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() || st.Size() == 0 || int64(int(st.Size())) != st.Size() {
		return nil, false, nil
	}
	data, unmap := mapReadOnly(f, int(st.Size()))
	if data == nil {
		return nil, false, nil
	}
	defer unmap()
	if compression(data[:min(len(data), 10)]) != "" {
		return nil, false, nil
	}
	k := firstNonSpace(data)
	if k < 0 {
		return nil, true, noSequences(name)
	}
	if data[k] == '@' {
		return nil, false, nil // FASTQ: Reader's
	}
	t, err = parseMappedFASTA(name, data, opts)
	return t, true, err
}

// refChunk is what the first pass learns of a piece of a FASTA file.
type refChunk struct {
	seq  int       // sequence bytes
	gts  []int     // offsets of the '>' of the records that start in it
	seen [256]bool // the bytes of its sequences (and maybe white space)
}

// parseMappedFASTA reads the FASTA file data (mapped) on opts.Threads goroutines.
func parseMappedFASTA(name string, data []byte, opts *ReferenceOptions) (*ReferenceText, error) {
	cuts, err := cutFASTA(data, opts.ChunkSize, opts.Threads)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	chunks := make([]refChunk, len(cuts)-1)
	err = forEach(opts.Threads, len(chunks), func(i int) {
		piece := data[cuts[i]:cuts[i+1]]
		populate(piece, false)
		var seen [256]bool // here, not in chunks: neighbours' stores would share cache lines
		var c refChunk
		walkFASTA(piece,
			func(b []byte) { c.seq += countSeq(b, &seen) },
			func(_ []byte, at int) { c.gts = append(c.gts, at) })
		c.seen = seen
		chunks[i] = c
		dropPages(data, cuts[i], cuts[i+1])
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}

	var seenRaw [256]bool
	records, seq := 0, 0
	firstChunk := -1 // the chunk where the first record starts
	for i := range chunks {
		c := &chunks[i]
		for b, ok := range c.seen {
			seenRaw[b] = seenRaw[b] || ok
		}
		if len(c.gts) > 0 && firstChunk < 0 {
			firstChunk = i
		}
		records += len(c.gts)
		seq += c.seq
	}
	if records == 0 {
		return nil, noSequences(name)
	}
	if records == 1 && seq == 0 {
		at := cuts[firstChunk] + chunks[firstChunk].gts[0]
		return nil, emptyFASTA(name, 1+bytes.Count(data[:at], []byte{'\n'}))
	}

	comp, sep := codeTable(opts, &seenRaw)
	t := &ReferenceText{
		Text:   make([]byte, seq+records-1),
		Starts: make([]int, records),
		Names:  make([]string, records),
	}
	// Where each chunk's text and records go: every record but the first brings a separator.
	places := make([]piecePlace, len(chunks)+1)
	for i, c := range chunks {
		n := c.seq + len(c.gts)
		if i == firstChunk {
			n-- // no separator before the first record
		}
		places[i+1] = piecePlace{places[i].text + n, places[i].rec + len(c.gts)}
	}
	var mismatch atomic.Bool
	err = forEach(opts.Threads, len(chunks), func(i int) {
		piece := data[cuts[i]:cuts[i+1]]
		dst := t.Text[places[i].text:places[i+1].text]
		populate(piece, false)
		populate(dst, true)
		if !places[i].write(piece, chunks[i].gts, dst, t, &comp, sep) {
			mismatch.Store(true)
		}
		chunks[i].gts = nil
		dropPages(data, cuts[i], cuts[i+1])
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if mismatch.Load() {
		// The two passes read different bytes: the file changed under the mapping.
		return nil, fmt.Errorf("%s: %w", name, errFileChanged)
	}
	return t, nil
}

// piecePlace is where a piece's text and records go.
type piecePlace struct{ text, rec int }

// write writes the codes of piece, whose records start at the offsets gts, to dst (the piece's
// place in t.Text, exactly as long as the first pass counted), and its records' starts and
// names to t. It reports false, having stopped, when piece does not hold what the first pass
// found (the file changed meanwhile), so that nothing is written out of place.
func (p piecePlace) write(piece []byte, gts []int, dst []byte, t *ReferenceText, comp *[256]byte, sep byte) bool {
	w, from := 0, 0
	seq := func(b []byte) bool {
		for len(b) > 0 {
			win := b[:min(len(b), walkWindow)]
			if len(dst)-w < len(win) && len(dst)-w < nonSpaceCount(win) {
				return false
			}
			w += translateSeq(dst[w:], win, comp)
			b = b[len(win):]
		}
		return true
	}
	for k, gt := range gts {
		if gt < from || gt >= len(piece) || piece[gt] != '>' || !seq(piece[from:gt]) {
			return false
		}
		r := p.rec + k
		if r > 0 {
			if w == len(dst) {
				return false
			}
			dst[w] = sep
			w++
			t.Starts[r] = p.text + w
		}
		h := piece[gt+1:]
		n := nonSpaceRun(h)
		t.Names[r] = string(h[:n])
		from = len(piece)
		if e := bytes.IndexByte(h[n:], '\n'); e >= 0 {
			from = gt + 1 + n + e + 1
		}
	}
	return seq(piece[from:]) && w == len(dst)
}

// cutFASTA returns where to cut data, a FASTA input, into pieces of about size bytes that can be
// parsed on their own: 0, the cuts in increasing order, len(data).
//
// A piece can be parsed on its own when it starts outside every header line: from there, every
// '>' starts a record and every other non-space byte is sequence, of the record before the piece
// up to its first '>'. What a position is follows from the last '\n' or '>' before it: after a
// '\n' a header has ended (a header line ends at its first '\n') and a new one starts only at a
// '>'; after a '>' with no '\n' since, a header line runs on (that '>' started one, or was inside
// one). With no '\n' or '>' before it, a position is in the text before the first record. So the
// data is cut into blocks of size bytes, the last '\n' or '>' of each block is found in parallel
// (from its end; normally a line's length away), and a block's start is a cut when the last of
// those before it is a '\n' (or there is none); when it is a '>', the cut moves to just after the
// next '\n', or is left out when the header line runs past the next block's start.
func cutFASTA(data []byte, size, threads int) ([]int, error) {
	n := len(data)
	blocks := n / size
	if n%size != 0 {
		blocks++
	}
	if blocks <= 1 {
		return []int{0, n}, nil
	}
	last := make([]byte, blocks-1) // the last '\n' or '>' of block j, 0 for none
	err := forEach(threads, (blocks-1+1023)/1024, func(g int) {
		for j := g * 1024; j < min(g*1024+1024, blocks-1); j++ {
			last[j] = lastLineMark(data[j*size : (j+1)*size])
		}
	})
	if err != nil {
		return nil, err
	}
	cuts := []int{0}
	inHeader := false
	for j := 1; j < blocks; j++ {
		switch last[j-1] {
		case '\n':
			inHeader = false
		case '>':
			inHeader = true
		}
		at := j * size
		if inHeader {
			k := bytes.IndexByte(data[at:min(at+size, n)], '\n')
			if k < 0 {
				continue
			}
			at += k + 1
		}
		if at > cuts[len(cuts)-1] && at < n {
			cuts = append(cuts, at)
		}
	}
	return append(cuts, n), nil
}

// lastLineMark returns the last '\n' or '>' of b, or 0 when it holds neither.
func lastLineMark(b []byte) byte {
	for i := len(b) - 1; i >= 0; i-- {
		if c := b[i]; c == '\n' || c == '>' {
			return c
		}
	}
	return 0
}

// errFileChanged is the error for a fault in reading a mapped file: it was truncated meanwhile.
var errFileChanged = errors.New("the file changed while it was read")

// forEach calls fn(0), ..., fn(n-1) on up to threads goroutines. A fault in reading mapped memory
// (the file truncated meanwhile) stops it with errFileChanged instead of crashing.
func forEach(threads, n int, fn func(i int)) error {
	var next atomic.Int64
	var failed atomic.Bool
	var wg sync.WaitGroup
	for range max(min(threads, n), 1) {
		wg.Go(func() {
			defer func() {
				if r := recover(); r != nil {
					if _, fault := r.(interface{ Addr() uintptr }); !fault {
						panic(r)
					}
					failed.Store(true)
				}
			}()
			debug.SetPanicOnFault(true)
			for !failed.Load() {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				fn(i)
			}
		})
	}
	wg.Wait()
	if failed.Load() {
		return errFileChanged
	}
	return nil
}
