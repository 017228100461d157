package cuda

import (
	"cmp"
	"errors"
	"fmt"
	"math/bits"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sapipe/sapipe/kernels"
	"github.com/sapipe/sapipe/kernels/cpu"
)

// The GPU matcher. Its index is kernels/cpu's (the same arrays, value for value): the whole text and
// each page's suffix array, LCP, rank structure and deep bits on the device, built there from the GPU
// suffix array when every page fits the memory budget (match_build.go), otherwise built on the host
// and copied into frames that hold pages in turn (match_pages.go). Its kernels (match.cuh) follow the
// CPU's search step for step, so results are identical to kernels/cpu's for every mode, page size and batch.
//
// Batches reach Match from several goroutines (stages runs a pool of workers). Each call queues its
// batch and waits; a few device workers, each a goroutine locked to an OS thread with the device's
// context current and its own CUDA stream, pinned host buffers and device buffers, take whatever
// batches are queued (up to a limit) as one launch: copy up, match against every page, copy the
// compact records down, and sort them into each batch's result. While one worker's kernels run,
// another packs or unpacks on the host and a third copies, so transfers, kernels and host work
// overlap, and the memory held is bounded by the workers' buffers whatever the number of queries.

// matchConfig tunes the GPU matcher; zero fields take defaults. Tests force small values.
type matchConfig struct {
	Budget       int64 // device bytes for the reference (its text and page indexes); 0: from the free memory
	PageSize     int   // reference page length; 0: MatchOptions.PageSize, shrunk to fit the budget
	Workers      int   // launches in flight (default: defaultWorkers, as the card's memory allows)
	MaxPositions int   // query positions gathered into one launch (default: launchPositions)
	PieceLen     int   // most query positions one thread walks (default 1024, less for few pieces)
	Lookahead    int   // codes of a long sequence copied past a batch's last position at first (default 1<<16; -1: all)
	ChunkRows    int   // candidate rows examined per pass of -maxmatch's last stage (default 1<<22)
	CardSort     int   // fewest records of such a pass that the card sorts (default cardSortMin; -1: the host sorts all)
	PrintMin     int   // fewest records of a launch whose lines the card writes, where asked (default printMin; -1: none)
	HostIndex    bool  // build the page indexes on the CPU even when they could be built on the device
	Profile      bool  // time each stage with events (SAPIPE_GPU_PROFILE=1)
	// Requests, when set, is the queue the workers take batches from, shared with the matchers of
	// other cards (Group); otherwise the matcher has its own.
	Requests chan *request
	// keepMax, when positive, bounds the records a launch keeps on the card for its lines
	// (keptMax otherwise): tests of the launches that outgrow it.
	keepMax int
	// textMax, when positive, bounds a launch's text written on the card (printTextMax
	// otherwise): tests of launches sorted on the card but formatted on the host.
	textMax int
	// failAfter, when positive, makes the workers fail every launch after that many (tests of a
	// card that fails mid-run).
	failAfter int64
	// part, when set, makes this card one of a chain that holds the reference's pages between
	// them (match_chain.go).
	part *chainPart
	// early, when set, gives an index file's pages while they are checked (uploadEarly).
	early *earlyPages
	// sizer, when set, is the launch sizer shared with the matchers of other cards (Group);
	// otherwise the matcher has its own.
	sizer *launchSizer
	// workersByDefault: Workers was not given; beyond baseWorkers, only as many start as the
	// card has room for once the index is on it (workersFor).
	workersByDefault bool
	// codes, when set, is the pinned memory for batches' codes shared with the matchers of other
	// cards (Group); otherwise the matcher has its own.
	codes *codeMemory
}

// defaults fills the zero fields for a card of info fed by threads host threads
// (SAPIPE_GPU_LAUNCH and SAPIPE_GPU_WORKERS first, where set).
func (c *matchConfig) defaults(info Info, threads int) {
	tuneFromEnv(c)
	if c.MaxPositions <= 0 {
		c.MaxPositions = launchPositions(info.TotalMem)
	}
	if c.Workers <= 0 {
		c.Workers = defaultWorkers(info.TotalMem, c.MaxPositions, threads)
		c.workersByDefault = true
	}
	if c.PieceLen <= 0 {
		c.PieceLen = 1024
	}
	if c.Lookahead == 0 {
		c.Lookahead = defaultLookahead
	}
	if c.ChunkRows <= 0 {
		c.ChunkRows = 1 << 22
	}
	if c.CardSort == 0 {
		c.CardSort = cardSortMin
	}
	if c.PrintMin == 0 {
		c.PrintMin = printMin
	}
}

// cardSortMin is the fewest records of a pass of -maxmatch's last stage that the card sorts
// (worker.sortOnCard): fewer are a launch of reads, a few records a slot, which the host sorts
// in a pass of insertion sorts, cheaper than the card's round trip for the sort's digit counts.
const cardSortMin = 1 << 18

// launchPositions is the default launch size on a card of mem bytes: 32 Mi query positions on
// cards of 64 GiB and more, a power of two for every 2 KiB of memory on smaller ones (8 Mi on 24
// GB), and at least 4 Mi. The walk runs a thread per piece, a whole read of 150 bases for short
// reads, and waits on memory at every step: 8 Mi positions are some 56,000 threads, a fifth of
// what an H100 or H200 holds at once. On the lent machine of two H200, 10 M reads against the
// 3.1 Gbp index (one card): 13.18 s with 8 Mi, 9.75 s with 32 Mi, 12.13 s with 64 Mi (too few
// launches in flight for the device workers to overlap).
func launchPositions(mem uint64) int {
	p := 1 << 22
	for p < 1<<25 && uint64(2*p)*2048 <= mem {
		p *= 2
	}
	return p
}

