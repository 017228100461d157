package bwz

import (
	"math"
	"math/rand"
	"testing"
)

// TestRunFreqWeights checks the recency-weighted counts against their definition computed in
// floating point: each run weighs 1+2^-freqDecay times the run before it, so a byte's share of the
// sum is the share of the weights of its runs.
func TestRunFreqWeights(t *testing.T) {
	rng := rand.New(rand.NewSource(31))
	var f runFreq
	f.init()
	var want [256]float64
	w, total := 1.0, 0.0
	for i := 0; i < 20000; i++ { // rescales many times
		c := byte(rng.Intn(8) * rng.Intn(8))
		f.add(c)
		want[c] += w
		total += w
		w *= 1 + math.Ldexp(1, -int(freqDecay))
		var sum uint32
		for _, n := range f.cnt {
			sum += n
		}
		if sum != f.sum || sum >= 1<<30 {
			t.Fatalf("run %d: sum %d, counts add up to %d", i, f.sum, sum)
		}
	}
	for c := range want {
		got, exp := float64(f.cnt[c])/float64(f.sum), want[c]/total
		if math.Abs(got-exp) > 0.01+exp/100 {
			t.Errorf("byte %d: share %.4f, want %.4f", c, got, exp)
		}
	}
}

// TestPrefixSums checks prefix's sums over the first ranks against a naive sum.
func TestPrefixSums(t *testing.T) {
	rng := rand.New(rand.NewSource(32))
	var f runFreq
	f.init()
	l := newMTF()
	for i := 0; i < 3000; i++ {
		c := byte(rng.Intn(40) * rng.Intn(7))
		f.add(c)
		l.rankOf(c)
		var p prefix
		p.start(&f, l)
		p.extend16(&f, l)
		p.extend32(&f, l)
		pr := f.inc >> freqPrior
		var s, total uint32
		for k := 0; k < 256; k++ {
			if k <= freqRanks && p.at[k] != s {
				t.Fatalf("run %d: at[%d] = %d, want %d", i, k, p.at[k], s)
			}
			s += f.cnt[l[k]] + pr
			total += f.cnt[l[k]] + pr
		}
		if p.total != total {
			t.Fatalf("run %d: total %d, want %d", i, p.total, total)
		}
	}
}

// TestRatio checks ratio against ln(b/a) in 1/256ths, to within Mitchell's approximation.
func TestRatio(t *testing.T) {
	rng := rand.New(rand.NewSource(33))
	for i := 0; i < 100000; i++ {
		a := uint32(1 + rng.Int63n(1<<uint(1+rng.Intn(30))))
		b := uint32(1 + rng.Int63n(1<<uint(1+rng.Intn(30))))
		want := math.Log(float64(b)/float64(a)) * 256
		got := float64(ratio(b, a))
		switch {
		case want >= 2047 && got == 2047, want <= -2047 && got == -2047:
		case math.Abs(got-want) > 0.0861*math.Ln2*256+2:
			t.Fatalf("ratio(%d, %d) = %v, want %.1f", b, a, got, want)
		}
		if l := level(ratio(b, a)); l < 0 || l >= freqLevels {
			t.Fatalf("level %d for ratio(%d, %d)", l, b, a)
		}
	}
	if ratio(1000, 1000) != 0 || ratio(2000, 1000) <= 0 || ratio(1000, 2000) >= 0 {
		t.Fatal("ratio of equal, double, half")
	}
}
