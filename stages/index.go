package stages

import (
	"bufio"
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sapipe/sapipe/formats"
	"github.com/sapipe/sapipe/kernels"
	"github.com/sapipe/sapipe/kernels/cpu"
)

// Index is a reference with its FM-index in pages (one over the whole text unless the text is
// longer than one page holds): built from a FASTA file (BuildIndex) or mapped from an index file
// (OpenIndex). Matchers and searchers made from it share it.
type Index struct {
	Ref             *kernels.Reference
	NucleotidesOnly bool // the reference was encoded with -n
	Pages           []*cpu.Page
	Kmers           []*cpu.KmerTable   // each page's; starts searches K symbols in; nil for a tiny window
	Tails           [][]int32          // each page's tail rows (cpu.Page.TailRows)
	Overlap         int                // how far each page's window runs past what it owns
	Note            string             // the file's note (OpenIndex)
	File            *formats.IndexFile // the mapped file; nil when built in memory
	Threads         int                // goroutines for what the matchers and searchers build

	// From OpenIndexChecking: the file's parsed arrays, and the checks: the checksums, on a
	// goroutine of their own, close summed (sumErr set); the pages' checks on the host
	// (hostChecks: checkErr) run at the first Wait, and a device that checks the pages itself
	// leaves them undone.
	early     *formats.Index
	summed    chan struct{}
	sumErr    error
	hostOnce  sync.Once
	checkErr  error
	checkTime time.Duration
	sumTime   time.Duration // of checkTime, the checksums'
	t0        time.Time
	path      string

	uncheckedOnce sync.Once // uncheckedPages
	uncheckedErr  error
	pagesMu       sync.Mutex // Pages, Kmers and Tails, where they may be rebuilt (page)
	pagesChecked  bool       // under pagesMu: the pages are loadPages', which unchecked ones never replace

	searchOnly bool // opened for count and locate: the pages hold no LCP (cpu.LoadSearchPage)
	// OpenSearchIndexChecking: the checksums' pass checks the suffix arrays' range too, for a
	// device that leaves them to the host (LocateSearcherOn); saBad: one was out of range.
	saInSums bool
	saBad    atomic.Bool
}

// IndexOptions shape an index built in memory.
type IndexOptions struct {
	// PageSize bounds the text positions a page owns; 0: as many as a page holds
	// (kernels.MaxPageSize), and no more than the backend can sort at once (a GPU's memory).
	PageSize int
	// Overlap is how far each page's window runs past what it owns: mummer's -l can be at most
	// Overlap+1 against an index of several pages, and count and locate check the patterns
	// longer than Overlap+1 against the text. A reference of one page is not affected.
	Overlap int
	Threads int                  // goroutines on the host
	Log     func(string, ...any) // -v: what each page took; nil: nothing
}

// DefaultIndexOverlap is the overlap of the pages of an index, unless asked otherwise: reads and
// patterns up to 1024 bases, and mummer's -l up to 1024, need nothing more.
const DefaultIndexOverlap = 1023

// SuffixArraySizer is a backend that sorts texts in memory of its own (a GPU): MaxSuffixArray says
// the longest text it can sort now, so that an index's pages are built there whole, never handed
// to the CPU for want of memory.
type SuffixArraySizer interface {
	MaxSuffixArray() int
}

// PageIndexer is a backend that builds a page's whole index itself (a GPU: suffix array, LCP,
// rank structure and k-mer table), identical to what the CPU builds from the suffix array.
// MaxIndexPage is the longest window of codes < sigma it can index now.
type PageIndexer interface {
	MaxIndexPage(sigma int) int
	IndexPage(text []byte, sigma, start, end, winEnd, k, threads int) (*cpu.Page, *cpu.KmerTable, error)
}

// BuildIndex reads the reference at path ("-": stdin) and indexes it, building the suffix arrays on
// backend b and the rest on the CPU.
func BuildIndex(b kernels.Backend, path string, nucleotidesOnly bool, stdin io.Reader, opts IndexOptions) (*Index, error) {
	ref, err := LoadReference(path, nucleotidesOnly, stdin)
	if err != nil {
		return nil, err
	}
	return IndexReference(b, ref, nucleotidesOnly, path, opts)
}

