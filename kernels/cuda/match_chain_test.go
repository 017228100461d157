package cuda

import (
	"math/rand/v2"
	"testing"

	"github.com/sapipe/sapipe/kernels"
)

// TestSplitEven: the runs cover the sizes in order, number at most k, and no other cut into at
// most k runs has a smaller largest sum (checked against every cut of small cases).
func TestSplitEven(t *testing.T) {
	rng := rand.New(rand.NewPCG(47, 1))
	for iter := range 300 {
		sizes := make([]uint64, 1+rng.IntN(8))
		for i := range sizes {
			sizes[i] = 1 + rng.Uint64N(100)
			if iter%3 == 0 {
				sizes[i] = 50 // equal pages, as from one page size
			}
		}
		k := 1 + rng.IntN(4)
		runs := splitEven(sizes, k)
		if len(runs) > k || runs[0][0] != 0 || runs[len(runs)-1][1] != len(sizes) {
			t.Fatalf("%v into %d: runs %v", sizes, k, runs)
		}
		var most uint64
		for i, r := range runs {
			if r[0] >= r[1] || i > 0 && r[0] != runs[i-1][1] {
				t.Fatalf("%v into %d: runs %v", sizes, k, runs)
			}
			most = max(most, sum(sizes[r[0]:r[1]]))
		}
		if best := bestCut(sizes, k); most != best {
			t.Fatalf("%v into %d: runs %v have a largest sum of %d, %d is possible", sizes, k, runs, most, best)
		}
	}
}

func sum(s []uint64) uint64 {
	var t uint64
	for _, v := range s {
		t += v
	}
	return t
}

// bestCut is the least largest sum of a cut of sizes into at most k runs, by trying every cut.
func bestCut(sizes []uint64, k int) uint64 {
	if k == 1 || len(sizes) == 1 {
		return sum(sizes)
	}
	best := sum(sizes)
	for i := 1; i < len(sizes); i++ {
		best = min(best, max(sum(sizes[:i]), bestCut(sizes[i:], k-1)))
	}
	return best
}

// TestLaunchPositions: the default launch size for the cards sapipe runs on.
func TestLaunchPositions(t *testing.T) {
	for _, c := range []struct {
		mem  uint64
		want int
	}{{143771 << 20, 1 << 25}, {81559 << 20, 1 << 25}, {40960 << 20, 1 << 24}, {24576 << 20, 1 << 23}, {12288 << 20, 1 << 22}, {4 << 30, 1 << 22}, {0, 1 << 22}} {
		if got := launchPositions(c.mem); got != c.want {
			t.Errorf("%d MiB: %d positions a launch, want %d", c.mem>>20, got, c.want)
		}
	}
}

// TestLaunchSizer: a -maxmatch launch is bounded by the records a position gave so far, and
// before any launch is done by the launch size shared among the workers; the unique modes keep
// the launch size.
func TestLaunchSizer(t *testing.T) {
	cfg := &matchConfig{MaxPositions: 1 << 25}
	var z launchSizer
	if got := z.limit(cfg, kernels.MaxMatch, 4); got != 1<<23 {
		t.Errorf("before any launch: %d positions, want %d", got, 1<<23)
	}
	if got := z.limit(cfg, kernels.MaxMatch, 0); got != 1<<25 {
		t.Errorf("no workers yet: %d positions, want %d", got, 1<<25)
	}
	z.done(1000, 0)
	if got := z.limit(cfg, kernels.MaxMatch, 4); got != 1<<25 {
		t.Errorf("no records: %d positions, want %d", got, 1<<25)
	}
	z.done(3000, 8000) // 4000 positions gave 8000 records
	if got, want := z.limit(cfg, kernels.MaxMatch, 4), launchRecords/2; got != want {
		t.Errorf("two records a position: %d positions, want %d", got, want)
	}
	z.done(1, 1<<40)
	if got := z.limit(cfg, kernels.MaxMatch, 4); got != 1 {
		t.Errorf("a huge output: %d positions, want 1", got)
	}
	var sparse launchSizer
	sparse.done(1<<30, 1<<20)
	if got := sparse.limit(cfg, kernels.MaxMatch, 4); got != 1<<25 {
		t.Errorf("few records: %d positions, want %d", got, 1<<25)
	}
	for _, mode := range []kernels.Mode{kernels.Mum, kernels.MumReference} {
		if got := z.limit(cfg, mode, 4); got != 1<<25 {
			t.Errorf("mode %v: %d positions, want %d", mode, got, 1<<25)
		}
	}
}

// TestDefaultWorkers: launches in flight for the cards and hosts sapipe runs on.
func TestDefaultWorkers(t *testing.T) {
	for _, c := range []struct {
		mem            uint64
		threads, wants int
	}{
		{143771 << 20, 32, 8}, {143771 << 20, 16, 4}, {143771 << 20, 64, 8}, {143771 << 20, 2, 3}, {143771 << 20, 0, 3},
		{81559 << 20, 32, 4}, {81559 << 20, 16, 4},
		{40960 << 20, 32, 5}, {24576 << 20, 32, 3}, {12288 << 20, 32, 3}, {0, 32, 3},
	} {
		if got := defaultWorkers(c.mem, launchPositions(c.mem), c.threads); got != c.wants {
			t.Errorf("%d MiB, %d threads: %d workers, want %d", c.mem>>20, c.threads, got, c.wants)
		}
	}
}

// TestWorkersFor: past the three the index's budget leaves room for, a card starts only the
// default workers that its free memory holds once the index is on it; workers given all start.
func TestWorkersFor(t *testing.T) {
	const launch = 1 << 25 // 2 GiB set aside a worker
	for _, c := range []struct {
		workers   int
		byDefault bool
		free      uint64
		want      int
	}{
		{8, true, 100 << 30, 8}, {8, true, 10 << 30, 4}, {8, true, 2 << 30, 3}, {8, true, 0, 3},
		{5, true, 12 << 30, 5}, {3, true, 0, 3}, {8, false, 0, 8}, {2, false, 1 << 40, 2},
	} {
		cfg := matchConfig{Workers: c.workers, MaxPositions: launch, workersByDefault: c.byDefault}
		if got := workersFor(&cfg, c.free); got != c.want {
			t.Errorf("%d workers (by default: %v), %d MiB free: %d start, want %d", c.workers, c.byDefault, c.free>>20, got, c.want)
		}
	}
}
