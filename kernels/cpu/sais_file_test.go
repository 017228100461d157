package cpu

import (
	"fmt"
	"math/rand"
	"os"
	"runtime"
	"testing"
)

// BenchmarkSuffixArrayFile times SuffixArray on the file named by $SAFILE (skipped without it):
// SAFILE=../../bench-data/sa/ecoli.seq go test -run XXX -bench SuffixArrayFile ./kernels/cpu
func BenchmarkSuffixArrayFile(b *testing.B) {
	name := os.Getenv("SAFILE")
	if name == "" {
		b.Skip("SAFILE not set")
	}
	text, err := os.ReadFile(name)
	if err != nil {
		b.Fatal(err)
	}
	benchmarkSuffixArray(b, text)
}

// BenchmarkSuffixArrayThreads times SuffixArrayThreads on 1, 2, 4, 8 and 16 threads (those the
// machine has), on the file named by $SAFILE or else 64 MiB of random DNA: how the construction
// scales. A genome made by tools/genscale, on 16 cores:
//
//	go run ./tools/genscale genome --size 400M --seed 1 -o g400.fa
//	SAFILE=$PWD/g400.fa go test -run XXX -bench SuffixArrayThreads -benchtime 3x ./kernels/cpu
func BenchmarkSuffixArrayThreads(b *testing.B) {
	var text []byte
	if name := os.Getenv("SAFILE"); name != "" {
		var err error
		if text, err = os.ReadFile(name); err != nil {
			b.Fatal(err)
		}
	} else {
		rng := rand.New(rand.NewSource(1))
		text = make([]byte, 64<<20)
		for i := range text {
			text[i] = "ACGT"[rng.Intn(4)]
		}
	}
	sa := make([]int32, len(text))
	for _, threads := range []int{1, 2, 4, 8, 16} {
		if threads > 1 && threads > runtime.GOMAXPROCS(0) {
			break
		}
		b.Run(fmt.Sprintf("threads=%d", threads), func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			for range b.N {
				SuffixArrayThreads(text, sa, threads)
			}
		})
	}
}
