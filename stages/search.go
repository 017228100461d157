package stages

import (
	"bufio"
	"context"
	"errors"
	"io"
	"slices"
	"sync"
	"time"

	"github.com/sapipe/sapipe/formats"
	"github.com/sapipe/sapipe/kernels"
	"github.com/sapipe/sapipe/stream"
)

// SearchOptions are the options of `sapipe count` and `sapipe locate`.
type SearchOptions struct {
	Strands   Strands // which strands of each pattern are searched
	Locate    bool    // print every occurrence, not only their number
	Threads   int     // workers searching batches
	BatchSize int     // pattern bases per batch
	Progress  *Progress
}

// PatternBatch is a unit of search work: a run of records as read (sequences and names), their
// encoded patterns (one per strand searched, forward first; Encode makes them, on a worker), and
// the hits.
type PatternBatch struct {
	Seqs     []byte
	SeqEnds  []int // record i's sequence is Seqs[SeqEnds[i-1]:SeqEnds[i]]
	Names    []byte
	NameEnds []int // record i's name is Names[NameEnds[i-1]:NameEnds[i]]
	Pats     kernels.Patterns
	Hits     kernels.Hits

	src            *PatternSource
	records, bases int64 // read up to and with this batch, for progress
}

// Encode encodes the batch's records into Pats, against the source's alphabet and strands.
func (b *PatternBatch) Encode() {
	s := b.src
	b.Pats.Reset()
	fwd, rev := &s.codes[0], &s.codes[1]
	from := 0
	for _, end := range b.SeqEnds {
		seq := b.Seqs[from:end]
		from = end
		if s.strands.Forward {
			n := len(b.Pats.Codes)
			b.Pats.Codes = slices.Grow(b.Pats.Codes, len(seq))[:n+len(seq)]
			out := b.Pats.Codes[n:]
			for i, c := range seq {
				out[i] = fwd[c]
			}
			b.Pats.Ends = append(b.Pats.Ends, len(b.Pats.Codes))
		}
		if s.strands.Reverse {
			n := len(b.Pats.Codes)
			b.Pats.Codes = slices.Grow(b.Pats.Codes, len(seq))[:n+len(seq)]
			out := b.Pats.Codes[n:]
			last := len(seq) - 1
			for i, c := range seq {
				out[last-i] = rev[c]
			}
			b.Pats.Ends = append(b.Pats.Ends, len(b.Pats.Codes))
		}
	}
}

// codeTables returns the code of each byte as kernels.EncodeQuery encodes it, on the forward
// strand and complemented, so that a batch is encoded by one lookup a byte.
func codeTables(alpha *kernels.Alphabet, nucleotidesOnly bool) (t [2][256]byte) {
	for c := range 256 {
		t[0][c] = kernels.EncodeQuery(nil, []byte{byte(c)}, alpha, false, nucleotidesOnly)[0]
		t[1][c] = kernels.EncodeQuery(nil, []byte{byte(c)}, alpha, true, nucleotidesOnly)[0]
	}
	return t
}

// PatternSource reads pattern files in order and cuts them into PatternBatches.
type PatternSource struct {
	paths     []string
	alpha     *kernels.Alphabet
	strands   Strands
	nucOnly   bool
	batchSize int
	Stdin     io.Reader // read for the path "-"; nil: os.Stdin

	file    int
	rd      *formats.PatternReader
	pool    sync.Pool    // *PatternBatch, emptied, their buffers kept
	codes   [2][256]byte // code of each byte, forward and complemented (codeTables)
	Records int64
	Bases   int64
}

// NewPatternSource returns a source of the patterns in paths ("-" is stdin), encoded against
// alpha (nucleotidesOnly as the index was built), batchSize pattern bases a batch.
func NewPatternSource(paths []string, alpha *kernels.Alphabet, strands Strands, nucleotidesOnly bool, batchSize int) *PatternSource {
	return &PatternSource{paths: paths, alpha: alpha, strands: strands, nucOnly: nucleotidesOnly, batchSize: max(batchSize, 1),
		codes: codeTables(alpha, nucleotidesOnly)}
}

