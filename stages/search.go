package stages

import (
	"bufio"
	"context"
	"errors"
	"io"
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

// PatternBatch is a unit of search work: the encoded patterns of a run of records (one per strand
// searched, forward first), their records' names, and the hits.
type PatternBatch struct {
	Pats     kernels.Patterns
	Names    []byte
	NameEnds []int // record i's name is Names[NameEnds[i-1]:NameEnds[i]]
	Hits     kernels.Hits
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
	Records int64
	Bases   int64
}

// NewPatternSource returns a source of the patterns in paths ("-" is stdin), encoded against
// alpha (nucleotidesOnly as the index was built), batchSize pattern bases a batch.
func NewPatternSource(paths []string, alpha *kernels.Alphabet, strands Strands, nucleotidesOnly bool, batchSize int) *PatternSource {
	return &PatternSource{paths: paths, alpha: alpha, strands: strands, nucOnly: nucleotidesOnly, batchSize: max(batchSize, 1)}
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

// Next returns the next batch, or io.EOF.
func (s *PatternSource) Next() (*PatternBatch, error) {
	b := &PatternBatch{}
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
		if s.strands.Forward {
			b.Pats.Codes = kernels.EncodeQuery(b.Pats.Codes, rec.Seq, s.alpha, false, s.nucOnly)
			b.Pats.Ends = append(b.Pats.Ends, len(b.Pats.Codes))
		}
		if s.strands.Reverse {
			b.Pats.Codes = kernels.EncodeQuery(b.Pats.Codes, rec.Seq, s.alpha, true, s.nucOnly)
			b.Pats.Ends = append(b.Pats.Ends, len(b.Pats.Codes))
		}
		bases += len(rec.Seq) + 16 // a pattern costs a little whatever its length
	}
	if len(b.NameEnds) == 0 {
		return nil, io.EOF
	}
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
			opts.Progress.Update(src.Records, src.Bases, time.Since(start))
			return nil
		})
	if err != nil {
		return err
	}
	opts.Progress.Done(src.Records, src.Bases, time.Since(start))
	return bw.Flush()
}
