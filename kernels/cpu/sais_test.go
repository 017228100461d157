package cpu

import (
	"bytes"
	"math/rand"
	"slices"
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
