package formats

import (
	"runtime"
	"sync"
	"syscall"
)

// adviseSequential tells the kernel that b, a mapped file, is read from start to end (read-ahead).
func adviseSequential(b []byte) { syscall.Madvise(b, syscall.MADV_SEQUENTIAL) }

// unmapMany unmaps b, a file's mapping. A large one's page tables are first dropped in parts on
// several goroutines (madvise MADV_DONTNEED, which takes the address space's lock for reading
// only, where munmap takes it for writing): unmapping the 21.8 GB index of a 3.1 Gbp genome,
// every page of it touched by the checksums, took 0.65 s on one goroutine at the end of each
// count and locate (lent H200).
func unmapMany(b []byte) error {
	const part = 256 << 20
	if len(b) >= 4*part {
		workers := min(runtime.GOMAXPROCS(0), 16, len(b)/part)
		var wg sync.WaitGroup
		var mu sync.Mutex
		next := 0
		for range workers {
			wg.Go(func() {
				for {
					mu.Lock()
					lo := next
					next += part
					mu.Unlock()
					if lo >= len(b) {
						return
					}
					syscall.Madvise(b[lo:min(lo+part, len(b))], syscall.MADV_DONTNEED)
				}
			})
		}
		wg.Wait()
	}
	return syscall.Munmap(b)
}
