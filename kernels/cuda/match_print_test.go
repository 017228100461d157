package cuda

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/sapipe/sapipe/kernels"
)

// linesBatch is queryBatch with each segment's strand marked (Batch.Reverse), a head before each
// sequence's first segment on each strand, and lines asked for.
func linesBatch(seqs [][]byte, a *kernels.Alphabet, cut int, l *kernels.Lines) *kernels.Batch {
	b := &kernels.Batch{Lines: l}
	for k, s := range seqs {
		for _, rev := range []bool{false, true} {
			off := len(b.Codes)
			b.Codes = kernels.EncodeQuery(b.Codes, s, a, rev, false)
			for f := 0; ; f += cut {
				to := min(f+cut, len(s))
				if f == 0 {
					b.Heads = fmt.Appendf(b.Heads, "> q%d %v\n", k, rev)
				}
				b.HeadEnds = append(b.HeadEnds, len(b.Heads))
				b.Segs = append(b.Segs, kernels.Segment{Off: off, Len: len(s), From: f, To: to})
				b.Reverse = append(b.Reverse, rev)
				if to >= len(s) {
					break
				}
			}
		}
	}
	return b
}

// wantLines formats a segment's matches as MUMmer 3.23 prints them, by fmt's "%8d" (an oracle
// apart from formats.MummerWriter, which the CPU's runs use).
func wantLines(ref *kernels.Reference, l *kernels.Lines, ms []kernels.Match, sg kernels.Segment, rev bool) string {
	var b strings.Builder
	for _, m := range ms {
		rec, off := ref.RecordOf(int(m.Ref))
		if l.FourColumn {
			fmt.Fprintf(&b, "  %-*s  ", l.NameWidth(), l.Names[rec])
		}
		q := int(m.Query) + 1
		if rev && l.ReversePositions {
			q = sg.Len - int(m.Query)
		}
		fmt.Fprintf(&b, "%8d  %8d  %8d\n", off+1, q, m.Len)
	}
	return b.String()
}

// TestGPUMatcherLines: -maxmatch lines written on the card are the CPU's matches as MUMmer prints
// them, byte for byte: one record and several (the name column), -c and not, pages, passes of few
// rows, short pieces, launches whose records outgrow the room kept for them and launches whose
// text would be too long (then the host's way). With PrintMin -1 the card writes none.
func TestGPUMatcherLines(t *testing.T) {
	b := gpuBackend(t)
	rng := rand.New(rand.NewPCG(21, 22))
	unit := randomSeq(rng, 997, "acgt")
	parts := []struct {
		name string
		text []byte
	}{
		{"A", []byte(strings.Repeat("a", 3000))},
		{"period7_record", []byte(strings.Repeat("acgttga", 1500))},
		{"copies", slices.Concat(unit, mutateSeq(rng, unit, 0.01), unit, mutateSeq(rng, unit, 0.02))},
		{"p50", []byte(strings.Repeat(string(randomSeq(rng, 50, "acgt")), 300))},
	}
	for _, several := range []bool{false, true} {
		rb := kernels.NewReferenceBuilder(false)
		var all []byte
		for i, p := range parts {
			if !several && i != 2 {
				continue
			}
			rb.Add(p.name, p.text)
			all = append(all, p.text...)
		}
		ref, err := rb.Build()
		if err != nil {
			t.Fatal(err)
		}
		var seqs [][]byte
		for range 60 {
			k := rng.IntN(len(all) - 200)
			seqs = append(seqs, mutateSeq(rng, all[k:k+30+rng.IntN(170)], 0.01))
		}
		seqs = append(seqs, nil)
		for _, revPos := range []bool{false, true} {
			l := &kernels.Lines{Names: ref.Names, FourColumn: several, ReversePositions: revPos}
			batch := linesBatch(seqs, &ref.Alpha, 64, l)
			for _, ps := range []int{0, 1000} {
				opts := kernels.MatchOptions{Mode: kernels.MaxMatch, MinLen: 12, PageSize: ps}
				cpuM := newCPUMatcher(t, ref, opts)
				var wr kernels.Result
				if err := cpuM.Match(batch, &wr); err != nil {
					t.Fatal(err)
				}
				for _, cfg := range []matchConfig{{PrintMin: 1}, {PrintMin: -1},
					{PrintMin: 1, Workers: 1, PieceLen: 17, ChunkRows: 1000, MaxPositions: 500, Lookahead: 3},
					{PrintMin: 1, Workers: 2, ChunkRows: 700, keepMax: len(wr.Matches)/2 + 1}, {PrintMin: 1, textMax: 100}} {
					what := fmt.Sprintf("several %v -c %v page %d %+v", several, revPos, ps, cfg)
					got := newTestMatcher(t, b, ref, opts, cfg)
					var gr kernels.Result
					gr.Text = append(gr.Text, "x"...) // lines are appended to what is there
					if err := got.Match(batch, &gr); err != nil {
						t.Fatalf("%s: %v", what, err)
					}
					gr.Text = gr.Text[1:]
					for i := range gr.TextEnds {
						gr.TextEnds[i]--
					}
					if len(gr.Ends) != len(batch.Segs) {
						t.Fatalf("%s: %d segment ends, want %d", what, len(gr.Ends), len(batch.Segs))
					}
					text := gr.HasText(len(batch.Segs))
					// keepMax: half the records, so that the launch flushes them part way;
					// textMax: sorted on the card, then too long a text for it.
					if text != (cfg.PrintMin == 1 && cfg.keepMax == 0 && cfg.textMax == 0) {
						t.Errorf("%s: text written %v", what, text)
					}
					for i, sg := range batch.Segs {
						want := string(batch.Head(i)) + wantLines(ref, l, wr.Seg(i), sg, batch.Reverse[i])
						var have string
						if text {
							have = string(gr.SegText(i))
							if len(gr.Seg(i)) != 0 {
								t.Fatalf("%s: segment %d has matches beside its text", what, i)
							}
						} else {
							have = string(batch.Head(i)) + wantLines(ref, l, gr.Seg(i), sg, batch.Reverse[i])
						}
						if have != want {
							t.Fatalf("%s: segment %d (len %d, [%d,%d), reverse %v):\n%q\nwant\n%q", what, i, sg.Len, sg.From, sg.To, batch.Reverse[i], have, want)
						}
					}
					if p := got.stats.printed.Load(); (p > 0) != text {
						t.Errorf("%s: %d lines written on the card", what, p)
					}
					if out := got.stats.textsOut.Load(); out != 0 {
						t.Errorf("%s: %d text buffers out after the text was copied", what, out)
					}
					t.Logf("%s: %d matches; %s", what, len(wr.Matches), got.Stats())
					got.Close()
				}
			}
		}
	}
}

