// Command sabench times one suffix array builder on one file: sapipe's CPU SuffixArray or Go's
// index/suffixarray. It is the Go side of the peer table that sabench.sh prints (`make bench-sa`);
// libdivsufsort's side is divsufsort_bench.c.
//
//	sabench -algo sapipe|go [-threads N] [-reps R] [-check SAFILE] FILE
//	sabench -gendna N FILE
//	sabench -genrep N FILE
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
	"runtime/pprof"
	"time"

	"github.com/sapipe/sapipe/kernels/cpu"
)

func main() {
	algo := flag.String("algo", "sapipe", "sapipe or go")
	threads := flag.Int("threads", runtime.NumCPU(), "threads for sapipe")
	reps := flag.Int("reps", 3, "runs; the best is printed")
	check := flag.String("check", "", "compare the suffix array with this file (little-endian int32)")
	gendna := flag.Int("gendna", 0, "instead, write this many random ACGT bytes (seed 1) to FILE")
	genrep := flag.Int("genrep", 0, "instead, write this many bytes of DNA with repeats (seed 1) to FILE")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the runs to this file")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: sabench -algo sapipe|go [-threads N] [-reps R] [-check SAFILE] FILE")
		os.Exit(2)
	}
	if *gendna > 0 || *genrep > 0 {
		text := randomDNA(*gendna)
		if *genrep > 0 {
			text = repeatDNA(*genrep)
		}
		if err := os.WriteFile(flag.Arg(0), text, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "sabench:", err)
			os.Exit(1)
		}
		return
	}
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "sabench:", err)
			os.Exit(1)
		}
		defer pprof.StopCPUProfile()
	}
	if err := run(*algo, *threads, *reps, *check, flag.Arg(0)); err != nil {
		pprof.StopCPUProfile()
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

// repeatDNA returns n bytes of ACGT shaped like a genome's repeats, the same for every run: half
// of it copies of a few hundred repeat families (300 to 6,000 bases, like SINEs and LINEs), each
// copy with 2-20% of its bases changed and some cut short; 3% tandem repeats of units of 1 to 6
// bases; 5% copies of earlier stretches of 10 to 200 kb with 1% changed (segmental duplications);
// the rest random. Long exact repeats are rare, near repeats common, as in a mammalian genome.
func repeatDNA(n int) []byte {
	rng := rand.New(rand.NewPCG(1, 1))
	base := func() byte { return "ACGT"[rng.IntN(4)] }
	families := make([][]byte, 400)
	for i := range families {
		f := make([]byte, 300+rng.IntN(5700))
		for j := range f {
			f[j] = base()
		}
		families[i] = f
	}
	mutate := func(b []byte, rate float64) {
		for j := range b {
			if rng.Float64() < rate {
				b[j] = base()
			}
		}
	}
	t := make([]byte, 0, n+1<<20)
	for len(t) < n {
		switch r := rng.Float64(); {
		case r < 0.5:
			f := families[rng.IntN(len(families))]
			start := 0
			if rng.IntN(2) == 0 {
				start = rng.IntN(len(f))
			}
			at := len(t)
			t = append(t, f[start:]...)
			mutate(t[at:], 0.02+0.18*rng.Float64())
		case r < 0.53:
			unit := make([]byte, 1+rng.IntN(6))
			for j := range unit {
				unit[j] = base()
			}
			for range 5 + rng.IntN(60) {
				t = append(t, unit...)
			}
		case r < 0.58 && len(t) > 1<<20:
			size := 10_000 + rng.IntN(190_000)
			from := rng.IntN(len(t) - size)
			at := len(t)
			t = append(t, t[from:from+size]...)
			mutate(t[at:], 0.01)
		default:
			for range 200 + rng.IntN(2000) {
				t = append(t, base())
			}
		}
	}
	return t[:n]
}
