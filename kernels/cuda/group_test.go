package cuda

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/sapipe/sapipe/kernels"
	"github.com/sapipe/sapipe/kernels/cpu"
)

// Tests of several GPUs in one process. They need two usable cards and skip with fewer, unless
// SAPIPE_REQUIRE_GPU asks for at least two (SAPIPE_REQUIRE_GPU=2 on a machine of two cards), when
// they fail instead.

var group shared[*Group]

// usableOrdinals lists the GPUs sapipe can use (compute capability 8.0 or newer).
func usableOrdinals() ([]int, error) {
	infos, err := Devices()
	if err != nil {
		return nil, err
	}
	return Usable(infos), nil
}

// testGroup returns a group of every usable card, or skips (or fails) with fewer than two.
func testGroup(t testing.TB) *Group {
	return group.get(t, 2, func() (*Group, error) {
		ords, err := usableOrdinals()
		if err != nil {
			return nil, err
		}
		if len(ords) < 2 {
			return nil, fmt.Errorf("%d usable GPUs", len(ords))
		}
		return OpenGroup(ords, Options{Threads: 4})
	})
}

// TestGroupMatcher: a matcher over every card gives the CPU's results for every mode, with many
// batches at once, and each card takes batches.
func TestGroupMatcher(t *testing.T) {
	g := testGroup(t)
	rng := rand.New(rand.NewPCG(41, 2))
	for iter := range 6 {
		ref, all := randomReference(rng, 1+rng.IntN(3), 20000, iter%3 == 0, false)
		if ref == nil {
			continue
		}
		mode := allModes[iter%3]
		opts := kernels.MatchOptions{Mode: mode, MinLen: 12 + rng.IntN(10)}
		want := newCPUMatcher(t, ref, opts)
		m, err := g.NewMatcher(ref, opts)
		if err != nil {
			t.Fatal(err)
		}
		gm := m.(*groupMatcher)
		var wg sync.WaitGroup
		for w := range 16 {
			seqs := make([][]byte, 40)
			for i := range seqs {
				a := rng.IntN(len(all) - 200)
				seqs[i] = mutateSeq(rng, all[a:a+100+rng.IntN(100)], 0.02)
			}
			b := queryBatch(seqs, &ref.Alpha, true, false, 1<<20)
			wg.Add(1)
			go func() {
				defer wg.Done()
				compareMatch(t, fmt.Sprintf("iter %d (%v) batch %d", iter, mode, w), want, gm, b)
			}()
		}
		wg.Wait()
		busy := 0
		for _, mm := range gm.members {
			if mm.stats.launches.Load() > 0 {
				busy++
			}
		}
		if busy < 2 {
			t.Logf("iter %d: only %d of %d cards took batches", iter, busy, len(gm.members))
		}
		m.Close()
	}
}

// TestGroupBWT: blocks spread over the cards give the CPU's transforms.
func TestGroupBWT(t *testing.T) {
	g := testGroup(t)
	rng := rand.New(rand.NewPCG(42, 2))
	var src, dst, want [][]byte
	for range 9 {
		s := randomDNA(rng, 1<<16+rng.IntN(1<<18))
		src = append(src, s)
		dst = append(dst, make([]byte, len(s)))
		w := make([]byte, len(s))
		want = append(want, w)
	}
	prim, wantPrim := make([]int, len(src)), make([]int, len(src))
	if err := cpu.New(2).BWT(src, want, wantPrim); err != nil {
		t.Fatal(err)
	}
	if err := g.BWT(src, dst, prim); err != nil {
		t.Fatal(err)
	}
	for i := range src {
		if string(dst[i]) != string(want[i]) || prim[i] != wantPrim[i] {
			t.Fatalf("block %d differs from the CPU's", i)
		}
	}
}