// Close closes the file being read.
func (s *PatternSource) Close() error {
	if s.rd == nil {
		return nil
	}
	err := s.rd.Close()
	s.rd = nil
	return err
}

// Recycle hands back a batch that is no longer used, so that a later one reuses its buffers.
func (s *PatternSource) Recycle(b *PatternBatch) {
	b.Pats.Reset()
	b.Seqs, b.SeqEnds = b.Seqs[:0], b.SeqEnds[:0]
	b.Names = b.Names[:0]
	b.NameEnds = b.NameEnds[:0]
	b.Hits.Reset()
	s.pool.Put(b)
}

// Next returns the next batch, or io.EOF.
func (s *PatternSource) Next() (*PatternBatch, error) {
	b, _ := s.pool.Get().(*PatternBatch)
	if b == nil {
		b = &PatternBatch{src: s}
	}
	bases := 0
	for bases < s.batchSize {
		if s.rd == nil {
			if s.file == len(s.paths) {
				break
			}
			rd, err := formats.OpenPatterns(s.paths[s.file], s.Stdin)
			if err != nil {
				return nil, err
			}
			s.rd = rd
		}
		rec, err := s.rd.Next()
		if errors.Is(err, io.EOF) {
			s.Close()
			s.file++
			continue
		}
		if err != nil {
			return nil, err
		}
		s.Records++
		s.Bases += int64(len(rec.Seq))
		b.Names = append(b.Names, rec.Name...)
		b.NameEnds = append(b.NameEnds, len(b.Names))
		b.Seqs = append(b.Seqs, rec.Seq...)
		b.SeqEnds = append(b.SeqEnds, len(b.Seqs))
		bases += len(rec.Seq) + 16 // a pattern costs a little whatever its length
	}
	if len(b.NameEnds) == 0 {
		return nil, io.EOF
	}
	b.records, b.bases = s.Records, s.Bases
	return b, nil
}

// Search searches every pattern of the files in paths with s, over the reference of ix, and
// writes the count or locate table (see formats.HitWriter) to w in input order.
func Search(ctx context.Context, opts SearchOptions, ix *Index, s kernels.Searcher, paths []string, stdin io.Reader, w io.Writer) error {
	src := NewPatternSource(paths, &ix.Ref.Alpha, opts.Strands, ix.NucleotidesOnly, opts.BatchSize)
	src.Stdin = stdin
	defer src.Close()
	bw := bufio.NewWriterSize(w, 1<<20)
	out := formats.NewHitWriter(bw)
	perRecord := 0
	var strands []byte
	if opts.Strands.Forward {
		perRecord++
		strands = append(strands, '+')
	}
	if opts.Strands.Reverse {
		perRecord++
		strands = append(strands, '-')
	}
	ref := ix.Ref
	start := time.Now()
	threads := max(opts.Threads, 1)
	err := stream.OrderedMap(ctx, stream.Options{Workers: threads, Window: 2*threads + 1},
		func() (*PatternBatch, error) { return src.Next() },
		func(_ context.Context, b *PatternBatch) (*PatternBatch, error) {
			b.Encode()
			return b, s.Search(&b.Pats, opts.Locate, &b.Hits)
		},
		func(b *PatternBatch) error {
			from := 0
			for r, end := range b.NameEnds {
				name := b.Names[from:end]
				from = end
				if !opts.Locate {
					n := 0
					for k := range perRecord {
						n += int(b.Hits.Count[r*perRecord+k])
					}
					if err := out.Count(name, n); err != nil {
						return err
					}
					continue
				}
				for k, strand := range strands {
					for _, pos := range b.Hits.Positions(r*perRecord + k) {
						rec, off := ref.RecordOf(int(pos))
						if err := out.Locate(name, ref.Names[rec], off+1, strand); err != nil {
							return err
						}
					}
				}
			}
			opts.Progress.Update(b.records, b.bases, time.Since(start))
			src.Recycle(b)
			return nil
		})
	if err != nil {
		return err
	}
	opts.Progress.Done(src.Records, src.Bases, time.Since(start))
	return bw.Flush()
}
