// Package stages holds sapipe's composable pipeline steps: loading a reference, cutting query
// streams into batches, matching batches on a backend, and formatting results. Each step has one
// job; the commands in cmd/sapipe wire them together with the stream runtime.
package stages

import (
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"slices"
	"sync"

	"github.com/sapipe/sapipe/formats"
	"github.com/sapipe/sapipe/kernels"
)

// QueryBatch is a unit of matching work: segments of query sequences, with what is needed to print
// their results. Short records are packed many to a batch; a long record is cut into chunks, one
// batch each, that share the record's encoded sequence.
type QueryBatch struct {
	kernels.Batch
	Info []SegInfo // parallel to Batch.Segs
	Res  kernels.Result

	// Sequences not yet encoded into Batch.Codes: the source only copies them, and Encode runs
	// on a worker, so that reading the queries, the one step that cannot be split, stays light.
	raw     []byte
	recs    []rawRecord
	codeLen int
	names   []byte // the records' names, which SegInfo.Name points into (addRecord copies them)

	// Batches are formatted on the worker that matched them, into Out, except the pieces of a
	// long record under -mum, which need what came before them: the sink formats those.
	whole          bool
	Out            []byte
	records, bases int64 // records read whole in this batch, and their bases

	// A chunk of input (see chunks.go), parsed on a worker.
	chunk      formats.Chunk
	cr         *formats.ChunkReader
	blockChunk      // or the chunk is a block of a file, read on the worker
	file       int  // the chunk's file, in the source's paths
	ok         bool // ParseChunk accepted the chunk
	lines      int  // newlines in a ChunkReader's chunk (a block's file counts its own)
	scratch    []byte
	mums       []kernels.Match
	sub        []byte
}

// rawRecord is one sequence in QueryBatch.raw and where its strands go in Codes (rev < 0: the
// reverse strand is not matched; fwd < 0: nor the forward one).
type rawRecord struct{ raw, n, fwd, rev int }

// Encode fills Codes from the batch's raw sequences; a batch that has none is left as it is.
func (b *QueryBatch) Encode(e *kernels.QueryEncoder) {
	if len(b.recs) == 0 {
		return
	}
	b.Codes = slices.Grow(b.Codes[:0], b.codeLen)[:b.codeLen]
	for _, r := range b.recs {
		seq := b.raw[r.raw : r.raw+r.n]
		if r.fwd >= 0 {
			e.Fill(b.Codes[r.fwd:], seq, false)
		}
		if r.rev >= 0 {
			e.Fill(b.Codes[r.rev:], seq, true)
		}
	}
	b.recs, b.raw = b.recs[:0], b.raw[:0]
}

// SegInfo tells the printer where a segment belongs.
type SegInfo struct {
	Name    []byte // into the batch's names (or an earlier buffer of them, where they grew)
	Reverse bool
	First   bool // first segment of its sequence: print the header
	Last    bool // last segment of its sequence
}

// Strands says which query strands are matched.
type Strands struct{ Forward, Reverse bool }

// count is how many strands of each query are matched.
func (st Strands) count() int {
	n := 0
	for _, on := range []bool{st.Forward, st.Reverse} {
		if on {
			n++
		}
	}
	return n
}

// QuerySource reads query files in order and cuts them into QueryBatches, which Encode turns into
// codes (on a worker) before they are matched.
type QuerySource struct {
	paths     []string
	alpha     *kernels.Alphabet
	strands   Strands
	nucOnly   bool
	batchSize int

	file    int
	rd      *formats.Reader
	nrec    int // records read from the current file
	pending *formats.Record
	chunks  []*QueryBatch // batches of a long record not yet handed out
	Bases   int64         // query bases read so far
	Records int64
	Stdin   io.Reader // read for the path "-"; nil: os.Stdin
	enc     *kernels.QueryEncoder
	threads int // goroutines that encode a long record (splitLong); 0 or 1: the caller's
	// codeMem, when set, holds the codes of chunks' batches (the matcher's, kernels.CodeMemory).
	codeMem kernels.CodeMemory
}

