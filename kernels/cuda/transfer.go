package cuda

import (
	"runtime"
	"sync"
	"unsafe"
)

// Copies between Go memory and the device. The driver copies pageable memory through its own
// staging at about 9 GB/s to the device and 15 GB/s back (measured on the lent H200). Here large
// copies go through a ring of pinned buffers instead: goroutines copy one chunk between the Go
// slice and a pinned buffer while the copy engine moves the previous chunk, so the two overlap and
// the host side runs on several cores.

const (
	stageBufs     = 4
	stageBufBytes = 16 << 20
	stageMinChunk = 256 << 10
	stageMinBytes = 2 << 20 // smaller copies go straight through the driver
)

// Tuning of the copies, variables so that the profile test can compare choices.
var (
	stageMaxChunk = 16 << 20 // at most stageBufBytes
	copyThreads   = 8        // goroutines of one host-side chunk copy
	// registerCopies page-locks the Go memory itself for the duration of a large copy
	// (cuMemHostRegister) instead of going through the ring.
	registerCopies = false
)

// stager is the device's pinned ring. Device goroutine only.
type stager struct {
	buf    [stageBufs][]byte // pinned host memory, stageBufBytes each
	mapped [stageBufs]bool   // allocHost's mapped
	ev     [stageBufs]uintptr
	busy   [stageBufs]bool
	ok     bool
}

// stageInit allocates the ring the first time it is needed.
func (d *device) stageInit() error {
	s := &d.stage
	if s.ok {
		return nil
	}
	for i := range s.buf {
		p, mapped, err := allocHost(d, stageBufBytes)
		if err != nil {
			d.stageFree()
			return err
		}
		s.mapped[i] = mapped
		s.buf[i] = unsafe.Slice((*byte)(p), stageBufBytes)
		if err := d.drv.check("cuEventCreate", d.drv.cuEventCreate(&s.ev[i], 2 /* CU_EVENT_DISABLE_TIMING */)); err != nil {
			d.stageFree()
			return err
		}
	}
	s.ok = true
	return nil
}

func (d *device) stageFree() {
	s := &d.stage
	for i := range s.buf {
		if s.buf[i] != nil {
			freeHost(d, unsafe.Pointer(&s.buf[i][0]), stageBufBytes, s.mapped[i])
			s.buf[i] = nil
		}
		if s.ev[i] != 0 {
			d.drv.cuEventDestroy(s.ev[i])
			s.ev[i] = 0
		}
	}
	s.ok = false
}

func chunkFor(n int) int {
	return min(max((n/8+4095)&^4095, stageMinChunk), stageMaxChunk)
}

// wait blocks until ring buffer i is free.
func (d *device) waitBuf(i int) error {
	s := &d.stage
	if !s.busy[i] {
		return nil
	}
	s.busy[i] = false
	return d.drv.check("cuEventSynchronize", d.drv.cuEventSynchronize(s.ev[i]))
}

// copyIn copies src to device address dst. The copy may still be running when it returns;
// work launched after it on the device sees the data (one stream orders both), and src may be
// reused at once. Device goroutine only.
func (d *device) copyIn(dst devPtr, src []byte) error {
	n := len(src)
	if registerCopies && n >= stageMinBytes {
		return d.registered(unsafe.Pointer(&src[0]), n, func() error { return d.toDevice(dst, unsafe.Pointer(&src[0]), n) })
	}
	if n < stageMinBytes || d.stageInit() != nil {
		if n == 0 {
			return nil
		}
		return d.toDevice(dst, unsafe.Pointer(&src[0]), n)
	}
	s := &d.stage
	chunk := chunkFor(n)
	for k, off := 0, 0; off < n; k, off = k+1, off+chunk {
		i := k % stageBufs
		l := min(chunk, n-off)
		if err := d.waitBuf(i); err != nil {
			return err
		}
		parallelCopy(s.buf[i][:l], src[off:off+l])
		if err := d.drv.check("cuMemcpyHtoDAsync", d.drv.cuMemcpyHtoDAsync(dst+devPtr(off), unsafe.Pointer(&s.buf[i][0]), uint64(l), 0)); err != nil {
			return err
		}
		if err := d.drv.check("cuEventRecord", d.drv.cuEventRecord(s.ev[i], 0)); err != nil {
			return err
		}
		s.busy[i] = true
	}
	return nil
}