// TestGroupSearch: patterns searched on whichever card is free give the CPU's hits.
func TestGroupSearch(t *testing.T) {
	g := testGroup(t)
	rng := rand.New(rand.NewPCG(43, 2))
	text := randomDNA(rng, 200000)
	for i := range text {
		text[i] = kernels.FirstCode + text[i]%4
	}
	p := cpu.NewPage(text, kernels.FirstCode+4, 0, len(text), len(text))
	cs, err := cpu.NewSearcher(p, cpu.BuildKmerTable(p, 8))
	if err != nil {
		t.Fatal(err)
	}
	ks, err := g.NewPatternSearcher(cs)
	if err != nil {
		t.Fatal(err)
	}
	defer ks.Close()
	var wg sync.WaitGroup
	for w := range 8 {
		var ps kernels.Patterns
		for range 2000 {
			a := rng.IntN(len(text) - 60)
			ps.Add(text[a : a+20+rng.IntN(40)])
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			var want, got kernels.Hits
			if err := cs.Search(&ps, true, &want); err != nil {
				t.Error(err)
				return
			}
			if err := ks.Search(&ps, true, &got); err != nil {
				t.Error(err)
				return
			}
			if fmt.Sprint(want) != fmt.Sprint(got) {
				t.Errorf("batch %d: hits differ from the CPU's", w)
			}
		}()
	}
	wg.Wait()
}

// TestSearchCard: a group gives the pages of an index to its cards in ranges, each card some, where
// there are at least as many pages as cards, and leaves them to every card otherwise.
func TestSearchCard(t *testing.T) {
	g := &Group{cards: []*Backend{{}, {}, {}}}
	for n := range 10 {
		seen := map[*Backend]int{}
		last := -1
		for i := range n {
			c := g.SearchCard(i, n)
			if n < 3 {
				if c != nil {
					t.Fatalf("%d pages on 3 cards: page %d given to a card", n, i)
				}
				continue
			}
			b := c.(*Backend)
			k := slices.Index(g.cards, b)
			if k < last {
				t.Fatalf("%d pages: page %d on card %d after card %d", n, i, k, last)
			}
			last = k
			seen[b]++
		}
		if n >= 3 && len(seen) != 3 {
			t.Fatalf("%d pages on %d of 3 cards", n, len(seen))
		}
	}
	if g.SearchCard(5, 5) != nil || g.SearchCard(-1, 5) != nil {
		t.Fatal("a page out of range given to a card")
	}
}

// TestGroupSearchPages: the pages of a text on the cards SearchCard gives them to, searched as
// one (cpu.PagedSearcher, with the rows the cards give), count and locate as on the CPU.
func TestGroupSearchPages(t *testing.T) {
	g := testGroup(t)
	rng := rand.New(rand.NewPCG(43, 5))
	text := randomDNA(rng, 400000)
	for i := range text {
		text[i] = kernels.FirstCode + text[i]%4
	}
	const pages, overlap = 4, 200
	var ps []*cpu.Page
	var tails [][]int32
	var onCards, onCPU []cpu.IntervalSearch
	size := len(text) / pages
	for i := range pages {
		st, e := i*size, min((i+1)*size, len(text))
		if i == pages-1 {
			e = len(text)
		}
		p := cpu.NewPage(text, kernels.FirstCode+4, st, e, min(e+overlap, len(text)))
		cs, err := cpu.NewSearcher(p, cpu.BuildKmerTable(p, 8))
		if err != nil {
			t.Fatal(err)
		}
		card := g.SearchCard(i, pages).(*Backend)
		ks, err := card.NewPatternSearcher(cs)
		if err != nil {
			t.Fatal(err)
		}
		defer ks.Close()
		gs, ok := ks.(*gpuSearcher)
		if !ok || gs.b != card {
			t.Fatalf("page %d not searched on its card", i)
		}
		ps = append(ps, p)
		tails = append(tails, p.TailRows(2))
		onCards, onCPU = append(onCards, gs), append(onCPU, cs)
	}
	gpu, err := cpu.NewPagedSearcher(text, ps, tails, onCards)
	if err != nil {
		t.Fatal(err)
	}
	host, err := cpu.NewPagedSearcher(text, ps, tails, onCPU)
	if err != nil {
		t.Fatal(err)
	}
	var pats kernels.Patterns
	for range 20000 {
		l := 20 + rng.IntN(130)
		a := rng.IntN(len(text) - l)
		pats.Add(text[a : a+l])
	}
	for _, locate := range []bool{false, true} {
		var want, got kernels.Hits
		if err := host.Search(&pats, locate, &want); err != nil {
			t.Fatal(err)
		}
		if err := gpu.Search(&pats, locate, &got); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(want, got) {
			t.Fatalf("locate %v: the hits over the cards differ from the CPU's", locate)
		}
	}
}

