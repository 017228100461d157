package bwz

import (
	"errors"
	"math/rand"
	"testing"
)

// TestStretchSquash checks that the tables invert each other to within the grid's resolution.
func TestStretchSquash(t *testing.T) {
	for p := 1; p < probOne; p++ {
		q := squash(int(stretchTab[p]))
		if d := q - p; d < -p/16-2 || d > p/16+2 {
			t.Fatalf("squash(stretch(%d)) = %d", p, q)
		}
	}
	if squash(-5000) < 1 || squash(5000) > probOne-1 || squash(0) != probOne/2 {
		t.Fatal("squash out of range")
	}
}

// TestFreshMixCounter checks that a zero mixCounter, as a fresh table holds, is consistent: its
// cached stretch is that of its probability, 1/2.
func TestFreshMixCounter(t *testing.T) {
	var c mixCounter
	if c.st() != int32(stretchQ[c.q>>4]) || c.p12() != probOne/2 {
		t.Fatalf("fresh counter: stretch %d, probability %d/4096", c.st(), c.p12())
	}
}

// TestCounterLearns feeds a counter bits of probability 0.9 and checks its estimate.
func TestCounterLearns(t *testing.T) {
	rng := rand.New(rand.NewSource(16))
	var c counter
	sum := 0
	for i := 0; i < 20000; i++ {
		bit := 0
		if rng.Intn(10) < 9 {
			bit = 1
		}
		c.update(bit)
		if i >= 10000 {
			sum += c.p12()
		}
	}
	if avg := sum / 10000; avg < 3600 || avg > 3770 {
		t.Fatalf("average estimate %d/4096, want about 3686", avg)
	}
}

// TestMixerPrefersTheGoodInput gives a mixer one input that predicts the bits and one that is
// noise: its predictions must end up better than either alone would be for a coder.
func TestMixerPrefersTheGoodInput(t *testing.T) {
	rng := rand.New(rand.NewSource(17))
	var w mixWeights
	w.init(2, 3)
	good, bad := 0, 0
	for i := 0; i < 50000; i++ {
		bit := rng.Intn(2)
		x := int32(-800)
		if bit == 1 {
			x = 800
		}
		if rng.Intn(10) == 0 { // the good input is wrong 10% of the time
			x = -x
		}
		noise := int32(rng.Intn(1600) - 800)
		p := w.mix2(x, noise)
		if i > 40000 {
			if (p > probOne/2) == (bit == 1) {
				good++
			} else {
				bad++
			}
		}
		w.learn2(x, noise, bit, p, learnRate{shift: 12, skip: 1})
	}
	if good < 8*bad {
		t.Fatalf("mixer right %d times, wrong %d", good, bad)
	}
}

// TestMTFAgainstNaive moves random ranks to the front with take and rankOf and compares the list
// with a plain slice doing the same.
func TestMTFAgainstNaive(t *testing.T) {
	rng := rand.New(rand.NewSource(18))
	l := newMTF()
	naive := make([]byte, 256)
	for i := range naive {
		naive[i] = byte(i)
	}
	for i := 0; i < 20000; i++ {
		r := rng.Intn(256)
		if i%3 == 0 {
			r = rng.Intn(20)
		}
		c := naive[r]
		naive = append(append([]byte{c}, naive[:r]...), naive[r+1:]...)
		if i%2 == 0 {
			if got := l.take(r); got != c {
				t.Fatalf("step %d: take(%d) = %d, want %d", i, r, got, c)
			}
		} else if got := l.rankOf(c); got != r {
			t.Fatalf("step %d: rankOf(%d) = %d, want %d", i, c, got, r)
		}
		if string(l[:]) != string(naive) {
			t.Fatalf("step %d: list differs after moving rank %d", i, r)
		}
	}
}

// TestBucketsAgainstNaive checks the branch-free length buckets and rank caps against their
// definitions.
func TestBucketsAgainstNaive(t *testing.T) {
	for n := 1; n <= 1000; n++ {
		want := 4
		switch {
		case n <= 2:
			want = n - 1
		case n <= 4:
			want = 2
		case n <= 8:
			want = 3
		}
		if got := bucket5(n); got != want {
			t.Fatalf("bucket5(%d) = %d, want %d", n, got, want)
		}
		if got := cap3(n); got != min(n, 3) {
			t.Fatalf("cap3(%d) = %d", n, got)
		}
	}
}

// TestRunsLearningRate checks the rank mixers' learning rate chosen for text-like and noisy
// segments, and that a decoder refuses a segment whose rate byte is out of range.
func TestRunsLearningRate(t *testing.T) {
	rng := rand.New(rand.NewSource(19))
	noisy := make([]byte, 200000)
	rng.Read(noisy)
	if s := rankShift(benchTransform(200000)); s > minRankShift+1 {
		t.Errorf("text-like transform: shift %d", s)
	}
	if s := rankShift(noisy); s != maxRankShift {
		t.Errorf("random bytes: shift %d, want %d", s, maxRankShift)
	}
	coded := encodeRuns(noisy, nil)
	for _, b := range []byte{minRankShift - 1, maxRankShift + 1, 0, 255} {
		bad := append([]byte{b}, coded[1:]...)
		if err := decodeRuns(bad, make([]byte, len(noisy))); !errors.Is(err, errCorrupt) {
			t.Errorf("rate byte %d: error %v", b, err)
		}
	}
	if err := decodeRuns(nil, make([]byte, 10)); !errors.Is(err, errCorrupt) {
		t.Errorf("empty segment: error %v", err)
	}
}