// defaultWorkers is the number of launches in flight on a card of mem bytes with launches of
// launch positions, fed by threads host threads: one for every four threads, from three to eight,
// while their buffers (reserved at up to 64 bytes a position, at least 1 GiB each; planMatch)
// take at most an eighth of the card. A worker packs, sorts and unpacks its launch on the host
// between its kernels, so with three the card waited for them: on the lent machine of two H200
// (32 host threads), 100 M E. coli reads on one card took 11.4 s with three workers, 7.7 s with
// five and 6.8 s with eight; on the 16-core H200 host, 30 M reads 3.92 s with three and 3.63-3.74
// s with four to eight, the host being the bound there.
func defaultWorkers(mem uint64, launch, threads int) int {
	w := min(max(threads/4, baseWorkers), 8)
	for w > baseWorkers && uint64(w)*workerBytes(launch) > mem/8 {
		w--
	}
	return w
}

// baseWorkers is how many workers the index's memory budget leaves room for (planMatch); more
// start only where the card has room once the index is on it.
const baseWorkers = 3

// workerBytes is the device memory set aside for a worker with launches of launch positions.
func workerBytes(launch int) uint64 { return max(uint64(launch)*64, 1<<30) }

// workersFor is how many of cfg's workers start on a card with free bytes free once the index is
// on it: all of them where given; by default, baseWorkers and as many more as leave an eighth of
// the free memory to other users of the card (a card shared with other processes, or an index
// that left little room).
func workersFor(cfg *matchConfig, free uint64) int {
	if !cfg.workersByDefault || cfg.Workers <= baseWorkers {
		return cfg.Workers
	}
	room := int((free - free/8) / workerBytes(cfg.MaxPositions))
	return min(cfg.Workers, max(baseWorkers, room))
}

// launchRecords is about how many -maxmatch records a launch is sized to give once the runs so
// far tell how many a query position gives (launchSizer): a launch's records are matched in passes of
// ChunkRows, then copied, sorted and unpacked on its worker's goroutine while the batches after it
// wait in order. Against the 3.1 Gbp genscale genome a read gives hundreds of records at -l 30, and
// launches of 32 Mi positions held up to 47 M records, one of them on its card for 3.9 s while the
// other workers idled (lent H200, 200 k reads, -maxmatch -l 30 -b -c: 5.39 s; with launches of 4 Mi
// positions 4.38 s).
const launchRecords = 1 << 22

// launchSizer bounds the query positions a -maxmatch launch gathers: launchRecords' worth at the
// records a position gave in the launches done so far, and before any is done, MaxPositions
// shared among the workers that start at once (so that batches queued while the index was loading
// are spread over them, not gathered by the first). A launch takes at least one batch whatever
// the bound. The unique modes give at most a record a position and keep MaxPositions.
type launchSizer struct {
	positions, records atomic.Int64 // of the launches done
}

// limit is the bound on a launch's positions for a matcher of cfg with workers workers.
func (z *launchSizer) limit(cfg *matchConfig, mode kernels.Mode, workers int) int {
	if mode != kernels.MaxMatch {
		return cfg.MaxPositions
	}
	pos, recs := z.positions.Load(), z.records.Load()
	if pos == 0 {
		return max(cfg.MaxPositions/max(workers, 1), 1)
	}
	if recs == 0 {
		return cfg.MaxPositions
	}
	return int(min(float64(cfg.MaxPositions), max(1, float64(launchRecords)*float64(pos)/float64(recs))))
}

// done adds a finished launch of pos positions that gave recs records.
func (z *launchSizer) done(pos, recs int) {
	z.positions.Add(int64(pos))
	z.records.Add(int64(recs))
}

// tuneFromEnv takes the launch size and the number of device workers from SAPIPE_GPU_LAUNCH
// (query positions a launch gathers) and SAPIPE_GPU_WORKERS where the configuration leaves them
// to the defaults: knobs for measuring (NOTES.md), not for users.
func tuneFromEnv(c *matchConfig) {
	if v, err := strconv.Atoi(os.Getenv("SAPIPE_GPU_LAUNCH")); err == nil && v > 0 && c.MaxPositions == 0 {
		c.MaxPositions = v
	}
	if v, err := strconv.Atoi(os.Getenv("SAPIPE_GPU_WORKERS")); err == nil && v > 0 && c.Workers == 0 {
		c.Workers = v
	}
	if v, err := strconv.Atoi(os.Getenv("SAPIPE_GPU_LOOKAHEAD")); err == nil && v != 0 && c.Lookahead == 0 {
		c.Lookahead = v
	}
	if v, err := strconv.Atoi(os.Getenv("SAPIPE_GPU_CARDSORT")); err == nil && v != 0 && c.CardSort == 0 {
		c.CardSort = v
	}
	if v, err := strconv.Atoi(os.Getenv("SAPIPE_GPU_PRINT")); err == nil && v != 0 && c.PrintMin == 0 {
		c.PrintMin = v
	}
}

// defaultLookahead is how many codes of a long query sequence a launch copies past a batch's last
// position at first (see worker.pack): 3% more than the batch's 2 Mi positions, and past the end
// of any match against a diverged copy. A launch that needs more makes the matcher's lookahead
// 16 times longer (lookMore), and then the whole of every sequence (self-comparison, or an
// identical stretch of megabases).
const defaultLookahead = 1 << 16