// copyInFrom is copyIn of the n bytes at src (Go memory, or a mapped file: the ring's copy
// goroutines then take its page faults on several cores too). Device goroutine only.
func (d *device) copyInFrom(dst devPtr, src unsafe.Pointer, n int) error {
	if n == 0 {
		return nil
	}
	return d.copyIn(dst, unsafe.Slice((*byte)(src), n))
}

// copyOut copies len(dst) bytes from device address src into dst, after the work launched before
// it. Device goroutine only.
func (d *device) copyOut(dst []byte, src devPtr) error {
	n := len(dst)
	if registerCopies && n >= stageMinBytes {
		return d.registered(unsafe.Pointer(&dst[0]), n, func() error { return d.toHost(unsafe.Pointer(&dst[0]), src, n) })
	}
	if n < stageMinBytes || d.stageInit() != nil {
		if n == 0 {
			return nil
		}
		return d.toHost(unsafe.Pointer(&dst[0]), src, n)
	}
	s := &d.stage
	chunk := chunkFor(n)
	chunks := (n + chunk - 1) / chunk
	issue := func(k int) error {
		i := k % stageBufs
		if err := d.waitBuf(i); err != nil {
			return err
		}
		off := k * chunk
		l := min(chunk, n-off)
		if err := d.drv.check("cuMemcpyDtoHAsync", d.drv.cuMemcpyDtoHAsync(unsafe.Pointer(&s.buf[i][0]), src+devPtr(off), uint64(l), 0)); err != nil {
			return err
		}
		if err := d.drv.check("cuEventRecord", d.drv.cuEventRecord(s.ev[i], 0)); err != nil {
			return err
		}
		s.busy[i] = true
		return nil
	}
	for k := 0; k < min(chunks, stageBufs); k++ {
		if err := issue(k); err != nil {
			return err
		}
	}
	for k := 0; k < chunks; k++ {
		i := k % stageBufs
		if err := d.waitBuf(i); err != nil {
			return err
		}
		off := k * chunk
		l := min(chunk, n-off)
		parallelCopy(dst[off:off+l], s.buf[i][:l])
		if k+stageBufs < chunks {
			if err := issue(k + stageBufs); err != nil {
				return err
			}
		}
	}
	return nil
}

// copyPart is the least a goroutine of parallelCopy copies.
const copyPart = 1 << 20

// parallelCopy copies src to dst (of equal length) on several goroutines.
func parallelCopy(dst, src []byte) {
	n := len(src)
	parts := min(runtime.GOMAXPROCS(0), copyThreads, (n+copyPart-1)/copyPart)
	if parts <= 1 {
		copy(dst, src)
		return
	}
	step := (n/parts + 63) &^ 63
	var wg sync.WaitGroup
	for off := 0; off < n; off += step {
		end := min(off+step, n)
		wg.Add(1)
		go func() {
			defer wg.Done()
			copy(dst[off:end], src[off:end])
		}()
	}
	wg.Wait()
}

// int32Bytes views s as bytes.
func int32Bytes(s []int32) []byte {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), 4*len(s))
}

// registered runs copy with the n bytes at p page-locked, so that the copy engine reaches them
// directly. Device goroutine only.
func (d *device) registered(p unsafe.Pointer, n int, copy func() error) error {
	if err := d.drv.check("cuMemHostRegister", d.drv.cuMemHostRegister(p, uint64(n), 0)); err != nil {
		return err
	}
	err := copy()
	if uerr := d.drv.check("cuMemHostUnregister", d.drv.cuMemHostUnregister(p)); err == nil {
		err = uerr
	}
	return err
}