// matchUntilFailure matches b eight times at once, rounds times over, until a Match fails, and
// returns that error (nil if none failed).
func matchUntilFailure(gm *groupMatcher, b *kernels.Batch, rounds int) error {
	var failed error
	for range rounds {
		var wg sync.WaitGroup
		var mu sync.Mutex
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var r kernels.Result
				if err := gm.Match(b, &r); err != nil {
					mu.Lock()
					failed = err
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		if failed != nil {
			return failed
		}
	}
	return nil
}

// TestGroupCardFailure: a card that fails mid-run fails the batches it took, with an error that
// names it, and the matcher still closes.
func TestGroupCardFailure(t *testing.T) {
	g := testGroup(t)
	rng := rand.New(rand.NewPCG(44, 2))
	ref, all := randomReference(rng, 2, 20000, false, false)
	opts := kernels.MatchOptions{Mode: kernels.MaxMatch, MinLen: 15}
	gm := &groupMatcher{reqs: make(chan *request), quit: make(chan struct{})}
	for i, b := range g.cards {
		cfg := matchConfig{Requests: gm.reqs}
		if i == 1 {
			cfg.failAfter = 1
		}
		m, err := newMatcher(b, ref, opts, cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		gm.members = append(gm.members, m)
	}
	defer gm.Close()
	failed := matchUntilFailure(gm, queryBatch([][]byte{all[:500], all[1000:1700]}, &ref.Alpha, true, false, 1<<20), 200)
	if failed == nil || !strings.Contains(failed.Error(), "injected failure") {
		t.Fatalf("a failing card went unnoticed: %v", failed)
	}
	if strings.Contains(failed.Error(), "\n") {
		t.Errorf("error %q is not one line", failed)
	}
}

var chainGroup shared[*Group]

// testChainGroup returns two cards for the tests of a chain: two usable GPUs where there are, else
// the one GPU opened twice (two backends, each with its own device goroutine, streams and memory),
// so that a chain's hand-over runs on a machine of one card too.
func testChainGroup(t testing.TB) *Group {
	return chainGroup.get(t, 1, func() (*Group, error) {
		ords, err := usableOrdinals()
		if err != nil {
			return nil, err
		}
		switch len(ords) {
		case 0:
			return nil, errors.New("no usable GPU")
		case 1:
			ords = append(ords, ords[0])
		}
		return OpenGroup(ords[:2], Options{Threads: 4})
	})
}

// halfMemory returns the device memory that holds ref's text, half of the pages (rounded up) and
// the building of one: a budget that makes a card of g hold half of the index. With host set,
// the pages are host's (an index file's).
func halfMemory(t *testing.T, g *Group, ref *kernels.Reference, opts kernels.MatchOptions, host *cpu.Matcher) int64 {
	t.Helper()
	pl, err := planMatch(g.cards[0], ref, opts, matchConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if host != nil {
		var sizes []uint64
		for _, p := range host.Pages() {
			sizes = append(sizes, newHostPage(p).bytes)
		}
		var most uint64
		for _, r := range splitEven(sizes, 2) {
			var sum uint64
			for _, s := range sizes[r[0]:r[1]] {
				sum += s
			}
			most = max(most, sum)
		}
		return pl.textBytes + int64(most)
	}
	pages := len(cpu.PageBounds(len(ref.Text), opts.PageSize, opts.MinLen))
	return pl.textBytes + int64((pages+1)/2)*pl.est(opts.PageSize) + pl.build(opts.PageSize)
}

// TestGroupChain: a reference whose pages fit two cards but not one is held half on each card,
// and every mode gives the CPU's results, pages built from the text and pages of an index file,
// with many batches at once.
func TestGroupChain(t *testing.T) {
	g := testChainGroup(t)
	rng := rand.New(rand.NewPCG(45, 2))
	for iter := range 9 {
		ref, all := randomReference(rng, 2+rng.IntN(3), 30000, iter%3 == 0, iter%4 == 1)
		if ref == nil || len(all) < 2000 {
			continue
		}
		mode := allModes[iter%3]
		ps := len(ref.Text)/(2+rng.IntN(5)) + 1
		opts := kernels.MatchOptions{Mode: mode, MinLen: 12 + rng.IntN(10), PageSize: ps}
		want := newCPUMatcher(t, ref, opts)
		if len(want.Pages()) < 2 {
			continue
		}
		fromFile := iter%2 == 1
		var host *cpu.Matcher
		if fromFile {
			host = want
		}
		opts.DeviceMemory = halfMemory(t, g, ref, opts, host)
		what := fmt.Sprintf("iter %d (%v, %d pages, index file %v)", iter, mode, len(want.Pages()), fromFile)
		var m kernels.Matcher
		var err error
		if fromFile {
			m, err = g.NewMatcherFromPages(ref, opts, host)
		} else {
			m, err = g.NewMatcher(ref, opts)
		}
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		gm := m.(*groupMatcher)
		if gm.links == nil || len(gm.members) != 2 {
			t.Fatalf("%s: not a chain of two cards", what)
		}
		held := 0
		for _, mm := range gm.members {
			if !mm.fs.resident || mm.npages >= len(want.Pages()) {
				t.Fatalf("%s: a card holds %d of %d pages (resident %v)", what, mm.npages, len(want.Pages()), mm.fs.resident)
			}
			held += mm.npages
		}
		if held != len(want.Pages()) {
			t.Fatalf("%s: the cards hold %d pages of %d", what, held, len(want.Pages()))
		}
		var wg sync.WaitGroup
		for w := range 12 {
			seqs := make([][]byte, 30)
			for i := range seqs {
				a := rng.IntN(len(all) - 400)
				seqs[i] = mutateSeq(rng, all[a:a+100+rng.IntN(300)], 0.02)
			}
			if w == 0 {
				seqs = append(seqs, all) // one long query, cut into chunks
			}
			b := queryBatch(seqs, &ref.Alpha, true, false, 1<<20)
			wg.Add(1)
			go func() {
				defer wg.Done()
				compareMatch(t, fmt.Sprintf("%s batch %d", what, w), want, gm, b)
			}()
		}
		wg.Wait()
		for i, mm := range gm.members {
			if mm.stats.launches.Load() == 0 {
				t.Errorf("%s: card %d matched nothing", what, i)
			}
		}
		m.Close()
	}
}

// TestGroupChainFailure: a card of a chain that fails mid-run fails the batches, with an error
// that names it, and the matcher still closes.
func TestGroupChainFailure(t *testing.T) {
	g := testChainGroup(t)
	rng := rand.New(rand.NewPCG(46, 2))
	ref, all := randomReference(rng, 3, 20000, false, false)
	for _, mode := range []kernels.Mode{kernels.MaxMatch, kernels.MumReference} {
		opts := kernels.MatchOptions{Mode: mode, MinLen: 15, PageSize: len(ref.Text)/4 + 1}
		opts.DeviceMemory = halfMemory(t, g, ref, opts, nil)
		m, err := g.NewMatcher(ref, opts)
		if err != nil {
			t.Fatal(err)
		}
		gm := m.(*groupMatcher)
		if gm.links == nil {
			t.Fatal("not a chain")
		}
		gm.members[1].cfg.failAfter = 1
		failed := matchUntilFailure(gm, queryBatch([][]byte{all[:500], all[1000:1700]}, &ref.Alpha, true, false, 1<<20), 100)
		if failed == nil || !strings.Contains(failed.Error(), "injected failure") || strings.Contains(failed.Error(), "\n") {
			t.Fatalf("%v: a failing card of a chain went unnoticed, or its error is not one line: %v", mode, failed)
		}
		m.Close()
	}
}

// TestGroupEarlyPages: an index file's pages copied to every card while they are checked (on the
// host, or with the checksums given on every card) give the CPU's results; with room for half the
// index on each card, the pages checked on the host go over the cards (a chain) instead.
func TestGroupEarlyPages(t *testing.T) {
	g := testChainGroup(t)
	rng := rand.New(rand.NewPCG(47, 2))
	for iter := range 8 {
		ref, all := randomReference(rng, 2, 30000, false, false)
		mode := allModes[iter%3]
		opts := kernels.MatchOptions{Mode: mode, MinLen: 12 + rng.IntN(10), PageSize: len(ref.Text)/3 + 1}
		want := newCPUMatcher(t, ref, opts)
		chain := iter%2 == 1
		if chain {
			opts.DeviceMemory = halfMemory(t, g, ref, opts, want)
		}
		early := make([]cpu.DeviceArrays, len(want.Pages()))
		for i, p := range want.Pages() {
			early[i] = p.DeviceArrays()
			early[i].C, early[i].Deep = [256]int{}, nil
		}
		var sums func() error
		if iter >= 4 {
			sums = func() error { return nil } // the cards check the pages
		}
		what := fmt.Sprintf("iter %d (%v, %d pages, chain %v, checked on the cards %v)", iter, mode, len(early), chain, sums != nil)
		checks := 0
		m, err := g.NewMatcherFromEarlyPages(ref, opts, early, sums, func() (*cpu.Matcher, error) { checks++; return want, nil })
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		wantChecks := 1 // the host's, once for every card
		if sums != nil && !chain {
			wantChecks = 0
		}
		if checks != wantChecks {
			t.Fatalf("%s: the host's checks ran %d times, want %d", what, checks, wantChecks)
		}
		gm := m.(*groupMatcher)
		if (gm.links != nil) != chain || len(gm.members) != 2 {
			t.Fatalf("%s: a chain %v of %d cards", what, gm.links != nil, len(gm.members))
		}
		var wg sync.WaitGroup
		for w := range 6 {
			seqs := [][]byte{mutateSeq(rng, all[w*1000:w*1000+3000], 0.02)}
			wg.Add(1)
			go func() {
				defer wg.Done()
				compareMatch(t, fmt.Sprintf("%s batch %d", what, w), want, gm, queryBatch(seqs, &ref.Alpha, true, false, 1<<20))
			}()
		}
		wg.Wait()
		m.Close()
	}
}

// TestGroupRuns: queries inside runs of one symbol (match_runs.go) on a group, each card with the
// whole index and a chain of cards with half of the pages each, against the CPU in every mode:
// every card finds its own pages' runs, and the matches a chain's later card takes from them merge
// with the earlier cards'.
func TestGroupRuns(t *testing.T) {
	g := testChainGroup(t)
	defer func(v int) { runFrom = v }(runFrom)
	rng := rand.New(rand.NewPCG(48, 2))
	var runItems, jumps int64
	for iter := range 6 {
		runFrom = 1 + rng.IntN(60)
		ref, q := runsReference(t, rng, 3000, 700)
		seqs := [][]byte{q, q[rng.IntN(len(q)/2):]}
		mode := allModes[iter%3]
		chain := iter%2 == 1
		opts := kernels.MatchOptions{Mode: mode, MinLen: 8 + rng.IntN(40), PageSize: len(ref.Text)/(2+rng.IntN(3)) + 1}
		want := newCPUMatcher(t, ref, opts)
		if chain {
			opts.DeviceMemory = halfMemory(t, g, ref, opts, nil)
		}
		what := fmt.Sprintf("iter %d (%v, minLen %d, %d pages, chain %v, runFrom %d)", iter, mode, opts.MinLen, len(want.Pages()), chain, runFrom)
		m, err := g.NewMatcher(ref, opts)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		gm := m.(*groupMatcher)
		if (gm.links != nil) != chain || len(gm.members) != 2 {
			t.Fatalf("%s: a chain %v of %d cards", what, gm.links != nil, len(gm.members))
		}
		var wg sync.WaitGroup
		for w := range 4 {
			cut := []int{1 << 30, 500}[w%2]
			wg.Add(1)
			go func() {
				defer wg.Done()
				compareMatch(t, fmt.Sprintf("%s batch %d cut %d", what, w, cut), want, gm, queryBatch(seqs, &ref.Alpha, true, w >= 2, cut))
			}()
		}
		wg.Wait()
		for _, mm := range gm.members {
			runItems += mm.stats.runItems.Load()
			jumps += mm.stats.jumps.Load()
		}
		m.Close()
	}
	t.Logf("%d positions' matches from runs, %d start states moved on through runs", runItems, jumps)
	if runItems < 100 || jumps < 100 {
		t.Fatalf("only %d positions took their matches from runs, %d start states were moved on through runs", runItems, jumps)
	}
}