// lookMore makes the lookahead 16 times longer, or unbounded from 2^28 on.
func (m *gpuMatcher) lookMore() {
	for {
		la := m.lookahead.Load()
		more := la * 16
		if la <= 0 || more >= 1<<28 {
			more = -1
		}
		if la == more || m.lookahead.CompareAndSwap(la, more) {
			return
		}
	}
}

// matchKernels are the kernels the matcher launches, looked up once.
var matchKernels = []string{"piece_start", "piece_long", "piece_link", "mm_walk", "compact_pieces", "mm_chain", "mm_rows",
	"compact_valid", "mm_sort_keys", "mm_sort_recs", "mm_line_len", "mm_print", "mm_seg_text_ends", "radix_hist_all", "radix_pass_8", "mu_walk", "scan_reduce", "scan_single", "scan_down", "rl_mark", "rl_list"}

// gpuMatcher is a kernels.Matcher on one GPU.
type gpuMatcher struct {
	dev    *device
	ref    *kernels.Reference
	opts   kernels.MatchOptions
	cfg    matchConfig
	host   *cpu.Matcher // the page indexes on the host, when built there
	pages  []hostPage   // their arrays, for loading into frames
	npages int
	text   devBuf
	fs     frameSet
	fn     map[string]uintptr
	runs   runLists // the pages' runs of one symbol (run ranges, start states moved on through runs)

	ownCodes  bool // cfg.codes is this matcher's, freed by its Close
	reqs      chan *request
	quit      chan struct{}
	wg        sync.WaitGroup
	workers   int // started
	closeOnce sync.Once
	closed    atomic.Bool

	stats matchStats
	note  func(string) // the backend's notes: the profile at Close

	printMu  sync.Mutex
	printTab *printTable // the form of lines the card writes (match_print.go)

	// lookahead is how far past a batch's last position a long sequence's codes are copied up;
	// at most 0: all of it (see worker.pack).
	lookahead atomic.Int64
}

// request is one Match call waiting for a worker.
type request struct {
	b    *kernels.Batch
	res  *kernels.Result
	npos int
	done chan error

	// Given by the device worker with a nil on done, for finish: the request's records in slot
	// order, its first segment's slot, and the launch's records they are part of.
	recs  []outRec
	slot0 uint32
	hold  *recHold
	// Or, where the card wrote the launch's lines, the request's (from textLo in the launch's
	// text) and where each of its segments' end.
	text     []byte
	textEnds []uint32
	textLo   int
	textHold *textHold
}

// wait waits for the request's launch and turns its records into matches.
func (r *request) wait() error {
	if err := <-r.done; err != nil {
		// Records handed out before the launch failed go back unread.
		if r.hold != nil {
			r.hold.release()
			r.recs, r.hold = nil, nil
		}
		if r.textHold != nil {
			r.textHold.release()
			r.text, r.textHold = nil, nil
		}
		return err
	}
	r.finish()
	return nil
}

// matchStats counts what the matcher did, for tests, benchmarks and profiles.
type matchStats struct {
	launches, positions, pieces, items, ranges, rows, matches atomic.Int64
	relaunches                                                atomic.Int64 // launches done again with more of a long sequence
	linked                                                    atomic.Int64 // pieces whose start state came from the next piece's
	long                                                      atomic.Int64 // pieces whose start state piece_long compared on with the grid
	runItems                                                  atomic.Int64 // -maxmatch items whose matches came from a page's runs
	jumps                                                     atomic.Int64 // start states moved on through a run by the page's runs
	cardSorted                                                atomic.Int64 // -maxmatch records sorted on the card
	printed                                                   atomic.Int64 // -maxmatch records whose lines the card wrote
	textsMade, textsOut                                       atomic.Int64 // the workers' text buffers: made, out of their pools
	regrown                                                   atomic.Int64 // worker buffers reallocated larger (each free waits for the card)
	waits                                                     waitTally    // the workers' syncs with the card (profiled)
	mu                                                        sync.Mutex
	phase                                                     map[string]time.Duration
	order                                                     []string
}

func (s *matchStats) addPhase(name string, d time.Duration) {
	s.mu.Lock()
	if s.phase == nil {
		s.phase = make(map[string]time.Duration)
	}
	if _, ok := s.phase[name]; !ok {
		s.order = append(s.order, name)
	}
	s.phase[name] += d
	s.mu.Unlock()
}

// String sums the counters and, when profiled, the device time of each stage (summed over the
// workers, whose work overlaps).
func (s *matchStats) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d launches, %d positions in %d pieces, %d items, %d ranges, %d candidate rows, %d matches",
		s.launches.Load(), s.positions.Load(), s.pieces.Load(), s.items.Load(), s.ranges.Load(), s.rows.Load(), s.matches.Load())
	if n := s.linked.Load(); n > 0 {
		fmt.Fprintf(&b, " (%d start states from the next piece's)", n)
	}
	if n := s.long.Load(); n > 0 {
		fmt.Fprintf(&b, " (%d long start states)", n)
	}
	if n := s.runItems.Load(); n > 0 {
		fmt.Fprintf(&b, " (%d positions' matches from runs)", n)
	}
	if n := s.jumps.Load(); n > 0 {
		fmt.Fprintf(&b, " (%d start states moved on through runs)", n)
	}
	if n := s.cardSorted.Load(); n > 0 {
		fmt.Fprintf(&b, " (%d records sorted on the card)", n)
	}
	if n := s.printed.Load(); n > 0 {
		fmt.Fprintf(&b, " (%d lines written on the card, %d text buffers)", n, s.textsMade.Load())
	}
	if n := s.regrown.Load(); n > 0 {
		fmt.Fprintf(&b, " (%d buffers reallocated larger)", n)
	}
	if n := s.relaunches.Load(); n > 0 {
		fmt.Fprintf(&b, " (%d launches done again with more of a long sequence)", n)
	}
	s.mu.Lock()
	for _, name := range s.order {
		fmt.Fprintf(&b, "; %s %v", name, s.phase[name].Round(time.Microsecond))
	}
	s.mu.Unlock()
	if n := s.waits.n.Load(); n > 0 {
		fmt.Fprintf(&b, "; the workers waited for the card %v in %d syncs", time.Duration(s.waits.ns.Load()).Round(time.Microsecond), n)
	}
	return b.String()
}

