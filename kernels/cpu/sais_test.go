package cpu

import (
	"bytes"
	"fmt"
	"math/rand"
	"runtime"
	"slices"
	"sync"
	"testing"
)

// naiveSuffixArray sorts the suffixes by comparison: the oracle for SuffixArray.
func naiveSuffixArray(text []byte) []int32 {
	sa := make([]int32, len(text))
	for i := range sa {
		sa[i] = int32(i)
	}
	slices.SortFunc(sa, func(a, b int32) int { return bytes.Compare(text[a:], text[b:]) })
	return sa
}

func naiveLCP(text []byte, sa []int32) []int32 {
	lcp := make([]int32, len(sa))
	for i := 1; i < len(sa); i++ {
		a, b := text[sa[i-1]:], text[sa[i]:]
		k := 0
		for k < len(a) && k < len(b) && a[k] == b[k] {
			k++
		}
		lcp[i] = int32(k)
	}
	return lcp
}

// saTexts returns inputs that exercise SA-IS: random texts over small and large alphabets,
// single-letter runs, periodic strings (deep recursion) and their edges.
func saTexts(rng *rand.Rand) [][]byte {
	texts := [][]byte{{}, {0}, {7}, {1, 0}, {0, 1}, {0, 0}, []byte("banana"), []byte("mississippi"), []byte("abracadabra")}
	for _, n := range []int{2, 3, 5, 17, 64, 100, 1000, 5000} {
		for _, sigma := range []int{1, 2, 4, 6, 256} {
			t := make([]byte, n)
			for i := range t {
				t[i] = byte(rng.Intn(sigma))
			}
			texts = append(texts, t)
		}
		texts = append(texts, bytes.Repeat([]byte{'a'}, n))
		for _, period := range []string{"ab", "aab", "abaab", "acgtacgta"} {
			texts = append(texts, bytes.Repeat([]byte(period), n/len(period)+1)[:n])
		}
		// A Fibonacci word: the classic worst case for recursion depth.
		a, b := []byte("a"), []byte("ab")
		for len(b) < n {
			a, b = b, append(append([]byte{}, b...), a...)
		}
		texts = append(texts, b[:n])
	}
	return texts
}

func TestSuffixArrayMatchesNaive(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for _, text := range saTexts(rng) {
		got := make([]int32, len(text))
		SuffixArray(text, got)
		want := naiveSuffixArray(text)
		if !slices.Equal(got, want) {
			t.Fatalf("SuffixArray(%q) = %v, want %v", shorten(text), got[:min(len(got), 20)], want[:min(len(want), 20)])
		}
		lcp := make([]int32, len(text))
		LCP(text, got, lcp)
		if wantLCP := naiveLCP(text, want); !slices.Equal(lcp, wantLCP) {
			t.Fatalf("LCP(%q) = %v, want %v", shorten(text), lcp[:min(len(lcp), 20)], wantLCP[:min(len(wantLCP), 20)])
		}
	}
}

// checkSuffixArray reports the first defect of sa as the suffix array of text, in linear time: sa
// must be a permutation and each pair of neighbours must be ordered by first symbol, then by the
// ranks of the suffixes one position on (the empty suffix ranking lowest).
func checkSuffixArray(text []byte, sa []int32) error {
	n := len(text)
	if len(sa) != n {
		return fmt.Errorf("%d entries for %d bytes", len(sa), n)
	}
	rank := make([]int32, n+1)
	for i := range rank {
		rank[i] = -1
	}
	for r, p := range sa {
		if p < 0 || int(p) >= n || rank[p] >= 0 {
			return fmt.Errorf("sa[%d] = %d: not a permutation", r, p)
		}
		rank[p] = int32(r)
	}
	for r := 1; r < n; r++ {
		a, b := sa[r-1], sa[r]
		if text[a] > text[b] || text[a] == text[b] && rank[a+1] > rank[b+1] {
			return fmt.Errorf("sa[%d] = %d and sa[%d] = %d out of order", r-1, a, r, b)
		}
	}
	return nil
}

