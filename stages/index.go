package stages

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"runtime"

	"github.com/sapipe/sapipe/formats"
	"github.com/sapipe/sapipe/kernels"
	"github.com/sapipe/sapipe/kernels/cpu"
)

// Index is a reference with its FM-index over the whole text: built from a FASTA file (BuildIndex)
// or mapped from an index file (OpenIndex). Matchers and searchers made from it share it.
type Index struct {
	Ref             *kernels.Reference
	NucleotidesOnly bool // the reference was encoded with -n
	Page            *cpu.Page
	Kmers           *cpu.KmerTable     // starts searches K symbols in; nil for a tiny text
	Note            string             // the file's note (OpenIndex)
	File            *formats.IndexFile // the mapped file; nil when built in memory
}

// BuildIndex reads the reference at path ("-": stdin) and indexes it, building the suffix array on
// backend b and the rest on the CPU.
func BuildIndex(b kernels.Backend, path string, nucleotidesOnly bool, stdin io.Reader) (*Index, error) {
	ref, err := LoadReference(path, nucleotidesOnly, stdin)
	if err != nil {
		return nil, err
	}
	return IndexReference(b, ref, nucleotidesOnly, path)
}

// IndexReference indexes ref (encoded with nucleotidesOnly); name is used in messages.
func IndexReference(b kernels.Backend, ref *kernels.Reference, nucleotidesOnly bool, name string) (*Index, error) {
	n := len(ref.Text)
	if n > formats.MaxIndexText {
		return nil, fmt.Errorf("%s: %w", name, kernels.ErrTooLarge)
	}
	if n == 0 {
		// Only empty records: MUMmer accepts them, but there is nothing to index.
		return nil, fmt.Errorf("%s: no bases to index", name)
	}
	sa := make([]int32, n+1)
	if err := b.SuffixArray(ref.Text, sa[1:]); err != nil {
		return nil, fmt.Errorf("%s: suffix array on %s: %w", name, b.Name(), err)
	}
	p := cpu.NewPageFromSA(ref.Text, ref.Alpha.Size, sa)
	kt := cpu.BuildKmerTable(p, cpu.KmerLength(n, ref.Alpha.Size))
	if kt != nil {
		kt.Keys = cpu.RowKeys(p, kt, runtime.GOMAXPROCS(0)) // for the keyed search of count and locate
	}
	return &Index{Ref: ref, NucleotidesOnly: nucleotidesOnly, Page: p, Kmers: kt}, nil
}