// pageBytesPerBase estimates the device bytes of a page index per window position for an alphabet of
// sigma codes: SA, one-byte LCP, rank blocks, deep bits and block minima (long LCP values aside).
func pageBytesPerBase(sigma int) float64 {
	planes := 1
	for 1<<planes < max(sigma, 2) {
		planes++
	}
	counts := (max(sigma-kernels.FirstCode, 0) + 1) / 2
	return 4 + 1 + float64(8*(counts+2*planes))/cpu.OccBlockRows + 1.0/8 + 4.0/64 + 0.01
}

// matchPlan is how a reference's index fits one card: the device memory it may take (budget),
// what is left of that after the text (room), and the page size asked for.
type matchPlan struct {
	budget, room, textBytes int64
	ps                      int // MatchOptions.PageSize or the matchConfig's, else the whole text
	perBase                 float64
	minLen                  int
}

// planMatch measures what card b can hold of ref's index: cfg.Budget, or the free memory less
// room for the workers' buffers and other users of the card, bounded by opts.DeviceMemory.
func planMatch(b *Backend, ref *kernels.Reference, opts kernels.MatchOptions, cfg matchConfig) (matchPlan, error) {
	cfg.defaults(b.dev.info, b.opts.Threads)
	d := b.dev
	n := len(ref.Text)
	budget := cfg.Budget
	if budget <= 0 {
		free, err := d.freeMemory()
		if err != nil {
			return matchPlan{}, err
		}
		// Leave room for the workers' buffers (up to about 64 bytes a position of a launch) and
		// for other users of the card: the workers given, or by default baseWorkers (more start
		// where there is room left; workersFor).
		workers := cfg.Workers
		if cfg.workersByDefault {
			workers = min(workers, baseWorkers)
		}
		budget = int64(free) - int64(free/8) - int64(workers)*int64(workerBytes(cfg.MaxPositions))
		if opts.DeviceMemory > 0 {
			budget = min(budget, opts.DeviceMemory)
		}
	}
	p := matchPlan{budget: budget, textBytes: int64(n + 256), perBase: pageBytesPerBase(ref.Alpha.Size), minLen: opts.MinLen}
	p.room = budget - p.textBytes
	p.ps = cfg.PageSize
	if p.ps <= 0 {
		p.ps = opts.PageSize
	}
	if p.ps <= 0 || p.ps > n {
		p.ps = n
	}
	return p, nil
}

// est is the device memory of a page of ps bases.
func (p *matchPlan) est(ps int) int64 {
	return int64(p.perBase*float64(ps+kernels.FirstCode+cpu.Overlap(p.minLen))) + 4096
}

// build is the least device memory that building a page of ps bases takes besides the pages
// built before it: the LCP's arrays (match_build.go: the suffix array and the permuted LCP, 8 bytes
// a position) and its suffix array's construction in slices (slicedLeastBytes; sa.go's takes more
// memory where the card has it).
func (p *matchPlan) build(ps int) int64 {
	w := ps + cpu.Overlap(p.minLen)
	sa := slicedLeastBytes(w)
	return int64(sa+sa/32+(64<<20)) + 8*int64(w)
}

// fits reports whether count pages of ps bases, and the building of one more, fit the room.
func (p *matchPlan) fits(count, ps int) bool { return int64(count)*p.est(ps)+p.build(ps) <= p.room }

// bigPage is the page size under which pages are no longer made smaller to fit all of them on
// the device: below it, pages are built on the host and loaded into frames in turn.
const bigPage = 1 << 24

// pageSize returns the size of the pages of an n-base text on this card: the size asked for, made
// smaller until all pages and the building of one fit (a page is made smaller rather than built
// on the host, minutes for a large reference), down to bigPage; where even those leave no room,
// pages that two frames hold.
func (p *matchPlan) pageSize(n int) (int, error) {
	ps := p.ps
	for {
		pages := (n + ps - 1) / ps
		if p.fits(pages, ps) || ps <= bigPage && 2*p.est(ps) <= p.room {
			return ps, nil
		}
		if ps < 1<<10 && ps < n {
			return 0, fmt.Errorf("%w: a device memory budget of %d MiB holds the %d-base text but no useful page", errNoRoom, p.budget>>20, n)
		}
		ps = (ps + 1) / 2
	}
}

