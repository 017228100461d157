package cuda

import (
	"fmt"
	"runtime"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Pinned (page-locked) host memory, which the copy engines reach directly. cuMemAllocHost and
// cuMemHostAlloc pin about 1.6 GB/s on the lent H200 hosts, and no faster from eight threads at
// once (BenchmarkPinning: the driver faults the pages in and locks them one after another), so a
// run's start, where batches' codes and the workers' buffers are pinned at once, waited for it:
// some 0.75 s for the code memory of 64 stage workers (execution trace, two cards). Memory that
// the process maps itself, its pages faulted in first by several goroutines, and then registers
// (cuMemHostRegister) pins at 6.7 GB/s from eight threads there, and with huge pages asked for
// at 13.5 GB/s from one thread and 16.2 from eight. pinHost does that, on the calling goroutine's
// thread with d's context current.

// refuseRegister makes pinHost fail as a driver that refuses to register mapped memory does
// (tests of allocHost's fallback).
var refuseRegister bool

// resultNotSupported is CUDA_ERROR_NOT_SUPPORTED.
const resultNotSupported = 801

// hostRegisterPortable is CU_MEMHOSTREGISTER_PORTABLE: pinned for every context (every card).
const hostRegisterPortable = 1

// pinHost returns n bytes of pinned host memory (a multiple of the page size is mapped; unpinHost
// with the same n gives it back). The thread calling it must have a context of d current: the
// device goroutine, a bound worker, or withContext.
func pinHost(d *device, n int) (unsafe.Pointer, error) {
	mem, err := unix.Mmap(-1, 0, pinnedSize(n), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON)
	if err != nil {
		return nil, fmt.Errorf("pinned host memory of %d bytes: %w", n, err)
	}
	adviseHuge(mem)
	touchPages(mem)
	p := unsafe.Pointer(&mem[0])
	if refuseRegister {
		_ = unix.Munmap(mem)
		return nil, &Error{Call: "cuMemHostRegister", Result: resultNotSupported, Name: "CUDA_ERROR_NOT_SUPPORTED"}
	}
	if err := d.drv.check("cuMemHostRegister", d.drv.cuMemHostRegister(p, uint64(len(mem)), hostRegisterPortable)); err != nil {
		_ = unix.Munmap(mem)
		return nil, err
	}
	return p, nil
}

// unpinHost gives back what pinHost(d, n) returned.
func unpinHost(d *device, p unsafe.Pointer, n int) {
	d.drv.cuMemHostUnregister(p)
	_ = unix.Munmap(unsafe.Slice((*byte)(p), pinnedSize(n)))
}

// pinnedSize is n rounded up to whole pages (one at least).
func pinnedSize(n int) int {
	page := unix.Getpagesize()
	return (max(n, 1) + page - 1) &^ (page - 1)
}

// touchPages writes a byte of every page of mem, parts of at least 4 MiB on goroutines of their
// own (at most eight), so that the kernel faults the pages in on several cores before the driver
// locks them.
func touchPages(mem []byte) {
	const part = 4 << 20
	page := unix.Getpagesize()
	touch := func(b []byte) {
		for i := 0; i < len(b); i += page {
			b[i] = 0
		}
	}
	parts := min(len(mem)/part, runtime.GOMAXPROCS(0), 8)
	if parts <= 1 {
		touch(mem)
		return
	}
	var wg sync.WaitGroup
	for i := range parts {
		lo, hi := len(mem)*i/parts&^(page-1), len(mem)*(i+1)/parts&^(page-1)
		if i == parts-1 {
			hi = len(mem)
		}
		wg.Go(func() { touch(mem[lo:hi]) })
	}
	wg.Wait()
}

// withContext runs f on the calling goroutine with d's context current on its thread, for driver
// calls that need a context but not the device goroutine's order, so that many goroutines make
// them at once. The context stays current on that thread afterwards, which is harmless: every
// other caller sets its own.
func (d *device) withContext(f func() error) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := d.drv.check("cuCtxSetCurrent", d.drv.cuCtxSetCurrent(d.ctx)); err != nil {
		return err
	}
	return f()
}