// largeTexts are inputs big enough for the blocked and multi-threaded paths: the shapes of the
// real inputs (DNA, small codes, text, tar-like runs of zero bytes) and the hard cases for SA-IS.
func largeTexts(rng *rand.Rand, n int) map[string][]byte {
	texts := map[string][]byte{}
	random := func(sigma int, base byte) []byte {
		t := make([]byte, n)
		for i := range t {
			t[i] = base + byte(rng.Intn(sigma))
		}
		return t
	}
	texts["bytes"] = random(256, 0)
	texts["dna"] = random(4, 'A')
	texts["codes"] = random(11, 0)
	words := []string{"the ", "of ", "and ", "suffix ", "array ", "induced ", "sorting ", "\n", "func ", "return ", "\t\t", "    "}
	var w []byte
	for len(w) < n {
		w = append(w, words[rng.Intn(len(words))]...)
	}
	texts["words"] = w[:n]
	// Files padded with zero bytes to 512-byte blocks, as in a tar archive.
	var tar []byte
	for len(tar) < n {
		f := random(64, ' ')[:1+rng.Intn(3000)]
		tar = append(tar, f...)
		tar = append(tar, make([]byte, (512-len(tar)%512)%512)...)
	}
	texts["tar"] = tar[:n]
	texts["zeros"] = make([]byte, n)
	texts["period3"] = bytes.Repeat([]byte("aab"), n/3+1)[:n]
	a, b := []byte("a"), []byte("ab")
	for len(b) < n {
		a, b = b, append(append([]byte{}, b...), a...)
	}
	texts["fibonacci"] = b[:n]
	// A DNA genome with long repeats: copies of one random piece with a few changes.
	g := random(4, 'A')[:n/8]
	var rep []byte
	for len(rep) < n {
		c := append([]byte{}, g...)
		c[rng.Intn(len(c))] = 'N'
		rep = append(rep, c...)
	}
	texts["repeats"] = rep[:n]
	return texts
}

func TestSuffixArrayLarge(t *testing.T) {
	n := 300_000
	if testing.Short() {
		n = 100_000
	}
	rng := rand.New(rand.NewSource(2))
	for name, text := range largeTexts(rng, n) {
		first := checkThreads(t, name, text, 1, 2, 3)
		switch name {
		case "bytes", "dna", "codes":
			// Short common prefixes: the sorting oracle is fast here.
			if want := naiveSuffixArray(text); !slices.Equal(first, want) {
				t.Fatalf("%s: differs from the naive suffix array", name)
			}
		}
	}
}

// TestSuffixArrayRegions builds with the stage 1 scans that texts of 2^30 bytes or more use.
func TestSuffixArrayRegions(t *testing.T) {
	defer func(r int) { regionsFrom = r }(regionsFrom)
	regionsFrom = 0
	rng := rand.New(rand.NewSource(4))
	for _, text := range saTexts(rng) {
		got := make([]int32, len(text))
		SuffixArray(text, got)
		if want := naiveSuffixArray(text); !slices.Equal(got, want) {
			t.Fatalf("SuffixArray(%q) = %v, want %v", shorten(text), got[:min(len(got), 20)], want[:min(len(want), 20)])
		}
	}
	for name, text := range largeTexts(rng, 100_000) {
		for _, threads := range []int{1, 2} {
			sa := make([]int32, len(text))
			SuffixArrayThreads(text, sa, threads)
			if err := checkSuffixArray(text, sa); err != nil {
				t.Fatalf("%s, %d threads: %v", name, threads, err)
			}
		}
	}
}

// TestSuffixArrayParts builds with the text passes cut into parts for small texts too, on one
// thread and up to sixteen, and with texts that leave the parts few L-type suffixes.
func TestSuffixArrayParts(t *testing.T) {
	defer func(p int) { partsFrom = p }(partsFrom)
	partsFrom = 1 << 10
	// Sixteen threads even on fewer cores: as many parts.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(max(16, runtime.GOMAXPROCS(0))))
	rng := rand.New(rand.NewSource(5))
	texts := largeTexts(rng, 80_000)
	run := bytes.Repeat([]byte{'a'}, 80_000)
	// Two L-type suffixes, fewer than the parts.
	texts["one run"] = append(append([]byte{'b'}, run...), 'b')
	// LMS positions every other byte: no room beside the reduced string for a slot a part.
	texts["ab"] = bytes.Repeat([]byte("ab"), 40_000)
	texts["ba"] = bytes.Repeat([]byte("ba"), 40_000)
	for name, text := range texts {
		checkThreads(t, name, text, 1, 2, 4, 16)
	}
}

