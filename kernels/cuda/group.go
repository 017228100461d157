package cuda

import (
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/sapipe/sapipe/kernels"
	"github.com/sapipe/sapipe/kernels/cpu"
)

// Group is several GPUs used as one backend (--device gpu:all, gpu:0,2, or auto on a host with
// several). The cards exchange nothing: a block, a suffix array or a batch of patterns goes whole
// to whichever card is free, and a matcher keeps a copy of the reference's index on every card,
// whose device workers take the next batch of queries when they are free. So the results are one
// card's, whatever the number of cards.
type Group struct {
	cards []*Backend
	free  chan *Backend // the cards not busy with a suffix array, a block or a pattern batch
}

// OpenGroup opens the GPUs of ordinals, in that order. It fails, closing those it opened, if any
// cannot be used. The cards are set up at once, each on its own goroutine: a card's context and
// module take about 0.13 s (lent H200), which one after another added that much per card to the
// start of every run.
func OpenGroup(ordinals []int, opts Options) (*Group, error) {
	if len(ordinals) == 0 {
		return nil, errors.New("no GPU to open")
	}
	cards := make([]*Backend, len(ordinals))
	errs := make([]error, len(ordinals))
	var wg sync.WaitGroup
	for i, o := range ordinals {
		wg.Go(func() {
			cards[i], errs[i] = Open(o, opts)
			if errs[i] != nil {
				errs[i] = fmt.Errorf("gpu:%d: %w", o, errs[i])
			}
		})
	}
	wg.Wait()
	g := &Group{free: make(chan *Backend, len(ordinals))}
	for i, b := range cards {
		if errs[i] == nil {
			g.cards = append(g.cards, b)
			g.free <- b
		}
	}
	for _, err := range errs {
		if err != nil {
			g.Close()
			return nil, err // the first card's in ordinals' order that failed
		}
	}
	return g, nil
}

// Cards returns the group's GPUs.
func (g *Group) Cards() []*Backend { return g.cards }

// PeakMemory is the most device memory one card's buffers have held at once.
func (g *Group) PeakMemory() int64 {
	var most int64
	for _, b := range g.cards {
		most = max(most, b.PeakMemory())
	}
	return most
}

// Name returns "gpu:0,1 (2 x NVIDIA H100 80GB HBM3)", or the cards' names when they differ.
func (g *Group) Name() string {
	var ords, names []string
	same := true
	for _, b := range g.cards {
		ords = append(ords, fmt.Sprint(b.dev.info.Ordinal))
		names = append(names, b.dev.info.Name)
		same = same && b.dev.info.Name == g.cards[0].dev.info.Name
	}
	if same {
		return fmt.Sprintf("gpu:%s (%d x %s)", strings.Join(ords, ","), len(g.cards), names[0])
	}
	return fmt.Sprintf("gpu:%s (%s)", strings.Join(ords, ","), strings.Join(names, ", "))
}

// Close closes every card.
func (g *Group) Close() error {
	var wg sync.WaitGroup
	for _, b := range g.cards {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b.Close()
		}()
	}
	wg.Wait()
	return nil
}

// take returns a free card, waiting for one; give hands it back.
func (g *Group) take() *Backend  { return <-g.free }
func (g *Group) give(b *Backend) { g.free <- b }

// SuffixArray builds the suffix array of text on the first free card.
func (g *Group) SuffixArray(text []byte, sa []int32) error {
	b := g.take()
	defer g.give(b)
	return b.SuffixArray(text, sa)
}