// IndexPageSize returns the page size that opts and backend b give a text of n codes < sigma:
// pages of equal size, as few as MaxPageSize allows, each no larger than b can sort.
func IndexPageSize(b kernels.Backend, n, sigma int, opts IndexOptions) int {
	most := kernels.MaxPageSize(opts.Overlap)
	if pi, ok := b.(PageIndexer); ok {
		most = min(most, max(pi.MaxIndexPage(sigma)-opts.Overlap, 1<<16))
	} else if sz, ok := b.(SuffixArraySizer); ok {
		most = min(most, max(sz.MaxSuffixArray()-opts.Overlap, 1<<16))
	}
	if opts.PageSize > 0 {
		most = min(most, opts.PageSize)
	}
	pages := (n + most - 1) / most
	return (n + pages - 1) / pages
}

// IndexReference indexes ref (encoded with nucleotidesOnly); name is used in messages.
func IndexReference(b kernels.Backend, ref *kernels.Reference, nucleotidesOnly bool, name string, opts IndexOptions) (*Index, error) {
	n := len(ref.Text)
	if n > formats.MaxIndexText {
		return nil, fmt.Errorf("%s: reference of %d bases (an index holds at most %d)", name, n, int64(formats.MaxIndexText))
	}
	if n == 0 {
		// Only empty records: MUMmer accepts them, but there is nothing to index.
		return nil, fmt.Errorf("%s: no bases to index", name)
	}
	opts.Threads = max(opts.Threads, 1)
	if opts.Overlap < 0 || opts.Overlap > formats.MaxIndexWindow/2 {
		return nil, fmt.Errorf("%s: page overlap %d", name, opts.Overlap)
	}
	bounds := cpu.PageBoundsOverlap(n, IndexPageSize(b, n, ref.Alpha.Size, opts), opts.Overlap)
	if len(bounds) > formats.MaxIndexPages {
		return nil, fmt.Errorf("%s: %d pages (an index holds at most %d): give a larger page size", name, len(bounds), formats.MaxIndexPages)
	}
	ix := &Index{Ref: ref, NucleotidesOnly: nucleotidesOnly, Overlap: opts.Overlap, Threads: opts.Threads}
	// One k-mer length for every page (the file has one), that of the longest window.
	k := cpu.KmerLength(bounds[0][2]-bounds[0][0], ref.Alpha.Size)
	logf := opts.Log
	if logf == nil {
		logf = func(string, ...any) {}
	}
	pi, whole := b.(PageIndexer)
	for i, bd := range bounds {
		w := ref.Text[bd[0]:bd[2]]
		t0 := time.Now()
		var p *cpu.Page
		var kt *cpu.KmerTable
		var built string
		if whole {
			var err error
			if p, kt, err = pi.IndexPage(ref.Text, ref.Alpha.Size, bd[0], bd[1], bd[2], k, opts.Threads); err != nil {
				return nil, fmt.Errorf("%s: page %d: index on %s: %w", name, i, b.Name(), err)
			}
			built = fmt.Sprintf("suffix array, rank structure, LCP and %d-mer table on %s %v", k, b.Name(), time.Since(t0).Round(time.Millisecond))
		} else {
			// The k-mer table comes from the pass that builds the rank structure.
			var sorted time.Duration
			var err error
			if p, kt, sorted, err = cpu.NewPageSorted(b.SuffixArray, ref.Text, ref.Alpha.Size, bd[0], bd[1], bd[2], k, opts.Threads); err != nil {
				return nil, fmt.Errorf("%s: page %d: suffix array on %s: %w", name, i, b.Name(), err)
			}
			built = fmt.Sprintf("suffix array on %s %v, rank structure, LCP and %d-mer table %v", b.Name(),
				sorted.Round(time.Millisecond), k, (time.Since(t0) - sorted).Round(time.Millisecond))
		}
		t2 := time.Now()
		if kt != nil && cpu.Keyed(len(w)) {
			kt.Keys = cpu.RowKeys(p, kt, opts.Threads) // for the keyed search of count and locate
		}
		t3 := time.Now()
		ix.Pages = append(ix.Pages, p)
		ix.Kmers = append(ix.Kmers, kt)
		ix.Tails = append(ix.Tails, p.TailRows(opts.Threads))
		logf("page %d of %d (%d bases): %s, keys %v, tail rows %v", i+1, len(bounds), len(w), built,
			t3.Sub(t2).Round(time.Millisecond), time.Since(t3).Round(time.Millisecond))
	}
	return ix, nil
}