// TestGPUMatcherLinesConcurrent: batches matched at once from many goroutines share launches;
// each gets its own segments' lines.
func TestGPUMatcherLinesConcurrent(t *testing.T) {
	b := gpuBackend(t)
	rng := rand.New(rand.NewPCG(23, 24))
	ref, all := randomReference(rng, 3, 20000, false, false)
	unit := all[:400]
	for len(all) < 30000 { // repeats, for many records a launch
		all = append(all, mutateSeq(rng, unit, 0.005)...)
	}
	rb := kernels.NewReferenceBuilder(false)
	for i, name := range ref.Names {
		rb.Add(name, all[i*len(all)/3:(i+1)*len(all)/3])
	}
	ref, err := rb.Build()
	if err != nil {
		t.Fatal(err)
	}
	l := &kernels.Lines{Names: ref.Names, FourColumn: true, ReversePositions: true}
	opts := kernels.MatchOptions{Mode: kernels.MaxMatch, MinLen: 15}
	want := newCPUMatcher(t, ref, opts)
	got := newTestMatcher(t, b, ref, opts, matchConfig{Workers: 3, MaxPositions: 20000, PrintMin: 1})
	defer got.Close()
	var batches []*kernels.Batch
	for range 48 {
		var seqs [][]byte
		for range 1 + rng.IntN(30) {
			k := rng.IntN(len(all) - 300)
			seqs = append(seqs, mutateSeq(rng, all[k:k+rng.IntN(300)], 0.02))
		}
		batches = append(batches, linesBatch(seqs, &ref.Alpha, 1<<30, l))
	}
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Go(func() {
			for i := g; i < len(batches); i += 16 {
				bt := batches[i]
				var wr, gr kernels.Result
				if err := want.Match(bt, &wr); err != nil {
					t.Error(err)
					return
				}
				if err := got.Match(bt, &gr); err != nil {
					t.Error(err)
					return
				}
				lent := gr.HasText(len(bt.Segs))
				if lent != (gr.Release != nil) {
					t.Errorf("batch %d: text %v, lent %v", i, lent, gr.Release != nil)
				}
				for s, sg := range bt.Segs {
					w := string(bt.Head(s)) + wantLines(ref, l, wr.Seg(s), sg, bt.Reverse[s])
					h := string(bt.Head(s)) + wantLines(ref, l, gr.Seg(s), sg, bt.Reverse[s])
					if lent {
						h = string(gr.SegText(s))
					}
					if h != w {
						t.Errorf("batch %d segment %d: %q, want %q", i, s, h, w)
						return
					}
				}
				gr.Reset() // gives the lent text back
				if gr.Release != nil || len(gr.Text) != 0 {
					t.Errorf("batch %d: text left after Reset", i)
				}
			}
		})
	}
	wg.Wait()
	if got.stats.printed.Load() == 0 || got.stats.launches.Load() >= int64(len(batches)) {
		t.Errorf("%s: no lines written on the card, or no launch of several batches", got.Stats())
	}
	t.Log(got.Stats())
	// Every text buffer is back in its pool, and a second round reuses them.
	if out := got.stats.textsOut.Load(); out != 0 {
		t.Errorf("%d text buffers out after every batch gave its text back", out)
	}
	made := got.stats.textsMade.Load()
	for _, bt := range batches[:8] {
		var gr kernels.Result
		if err := got.Match(bt, &gr); err != nil {
			t.Fatal(err)
		}
		gr.ReleaseText()
	}
	if out, again := got.stats.textsOut.Load(), got.stats.textsMade.Load(); out != 0 || again != made {
		t.Errorf("second round: %d text buffers out, %d made (%d before)", out, again, made)
	}
}