// newMatcher indexes ref and starts the device workers: with given nil it builds the pages (on
// the device when they fit, else on the host); otherwise it copies given's pages (an index
// file's). It returns an error wrapping errNoRoom when the budget cannot hold the text and one
// page of a useful size.
func newMatcher(b *Backend, ref *kernels.Reference, opts kernels.MatchOptions, cfg matchConfig, given *cpu.Matcher) (*gpuMatcher, error) {
	if err := opts.Validate(ref); err != nil {
		return nil, err
	}
	cfg.defaults(b.dev.info, b.opts.Threads)
	if os.Getenv("SAPIPE_GPU_PROFILE") == "1" {
		cfg.Profile = true
	}
	d := b.dev
	n := len(ref.Text)
	if n == 0 {
		return nil, fmt.Errorf("%w: empty reference", errNoRoom)
	}
	pl, err := planMatch(b, ref, opts, cfg)
	if err != nil {
		return nil, err
	}
	room, budget := pl.room, pl.budget
	ps := pl.ps
	if cfg.part == nil {
		if ps, err = pl.pageSize(n); err != nil {
			return nil, err
		}
	}
	m := &gpuMatcher{dev: d, ref: ref, opts: opts, cfg: cfg, fn: make(map[string]uintptr), note: b.note,
		reqs: cfg.Requests, quit: make(chan struct{})}
	if m.reqs == nil {
		m.reqs = make(chan *request)
	}
	if m.cfg.sizer == nil {
		m.cfg.sizer = &launchSizer{}
	}
	if m.cfg.codes == nil {
		m.cfg.codes, m.ownCodes = newCodeMemory(d), true
	}
	m.lookahead.Store(int64(cfg.Lookahead))
	m.fs.cond = sync.NewCond(&m.fs.mu)
	t0 := time.Now()
	err = d.run(func() error {
		for _, name := range slices.Concat(matchKernels, buildKernels) {
			f, err := d.fn(name)
			if err != nil {
				return err
			}
			m.fn[name] = f
		}
		if err := m.text.ensure(d, uint64(pl.textBytes)); err != nil {
			return err
		}
		if err := d.copyInFrom(m.text.p, ptrOf(ref.Text), n); err != nil {
			return err
		}
		return d.sync()
	})
	trace("matcher: kernels looked up, text copied", t0)
	switch {
	case err != nil:
	case cfg.part != nil && given != nil:
		// One card of several, each holding some of the pages: all of them resident, or none.
		m.npages = len(cfg.part.pages)
		err = m.uploadHost(given, cfg.part.pages, room, budget)
		if err == nil && !m.fs.resident {
			err = fmt.Errorf("%w: pages of %d MiB leave no room on %s", errNoRoom, cfg.part.bytes>>20, b.Name())
		}
	case cfg.part != nil:
		m.npages = len(cfg.part.bounds)
		if err = m.buildResident(cfg.part.bounds); err == nil {
			m.fs.resident = true
		}
	case cfg.early != nil:
		m.npages = len(cfg.early.arrays)
		err = m.uploadEarly(cfg.early, room)
	case given != nil:
		m.npages = len(given.Pages())
		err = m.uploadHost(given, given.Pages(), room, budget)
	default:
		bounds := cpu.PageBounds(n, ps, opts.MinLen)
		m.npages = len(bounds)
		if pl.fits(len(bounds), ps) && !cfg.HostIndex {
			// Every page fits: build them on the device, where they stay.
			err = m.buildResident(bounds)
			if err == nil {
				m.fs.resident = true
			} else if errors.Is(err, errRepetitive) || isOutOfMemory(err) {
				b.note(fmt.Sprintf("reference index built on the CPU: %v", err))
				m.freeFrames()
				err = m.hostIndex(b, ps, room, budget)
			}
		} else {
			err = m.hostIndex(b, ps, room, budget)
		}
	}
	if err != nil {
		m.freeFrames()
		m.freeDevice()
		if isOutOfMemory(err) && !errors.Is(err, errNoRoom) {
			return nil, fmt.Errorf("%w: %v", errNoRoom, err)
		}
		return nil, err
	}
	trace("matcher: pages indexed", t0)
	workers := cfg.Workers
	if cfg.workersByDefault && workers > baseWorkers {
		free, err := d.freeMemory()
		if err != nil {
			m.Close()
			return nil, err
		}
		workers = workersFor(&cfg, free)
	}
	m.workers = workers
	ready := make(chan error)
	for range workers {
		m.wg.Add(1)
		go m.worker(ready)
		if err := <-ready; err != nil {
			m.Close()
			return nil, err
		}
	}
	trace("matcher: workers started", t0)
	return m, nil
}

// hostIndex builds the pages of ps bases on the CPU (cpu.NewMatcher's pages) and copies them to
// frames: all of them when they fit room, otherwise as many frames as fit, loaded in turn.
func (m *gpuMatcher) hostIndex(b *Backend, ps int, room, budget int64) error {
	n := len(m.ref.Text)
	hostOpts := m.opts
	hostOpts.PageSize = ps
	if ps >= n {
		hostOpts.PageSize = 0
	}
	host, err := cpu.NewMatcher(m.ref, hostOpts, max(b.opts.Threads, 1))
	if err != nil {
		return err
	}
	return m.uploadHost(host, host.Pages(), room, budget)
}

