package cuda

import (
	"errors"

	"github.com/sapipe/sapipe/kernels"
	"github.com/sapipe/sapipe/kernels/cpu"
	pipeline "github.com/sapipe/sapipe/stream"
)

// Pages over cards. When the reference's index does not fit one card but fits the cards of a group
// together, each card holds some of the pages, resident, and every launch visits the cards in turn,
// a chain: the first card takes the queued batches, packs and matches them against its pages and
// hands the launch to the next card, and so on; the last card turns the launch into records and
// fills the batches' results. Between cards goes what the walk over the pages carries anyway: the
// best match of each query position so far (16 bytes a position, through pinned host memory) in
// the unique modes, the records of the pages so far under -maxmatch. So the results are one
// card's over all the pages, whatever the number of cards, and while the last card finishes one
// launch the first is already matching the next.

// launch is the batches of one launch on their way along a chain.
type launch struct {
	batch  []*request
	best   *hostBuf // unique modes: the best match of each slot over the pages of the cards before
	recs   []outRec // -maxmatch: the records of the pages of the cards before, page after page
	starts []int    // where each of those pages' records start in recs
}

// chainPart is one card's place in a chain.
type chainPart struct {
	bounds [][3]int     // the pages this card builds (text start, end, window end), or
	pages  []*cpu.Page  // those it copies from an index file
	bytes  uint64       // their device memory (pages)
	in     chan *launch // launches from the card before; nil on the first card, which takes requests
	next   chan *launch // launches for the card after; nil on the last, which finishes them
	links  *chainLinks
}

// first reports whether the card takes the requests: the first of a chain, or a card of its own.
func (p *chainPart) first() bool { return p == nil || p.in == nil }

// last reports whether the card finishes launches: the last of a chain, or a card of its own.
func (p *chainPart) last() bool { return p == nil || p.next == nil }

// chainLinks are the buffers that go from card to card: pinned buffers for the best matches, as
// many as launches can be on their way (the first card waits for one when none is free), and
// record buffers handed back from the last card to the first, for reuse.
type chainLinks struct {
	owner *device // the first card, which allocates and frees the pinned buffers
	bests chan *hostBuf
	recs  pipeline.Spares[[]outRec]
	all   []*hostBuf
}

func newChainLinks(owner *device, inFlight int) *chainLinks {
	c := &chainLinks{owner: owner, bests: make(chan *hostBuf, inFlight), recs: pipeline.NewSpares[[]outRec](inFlight)}
	for range inFlight {
		h := &hostBuf{}
		c.all = append(c.all, h)
		c.bests <- h
	}
	return c
}

// getBest returns a pinned buffer of at least n bytes, waiting for one to be free. The first
// card's workers only: the buffers are allocated in its context.
func (c *chainLinks) getBest(m *gpuMatcher, n int) (*hostBuf, error) {
	var h *hostBuf
	select {
	case h = <-c.bests:
	case <-m.quit:
		return nil, errors.New("GPU matcher is closed")
	}
	if err := h.ensure(m.dev, n); err != nil {
		c.bests <- h
		return nil, err
	}
	return h, nil
}

// done takes back what a finished (or failed) launch holds.
func (c *chainLinks) done(l *launch) {
	if l.best != nil {
		c.bests <- l.best
		l.best = nil
	}
	c.putRecs(l.recs)
	l.recs = nil
}

// getRecs returns a record buffer handed back by the last card, or nil.
func (c *chainLinks) getRecs() []outRec {
	r, _ := c.recs.Get()
	return r
}

// putRecs hands a record buffer back for reuse, unless enough are waiting.
func (c *chainLinks) putRecs(r []outRec) {
	if c != nil && cap(r) > 0 {
		c.recs.Put(r[:0])
	}
}

// free releases the pinned buffers; call it once every card's workers have stopped.
func (c *chainLinks) free() {
	_ = c.owner.run(func() error {
		for _, h := range c.all {
			h.free(c.owner)
		}
		return nil
	})
}

