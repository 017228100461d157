package cpu

import (
	"math/rand/v2"
	"os"
	"runtime"
	"strconv"
	"sync"
	"testing"
)

// TestSuffixArrayHuge builds the suffix array of a text of $SAPIPE_SA_HUGE bytes (skipped without
// it; 2^30 and more takes the path of wide stage 1 entries, up to 2^31-1): DNA codes 0-3 with
// copies of earlier stretches, as a reference's page. It needs 9 bytes a base (text, suffix array
// and the check's ranks) and minutes on a few cores:
//
//	SAPIPE_SA_HUGE=1200000000 go test -run SuffixArrayHuge -timeout 60m ./kernels/cpu
//
// Below 2^30 bytes the same paths are taken by TestSuffixArrayRegions (regionsFrom lowered); what
// only a huge text shows is int32 arithmetic passing 2^30 or 2^31-1.
func TestSuffixArrayHuge(t *testing.T) {
	n, err := strconv.Atoi(os.Getenv("SAPIPE_SA_HUGE"))
	if err != nil || n <= 0 {
		t.Skip("SAPIPE_SA_HUGE not set")
	}
	if n > 1<<31-1 {
		t.Fatalf("SAPIPE_SA_HUGE=%d: over 2^31-1", n)
	}
	text := hugeDNA(n)
	sa := make([]int32, n)
	SuffixArrayThreads(text, sa, runtime.GOMAXPROCS(0))
	if err := checkSuffixArrayParallel(text, sa, runtime.GOMAXPROCS(0)); err != nil {
		t.Fatal(err)
	}
}

// hugeDNA returns n random codes 0-3, with a copy of an earlier stretch of up to 64 KiB (a few
// changed) every MiB or so.
func hugeDNA(n int) []byte {
	rng := rand.New(rand.NewPCG(7, 7))
	t := make([]byte, n)
	for i := 0; i < n; i += 8 {
		v := rng.Uint64()
		for j := i; j < min(i+8, n); j++ {
			t[j] = byte(v & 3)
			v >>= 8
		}
	}
	for at := 1 << 20; at < n; at += 1<<19 + rng.IntN(1<<20) {
		size := min(1+rng.IntN(1<<16), n-at)
		from := rng.IntN(at - size + 1)
		copy(t[at:at+size], t[from:from+size])
		t[at+rng.IntN(size)] ^= 1
	}
	return t
}

// checkSuffixArrayParallel is checkSuffixArray on several threads.
func checkSuffixArrayParallel(text []byte, sa []int32, threads int) error {
	n := len(text)
	rank := make([]int32, n+1)
	rank[n] = -1
	var wg sync.WaitGroup
	errs := make([]error, threads)
	for j := range threads {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := n * j / threads; r < n*(j+1)/threads; r++ {
				p := sa[r]
				if p < 0 || int(p) >= n {
					errs[j] = &saError{"out of range", r}
					return
				}
				rank[p] = int32(r)
			}
		}()
	}
	wg.Wait()
	// Each position got one rank, so a position ranked twice left another unranked: check that
	// every rank maps back.
	for j := range threads {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := n * j / threads; r < n*(j+1)/threads; r++ {
				a := sa[r]
				if errs[j] == nil && rank[a] != int32(r) {
					errs[j] = &saError{"not a permutation", r}
					return
				}
				if r == 0 {
					continue
				}
				b := sa[r-1]
				if text[b] > text[a] || text[b] == text[a] && rank[b+1] > rank[a+1] {
					errs[j] = &saError{"out of order", r}
					return
				}
			}
		}()
	}
	wg.Wait()
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

type saError struct {
	what string
	row  int
}

func (e *saError) Error() string { return "row " + strconv.Itoa(e.row) + ": " + e.what }

func TestCheckSuffixArrayParallel(t *testing.T) {
	text := hugeDNA(3 << 20)
	sa := make([]int32, len(text))
	SuffixArray(text, sa)
	if err := checkSuffixArrayParallel(text, sa, 3); err != nil {
		t.Fatal(err)
	}
	sa[100], sa[2000] = sa[2000], sa[100]
	if checkSuffixArrayParallel(text, sa, 3) == nil {
		t.Fatal("two rows swapped: no error")
	}
	sa[100] = sa[2000]
	if checkSuffixArrayParallel(text, sa, 3) == nil {
		t.Fatal("a row twice: no error")
	}
}
