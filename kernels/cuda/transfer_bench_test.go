package cuda

import (
	"fmt"
	"runtime"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// bind makes d's context current on the benchmark's goroutine (each b.Run has its own).
func bind(b *testing.B, d *device) {
	if err := d.bindThread(); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkHostTransfers: what a worker pays to move a launch's codes up and its records down,
// by way of pinned buffers (allocated at the size, or copied through) or straight from and into
// Go memory (the driver stages pageable copies itself). On the lent H200, 64 MiB: up from Go
// 8.7 GB/s against 5.9 through pinned memory, down into Go 14.0 against 5.6.
func BenchmarkHostTransfers(b *testing.B) {
	d, s := gpuStream(b)
	for _, mb := range []int{4, 64} {
		n := mb << 20
		var dev devBuf
		if err := dev.ensure(d, uint64(n)); err != nil {
			b.Fatal(err)
		}
		goMem := make([]byte, n)
		var pinned hostBuf
		if err := pinned.ensure(d, n); err != nil {
			b.Fatal(err)
		}
		// Each copy waits for the stream, as a launch's do.
		copied := func(err error) error {
			if err != nil {
				return err
			}
			return s.sync()
		}
		for _, c := range []struct {
			name string
			op   func() error
		}{
			{"pinned alloc and free", func() error {
				var h hostBuf
				err := h.ensure(d, n)
				h.free(d)
				return err
			}},
			{"down pinned then Go", func() error {
				err := copied(s.toHost(pinned.p, dev.p, n))
				copy(goMem, hostSlice[byte](&pinned, n))
				return err
			}},
			{"down into Go", func() error { return copied(s.toHost(unsafe.Pointer(&goMem[0]), dev.p, n)) }},
			{"up Go then pinned", func() error {
				copy(hostSlice[byte](&pinned, n), goMem)
				return copied(s.toDevice(dev.p, pinned.p, n))
			}},
			{"up pinned", func() error { return copied(s.toDevice(dev.p, pinned.p, n)) }},
			{"down pinned", func() error { return copied(s.toHost(pinned.p, dev.p, n)) }},
			{"up from Go", func() error { return copied(s.toDevice(dev.p, unsafe.Pointer(&goMem[0]), n)) }},
		} {
			b.Run(fmt.Sprintf("%s %d MiB", c.name, mb), func(b *testing.B) {
				bind(b, d)
				b.SetBytes(int64(n))
				for b.Loop() {
					if err := c.op(); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
		pinned.free(d)
		dev.free(d)
	}
}

// BenchmarkPinning: what pinning host memory costs, by the ways there are: the driver's allocation
// (cuMemAllocHost, 1.3-1.6 GB/s on the lent H200; cuMemHostAlloc, portable, 1.5-1.7 from one
// thread or eight), or memory mapped by the process (its pages faulted in first, or not) and
// registered with cuMemHostRegister; one buffer at a time, and eight goroutines at once, each with
// the context current on its own thread. A run's first batches and launches pin their buffers as they start.
func BenchmarkPinning(b *testing.B) {
	be := gpuBackend(b)
	d := be.dev
	const n = 64 << 20
	ways := []struct {
		name string
		pin  func() error
	}{
		{"cuMemAllocHost", func() error {
			var p unsafe.Pointer
			if err := d.drv.check("cuMemAllocHost", d.drv.cuMemAllocHost(&p, n)); err != nil {
				return err
			}
			return d.drv.check("cuMemFreeHost", d.drv.cuMemFreeHost(p))
		}},
		{"register mapped", func() error { return registerMapped(d, n, false) }},
		{"register mapped, pages touched", func() error { return registerMapped(d, n, true) }},
		{"pinHost", func() error {
			p, err := pinHost(d, n)
			if err == nil {
				unpinHost(d, p, n)
			}
			return err
		}},
	}
	for _, w := range ways {
		for _, at := range []int{1, 8} {
			b.Run(fmt.Sprintf("%s 64 MiB x%d", w.name, at), func(b *testing.B) {
				b.SetBytes(int64(n * at))
				for b.Loop() {
					errs := make(chan error, at)
					for range at {
						go func() {
							runtime.LockOSThread()
							defer runtime.UnlockOSThread()
							if err := d.drv.check("cuCtxSetCurrent", d.drv.cuCtxSetCurrent(d.ctx)); err != nil {
								errs <- err
								return
							}
							errs <- w.pin()
						}()
					}
					for range at {
						if err := <-errs; err != nil {
							b.Fatal(err)
						}
					}
				}
			})
		}
	}
}

// registerMapped maps n bytes, touches a byte of every page first when touch is set, pins them
// with cuMemHostRegister, and undoes it all.
func registerMapped(d *device, n int, touch bool) error {
	mem, err := unix.Mmap(-1, 0, n, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON)
	if err != nil {
		return err
	}
	defer unix.Munmap(mem)
	if touch {
		for i := 0; i < n; i += 4096 {
			mem[i] = 1
		}
	}
	p := unsafe.Pointer(&mem[0])
	if err := d.drv.check("cuMemHostRegister", d.drv.cuMemHostRegister(p, uint64(n), hostRegisterPortable)); err != nil {
		return err
	}
	return d.drv.check("cuMemHostUnregister", d.drv.cuMemHostUnregister(p))
}