// Write writes ix as an index file with the note (what made it, for people), computing the
// checksums on up to threads goroutines.
func (ix *Index) Write(w io.Writer, note string, threads int) error {
	a := ix.Page.Arrays()
	starts := make([]int32, len(ix.Ref.Starts))
	for i, s := range ix.Ref.Starts {
		starts[i] = int32(s)
	}
	f := &formats.Index{
		NucleotidesOnly: ix.NucleotidesOnly,
		Names:           ix.Ref.Names,
		Starts:          starts,
		Code:            ix.Ref.Alpha.Code,
		Sigma:           ix.Ref.Alpha.Size,
		Text:            ix.Ref.Text,
		SA:              a.SA,
		Occ:             a.Occ,
		LCPBytes:        a.LCPBytes,
		LCPRows:         a.LCPRows,
		LCPValues:       a.LCPValues,
		LCPMin1:         a.LCPMin1,
		LCPMin2:         a.LCPMin2,
		Note:            note,
	}
	if ix.Kmers != nil {
		f.KmerLen, f.Kmers, f.Keys = ix.Kmers.K, ix.Kmers.Rows, ix.Kmers.Keys
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	if err := formats.WriteIndex(bw, f, threads); err != nil {
		return err
	}
	return bw.Flush()
}

// OpenIndex maps the index file at path and checks it on up to threads goroutines: its checksums,
// and everything the searches need to stay in bounds. A damaged, truncated, foreign or
// wrong-version file is an error naming the file and the part.
func OpenIndex(path string, threads int) (*Index, error) {
	f, err := formats.OpenIndex(path, threads)
	if err != nil {
		return nil, err
	}
	ix, err := indexOf(path, f.Index, threads)
	if err != nil {
		f.Close()
		return nil, err
	}
	ix.File = f
	return ix, nil
}

// ParseIndex is OpenIndex for an index file held in data.
func ParseIndex(name string, data []byte, threads int) (*Index, error) {
	fi, err := formats.ParseIndex(name, data, threads)
	if err != nil {
		return nil, err
	}
	return indexOf(name, fi, threads)
}

// indexOf rebuilds the reference and the page of a parsed index file.
func indexOf(name string, fi *formats.Index, threads int) (*Index, error) {
	ref := &kernels.Reference{Text: fi.Text, Names: fi.Names, Starts: make([]int, len(fi.Starts))}
	for i, s := range fi.Starts {
		ref.Starts[i] = int(s)
	}
	a := &ref.Alpha
	a.Code, a.Size = fi.Code, fi.Sigma
	for c := 1; c < 256; c++ {
		if code := a.Code[c]; code >= kernels.FirstCode {
			a.Byte[code] = byte(c)
		}
	}
	a.Byte[kernels.CodeNone] = '#'
	p, err := cpu.LoadPage(fi.Text, fi.Sigma, cpu.PageArrays{
		SA: fi.SA, Occ: fi.Occ, LCPBytes: fi.LCPBytes, LCPRows: fi.LCPRows, LCPValues: fi.LCPValues,
		LCPMin1: fi.LCPMin1, LCPMin2: fi.LCPMin2,
	}, threads)
	if err != nil {
		return nil, &formats.IndexError{Name: name, Err: fmt.Errorf("%w: %v", formats.ErrIndexDamaged, err)}
	}
	kt, err := cpu.LoadKmerTable(fi.KmerLen, fi.Sigma, fi.Kmers, fi.Keys, len(fi.Text)+1)
	if err != nil {
		return nil, &formats.IndexError{Name: name, Where: "sections KMER and KEYS", Err: fmt.Errorf("%w: %v", formats.ErrIndexDamaged, err)}
	}
	return &Index{Ref: ref, NucleotidesOnly: fi.NucleotidesOnly, Page: p, Kmers: kt, Note: fi.Note}, nil
}

// Close unmaps the file of an opened index. Nothing made from ix may be used afterwards.
func (ix *Index) Close() error {
	if ix.File == nil {
		return nil
	}
	err := ix.File.Close()
	ix.File = nil
	return err
}

// Matcher returns a matcher for `sapipe mummer` over the index, as a backend's NewMatcher would
// build it from the same reference (opts.PageSize does not apply: the index is one page).
func (ix *Index) Matcher(opts kernels.MatchOptions) (kernels.Matcher, error) {
	return cpu.NewMatcherFromPage(ix.Ref, opts, ix.Page)
}

// MatcherOn returns a matcher over the index on backend b: on the CPU (or b nil) from the
// mapped arrays, built in no time; on a device (a GPU) from the reference text, as the device
// builds its own index (tens of milliseconds on a GPU), with the same output.
func (ix *Index) MatcherOn(b kernels.Backend, opts kernels.MatchOptions) (kernels.Matcher, error) {
	if _, onCPU := b.(*cpu.Backend); b == nil || onCPU {
		return ix.Matcher(opts)
	}
	return b.NewMatcher(ix.Ref, opts)
}

// Searcher returns a pattern searcher over the index, on the CPU.
func (ix *Index) Searcher() (kernels.Searcher, error) {
	return cpu.NewSearcher(ix.Page, ix.Kmers)
}

// patternSearchBackend is a backend that runs the searches of a CPU searcher itself (on a GPU),
// with the same results.
type patternSearchBackend interface {
	NewPatternSearcher(s *cpu.Searcher) (kernels.Searcher, error)
}

// SearcherOn returns a pattern searcher over the index that runs on backend b when b can search
// patterns, and on the CPU otherwise.
func (ix *Index) SearcherOn(b kernels.Backend) (kernels.Searcher, error) {
	s, err := cpu.NewSearcher(ix.Page, ix.Kmers)
	if err != nil {
		return nil, err
	}
	if ps, ok := b.(patternSearchBackend); ok {
		return ps.NewPatternSearcher(s)
	}
	return s, nil
}

// IsIndexFile reports whether the file at path starts like an index file (its magic), so that a
// command can take an index where a FASTA file may stand. "-" is never one.
func IsIndexFile(path string) bool {
	if path == "-" {
		return false
	}
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	head := make([]byte, len(formats.IndexMagic))
	_, err = io.ReadFull(f, head)
	return err == nil && bytes.Equal(head, []byte(formats.IndexMagic))
}