// growCodes is slices.Grow(codes, n), into s.codeMem where it is set and codes lacks the room
// (a record's codes: a batch's are made the matcher's once, by ownCodes).
func (s *QuerySource) growCodes(codes []byte, n int) []byte {
	if s.codeMem != nil && cap(codes)-len(codes) < n {
		return s.codeMem.GrowCodes(codes, n)
	}
	return slices.Grow(codes, n)
}

// ownCodes is growCodes for a batch's codes as it starts: into s.codeMem whether or not codes has
// the room, so that a batch made before the matcher had memory to give (a GPU still loading its
// index) is moved into it the next time round.
func (s *QuerySource) ownCodes(codes []byte, n int) []byte {
	if s.codeMem != nil {
		return s.codeMem.GrowCodes(codes, n)
	}
	return slices.Grow(codes, n)
}

// resume makes s read on from rd, which reads file (an index in paths) after nrec of its records.
func (s *QuerySource) resume(file int, rd *formats.Reader, nrec int) {
	s.file, s.rd, s.nrec = file, rd, nrec
}

// NewQuerySource returns a source over paths ("-" is stdin). batchSize is the number of query
// bases (per strand) a batch aims at; a longer record is cut into chunks of that size.
func NewQuerySource(paths []string, alpha *kernels.Alphabet, strands Strands, nucleotidesOnly bool, batchSize int) *QuerySource {
	return &QuerySource{paths: paths, alpha: alpha, strands: strands, nucOnly: nucleotidesOnly, batchSize: max(batchSize, 1),
		enc: kernels.NewQueryEncoder(alpha, nucleotidesOnly)}
}

// Close closes the file being read.
func (s *QuerySource) Close() error {
	if s.rd != nil {
		err := s.rd.Close()
		s.rd = nil
		return err
	}
	return nil
}

// nextRecord returns the next query record across files, or io.EOF after the last.
func (s *QuerySource) nextRecord() (*formats.Record, error) {
	if s.pending != nil {
		r := s.pending
		s.pending = nil
		return r, nil
	}
	for {
		if s.rd == nil {
			if s.file == len(s.paths) {
				return nil, io.EOF
			}
			rd, err := openInput(s.paths[s.file], s.Stdin)
			if err != nil {
				return nil, err
			}
			s.rd, s.nrec = rd, 0
		}
		rec, err := s.rd.Next()
		if err == nil {
			s.nrec++
			s.Records++
			s.Bases += int64(len(rec.Seq))
			return rec, nil
		}
		if !errors.Is(err, io.EOF) {
			return nil, err
		}
		name := s.rd.Name()
		s.Close()
		s.file++
		if s.nrec == 0 {
			return nil, fmt.Errorf("%s: no sequences in multiple fasta file", name)
		}
	}
}

// addRecord appends the segments of one record to b, and its sequence to b's raw sequences to
// be encoded by Encode, or, with encodeNow, its codes straight to b.Codes.
func (s *QuerySource) addRecord(b *QueryBatch, name []byte, seq []byte, cut int, encodeNow bool) {
	// The name is copied into the batch's names: out of a reader's reused buffers, and out of a
	// chunk while it is in the cache (the formatting, long after, read each from its chunk: a
	// cache miss a record, 3.9 of 83 CPU-s of 100 M reads on two H200, 1.6 of 6 in the VM's
	// BenchmarkMummerHost).
	k := len(b.names)
	b.names = append(b.names, name...)
	name = b.names[k:len(b.names):len(b.names)]
	n := len(seq)
	r := rawRecord{raw: len(b.raw), n: n, fwd: -1, rev: -1}
	if !encodeNow {
		b.raw = append(b.raw, seq...)
	}
	for _, rev := range []bool{false, true} {
		if (!rev && !s.strands.Forward) || (rev && !s.strands.Reverse) {
			continue
		}
		off := b.codeLen
		b.codeLen += n
		if encodeNow {
			b.Codes = s.growCodes(b.Codes, n)[:b.codeLen]
			s.fill(b.Codes[off:off+n], seq, rev)
		}
		if rev {
			r.rev = off
		} else {
			r.fwd = off
		}
		for from := 0; ; from += cut {
			to := min(from+cut, n)
			b.Segs = append(b.Segs, kernels.Segment{Off: off, Len: n, From: from, To: to})
			b.Info = append(b.Info, SegInfo{Name: name, Reverse: rev, First: from == 0, Last: to == n})
			if to == n {
				break
			}
		}
	}
	if !encodeNow {
		b.recs = append(b.recs, r)
	}
}