// Write writes ix as an index file with the note (what made it, for people), computing the
// checksums on up to threads goroutines.
func (ix *Index) Write(w io.Writer, note string, threads int) error {
	if ix.searchOnly {
		return fmt.Errorf("the index was opened for count and locate, without its LCP: it cannot be written")
	}
	if err := ix.Wait(); err != nil { // an index file's pages, checked on the host
		return err
	}
	starts := make([]int64, len(ix.Ref.Starts))
	for i, s := range ix.Ref.Starts {
		starts[i] = int64(s)
	}
	f := &formats.Index{
		NucleotidesOnly: ix.NucleotidesOnly,
		Names:           ix.Ref.Names,
		Starts:          starts,
		Code:            ix.Ref.Alpha.Code,
		Sigma:           ix.Ref.Alpha.Size,
		Text:            ix.Ref.Text,
		Overlap:         ix.Overlap,
		Note:            note,
	}
	for i, p := range ix.Pages {
		a := p.Arrays()
		pg := formats.IndexPage{
			Start: int64(p.Start), End: int64(p.End), WinEnd: int64(p.WinEnd),
			SA: a.SA, Occ: a.Occ, LCPBytes: a.LCPBytes, LCPRows: a.LCPRows, LCPValues: a.LCPValues,
			LCPMin1: a.LCPMin1, LCPMin2: a.LCPMin2, Tail: ix.Tails[i],
		}
		if kt := ix.Kmers[i]; kt != nil {
			f.KmerLen, pg.Kmers, pg.Keys = kt.K, kt.Rows, kt.Keys
		}
		f.Pages = append(f.Pages, pg)
	}
	for i, kt := range ix.Kmers {
		if kt == nil && f.KmerLen != 0 || kt != nil && kt.K != f.KmerLen {
			return fmt.Errorf("page %d has no %d-mer table", i, f.KmerLen)
		}
	}
	if fw, ok := emptyFileAt(w); ok {
		if n, done, err := writeMapped(fw, f, threads); done {
			if err != nil {
				return err
			}
			_, err = fw.Seek(n, io.SeekStart) // where a writer after this one goes on
			return err
		}
		n, err := formats.WriteIndexAt(fw, f, threads)
		if err != nil {
			return err
		}
		_, err = fw.Seek(n, io.SeekStart) // where a writer after this one goes on
		return err
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	if err := formats.WriteIndex(bw, f, threads); err != nil {
		return err
	}
	return bw.Flush()
}

// mappedWriteMin is the smallest index written through a mapping of the file (writeMapped, on
// Linux); a variable, so that tests can lower it.
var mappedWriteMin = int64(64 << 20)

// emptyFileAt returns w as a file that an index can be written into at offsets, on several
// goroutines: an empty regular file, at offset 0, not opened for appending (a new -o file, or
// stdout sent to a new file).
func emptyFileAt(w io.Writer) (*os.File, bool) {
	f, off, size, ok := fileAt(w)
	return f, ok && off == 0 && size == 0
}

// OpenIndex maps the index file at path and checks it on up to threads goroutines: its checksums,
// and everything the searches need to stay in bounds. A damaged, truncated, foreign or
// wrong-version file is an error naming the file and the part.
func OpenIndex(path string, threads int) (*Index, error) { return openIndex(path, threads, false) }

// OpenSearchIndex is OpenIndex for count and locate: the pages' LCP arrays, which searches never
// read, are neither checked (checksums and contents) nor kept, and the index cannot match
// (MatcherOn refuses it).
func OpenSearchIndex(path string, threads int) (*Index, error) { return openIndex(path, threads, true) }

func openIndex(path string, threads int, search bool) (*Index, error) {
	ix, err := openIndexChecking(path, threads, search, false)
	if err != nil {
		return nil, err
	}
	if err := ix.Wait(); err != nil {
		ix.Close()
		return nil, err
	}
	ix.checkTime, ix.sumTime = 0, 0 // checked before it was returned
	return ix, nil
}

// OpenIndexChecking is OpenIndex with the checks of the pages (their checksums and bounds) left
// running on other goroutines: the index returned has its reference (ix.Ref: the header, records
// and alphabet are checked) at once, and its pages once Wait returns nil. MatcherOn and SearcherOn
// wait for them; a GPU's MatcherOn copies the arrays to the device meanwhile, and matches nothing
// before they pass. The pages' checks on the host wait for the first Wait (MatcherOn on the CPU
// calls it at once): a GPU that checks the pages itself leaves them to the card, and the host
// reads the file once, for the checksums. Close waits for the checks.
func OpenIndexChecking(path string, threads int) (*Index, error) {
	return openIndexChecking(path, threads, false, false)
}

// OpenSearchIndexChecking is OpenIndexChecking for count and locate, as OpenSearchIndex. The
// checksums' pass also checks the range of the suffix arrays' values, each chunk while it is in
// the caches (by AVX2: about 0.13 CPU-s for the 12.4 GB of a 3.1 Gbp index), for a device's
// LocateSearcherOn, where the host reads the positions.
func OpenSearchIndexChecking(path string, threads int) (*Index, error) {
	return openIndexChecking(path, threads, true, true)
}

// openIndexChecking opens the index file at path with its checks left running; with saRange the
// checksums' pass checks the suffix arrays' range too.
func openIndexChecking(path string, threads int, search, saRange bool) (*Index, error) {
	var skip []string
	if search {
		skip = formats.LCPSections
	}
	f, verify, err := formats.OpenIndexLate(path, threads, skip...)
	if err != nil {
		return nil, err
	}
	threads = max(threads, 1)
	ix := indexRef(f.Index, threads)
	ix.File, ix.early, ix.searchOnly, ix.path = f, f.Index, search, path
	ix.summed, ix.t0 = make(chan struct{}), time.Now()
	var visit formats.ChunkVisit
	if saRange {
		ix.saInSums = true
		visit = func(tag string, page int, off int64, d []byte) {
			if tag == "SUFA" && page >= 0 && page < len(f.Pages) {
				if !cpu.SuffixRowsInRange(formats.Int32View(d), int(off/4), f.Pages[page].Window()) {
					ix.saBad.Store(true)
				}
			}
		}
	}
	go func() {
		defer close(ix.summed)
		ix.sumErr = verify(visit)
		ix.sumTime = time.Since(ix.t0)
	}()
	return ix, nil
}

// hostChecks checks the pages on the host and rebuilds them into ix, once.
func (ix *Index) hostChecks() {
	ix.hostOnce.Do(func() {
		ix.checkErr = ix.loadPages(ix.path, ix.early, ix.Threads)
		ix.checkTime = time.Since(ix.t0)
	})
}

// Wait waits for the checks of an index from OpenIndexChecking (running the pages' checks on the
// host if they have not run) and returns their error, the checksums' first; at once nil for any
// other index.
func (ix *Index) Wait() error {
	if ix.summed == nil {
		return nil
	}
	if err := ix.Sums(); err != nil {
		return err
	}
	ix.hostChecks()
	return ix.checkErr
}

// Sums waits for the checksums of an index from OpenIndexChecking and returns their error; at once
// nil for any other index.
func (ix *Index) Sums() error {
	if ix.summed == nil {
		return nil
	}
	<-ix.summed
	return ix.sumErr
}

// CheckTime is how long the checks of an index from OpenIndexChecking took, once Wait returned (0
// for any other index, and where the host did not check the pages), and how long the checksums
// took (once Sums returned).
func (ix *Index) CheckTime() (all, sums time.Duration) { return ix.checkTime, ix.sumTime }

// ParseIndex is OpenIndex for an index file held in data.
func ParseIndex(name string, data []byte, threads int) (*Index, error) {
	fi, err := formats.ParseIndex(name, data, threads)
	if err != nil {
		return nil, err
	}
	threads = max(threads, 1)
	ix := indexRef(fi, threads)
	if err := ix.loadPages(name, fi, threads); err != nil {
		return nil, err
	}
	return ix, nil
}

// indexRef returns the index of a parsed index file without its pages: the reference.
func indexRef(fi *formats.Index, threads int) *Index {
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
	return &Index{Ref: ref, NucleotidesOnly: fi.NucleotidesOnly, Overlap: fi.Overlap, Note: fi.Note, Threads: threads}
}

// pageArrays is an index file's page's arrays as kernels/cpu takes them.
func pageArrays(pg *formats.IndexPage) cpu.PageArrays {
	return cpu.PageArrays{SA: pg.SA, Occ: pg.Occ, LCPBytes: pg.LCPBytes, LCPRows: pg.LCPRows, LCPValues: pg.LCPValues,
		LCPMin1: pg.LCPMin1, LCPMin2: pg.LCPMin2}
}

// loadPages checks the pages of a parsed index file and rebuilds them into ix.
func (ix *Index) loadPages(name string, fi *formats.Index, threads int) error {
	load := cpu.LoadPage
	if ix.searchOnly {
		load = cpu.LoadSearchPage
	}
	return ix.loadPagesWith(name, fi, threads, load, true)
}

// uncheckedPages rebuilds the pages of an index from OpenSearchIndexChecking into ix without the
// host's checks of their arrays (cpu.UncheckedSearchPage), once: for a device that checks them
// itself. The k-mer tables and tail rows are checked as by loadPages.
func (ix *Index) uncheckedPages() error {
	ix.uncheckedOnce.Do(func() {
		ix.uncheckedErr = ix.loadPagesWith(ix.path, ix.early, ix.Threads, func(text []byte, sigma, start, end, winEnd int, a cpu.PageArrays, _ int) (*cpu.Page, error) {
			return cpu.UncheckedSearchPage(text, sigma, start, end, winEnd, a)
		}, false)
	})
	return ix.uncheckedErr
}

// page returns page i and its k-mer table (pages may be rebuilt on another goroutine: checked
// after unchecked).
func (ix *Index) page(i int) (*cpu.Page, *cpu.KmerTable) {
	ix.pagesMu.Lock()
	defer ix.pagesMu.Unlock()
	return ix.Pages[i], ix.Kmers[i]
}

// loadPagesWith is loadPages with the pages taken by load.
func (ix *Index) loadPagesWith(name string, fi *formats.Index, threads int,
	load func(text []byte, sigma, start, end, winEnd int, a cpu.PageArrays, threads int) (*cpu.Page, error), checked bool) error {
	var pages []*cpu.Page
	var kmers []*cpu.KmerTable
	var tails [][]int32
	for i := range fi.Pages {
		pg := &fi.Pages[i]
		where := "section SUFA, OCCB or LCP"
		if len(fi.Pages) > 1 || fi.Version > 2 {
			where = fmt.Sprintf("page %d: sections SUFA, OCCB and LCP", i)
		}
		p, err := load(fi.Text, fi.Sigma, int(pg.Start), int(pg.End), int(pg.WinEnd), pageArrays(pg), threads)
		if err != nil {
			return &formats.IndexError{Name: name, Where: where, Err: fmt.Errorf("%w: %v", formats.ErrIndexDamaged, err)}
		}
		kt, err := cpu.LoadKmerTable(fi.KmerLen, fi.Sigma, pg.Kmers, pg.Keys, pg.Window()+1)
		if err != nil {
			return &formats.IndexError{Name: name, Where: fmt.Sprintf("page %d: sections KMER and KEYS", i), Err: fmt.Errorf("%w: %v", formats.ErrIndexDamaged, err)}
		}
		tail := pg.Tail
		if fi.Version == 2 {
			tail = p.TailRows(threads) // one page of the whole text: none
		}
		if err := p.CheckTailRows(tail); err != nil {
			return &formats.IndexError{Name: name, Where: fmt.Sprintf("page %d: section TAIL", i), Err: fmt.Errorf("%w: %v", formats.ErrIndexDamaged, err)}
		}
		pages = append(pages, p)
		kmers = append(kmers, kt)
		tails = append(tails, tail)
	}
	ix.pagesMu.Lock()
	if checked || !ix.pagesChecked {
		ix.Pages, ix.Kmers, ix.Tails = pages, kmers, tails
		ix.pagesChecked = checked
	}
	ix.pagesMu.Unlock()
	return nil
}

// Close unmaps the file of an opened index. Nothing made from ix may be used afterwards.
func (ix *Index) Close() error {
	if ix.File == nil {
		return nil
	}
	if ix.summed != nil {
		<-ix.summed // the checks read the mapping
		// Host checks and unchecked loads running on another goroutine are waited for; none
		// starts after.
		ix.hostOnce.Do(func() { ix.checkErr = errors.New("the index is closed") })
		ix.uncheckedOnce.Do(func() { ix.uncheckedErr = errors.New("the index is closed") })
	}
	err := ix.File.Close()
	ix.File = nil
	return err
}

// Matcher returns a matcher for `sapipe mummer` over the index's pages, with the output of a
// backend's NewMatcher over the same reference (opts.PageSize does not apply: the index's pages
// are used). opts.MinLen may be at most the pages' overlap plus one when there are several.
func (ix *Index) Matcher(opts kernels.MatchOptions) (kernels.Matcher, error) {
	return ix.MatcherOn(nil, opts)
}

// pagesMatcherBackend is a backend that matches against pages built elsewhere (a GPU, which copies
// them to its memory) with the CPU's results.
type pagesMatcherBackend interface {
	NewMatcherFromPages(ref *kernels.Reference, opts kernels.MatchOptions, m *cpu.Matcher) (kernels.Matcher, error)
}

// earlyPagesBackend is a pagesMatcherBackend that copies an index file's arrays (early: without
// C and Deep) to its memory while they are checked; checked returns the matcher of the checked
// pages, and the backend matches nothing before it has.
type earlyPagesBackend interface {
	NewMatcherFromEarlyPages(ref *kernels.Reference, opts kernels.MatchOptions, early []cpu.DeviceArrays, sums func() error, checked func() (*cpu.Matcher, error)) (kernels.Matcher, error)
}

// MatcherOn returns a matcher over the index on backend b: on the CPU (or b nil) from the
// mapped arrays, built in no time; on a device (a GPU) from the same pages, copied there (while
// they are checked, for an index from OpenIndexChecking).
func (ix *Index) MatcherOn(b kernels.Backend, opts kernels.MatchOptions) (kernels.Matcher, error) {
	if ix.searchOnly {
		return nil, fmt.Errorf("the index was opened for count and locate, without its LCP: it cannot match")
	}
	checked := sync.OnceValues(func() (*cpu.Matcher, error) {
		if err := ix.Wait(); err != nil {
			return nil, err
		}
		return cpu.NewMatcherFromPages(ix.Ref, opts, ix.Pages, ix.Threads)
	})
	if eb, ok := b.(earlyPagesBackend); ok && ix.early != nil {
		fi := ix.early
		early := make([]cpu.DeviceArrays, len(fi.Pages))
		for i := range fi.Pages {
			pg := &fi.Pages[i]
			// The device may never ask for the checked pages, whose matcher refuses this too.
			if err := cpu.CheckOverlap(opts.MinLen, int(pg.End), int(pg.WinEnd), len(ix.Ref.Text)); err != nil {
				return nil, err
			}
			early[i] = cpu.UncheckedDeviceArrays(int(pg.Start), int(pg.End), int(pg.WinEnd), fi.Sigma, pageArrays(pg))
		}
		return eb.NewMatcherFromEarlyPages(ix.Ref, opts, early, ix.Sums, checked) // the device may check the pages
	}
	m, err := checked()
	if err != nil {
		return nil, err
	}
	if pb, ok := b.(pagesMatcherBackend); ok {
		return pb.NewMatcherFromPages(ix.Ref, opts, m)
	}
	return m, nil
}

// Searcher returns a pattern searcher over the index, on the CPU.
func (ix *Index) Searcher() (kernels.Searcher, error) {
	return ix.SearcherOn(nil)
}

// patternSearchBackend is a backend that runs the searches of a CPU searcher itself (on a GPU),
// with the same results.
type patternSearchBackend interface {
	NewPatternSearcher(s *cpu.Searcher) (kernels.Searcher, error)
}

// SearcherOn returns a pattern searcher over the index that runs on backend b when b can search
// patterns, and on the CPU otherwise (b nil: the CPU).
func (ix *Index) SearcherOn(b kernels.Backend) (kernels.Searcher, error) {
	return ix.searcherOn(b, false, false)
}

// CountSearcherOn is SearcherOn for searches that are only counted (sapipe count): a device
// given an index file's pages holds their rank structures and k-mer tables but not their texts
// and suffix arrays (cpu.DeviceIndex.CountOnly), about a seventh of the memory to copy there.
// Its counts are SearcherOn's.
func (ix *Index) CountSearcherOn(b kernels.Backend) (kernels.Searcher, error) {
	return ix.searcherOn(b, true, false)
}

// LocateSearcherOn is CountSearcherOn for searches that are located too (sapipe locate): the
// device finds each pattern's rows, and the host reads their positions from the suffix arrays,
// which it checks first (the device checks only what it holds). Its hits are SearcherOn's.
func (ix *Index) LocateSearcherOn(b kernels.Backend) (kernels.Searcher, error) {
	return ix.searcherOn(b, true, true)
}

// searcherOn is SearcherOn, with a device holding only what counting needs where countOnly, and
// the suffix arrays checked on the host then where hostSA.
func (ix *Index) searcherOn(b kernels.Backend, countOnly, hostSA bool) (kernels.Searcher, error) {
	if eb, ok := b.(earlySearchBackend); ok && ix.early != nil {
		return ix.searcherEarly(b, countOnly, hostSA, func(int) earlySearchBackend { return eb })
	}
	if on := ix.searchCards(b); on != nil {
		return ix.searcherEarly(b, countOnly, hostSA, func(i int) earlySearchBackend { return on[i] })
	}
	if err := ix.Wait(); err != nil {
		return nil, err
	}
	var all []kernels.Searcher
	for i, p := range ix.Pages {
		s, err := cpu.NewSearcher(p, ix.Kmers[i])
		if err != nil {
			return nil, err
		}
		var ks kernels.Searcher = s
		if ps, ok := b.(patternSearchBackend); ok {
			if ks, err = ps.NewPatternSearcher(s); err != nil {
				closeAll(all)
				return nil, err
			}
		}
		all = append(all, ks)
	}
	return ix.pagedSearcher(b, all)
}

// earlySearchBackend is a patternSearchBackend that copies an index file's page (early: without
// C) to its memory while it is checked; checked returns the checked page's searcher. With sums
// (the checksums' wait) given, the backend checks the page itself, and unchecked returns the
// searcher of the page taken without the host's checks.
type earlySearchBackend interface {
	NewPatternSearcherEarly(early *cpu.DeviceIndex, sums func() error, unchecked, checked func() (*cpu.Searcher, error)) (kernels.Searcher, error)
}

// cardSpreader is a backend of several devices that can give the pages of an index to different
// ones for a pattern search: SearchCard returns the device to hold page i of n, or nil where every
// device is to hold every page.
type cardSpreader interface {
	SearchCard(i, n int) kernels.Backend
}

// searchCards returns the device of each page of an index from OpenIndexChecking where b spreads
// them over its devices, or nil.
func (ix *Index) searchCards(b kernels.Backend) []earlySearchBackend {
	sc, ok := b.(cardSpreader)
	if !ok || ix.early == nil {
		return nil
	}
	n := len(ix.early.Pages)
	on := make([]earlySearchBackend, n)
	for i := range on {
		if on[i], ok = sc.SearchCard(i, n).(earlySearchBackend); !ok {
			return nil
		}
	}
	return on
}

// searcherEarly is SearcherOn for an index from OpenIndexChecking, page i on the device on(i):
// every page's arrays go to their device at once (one goroutine a page; a device takes them in
// turn) while the checks run. The checks' error comes first.
func (ix *Index) searcherEarly(b kernels.Backend, countOnly, hostSA bool, on func(i int) earlySearchBackend) (kernels.Searcher, error) {
	fi := ix.early
	// The host's part of the unchecked pages (their k-mer tables and tail rows checked) while
	// the device copies and checks the arrays.
	go ix.uncheckedPages()
	// A device that holds no suffix arrays does not check them: the host does where it reads
	// them for the occurrences' positions, in the checksums' pass (OpenSearchIndexChecking) or
	// else in its checks of the pages (at once where they ran: OpenSearchIndex).
	saChecked := make(chan error, 1)
	switch {
	case !hostSA:
		saChecked <- nil
	case ix.saInSums:
		go func() {
			err := ix.Sums()
			if err == nil && ix.saBad.Load() {
				err = errors.New("a suffix array out of range")
			}
			saChecked <- err
		}()
	default:
		go func() { saChecked <- ix.Wait() }()
	}
	all := make([]kernels.Searcher, len(fi.Pages))
	errs := make([]error, len(fi.Pages))
	var wg sync.WaitGroup
	for i := range fi.Pages {
		pg := &fi.Pages[i]
		early := cpu.UncheckedDeviceIndex(fi.Text[pg.Start:pg.WinEnd], fi.Sigma, pageArrays(pg), fi.KmerLen, pg.Kmers)
		early.CountOnly = countOnly
		unchecked := func() (*cpu.Searcher, error) {
			if err := ix.uncheckedPages(); err != nil {
				return nil, err
			}
			return cpu.NewSearcher(ix.page(i))
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			all[i], errs[i] = on(i).NewPatternSearcherEarly(early, ix.Sums, unchecked, func() (*cpu.Searcher, error) {
				if err := ix.Wait(); err != nil {
					return nil, err
				}
				return cpu.NewSearcher(ix.page(i))
			})
		}()
	}
	wg.Wait()
	checks := ix.Sums // every page checked on the device
	if saErr := <-saChecked; errors.Join(errs...) != nil || saErr != nil {
		checks = ix.Wait // a page's checks on the host give its error
	}
	if err := cmp.Or(checks(), errors.Join(errs...)); err != nil {
		closeAll(all)
		return nil, err
	}
	return ix.pagedSearcher(b, all)
}

// closeAll closes the searchers of all that were made.
func closeAll(all []kernels.Searcher) {
	for _, s := range all {
		if s != nil {
			s.Close()
		}
	}
}

// pagedSearcher is the searcher over the index's pages, each searched by all[i]: that one for a
// single page, else one that merges the pages' intervals.
func (ix *Index) pagedSearcher(b kernels.Backend, all []kernels.Searcher) (kernels.Searcher, error) {
	if len(all) == 1 {
		return all[0], nil
	}
	var searches []cpu.IntervalSearch
	for _, ks := range all {
		is, ok := ks.(cpu.IntervalSearch)
		if !ok {
			closeAll(all)
			return nil, fmt.Errorf("the search on %s gives no intervals", b.Name())
		}
		searches = append(searches, is)
	}
	return cpu.NewPagedSearcher(ix.Ref.Text, ix.Pages, ix.Tails, searches)
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
