package stages

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"sync"

	"github.com/sapipe/sapipe/formats"
)

// SplitOptions say where Split cuts a read set. Exactly one of Shards, Records and Bytes is set.
type SplitOptions struct {
	// Shards asks for exactly this many shards with about equal numbers of bases. The input is
	// read twice (once to count), so it must be a file.
	Shards int
	// Records asks for shards of this many records, the last one fewer.
	Records int
	// Bytes asks for shards of at most this many input bytes (after decompression), unless a
	// single record is larger.
	Bytes int64
	// Writers is the number of shards written (compressed) at once; at least 1.
	Writers int
}

// ShardCreator opens shard i (0 first) for writing. Split calls Close once the shard is complete,
// or to abandon it after an error (Split then returns the error).
type ShardCreator func(i int) (io.WriteCloser, error)

// Split cuts the FASTA or FASTQ records of path ("-" is stdin) into consecutive shards, in order
// and byte for byte (see formats.RawReader): the shards' decompressed bytes put together are the
// input's decompressed bytes. Each shard is a valid input on its own and gives the records it
// holds, so `sapipe mummer` over each shard, outputs put together in shard order, prints exactly
// what one run over the whole input prints.
//
// One rule keeps that true: MUMmer refuses a FASTA file whose only record is empty, so an empty
// FASTA record always travels with the record after it (or, at the end, with the record before
// it), and no shard is a lone empty record. Split returns the number of shards written.
func Split(ctx context.Context, path string, stdin io.Reader, opts SplitOptions, create ShardCreator) (int, error) {
	modes := 0
	for _, set := range []bool{opts.Shards > 0, opts.Records > 0, opts.Bytes > 0} {
		if set {
			modes++
		}
	}
	if modes != 1 {
		return 0, errors.New("split: want exactly one of shards, records and bytes")
	}
	var want units
	if opts.Shards > 0 {
		if path == "-" {
			return 0, errors.New("stdin: -n needs a file, which is read twice (to count, then to split); for stdin use --records or --bytes")
		}
		var err error
		if want, err = countUnits(ctx, path); err != nil {
			return 0, err
		}
		if want.n < int64(opts.Shards) {
			return 0, fmt.Errorf("%s: %d records (empty FASTA records counted with the next) are too few for %d shards", path, want.n, opts.Shards)
		}
	}
	src, err := openUnits(path, stdin)
	if err != nil {
		return 0, err
	}
	defer src.close()

	w := &shardWriters{sem: make(chan struct{}, max(opts.Writers, 1)), create: create}
	var (
		k            = -1 // current shard
		cur          *asyncShard
		curRecs      int64
		curBytes     int64
		seen         units // before the current unit
		basesPerDone = func(k int) bool {
			// Has the shard k reached its share of the bases? seen.bases*N >= (k+1)*total.
			hi1, lo1 := bits.Mul64(uint64(seen.bases), uint64(opts.Shards))
			hi2, lo2 := bits.Mul64(uint64(k+1), uint64(want.bases))
			return hi1 > hi2 || hi1 == hi2 && lo1 >= lo2
		}
	)
	fail := func(err error) (int, error) {
		if cur != nil {
			cur.finish()
		}
		w.wait()
		return 0, err
	}
	for {
		if seen.n%1024 == 0 && ctx.Err() != nil {
			return fail(ctx.Err())
		}
		ok, err := src.next()
		if err != nil {
			return fail(err)
		}
		if !ok {
			break
		}
		if cur != nil {
			var cut bool
			switch {
			case opts.Records > 0:
				cut = curRecs >= int64(opts.Records)
			case opts.Bytes > 0:
				cut = curBytes+src.size() > opts.Bytes
			default:
				after := int64(opts.Shards - 1 - k) // shards still to open
				left := want.n - seen.n             // units still to write, this one included
				cut = after > 0 && (left <= after || basesPerDone(k))
			}
			if cut {
				cur.finish()
				cur = nil
			}
		}
		if cur == nil {
			k++
			if cur, err = w.open(k); err != nil {
				return fail(err)
			}
			curRecs, curBytes = 0, 0
		}
		for _, p := range src.parts {
			cur.write(p)
		}
		curRecs += src.recs
		curBytes += src.size()
		seen.n++
		seen.bases += src.bases
	}
	if cur == nil {
		return fail(fmt.Errorf("%s: no records to split", src.rd.Name()))
	}
	cur.write(src.tail)
	cur.finish()
	if err := w.wait(); err != nil {
		return 0, err
	}
	if opts.Shards > 0 && (seen != want || k+1 != opts.Shards) {
		return 0, fmt.Errorf("%s: changed while being split", path)
	}
	return k + 1, nil
}

// units counts what unitSource returns.
type units struct{ n, bases int64 }

