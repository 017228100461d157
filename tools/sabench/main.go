// Command sabench times one suffix array builder on one file: sapipe's CPU SuffixArray or Go's
// index/suffixarray. It is the Go side of the peer table that sabench.sh prints (`make bench-sa`);
// libdivsufsort's side is divsufsort_bench.c.
//
//	sabench -algo sapipe|go [-threads N] [-reps R] [-check SAFILE] FILE
//	sabench -gendna N FILE
//
// It prints one line, "seconds peak_rss_kb", for the best of R runs. With -check (sapipe only), it
// compares the suffix array with SAFILE (little-endian int32, as divsufsort_bench writes it) and
// fails if they differ.
package main

import (
	"bytes"
	"encoding/binary"
	"flag"
	"fmt"
	"index/suffixarray"
	"math/rand/v2"
	"os"
	"runtime"
	"runtime/debug"
	"time"

	"github.com/sapipe/sapipe/kernels/cpu"
)

func main() {
	algo := flag.String("algo", "sapipe", "sapipe or go")
	threads := flag.Int("threads", runtime.NumCPU(), "threads for sapipe")
	reps := flag.Int("reps", 3, "runs; the best is printed")
	check := flag.String("check", "", "compare the suffix array with this file (little-endian int32)")
	gendna := flag.Int("gendna", 0, "instead, write this many random ACGT bytes (seed 1) to FILE")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: sabench -algo sapipe|go [-threads N] [-reps R] [-check SAFILE] FILE")
		os.Exit(2)
	}
	if *gendna > 0 {
		if err := os.WriteFile(flag.Arg(0), randomDNA(*gendna), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "sabench:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(*algo, *threads, *reps, *check, flag.Arg(0)); err != nil {
		fmt.Fprintln(os.Stderr, "sabench:", err)
		os.Exit(1)
	}
}

func run(algo string, threads, reps int, check, name string) error {
	text, err := os.ReadFile(name)
	if err != nil {
		return err
	}
	if int64(len(text)) > 1<<31-1 {
		return fmt.Errorf("%s: over 2^31-1 bytes", name)
	}
	var build func() []int32
	switch algo {
	case "sapipe":
		sa := make([]int32, len(text))
		build = func() []int32 { cpu.SuffixArrayThreads(text, sa, threads); return sa }
	case "go":
		if check != "" {
			return fmt.Errorf("-check works with -algo sapipe only")
		}
		build = func() []int32 { suffixarray.New(text); return nil }
	default:
		return fmt.Errorf("unknown -algo %q", algo)
	}
	// Neither builder allocates much while it runs; keep the collector from timing itself in.
	runtime.GC()
	debug.SetGCPercent(-1)
	best := time.Duration(1 << 62)
	var sa []int32
	for range max(reps, 1) {
		start := time.Now()
		c0 := cpuTime()
		sa = build()
		if os.Getenv("SABENCH_CPU") != "" {
			best = min(best, cpuTime()-c0)
		} else {
			best = min(best, time.Since(start))
		}
		runtime.GC()
	}
	rss := peakRSSKiB() // before the check's buffers
	if check != "" {
		want, err := os.ReadFile(check)
		if err != nil {
			return err
		}
		got := make([]byte, 4*len(sa))
		for i, p := range sa {
			binary.LittleEndian.PutUint32(got[4*i:], uint32(p))
		}
		if !bytes.Equal(got, want) {
			return fmt.Errorf("%s: %s suffix array differs from %s", name, algo, check)
		}
	}
	fmt.Printf("%.6f %d\n", best.Seconds(), rss)
	return nil
}

// randomDNA returns n bytes of A, C, G and T, the same for every run.
func randomDNA(n int) []byte {
	rng := rand.New(rand.NewPCG(1, 0))
	b := make([]byte, n)
	for i := range b {
		b[i] = "ACGT"[rng.IntN(4)]
	}
	return b
}