// TestSuffixArraySides builds with sixteen threads on texts whose levels of names are long enough
// for blocks in parts, with the team kept from going solo and every block of enough entries in
// parts (the helpers may get no core here, but the blocks still gather and place by part and
// side): the levels of names place on up to sixteen sides, the byte level by part. Then again
// with the blocks' clocks choosing, which mixes serial passes, their tries on first stretches,
// and parts. It compares with one thread and with the check.
func TestSuffixArraySides(t *testing.T) {
	defer func(s, p bool) { neverSolo, alwaysParts = s, p }(neverSolo, alwaysParts)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(max(16, runtime.GOMAXPROCS(0))))
	n := 400_000
	if testing.Short() {
		n = 150_000
	}
	rng := rand.New(rand.NewSource(9))
	texts := largeTexts(rng, n)
	for _, parts := range []bool{true, false} {
		neverSolo, alwaysParts = true, parts
		for _, name := range []string{"dna", "codes", "words", "repeats", "period3"} {
			checkThreads(t, fmt.Sprintf("%s, always parts %v", name, parts), texts[name], 1, 16, 3, 2)
		}
	}
}

// checkThreads builds the suffix array of text on each number of threads, into an array that is
// not fresh (the construction must not rely on zeros), checks each and that they agree, and
// returns the first.
func checkThreads(t *testing.T, name string, text []byte, threads ...int) []int32 {
	t.Helper()
	var first []int32
	for _, th := range threads {
		sa := make([]int32, len(text))
		for i := range sa {
			sa[i] = int32(i * 7919)
		}
		SuffixArrayThreads(text, sa, th)
		if err := checkSuffixArray(text, sa); err != nil {
			t.Fatalf("%s, %d threads: %v", name, th, err)
		}
		if first == nil {
			first = sa
		} else if !slices.Equal(sa, first) {
			t.Fatalf("%s: %d threads differ from %d", name, th, threads[0])
		}
	}
	return first
}

// TestSortDoubling compares sorting by doubling with the naive suffix array on strings of many
// distinct symbols, and checks that it gives up on long repeats.
func TestSortDoubling(t *testing.T) {
	rng := rand.New(rand.NewSource(9))
	// Parts claimed by several threads: the bucket sort's for texts of partsFrom symbols or
	// more, a round's for rounds of 1<<14 entries or more.
	tm := newTeam(3)
	defer tm.close()
	defer func(p int) { partsFrom = p }(partsFrom)
	partsFrom = 1 << 10
	naive := func(s []int32) []int32 {
		sa := make([]int32, len(s))
		for i := range sa {
			sa[i] = int32(i)
		}
		slices.SortFunc(sa, func(a, b int32) int { return slices.Compare(s[a:], s[b:]) })
		return sa
	}
	for _, n := range []int{1, 2, 3, 10, 100, 5000, 100_000} {
		for _, k := range []int{n, n/2 + 1, max(n/8, 2), 3} {
			s := make([]int32, n)
			for i := range s {
				s[i] = int32(rng.Intn(k))
			}
			sa := make([]int32, n)
			if sortDoubling(s, sa, k, &saScratch{}, tm) {
				if want := naive(s); !slices.Equal(sa, want) {
					t.Fatalf("n %d, k %d: %v, want %v", n, k, sa[:min(n, 20)], want[:min(n, 20)])
				}
			} else if k > 3 {
				t.Fatalf("n %d, k %d: gave up", n, k)
			}
		}
	}
	// A random string repeated: groups break up only after as many rounds as it is long.
	s := make([]int32, 4000)
	for i := range 1000 {
		s[i] = int32(rng.Intn(1000))
	}
	for i := 1000; i < len(s); i++ {
		s[i] = s[i-1000]
	}
	if sortDoubling(s, make([]int32, len(s)), 1000, &saScratch{}, tm) {
		t.Fatal("did not give up on a string repeated four times")
	}
}