// uploadHost copies pages (host's, or some of them) to frames: all of them when they fit room,
// otherwise as many frames as fit, loaded in turn.
func (m *gpuMatcher) uploadHost(host *cpu.Matcher, pages []*cpu.Page, room, budget int64) error {
	d := m.dev
	m.host = host
	var frameBytes, total uint64
	for _, p := range pages {
		hp := newHostPage(p)
		frameBytes = max(frameBytes, hp.bytes)
		total += hp.bytes
		m.pages = append(m.pages, hp)
	}
	// Resident, each page in a frame of its size, or frames of the largest page's size.
	m.fs.resident = room >= 0 && total <= uint64(room)
	frames := len(m.pages)
	if !m.fs.resident {
		frames = int(max(room, 0) / int64(frameBytes))
	}
	if frames < 1 {
		return fmt.Errorf("%w: a device memory budget of %d MiB holds no page of the index (%d MiB)", errNoRoom, budget>>20, frameBytes>>20)
	}
	return d.run(func() error {
		for i := range frames {
			f := &frame{page: -1}
			m.fs.frames = append(m.fs.frames, f)
			size := frameBytes
			if m.fs.resident {
				size = m.pages[i].bytes
			}
			if err := f.mem.ensureExact(d, size); err != nil {
				return err
			}
			if m.fs.resident {
				desc, err := m.pages[i].upload(d, f.mem.p, m.text.p, m.ref.Text)
				if err != nil {
					return err
				}
				f.page, f.desc = i, desc
			}
		}
		return d.sync()
	})
}

// earlyPages are an index file's pages while the host checks them: their arrays, which may be
// copied to the device at once, and checked, which returns the matcher of the checked pages (or
// the checks' error).
type earlyPages struct {
	arrays  []cpu.DeviceArrays // without C, Deep and LCPUp
	sums    func() error       // the file's checksums, when the device checks the pages (check.go)
	checked func() (*cpu.Matcher, error)
}

// fallback is what a backend does when a matcher could not take the early pages (err): the
// checksums' error, or the host's checks' error, comes first; then where the pages did not fit or
// memory ran out, again (with the pages checked on the host: paging, the CPU, or the pages over
// several cards); any other error is returned.
func (e *earlyPages) fallback(err error, again func(host *cpu.Matcher) (kernels.Matcher, error)) (kernels.Matcher, error) {
	if e.sums != nil {
		if serr := e.sums(); serr != nil {
			return nil, serr
		}
	}
	host, cerr := e.checked()
	if cerr != nil {
		return nil, cerr
	}
	if errors.Is(err, errNotResident) || isOutOfMemory(err) {
		return again(host)
	}
	return nil, err
}

// errNotResident: the early pages do not all fit the device at once.
var errNotResident = errors.New("the pages do not fit the device together")

// uploadEarly copies the early pages' arrays to frames of their own while the host checks them,
// then, once checked, what the checks make (C and Deep); nothing is matched before. All pages are
// resident, or none is copied (errNotResident).
func (m *gpuMatcher) uploadEarly(e *earlyPages, room int64) error {
	d := m.dev
	hps := make([]hostPage, len(e.arrays))
	var total uint64
	for i, a := range e.arrays {
		hps[i] = hostPageOf(a)
		total += hps[i].bytes
		if !earlyShapeOK(&hps[i].a, hps[i].shape) {
			return errNotResident // arrays of other lengths than their page's: the host's checks say which
		}
	}
	if room < 0 || total > uint64(room) {
		return errNotResident
	}
	t0 := time.Now()
	err := d.run(func() error {
		for i := range hps {
			f := &frame{page: -1}
			m.fs.frames = append(m.fs.frames, f)
			if err := f.mem.ensureExact(d, hps[i].bytes); err != nil {
				return err
			}
			desc, err := hps[i].upload(d, f.mem.p, m.text.p, m.ref.Text)
			if err != nil {
				return err
			}
			f.page, f.desc = i, desc
		}
		return nil // the copies go on while the checks do
	})
	if err != nil {
		return err
	}
	trace("matcher: unchecked pages sent", t0)
	if e.sums != nil {
		err := m.checkEarly(e, hps)
		trace(fmt.Sprintf("matcher: pages checked on the device (%v)", err), t0)
		if !errors.Is(err, errDeviceCheck) {
			return err
		}
		// The host's checks, for the error's words.
	}
	host, err := e.checked()
	if err != nil {
		return err
	}
	trace("matcher: pages checked", t0)
	pages := host.Pages()
	if len(pages) != len(hps) {
		return fmt.Errorf("the checked index has %d pages, the file %d", len(pages), len(hps))
	}
	m.host = host
	m.fs.resident = true
	return d.run(func() error {
		for i, p := range pages {
			hp := newHostPage(p)
			f := m.fs.frames[i]
			if hp.shape != hps[i].shape || !sameArrays(&hp.a, &hps[i].a) {
				// The checks gave other arrays (copies of the file's): send the page again, in a
				// frame of its size.
				if err := f.mem.ensureExact(d, hp.bytes); err != nil {
					return err
				}
				desc, err := hp.upload(d, f.mem.p, m.text.p, m.ref.Text)
				if err != nil {
					return err
				}
				f.desc = desc
			} else if err := hp.uploadMade(d, &f.desc); err != nil {
				return err
			}
			m.pages = append(m.pages, hp)
		}
		return d.sync()
	})
}

// isOutOfMemory reports a failed device allocation.
func isOutOfMemory(err error) bool {
	var ce *Error
	return errors.Is(err, errNoRoom) || errors.As(err, &ce) && ce.Result == resultOutOfMemory
}

// freeFrames releases the frames (device goroutine).
func (m *gpuMatcher) freeFrames() {
	_ = m.dev.run(func() error {
		for _, f := range m.fs.frames {
			f.mem.free(m.dev)
		}
		return nil
	})
	m.fs.frames = nil
}

// freeDevice releases the text and the frames.
func (m *gpuMatcher) freeDevice() {
	m.freeFrames()
	_ = m.dev.run(func() error {
		m.text.free(m.dev)
		m.runs.free(m.dev)
		m.freePrint()
		return nil
	})
}