// BWT transforms the blocks, each on whichever card is free, up to one block a card at once.
func (g *Group) BWT(src, dst [][]byte, primary []int) error {
	if len(dst) != len(src) || len(primary) != len(src) {
		return fmt.Errorf("BWT of %d blocks into %d outputs and %d primary indexes", len(src), len(dst), len(primary))
	}
	errs := make([]error, len(src))
	var wg sync.WaitGroup
	for i := range src {
		b := g.take()
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer g.give(b)
			errs[i] = b.BWT(src[i:i+1], dst[i:i+1], primary[i:i+1])
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// BWTSampled is Backend.BWTSampled on the first free card (compress calls it from one goroutine a
// block, so its blocks spread over the cards).
func (g *Group) BWTSampled(text, dst []byte, shift uint, threads int) (int, []uint32, error) {
	b := g.take()
	defer g.give(b)
	return b.BWTSampled(text, dst, shift, threads)
}

// MaxSuffixArray returns the longest text every card can sort now.
func (g *Group) MaxSuffixArray() int {
	most := kernels.MaxWindow
	for _, b := range g.cards {
		most = min(most, b.MaxSuffixArray())
	}
	return most
}

// NewMatcher builds the index of ref on every card at once, each card building its own copy.
func (g *Group) NewMatcher(ref *kernels.Reference, opts kernels.MatchOptions) (kernels.Matcher, error) {
	return g.newMatcher(ref, opts, nil)
}

// NewMatcherFromPages copies host's pages (an index file's) to every card.
func (g *Group) NewMatcherFromPages(ref *kernels.Reference, opts kernels.MatchOptions, host *cpu.Matcher) (kernels.Matcher, error) {
	return g.newMatcher(ref, opts, host)
}

// NewMatcherFromEarlyPages is Backend.NewMatcherFromEarlyPages over every card: each copies the
// whole index while the host checks it, where every card holds it; otherwise, once checked, as
// NewMatcherFromPages (the pages over the cards, or each card paging through them).
func (g *Group) NewMatcherFromEarlyPages(ref *kernels.Reference, opts kernels.MatchOptions, early []cpu.DeviceArrays, sums func() error, checked func() (*cpu.Matcher, error)) (kernels.Matcher, error) {
	if err := opts.Validate(ref); err != nil {
		return nil, err
	}
	e := &earlyPages{arrays: early, sums: sums, checked: sync.OnceValues(checked)}
	gm := &groupMatcher{reqs: make(chan *request), quit: make(chan struct{})}
	z := &launchSizer{}
	_, err := gm.start(g.cards, ref, opts, nil, func(int) matchConfig { return matchConfig{Requests: gm.reqs, early: e, sizer: z} })
	if err == nil {
		return gm, nil
	}
	return e.fallback(err, func(host *cpu.Matcher) (kernels.Matcher, error) { return g.newMatcher(ref, opts, host) })
}

// groupMatcher is a matcher over a copy of the index on each card, whose device workers take
// batches from one queue that Match puts its batch in; or over a chain of cards that hold the
// pages between them (match_chain.go), whose first card takes the batches.
type groupMatcher struct {
	codes     *codeMemory // the cards' pinned memory for batches' codes
	members   []*gpuMatcher
	reqs      chan *request
	quit      chan struct{}
	links     *chainLinks // a chain's
	closeOnce sync.Once
}

// newMatcher starts a matcher on every card: each with the whole index where every card holds
// it, otherwise a chain of cards that hold the pages between them where they do. A card that
// cannot do its part fails the whole: a run on fewer cards than asked would be a silent slow path.
func (g *Group) newMatcher(ref *kernels.Reference, opts kernels.MatchOptions, host *cpu.Matcher) (kernels.Matcher, error) {
	if err := opts.Validate(ref); err != nil {
		return nil, err
	}
	parts, err := g.splitPages(ref, opts, host)
	if err != nil {
		return nil, err
	}
	if parts != nil {
		gm, err := g.newChain(ref, opts, host, parts)
		if err == nil {
			return gm, nil
		}
		if !errors.Is(err, errNoRoom) && !errors.Is(err, errRepetitive) && !isOutOfMemory(err) {
			return nil, err
		}
		g.cards[0].note(fmt.Sprintf("the index is copied to every card, which pages through it: its pages over %d cards failed: %v", len(parts), err))
	}
	gm := &groupMatcher{reqs: make(chan *request), quit: make(chan struct{})}
	z := &launchSizer{}
	if _, err := gm.start(g.cards, ref, opts, host, func(int) matchConfig { return matchConfig{Requests: gm.reqs, sizer: z} }); err != nil {
		return nil, err // not a nil *groupMatcher in a non-nil Matcher
	}
	return gm, nil
}

// start starts a matcher on each of cards at once, card i with config(i), and returns gm with
// them, or the cards' errors after closing those that started.
func (gm *groupMatcher) start(cards []*Backend, ref *kernels.Reference, opts kernels.MatchOptions, host *cpu.Matcher,
	config func(i int) matchConfig) (*groupMatcher, error) {
	gm.members = make([]*gpuMatcher, len(cards))
	gm.codes = newCodeMemory(cards[0].dev)
	errs := make([]error, len(cards))
	var wg sync.WaitGroup
	for i, b := range cards {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := config(i)
			c.codes = gm.codes
			gm.members[i], errs[i] = newMatcher(b, ref, opts, c, host)
			if errs[i] != nil {
				errs[i] = fmt.Errorf("%s: %w", b.Name(), errs[i])
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		gm.Close()
		return nil, err
	}
	return gm, nil
}

// Match matches every segment of b on whichever card takes it first. Safe for concurrent use.
func (gm *groupMatcher) Match(b *kernels.Batch, res *kernels.Result) error {
	r := newRequest(b, res)
	select {
	case gm.reqs <- r:
	case <-gm.quit:
		return errors.New("GPU matcher is closed")
	}
	return r.wait()
}

// Close stops every card's workers and frees their memory.
func (gm *groupMatcher) Close() error {
	gm.closeOnce.Do(func() {
		close(gm.quit)
		for _, m := range gm.members {
			if m != nil {
				m.Close()
			}
		}
		if gm.links != nil {
			gm.links.free()
		}
		if gm.codes != nil {
			gm.codes.free()
		}
	})
	return nil
}

// GrowCodes implements kernels.CodeMemory (gpuMatcher.GrowCodes), in memory every card copies from.
func (gm *groupMatcher) GrowCodes(codes []byte, n int) []byte { return gm.codes.GrowCodes(codes, n) }

// NewPatternSearcher uploads s's index to every card; each batch of patterns is searched on
// whichever card has room for it (searchDepth batches a card: one searched while the others are
// copied into pinned memory). Where a card cannot hold the index, the search runs on the CPU, with a
// note, as on one card.
func (g *Group) NewPatternSearcher(s *cpu.Searcher) (kernels.Searcher, error) {
	gs := &groupSearcher{cpu: s, free: make(chan *gpuSearcher, searchDepth*len(g.cards))}
	for _, b := range g.cards {
		ks, err := b.NewPatternSearcher(s)
		if err != nil {
			gs.Close()
			return nil, err
		}
		one, ok := ks.(*gpuSearcher)
		if !ok { // the card handed the search to the CPU
			gs.Close()
			return ks, nil
		}
		gs.all = append(gs.all, one)
		for range searchDepth {
			gs.free <- one
		}
	}
	return gs, nil
}

// SearchCard returns the card to hold page i of an index of n pages in a pattern search (count
// and locate, stages): with at least as many pages as cards, each card holds pages of its own, so
// that each copies its share of the index, all at once, and a batch goes from card to card; with
// fewer pages, nil: every card holds every page (NewPatternSearcher) and takes whole batches.
func (g *Group) SearchCard(i, n int) kernels.Backend {
	if n < len(g.cards) || i < 0 || i >= n {
		return nil
	}
	return g.cards[i*len(g.cards)/n]
}

// groupSearcher is a pattern search with the index on every card.
type groupSearcher struct {
	cpu  *cpu.Searcher
	all  []*gpuSearcher
	free chan *gpuSearcher
}

// searchDepth is how many batches a card of a group takes at once.
const searchDepth = 3

func (gs *groupSearcher) Search(p *kernels.Patterns, locate bool, h *kernels.Hits) error {
	iv := make([]cpu.Interval, p.Len())
	if err := gs.SearchIntervals(p, iv); err != nil {
		return err
	}
	return gs.cpu.AppendHits(iv, locate, h)
}

func (gs *groupSearcher) SearchIntervals(p *kernels.Patterns, iv []cpu.Interval) error {
	return gs.SearchIntervalsRows(p, iv, nil)
}

func (gs *groupSearcher) SearchIntervalsRows(p *kernels.Patterns, iv []cpu.Interval, rows []int32) error {
	one := <-gs.free
	defer func() { gs.free <- one }()
	if rows != nil {
		rows = rows[:p.Len()]
	}
	return one.intervals(p, iv[:p.Len()], rows)
}

func (gs *groupSearcher) Close() error {
	for _, s := range gs.all {
		s.Close()
	}
	return nil
}

var (
	_ kernels.Backend  = (*Group)(nil)
	_ kernels.Matcher  = (*groupMatcher)(nil)
	_ kernels.Searcher = (*groupSearcher)(nil)
	_ cpu.RowSearch    = (*groupSearcher)(nil)
)