// splitPages decides how the cards hold ref's index: nil when every card holds all of it (or none
// can hold its share either, when each pages through frames as one card would), otherwise the
// parts of a chain, each with the pages its card holds, contiguous and as even as they go.
func (g *Group) splitPages(ref *kernels.Reference, opts kernels.MatchOptions, given *cpu.Matcher) ([]*chainPart, error) {
	if len(g.cards) < 2 || len(ref.Text) == 0 {
		return nil, nil
	}
	var tight matchPlan // the card with the least room
	for i, b := range g.cards {
		pl, err := planMatch(b, ref, opts, matchConfig{})
		if err != nil {
			return nil, err
		}
		if i == 0 || pl.room < tight.room {
			tight = pl
		}
	}
	n := len(ref.Text)
	if given != nil {
		pages := given.Pages()
		sizes := make([]uint64, len(pages))
		var total uint64
		for i, p := range pages {
			h := newHostPage(p)
			sizes[i] = h.bytes
			total += h.bytes
		}
		if tight.room >= 0 && total <= uint64(tight.room) || len(pages) < 2 {
			return nil, nil
		}
		groups := splitEven(sizes, len(g.cards))
		var parts []*chainPart
		for _, gr := range groups {
			p := &chainPart{pages: pages[gr[0]:gr[1]]}
			for _, s := range sizes[gr[0]:gr[1]] {
				p.bytes += s
			}
			if tight.room < 0 || p.bytes > uint64(tight.room) {
				return nil, nil
			}
			parts = append(parts, p)
		}
		return parts, nil
	}
	if ps, err := tight.pageSize(n); err == nil && tight.fits(len(cpu.PageBounds(n, ps, opts.MinLen)), ps) {
		return nil, nil // every card holds all pages
	}
	// The page size asked for, then smaller ones down to bigPage, as on one card.
	for ps := tight.ps; ; ps = (ps + 1) / 2 {
		bounds := cpu.PageBounds(n, ps, opts.MinLen)
		cards := min(len(g.cards), len(bounds))
		if len(bounds) < 2 || !tight.fits((len(bounds)+cards-1)/cards, ps) {
			if ps <= bigPage {
				return nil, nil
			}
			continue
		}
		sizes := make([]uint64, len(bounds))
		for i, bd := range bounds {
			sizes[i] = uint64(bd[2] - bd[0])
		}
		var parts []*chainPart
		for _, gr := range splitEven(sizes, cards) {
			parts = append(parts, &chainPart{bounds: bounds[gr[0]:gr[1]]})
		}
		return parts, nil
	}
}

// splitEven cuts sizes into at most k contiguous runs, [from, to), whose largest sum is the least
// it can be.
func splitEven(sizes []uint64, k int) [][2]int {
	var lo, hi uint64
	for _, s := range sizes {
		lo, hi = max(lo, s), hi+s
	}
	cut := func(limit uint64) [][2]int {
		var runs [][2]int
		from, sum := 0, uint64(0)
		for i, s := range sizes {
			if sum+s > limit {
				runs = append(runs, [2]int{from, i})
				from, sum = i, 0
			}
			sum += s
		}
		return append(runs, [2]int{from, len(sizes)})
	}
	for lo < hi {
		mid := lo + (hi-lo)/2
		if len(cut(mid)) <= k {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return cut(lo)
}

// newChain starts a matcher on each card of parts (the first len(parts) cards), linked into a
// chain.
func (g *Group) newChain(ref *kernels.Reference, opts kernels.MatchOptions, given *cpu.Matcher, parts []*chainPart) (*groupMatcher, error) {
	cards := g.cards[:len(parts)]
	var cfg matchConfig
	cfg.defaults(cards[0].dev.info, cards[0].opts.Threads)
	// Enough best arrays for every later card's workers and one on its way: the first card
	// waits for one only when those are all busy.
	links := newChainLinks(cards[0].dev, cfg.Workers*(len(parts)-1)+1)
	for i, p := range parts {
		p.links = links
		if i > 0 {
			link := make(chan *launch)
			parts[i-1].next, p.in = link, link
		}
	}
	gm := &groupMatcher{reqs: make(chan *request), quit: make(chan struct{}), links: links}
	z := &launchSizer{}
	return gm.start(cards, ref, opts, given, func(i int) matchConfig {
		c := matchConfig{part: parts[i], sizer: z}
		if i == 0 {
			c.Requests = gm.reqs
		}
		return c
	})
}