// Match matches every segment of b and appends the results to res. Safe for concurrent use.
func (m *gpuMatcher) Match(b *kernels.Batch, res *kernels.Result) error {
	if m.closed.Load() {
		return errors.New("GPU matcher is closed")
	}
	r := newRequest(b, res)
	select {
	case m.reqs <- r:
	case <-m.quit:
		return errors.New("GPU matcher is closed")
	}
	return r.wait()
}

// newRequest returns the request of one Match call.
func newRequest(b *kernels.Batch, res *kernels.Result) *request {
	r := &request{b: b, res: res, done: make(chan error, 1)}
	for _, sg := range b.Segs {
		if sg.To > sg.From {
			r.npos += sg.To - sg.From
		}
	}
	return r
}

// Close stops the workers and frees the device memory.
func (m *gpuMatcher) Close() error {
	m.closeOnce.Do(func() {
		m.closed.Store(true)
		close(m.quit)
		m.wg.Wait()
		m.freeDevice()
		if m.ownCodes {
			m.cfg.codes.free()
		}
		if m.cfg.Profile {
			m.note("GPU matcher: " + m.stats.String())
		}
	})
	return nil
}

// Stats describes what the matcher did so far.
func (m *gpuMatcher) Stats() string { return m.stats.String() }

// GrowCodes implements kernels.CodeMemory: batches' codes in pinned memory, copied up from there.
func (m *gpuMatcher) GrowCodes(codes []byte, n int) []byte { return m.cfg.codes.GrowCodes(codes, n) }

// worker is a device worker: see the comment at the top of this file.
func (m *gpuMatcher) worker(ready chan<- error) {
	defer m.wg.Done()
	w, err := m.newWorker()
	ready <- err
	if err != nil {
		return
	}
	defer w.free()
	if m.cfg.Profile {
		w.s.waits = &m.stats.waits
	}
	idleFrom := time.Now() // profiled: since when the worker has waited for a batch
	var carry *request
	part := m.cfg.part
	for {
		l := &launch{}
		if part != nil && part.in != nil {
			select {
			case l = <-part.in:
			case <-m.quit:
				return
			}
		} else {
			if carry != nil {
				l.batch, carry = append(l.batch, carry), nil
			} else {
				select {
				case r := <-m.reqs:
					l.batch = append(l.batch, r)
				case <-m.quit:
					return
				}
			}
			npos := l.batch[0].npos
			limit := m.cfg.sizer.limit(&m.cfg, m.opts.Mode, m.workers)
		gather:
			for npos < limit {
				select {
				case r := <-m.reqs:
					if npos+r.npos > limit {
						carry = r
						break gather
					}
					l.batch = append(l.batch, r)
					npos += r.npos
				default:
					break gather
				}
			}
		}
		var t0 time.Time
		if traceOn || m.cfg.Profile {
			t0 = time.Now()
		}
		if m.cfg.Profile {
			m.stats.addPhase("workers waiting for batches", t0.Sub(idleFrom))
		}
		forward, err := w.run(l)
		if m.cfg.Profile {
			idleFrom = time.Now()
			m.stats.addPhase("workers' launches, host and card", idleFrom.Sub(t0))
		}
		if traceOn {
			w.traceLaunch(l, t0)
		}
		if n := m.cfg.failAfter; n > 0 && m.stats.launches.Load() > n {
			err = fmt.Errorf("gpu:%d: launch failed (a test's injected failure)", m.dev.info.Ordinal)
		}
		if err == nil && forward {
			select {
			case part.next <- l:
				continue
			case <-m.quit:
				err = errors.New("GPU matcher is closed")
			}
		}
		if part != nil {
			part.links.done(l)
		}
		for _, r := range l.batch {
			r.done <- err
		}
	}
}

// mergeRecords puts the -maxmatch records of several pages in (slot, text position) order. Each
// page's records, recs[starts[i]:starts[i+1]] (starts ends with len(recs)), are in slot order
// already (that of the items they come from), so the pages are merged by slot, pairwise, between
// recs and buf, and then only the runs of one slot are sorted: linear, where sorting them whole
// took most of a launch's host time against a repetitive genome of two pages (hundreds of
// millions of records a launch). It returns the ordered records and the other buffer, for reuse.
func mergeRecords(recs, buf []outRec, starts []int) (sorted, spare []outRec) {
	buf = slices.Grow(buf[:0], len(recs))[:len(recs)]
	bounds := slices.Clone(starts)
	src, dst := recs, buf
	for len(bounds) > 2 {
		parts := len(bounds) - 1
		next := bounds[:0:0]
		for i := 0; i < parts; i += 2 {
			next = append(next, bounds[i])
			if i+1 == parts {
				copy(dst[bounds[i]:bounds[i+1]], src[bounds[i]:bounds[i+1]])
				continue
			}
			mergeBySlot(dst[bounds[i]:bounds[i+2]], src[bounds[i]:bounds[i+1]], src[bounds[i+1]:bounds[i+2]])
		}
		bounds = append(next, len(recs))
		src, dst = dst, src
	}
	sortRecords(src, true)
	return src, dst
}

// mergeBySlot merges a and b, each in slot order, into dst (of their length), a's records first
// among those of one slot.
func mergeBySlot(dst, a, b []outRec) {
	i, j, k := 0, 0, 0
	for i < len(a) && j < len(b) {
		if b[j].slot < a[i].slot {
			dst[k] = b[j]
			j++
		} else {
			dst[k] = a[i]
			i++
		}
		k++
	}
	k += copy(dst[k:], a[i:])
	copy(dst[k:], b[j:])
}