// fillPart is the least a goroutine of fill encodes: below it, starting one costs more than it saves.
const fillPart = 1 << 22

// fill is s.enc.Fill, on up to s.threads goroutines for a long sequence: a genome-long record is
// encoded before any of it is matched, while every other core waits, and its codes' first
// writes fault in fresh pages.
func (s *QuerySource) fill(dst, seq []byte, rev bool) {
	n := len(seq)
	parts := min(max(s.threads, 1), n/fillPart)
	if parts <= 1 {
		s.enc.Fill(dst, seq, rev)
		return
	}
	var wg sync.WaitGroup
	for i := range parts {
		a, b := n*i/parts, n*(i+1)/parts
		d := dst[a:b]
		if rev {
			d = dst[n-b : n-a] // seq[a:b] reversed lands there
		}
		wg.Go(func() { s.enc.Fill(d, seq[a:b], rev) })
	}
	wg.Wait()
}

// Next returns the next batch, or io.EOF.
func (s *QuerySource) Next() (*QueryBatch, error) {
	if len(s.chunks) > 0 {
		b := s.chunks[0]
		s.chunks = s.chunks[1:]
		return b, nil
	}
	b := &QueryBatch{whole: true}
	bases := 0
	records, read := s.Records, s.Bases
	defer func() { b.records, b.bases = s.Records-records, s.Bases-read }()
	for bases < s.batchSize {
		rec, err := s.nextRecord()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		if len(rec.Seq) > s.batchSize {
			if len(b.Segs) > 0 {
				s.pending = rec // keep it for the next call; the reader's buffers are not reused until then
				s.keepPending()
				break
			}
			b = s.splitLong(rec)
			return b, nil
		}
		s.addRecord(b, rec.Name, rec.Seq, max(min(len(rec.Seq), s.pieceSize()), 1), false)
		bases += max(len(rec.Seq), 1)
	}
	if len(b.Segs) == 0 {
		return nil, io.EOF
	}
	return b, nil
}

// keepPending copies the pending record out of the reader's reused buffers.
func (s *QuerySource) keepPending() {
	r := s.pending
	s.pending = &formats.Record{Name: append([]byte(nil), r.Name...), Seq: append([]byte(nil), r.Seq...)}
}

// piecesPerBatch is how many pieces a long sequence's batch is cut into, so that a backend has
// several independent searches to interleave (kernels/cpu walks 8 at once), as it has with reads.
const piecesPerBatch = 16

// pieceSize is the length that sequences are cut into within a batch.
func (s *QuerySource) pieceSize() int { return max(s.batchSize/piecesPerBatch, 1) }

// splitLong encodes a long record once and cuts it into batches of piecesPerBatch pieces, all
// sharing the codes.
func (s *QuerySource) splitLong(rec *formats.Record) *QueryBatch {
	whole := &QueryBatch{}
	// Reading the record grew the reader's buffer step by step: give those steps' memory back
	// before the codes take more, once per long record (a collection costs little next to
	// matching a record this long). Otherwise a genome-long query's peak is the index, the
	// record, its codes and the garbage of its reading all at once.
	debug.FreeOSMemory()
	// Encoded once, here, straight from the record: the chunks share the codes, allocated at
	// their exact size (a genome-long query would otherwise leave a grown slice's slack behind).
	whole.Codes = make([]byte, 0, s.strands.count()*len(rec.Seq))
	s.addRecord(whole, rec.Name, rec.Seq, s.pieceSize(), true)
	// The reader's buffer held the raw record, as long as the record: let it go rather than keep
	// it for records to come, most of which are shorter.
	if s.rd != nil {
		s.rd.ReleaseBuffers(1 << 20)
	}
	for i := 0; i < len(whole.Segs); i += piecesPerBatch {
		j := min(i+piecesPerBatch, len(whole.Segs))
		s.chunks = append(s.chunks, &QueryBatch{
			Batch: kernels.Batch{Codes: whole.Codes, Segs: whole.Segs[i:j:j]},
			Info:  whole.Info[i:j:j],
		})
	}
	b := s.chunks[0]
	s.chunks = s.chunks[1:]
	return b
}