// TestSuffixArrayConcurrent runs several multi-threaded builds at once, as the BWT of several
// blocks does: each has its own helpers and nothing is shared.
func TestSuffixArrayConcurrent(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	texts := largeTexts(rng, 80_000)
	want := map[string][]int32{}
	for name, text := range texts {
		want[name] = make([]int32, len(text))
		SuffixArrayThreads(text, want[name], 1)
	}
	var wg sync.WaitGroup
	errs := make(chan error, len(texts))
	for name, text := range texts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sa := make([]int32, len(text))
			SuffixArrayThreads(text, sa, 2)
			if !slices.Equal(sa, want[name]) {
				errs <- fmt.Errorf("%s: concurrent build differs", name)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestCheckSuffixArray(t *testing.T) {
	text := []byte("mississippi")
	sa := naiveSuffixArray(text)
	if err := checkSuffixArray(text, sa); err != nil {
		t.Fatal(err)
	}
	sa[3], sa[4] = sa[4], sa[3]
	if checkSuffixArray(text, sa) == nil {
		t.Fatal("swapped entries not reported")
	}
	sa[3] = sa[4]
	if checkSuffixArray(text, sa) == nil {
		t.Fatal("repeated entry not reported")
	}
}

func shorten(b []byte) []byte {
	if len(b) > 40 {
		return b[:40]
	}
	return b
}

func FuzzSuffixArray(f *testing.F) {
	for _, s := range []string{"", "a", "banana", "mississippi", "aaaaaaaaaa", "abababababab", "\x00\x01\x00\x01\xff"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, text []byte) {
		if len(text) > 1<<12 {
			return
		}
		got := make([]int32, len(text))
		SuffixArray(text, got)
		if want := naiveSuffixArray(text); !slices.Equal(got, want) {
			t.Fatalf("SuffixArray(%q) = %v, want %v", text, got, want)
		}
		lcp := make([]int32, len(text))
		LCP(text, got, lcp)
		if want := naiveLCP(text, got); !slices.Equal(lcp, want) {
			t.Fatalf("LCP(%q) = %v, want %v", text, lcp, want)
		}
	})
}

func benchmarkSuffixArray(b *testing.B, text []byte) {
	sa := make([]int32, len(text))
	b.SetBytes(int64(len(text)))
	b.ResetTimer()
	for range b.N {
		SuffixArray(text, sa)
	}
}

func BenchmarkSuffixArrayDNA(b *testing.B) {
	rng := rand.New(rand.NewSource(1))
	t := make([]byte, 4<<20)
	for i := range t {
		t[i] = byte(2 + rng.Intn(4))
	}
	benchmarkSuffixArray(b, t)
}

func BenchmarkSuffixArrayText(b *testing.B) {
	rng := rand.New(rand.NewSource(1))
	words := []string{"the ", "of ", "and ", "suffix ", "array ", "induced ", "sorting ", "\n", "func ", "return "}
	var t []byte
	for len(t) < 4<<20 {
		t = append(t, words[rng.Intn(len(words))]...)
	}
	benchmarkSuffixArray(b, t)
}

// TestZeroPages clears buffers in memory already (cleared in place) and fresh ones (left to the
// kernel), with edges that are not on page boundaries.
func TestZeroPages(t *testing.T) {
	for _, n := range []int{10, 5000, 1<<20 + 123} {
		used := make([]int32, n)
		for i := range used {
			used[i] = 7
		}
		zeroPages(used[3:])
		fresh := make([]int32, n)
		zeroPages(fresh[3:])
		for i := range n {
			want := int32(0)
			if i < 3 {
				want = 7
			}
			if used[i] != want || fresh[i] != 0 {
				t.Fatalf("n %d: entry %d is %d and %d after zeroPages, want %d and 0", n, i, used[i], fresh[i], want)
			}
		}
	}
}