// inTextOrder reports whether the records of one slot are in text position order.
func inTextOrder(run []outRec) bool {
	for i := 1; i < len(run); i++ {
		if run[i].textPos() < run[i-1].textPos() {
			return false
		}
	}
	return true
}

// byTextPos orders the records of one slot.
func byTextPos(a, b outRec) int { return cmp.Compare(a.textPos(), b.textPos()) }

// sortKeyed sorts one slot's run of fewer than radixRecs records by text position (stable): each
// record's offset from the run's least position and its index packed into one integer, those
// sorted by slices.Sort, the records placed through scratch (grown as needed, and returned for
// the next call). pdqsort with a comparison function took 1.8 of 28.6 CPU-s of -maxmatch -l 30
// against the 3.1 Gbp genscale genome (lent H200), in runs of 17 to 255 records.
func sortKeyed(run, scratch []outRec) []outRec {
	var _ [256 - radixRecs]struct{} // an index fits the key's low byte
	var keys [radixRecs]uint64
	lo, hi := textSpan(run)
	if uint64(hi-lo) >= 1<<56 {
		slices.SortStableFunc(run, byTextPos)
		return scratch
	}
	k := keys[:len(run)]
	for i, r := range run {
		k[i] = uint64(r.textPos()-lo)<<8 | uint64(i)
	}
	slices.Sort(k)
	scratch = append(scratch[:0], run...)
	for i, key := range k {
		run[i] = scratch[byte(key)]
	}
	return scratch
}

// textSpan is the least and the greatest text position of run's records (not empty).
func textSpan(run []outRec) (lo, hi int64) {
	lo, hi = run[0].textPos(), run[0].textPos()
	for _, r := range run[1:] {
		p := r.textPos()
		lo, hi = min(lo, p), max(hi, p)
	}
	return lo, hi
}

// radixRecs is the shortest run of one slot's records that sortByTextPos sorts by radix: a read in
// a satellite of the 3.1 Gbp genscale genome has hundreds of thousands, which pdqsort with a
// comparison function took 11 of 33 CPU-s to order in a -maxmatch -l 30 run (lent H200), on one
// goroutine where one slot's run fills a part.
const radixRecs = 256

// sortByTextPos sorts one slot's records by text position, by radix on the bytes of their offsets
// from the least (stable; a byte that every offset shares is skipped), with scratch (grown as
// needed) returned for the next call.
func sortByTextPos(run, scratch []outRec) []outRec {
	lo, hi := textSpan(run)
	digits := (bits.Len64(uint64(hi-lo)) + 7) / 8
	var count [8][256]int
	for _, r := range run {
		k := uint64(r.textPos() - lo)
		for d := range digits {
			count[d][byte(k>>(8*d))]++
		}
	}
	scratch = slices.Grow(scratch[:0], len(run))[:len(run)]
	src, dst := run, scratch
	for d := range digits {
		shift := 8 * d
		c := &count[d]
		if c[byte(uint64(src[0].textPos()-lo)>>shift)] == len(src) {
			continue
		}
		at := 0
		for b, n := range c {
			c[b] = at
			at += n
		}
		for _, r := range src {
			b := byte(uint64(r.textPos()-lo) >> shift)
			dst[c[b]] = r
			c[b]++
		}
		src, dst = dst, src
	}
	if &src[0] != &run[0] {
		copy(run, src)
	}
	return scratch
}

// sortRecords puts records in (slot, text position) order. With runs set they are in slot order
// already (one page's records) and only the runs of one slot are sorted.
func sortRecords(recs []outRec, runs bool) {
	if !runs {
		slices.SortFunc(recs, func(a, b outRec) int {
			if a.slot != b.slot {
				return int(a.slot) - int(b.slot)
			}
			return byTextPos(a, b)
		})
		return
	}
	sortRuns := func(recs []outRec) {
		var scratch []outRec // a long run's radix sort's
		for i := 0; i < len(recs); {
			j := i + 1
			for j < len(recs) && recs[j].slot == recs[i].slot {
				j++
			}
			switch {
			case j-i > 16 && inTextOrder(recs[i:j]):
				// The card sorted it (sortOnCard), or the pages' merge kept it in order.
			case j-i >= radixRecs:
				scratch = sortByTextPos(recs[i:j], scratch)
			case j-i > 16:
				scratch = sortKeyed(recs[i:j], scratch)
			case j-i > 1:
				// A read's few rows: insertion by text position, inline (most runs are of 2-4).
				run := recs[i:j]
				for a := 1; a < len(run); a++ {
					r, p := run[a], run[a].textPos()
					b := a
					for ; b > 0 && run[b-1].textPos() > p; b-- {
						run[b] = run[b-1]
					}
					run[b] = r
				}
			}
			i = j
		}
	}
	// Millions of records (-maxmatch against a repetitive genome) are cut at slot boundaries into
	// parts sorted on every core: the device worker waits for them before it takes its next
	// launch.
	n := len(recs)
	if n>>14 < 2 { // before GOMAXPROCS, which takes the scheduler's lock
		sortRuns(recs)
		return
	}
	parts := min(runtime.GOMAXPROCS(0), n>>14)
	cuts := []int{0}
	for t := 1; t < parts; t++ {
		c := max(n*t/parts, cuts[len(cuts)-1]+1)
		for c < n && recs[c].slot == recs[c-1].slot {
			c++
		}
		if c < n {
			cuts = append(cuts, c)
		}
	}
	cuts = append(cuts, n)
	var wg sync.WaitGroup
	for i := range len(cuts) - 1 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sortRuns(recs[cuts[i]:cuts[i+1]])
		}()
	}
	wg.Wait()
}
