package cpu

import (
	"bytes"
	"errors"
	"math/rand"
	"slices"
	"testing"

	"github.com/sapipe/sapipe/kernels"
)

// sortedSuffixes is the comparison-sort suffix array, the oracle under InverseBWT's tests.
func sortedSuffixes(text []byte) []int32 {
	sa := make([]int32, len(text))
	for i := range sa {
		sa[i] = int32(i)
	}
	slices.SortFunc(sa, func(a, b int32) int { return bytes.Compare(text[a:], text[b:]) })
	return sa
}

// forwardBWT is BWTFromSA over the oracle suffix array.
func forwardBWT(text []byte) ([]byte, int) {
	dst := make([]byte, len(text))
	p := kernels.BWTFromSA(text, sortedSuffixes(text), dst)
	return dst, p
}

// bwtTexts returns random bytes over small and large alphabets, runs, periodic strings and edges.
func bwtTexts(rng *rand.Rand) [][]byte {
	texts := [][]byte{{}, {0}, {255}, {0, 0}, {1, 0}, {0, 1}, []byte("banana"), []byte("abracadabra"), []byte("mississippi")}
	for _, n := range []int{2, 3, 4, 7, 16, 100, 1000, 4097} {
		for _, sigma := range []int{1, 2, 4, 26, 256} {
			t := make([]byte, n)
			for i := range t {
				t[i] = byte(rng.Intn(sigma))
			}
			texts = append(texts, t)
		}
		texts = append(texts, bytes.Repeat([]byte{0xff}, n))
		for _, period := range []string{"ab", "aab", "acgtacgta"} {
			texts = append(texts, bytes.Repeat([]byte(period), n/len(period)+1)[:n])
		}
	}
	return texts
}

// withoutPacking runs f with the walk for long blocks on every length.
func withoutPacking(f func()) {
	saved := packedMax
	packedMax = -1
	defer func() { packedMax = saved }()
	f()
}

func TestInverseBWTRoundTrip(t *testing.T) {
	testInverseBWTRoundTrip(t)
	withoutPacking(func() { testInverseBWTRoundTrip(t) })
}

func testInverseBWTRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	for _, text := range bwtTexts(rng) {
		bwt, p := forwardBWT(text)
		got := make([]byte, len(text))
		if err := InverseBWT(bwt, p, got); err != nil {
			t.Fatalf("InverseBWT of the transform of %q: %v", shortText(text), err)
		}
		if !bytes.Equal(got, text) {
			t.Fatalf("InverseBWT(BWT(%q)) = %q", shortText(text), shortText(got))
		}
	}
}

// TestInverseBWTLarge round-trips texts long enough that the rows leave the cache, through the
// fast suffix array.
func TestInverseBWTLarge(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	rng := rand.New(rand.NewSource(4))
	for _, n := range []int{1 << 16, 1<<20 + 3} {
		text := randomBytesOf(rng, n, "acgt")
		sa := make([]int32, n)
		SuffixArray(text, sa)
		bwt := make([]byte, n)
		p := kernels.BWTFromSA(text, sa, bwt)
		got := make([]byte, n)
		for _, packed := range []bool{true, false} {
			clear(got)
			var err error
			if packed {
				err = InverseBWT(bwt, p, got)
			} else {
				withoutPacking(func() { err = InverseBWT(bwt, p, got) })
			}
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, text) {
				t.Fatalf("round trip of %d bytes differs (packed walk: %v)", n, packed)
			}
		}
	}
}

func TestInverseBWTRejects(t *testing.T) {
	for _, c := range []struct {
		bwt     string
		primary int
		dstLen  int
	}{
		{"", 1, 0},
		{"", -1, 0},
		{"a", 0, 1},
		{"a", 2, 1},
		{"abc", 4, 3},
		{"abc", -5, 3},
		{"abc", 1, 2},
		{"abc", 1, 4},
	} {
		dst := make([]byte, c.dstLen)
		if err := InverseBWT([]byte(c.bwt), c.primary, dst); err == nil {
			t.Errorf("InverseBWT(%q, %d) into %d bytes: no error", c.bwt, c.primary, c.dstLen)
		}
	}
	// "ab" with primary 1: L = a $ b, F = $ a b; the walk from row 1 goes to row 0 and back.
	if err := InverseBWT([]byte("ab"), 1, make([]byte, 2)); !errors.Is(err, ErrInvalidBWT) {
		t.Errorf("InverseBWT(ab, 1) = %v, want ErrInvalidBWT", err)
	}
}

// TestInverseBWTArbitrary feeds every primary of random strings: each either fails with
// ErrInvalidBWT or returns a text whose transform is the input.
func TestInverseBWTArbitrary(t *testing.T) {
	testInverseBWTArbitrary(t)
	withoutPacking(func() { testInverseBWTArbitrary(t) })
}

func testInverseBWTArbitrary(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	valid, invalid := 0, 0
	for range 2000 {
		n := 1 + rng.Intn(12)
		bwt := make([]byte, n)
		for i := range bwt {
			bwt[i] = 'a' + byte(rng.Intn(3))
		}
		for p := 1; p <= n; p++ {
			checkInverse(t, bwt, p)
			if InverseBWT(bwt, p, make([]byte, n)) == nil {
				valid++
			} else {
				invalid++
			}
		}
	}
	if valid == 0 || invalid == 0 {
		t.Errorf("%d valid and %d invalid pairs: the generator misses a case", valid, invalid)
	}
}

func checkInverse(t testing.TB, bwt []byte, p int) {
	t.Helper()
	text := make([]byte, len(bwt))
	err := InverseBWT(bwt, p, text)
	if err != nil {
		if p >= 1 && p <= len(bwt) && !errors.Is(err, ErrInvalidBWT) {
			t.Fatalf("InverseBWT(%q, %d): %v, want ErrInvalidBWT", bwt, p, err)
		}
		return
	}
	again, p2 := forwardBWT(text)
	if !bytes.Equal(again, bwt) || p2 != p {
		t.Fatalf("InverseBWT(%q, %d) = %q, whose transform is %q, %d", bwt, p, text, again, p2)
	}
}

func FuzzInverseBWT(f *testing.F) {
	f.Add([]byte("annbaa"), 4)
	f.Add([]byte("ba"), 1)
	f.Add([]byte{}, 0)
	f.Fuzz(func(t *testing.T, bwt []byte, p int) {
		if len(bwt) > 1<<12 {
			bwt = bwt[:1<<12]
		}
		checkInverse(t, bwt, p)
		withoutPacking(func() { checkInverse(t, bwt, p) })
	})
}

func randomBytesOf(rng *rand.Rand, n int, alpha string) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = alpha[rng.Intn(len(alpha))]
	}
	return b
}

func shortText(b []byte) []byte {
	if len(b) > 40 {
		return b[:40]
	}
	return b
}

func BenchmarkInverseBWT(b *testing.B) {
	rng := rand.New(rand.NewSource(6))
	text := randomBytesOf(rng, 8<<20, "acgt")
	sa := make([]int32, len(text))
	SuffixArray(text, sa)
	bwt := make([]byte, len(text))
	p := kernels.BWTFromSA(text, sa, bwt)
	dst := make([]byte, len(text))
	b.SetBytes(int64(len(text)))
	b.ResetTimer()
	for range b.N {
		if err := InverseBWT(bwt, p, dst); err != nil {
			b.Fatal(err)
		}
	}
}
