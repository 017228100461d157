package cpu

import (
	"math/rand"
	"slices"
	"testing"

	"github.com/sapipe/sapipe/kernels"
)

// TestSkips: a lane that skips along long matches (and finds its row again by LF steps from the
// sampled rows) and jumps past the positions after a difference reports what the walk one
// position at a time reports, and reaches the same state wherever it stops (a jump's guess once
// checked), on pages with repeats (deep rows) and queries that are diverged copies.
func TestSkips(t *testing.T) {
	rng := rand.New(rand.NewSource(29))
	skipped, jumps := 0, 0
	for r := range 40 {
		n := 2000 + rng.Intn(20000)
		ref := repeatsRef(rng, n, 20, 300)
		text := ref.Text
		minLen := 5 + rng.Intn(80)
		mode := kernels.MaxMatch
		if r%3 == 0 {
			mode = kernels.MumReference
		}
		opts := kernels.MatchOptions{Mode: mode, MinLen: minLen}
		if mode == kernels.MaxMatch {
			opts.PageSize = 500 + rng.Intn(n)
		}
		m, err := NewMatcher(ref, opts, 2)
		if err != nil {
			t.Fatal(err)
		}
		unique := mode != kernels.MaxMatch
		for range 10 {
			l := 1 + rng.Intn(3000)
			a := rng.Intn(n - min(l, n-1))
			q := append([]byte(nil), text[a:min(a+l, n)]...)
			l = len(q)
			for range rng.Intn(1 + l/50) {
				q[rng.Intn(l)] = byte(kernels.FirstCode + rng.Intn(4))
			}
			for range rng.Intn(1 + l/200) { // small indels, which shift the diagonal
				k, d := rng.Intn(len(q)), 1+rng.Intn(10)
				if rng.Intn(2) == 0 {
					q = slices.Insert(q, k, text[a:a+d]...)
				} else {
					q = slices.Delete(q, k, min(k+d, len(q)))
				}
			}
			if len(q) == 0 {
				continue
			}
			l = len(q)
			if rng.Intn(4) == 0 {
				q[rng.Intn(l)] = kernels.CodeNone
			}
			from := rng.Intn(l)
			to := from + rng.Intn(l-from+1)
			for _, p := range m.pages {
				if p.isa == nil {
					t.Fatalf("round %d: no skip tables", r)
				}
				start := func() *lane {
					ln := &lane{q: q, pos: to - 1, from: from, s: -1, rec: -1}
					if ln.pos >= from {
						ln.lo, ln.hi, ln.m = p.startState(q, to)
						ln.lo, ln.hi, ln.m = p.extend(ln.lo, ln.hi, ln.m, q[ln.pos])
					}
					return ln
				}
				// The walk one position at a time, its state at each position.
				plain := start()
				type state struct{ lo, hi, m int }
				states := map[int]state{}
				for plain.pos >= from {
					states[plain.pos] = state{plain.lo, plain.hi, plain.m}
					p.laneMove(plain, minLen, unique, false)
				}
				fast := start()
				for fast.pos >= from {
					if fast.rec < 0 && !fast.jump {
						if want, got := states[fast.pos], (state{fast.lo, fast.hi, fast.m}); got != want {
							t.Fatalf("round %d: at %d state %v, want %v", r, fast.pos, got, want)
						}
					}
					pos := fast.pos
					jumping := fast.jump
					p.laneMove(fast, minLen, unique, true)
					if fast.jump && !jumping {
						jumps++
					}
					if pos-fast.pos > 1 {
						skipped += pos - fast.pos
					}
				}
				if !slices.Equal(fast.out, plain.out) {
					t.Fatalf("round %d: %v, want %v", r, fast.out, plain.out)
				}
			}
		}
	}
	if skipped < 10000 || jumps < 100 {
		t.Fatalf("only %d positions skipped, %d jumps", skipped, jumps)
	}
	t.Logf("%d positions skipped, %d jumps", skipped, jumps)
}