func countUnits(ctx context.Context, path string) (units, error) {
	src, err := openUnits(path, nil)
	if err != nil {
		return units{}, err
	}
	defer src.close()
	var u units
	for {
		if u.n%1024 == 0 && ctx.Err() != nil {
			return u, ctx.Err()
		}
		ok, err := src.next()
		if err != nil || !ok {
			return u, err
		}
		u.n++
		u.bases += src.bases
	}
}

// unitSource returns the records of a RawReader in units that a shard boundary may not cut: a
// record, with the empty FASTA records before it. The empty records after the last nonempty one
// (and the reader's trailer) form the tail, which belongs to the last shard; when there is no
// nonempty record at all, they are the one unit.
type unitSource struct {
	rd    *formats.RawReader
	parts [][]byte // the current unit's bytes, valid until the next call of next
	recs  int64    // records in the current unit
	bases int64
	tail  []byte // after next has returned false

	pend, spare []byte // empty FASTA records waiting for the next record
	pendRecs    int64
	units       int64
	done        bool
}

func openUnits(path string, stdin io.Reader) (*unitSource, error) {
	var rd *formats.RawReader
	var err error
	if path == "-" && stdin != nil {
		rd, err = formats.NewRawReader("-", stdin)
	} else {
		rd, err = formats.OpenRaw(path)
	}
	if err != nil {
		return nil, err
	}
	return &unitSource{rd: rd}, nil
}

func (u *unitSource) close() { u.rd.Close() }

func (u *unitSource) size() int64 {
	var n int64
	for _, p := range u.parts {
		n += int64(len(p))
	}
	return n
}

// next moves to the next unit; false at the end of the input.
func (u *unitSource) next() (bool, error) {
	if u.done {
		return false, nil
	}
	u.pend, u.spare = u.spare[:0], u.pend // the last unit's empty records have been written
	u.pendRecs = 0
	for {
		rec, err := u.rd.Next()
		if err == io.EOF {
			u.done = true
			if u.units == 0 && u.pendRecs > 0 {
				// Empty records only: they are one unit.
				u.parts = [][]byte{u.pend, u.rd.Trailer()}
				u.recs, u.bases = u.pendRecs, 0
				u.units++
				return true, nil
			}
			u.tail = append(u.pend, u.rd.Trailer()...)
			return false, nil
		}
		if err != nil {
			return false, err
		}
		if rec.SeqLen == 0 && !u.rd.FASTQ() {
			u.pend = append(u.pend, rec.Raw...)
			u.pendRecs++
			continue
		}
		u.parts = append(u.parts[:0], u.pend, rec.Raw)
		u.recs, u.bases = u.pendRecs+1, int64(rec.SeqLen)
		u.units++
		return true, nil
	}
}

// shardWriters runs the shards' writers on their own goroutines, at most cap(sem) at once, so
// that compressing one shard overlaps reading the next.
type shardWriters struct {
	sem    chan struct{}
	create ShardCreator
	mu     sync.Mutex
	err    error
	wg     sync.WaitGroup
}

const shardChunk = 1 << 20

var chunkPool = sync.Pool{New: func() any { b := make([]byte, 0, shardChunk); return &b }}

// asyncShard is one shard being written: chunks of bytes go to its goroutine through ch.
type asyncShard struct {
	ch  chan []byte
	buf []byte
}

func (w *shardWriters) open(i int) (*asyncShard, error) {
	w.sem <- struct{}{}
	w.mu.Lock()
	err := w.err
	w.mu.Unlock()
	if err != nil { // an earlier shard failed: stop early
		<-w.sem
		return nil, err
	}
	out, err := w.create(i)
	if err != nil {
		<-w.sem
		return nil, err
	}
	s := &asyncShard{ch: make(chan []byte, 4)}
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		var err error
		for b := range s.ch {
			if err == nil {
				_, err = out.Write(b)
			}
			b = b[:0]
			chunkPool.Put(&b)
		}
		if e := out.Close(); err == nil {
			err = e
		}
		<-w.sem
		if err != nil {
			w.mu.Lock()
			if w.err == nil {
				w.err = err
			}
			w.mu.Unlock()
		}
	}()
	return s, nil
}

// wait waits for every shard's goroutine and returns the first error.
func (w *shardWriters) wait() error {
	w.wg.Wait()
	return w.err
}

func (s *asyncShard) write(p []byte) {
	for len(p) > 0 {
		if s.buf == nil {
			s.buf = *chunkPool.Get().(*[]byte)
		}
		n := min(len(p), cap(s.buf)-len(s.buf))
		s.buf = append(s.buf, p[:n]...)
		p = p[n:]
		if len(s.buf) == cap(s.buf) {
			s.ch <- s.buf
			s.buf = nil
		}
	}
}

// finish hands over the last bytes and lets the shard's goroutine close it.
func (s *asyncShard) finish() {
	if len(s.buf) > 0 {
		s.ch <- s.buf
	}
	s.buf = nil
	close(s.ch)
}
