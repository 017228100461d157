// Command hostbw measures the host's memory bandwidth as sapipe's host work meets it: buffers of
// 256 MiB copied over and over on each of several goroutines at once. The lent two-H200 hosts
// bounded 100 M E. coli reads on the cards by their memory bandwidth (kernels/cuda/NOTES.md);
// tools/bench-multigpu.sh prints this beside its rows, since hosts differ from call to call.
//
//	hostbw [-s SECONDS] [THREADS ...]    (default: 1 and every thread)
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

func main() {
	secs := flag.Float64("s", 1, "seconds each measurement runs")
	flag.Parse()
	threads := []int{1, runtime.GOMAXPROCS(0)}
	if flag.NArg() > 0 {
		threads = threads[:0]
		for _, a := range flag.Args() {
			n, err := strconv.Atoi(a)
			if err != nil || n < 1 {
				fmt.Fprintf(os.Stderr, "hostbw: %q is not a number of threads\n", a)
				os.Exit(2)
			}
			threads = append(threads, n)
		}
	}
	for _, n := range threads {
		gbs := copyRate(n, time.Duration(*secs*float64(time.Second)))
		unit := "threads"
		if n == 1 {
			unit = "thread"
		}
		fmt.Printf("%d %s: %.1f GB/s copied (%.1f GB/s read and written)\n", n, unit, gbs, 2*gbs)
	}
}

// copyRate copies 256 MiB buffers on n goroutines for d and returns the bytes copied a second, in GB.
func copyRate(n int, d time.Duration) float64 {
	const size = 256 << 20
	var copied atomic.Int64
	var wg sync.WaitGroup
	start := make(chan struct{})
	for range n {
		src, dst := make([]byte, size), make([]byte, size)
		for i := 0; i < size; i += 4096 { // fault the pages in before the clock starts
			src[i], dst[i] = 1, 1
		}
		wg.Go(func() {
			<-start
			for t0 := time.Now(); time.Since(t0) < d; {
				copy(dst, src)
				copied.Add(size)
			}
		})
	}
	t0 := time.Now()
	close(start)
	wg.Wait()
	return float64(copied.Load()) / time.Since(t0).Seconds() / 1e9
}
