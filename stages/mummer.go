package stages

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/sapipe/sapipe/formats"
	"github.com/sapipe/sapipe/kernels"
	"github.com/sapipe/sapipe/stream"
)

// MummerOptions are the options of `sapipe mummer`, MUMmer's and sapipe's own.
type MummerOptions struct {
	Mode             kernels.Mode
	MinLen           int
	NucleotidesOnly  bool // -n
	Strands          Strands
	ReversePositions bool // -c
	ShowString       bool // -s
	FourColumn       bool // -F
	ShowLen          bool // -L

	Threads   int // workers matching batches
	PageSize  int // reference page length; 0: whole reference
	BatchSize int // query bases per batch
	Progress  *Progress
}

// LoadReference reads every record of path into an encoded reference.
// A path of "-" reads stdin.
func LoadReference(path string, nucleotidesOnly bool, stdin io.Reader) (*kernels.Reference, error) {
	rd, err := openInput(path, stdin)
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	b := kernels.NewReferenceBuilder(nucleotidesOnly)
	for {
		rec, err := rd.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		b.Add(string(rec.Name), rec.Seq)
	}
	if b.Records() == 0 {
		return nil, fmt.Errorf("%s: no sequences in multiple fasta file", rd.Name())
	}
	ref, err := b.Build()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", rd.Name(), err)
	}
	return ref, nil
}

// Mummer matches every record of the query files against ref with m and writes MUMmer text to w.
// A query path of "-" reads stdin.
func Mummer(ctx context.Context, opts MummerOptions, ref *kernels.Reference, m kernels.Matcher, queries []string, stdin io.Reader, w io.Writer) error {
	src := NewQuerySource(queries, &ref.Alpha, opts.Strands, opts.NucleotidesOnly, opts.BatchSize)
	src.Stdin = stdin
	defer src.Close()
	bw := bufio.NewWriterSize(w, 1<<20)
	p := &printer{opts: &opts, ref: ref, out: formats.NewMummerWriter(bw, ref.Names, opts.FourColumn, opts.ShowLen, opts.ShowString)}
	start := time.Now()
	// Two batches a worker keep every worker busy while the printer drains results in order;
	// more would only hold memory.
	err := stream.OrderedMap(ctx, stream.Options{Workers: opts.Threads, Window: 2*opts.Threads + 1},
		func() (*QueryBatch, error) { return src.Next() },
		func(_ context.Context, b *QueryBatch) (*QueryBatch, error) {
			b.Encode(src.enc)
			return b, m.Match(&b.Batch, &b.Res)
		},
		func(b *QueryBatch) error {
			if err := p.batch(b); err != nil {
				return err
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

// printer formats the results of batches in order.
type printer struct {
	opts *MummerOptions
	ref  *kernels.Reference
	out  *formats.MummerWriter
	mums []kernels.Match // -mum candidates of the sequence being printed
	sub  []byte
}

func (p *printer) batch(b *QueryBatch) error {
	for i, info := range b.Info {
		sg := b.Segs[i]
		if info.First {
			if err := p.out.Header([]byte(info.Name), info.Reverse, sg.Len); err != nil {
				return err
			}
		}
		ms := b.Res.Seg(i)
		if p.opts.Mode == kernels.Mum {
			p.mums = append(p.mums, ms...)
			if !info.Last {
				continue
			}
			ms = kernels.FilterMums(p.mums)
			p.mums = p.mums[:0]
		}
		for _, mt := range ms {
			if err := p.match(mt, sg.Len, info.Reverse); err != nil {
				return err
			}
		}
	}
	return nil
}

func (p *printer) match(mt kernels.Match, qlen int, reverse bool) error {
	rec, off := p.ref.RecordOf(int(mt.Ref))
	q := int(mt.Query) + 1
	if reverse && p.opts.ReversePositions {
		q = qlen - int(mt.Query)
	}
	if p.opts.ShowString {
		p.sub = p.sub[:0]
		for _, c := range p.ref.Text[mt.Ref : mt.Ref+mt.Len] {
			p.sub = append(p.sub, p.ref.Alpha.Byte[c])
		}
	}
	return p.out.Match(rec, off+1, q, int(mt.Len), p.sub)
}

// openInput opens a sequence file, "-" meaning stdin.
func openInput(path string, stdin io.Reader) (*formats.Reader, error) {
	if path == "-" && stdin != nil {
		return formats.NewReader("-", stdin)
	}
	return formats.Open(path)
}
