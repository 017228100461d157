package cuda

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/ebitengine/purego"
)

// Driver calls for streamed work: CUDA streams, asynchronous copies and memsets, pinned host memory,
// events, and launches on a stream from goroutines other than the device goroutine. The matcher's
// workers each lock an OS thread and make the device's primary context current on it (a context may
// be current on several threads at once), so that each issues work on its own stream and waits for
// it without holding up the others.

// streamCalls are the entry points bound here beyond driver's.
type streamCalls struct {
	cuMemsetD32Async func(p devPtr, v uint32, n uint64, s uintptr) int32
	cuStreamQuery    func(s uintptr) int32
}

var (
	streamCallsOnce sync.Once
	theStreamCalls  *streamCalls
	streamCallsErr  error
)

// getStreamCalls binds the calls of streamCalls from the loaded driver, once.
func getStreamCalls(d *driver) (*streamCalls, error) {
	streamCallsOnce.Do(func() {
		c := &streamCalls{}
		for _, b := range c.entryPoints() {
			sym, err := purego.Dlsym(d.handle, b.name)
			if err != nil || sym == 0 {
				streamCallsErr = fmt.Errorf("%w: the CUDA driver lacks %s (driver too old?)", ErrBadDriver, b.name)
				return
			}
			purego.RegisterFunc(b.fptr, sym)
		}
		theStreamCalls = c
	})
	return theStreamCalls, streamCallsErr
}

// entryPoints pairs each function of c with its name in libcuda.
func (c *streamCalls) entryPoints() []binding {
	return []binding{{&c.cuMemsetD32Async, "cuMemsetD32Async"}, {&c.cuStreamQuery, "cuStreamQuery"}}
}

// bindThread locks the calling goroutine to its OS thread for good and makes the device's context
// current there. The thread ends with the goroutine.
func (d *device) bindThread() error {
	runtime.LockOSThread()
	return d.drv.check("cuCtxSetCurrent", d.drv.cuCtxSetCurrent(d.ctx))
}

// Stream flags (CUstream_flags).
const streamNonBlocking = 1 // no implicit synchronisation with the legacy default stream

// stream is a CUDA stream and the launch-argument memory of the one goroutine that uses it.
type stream struct {
	d     *device
	sc    *streamCalls
	h     uintptr
	waits *waitTally // when profiled: the time sync waits for the card
	vals  *[maxArgs]uint64
	argp  *[maxArgs]uintptr
}

// newStream creates a stream on a thread where the context is current.
func newStream(d *device) (*stream, error) {
	sc, err := getStreamCalls(d.drv)
	if err != nil {
		return nil, err
	}
	s := &stream{d: d, sc: sc, vals: new([maxArgs]uint64), argp: new([maxArgs]uintptr)}
	if err := d.drv.check("cuStreamCreate", d.drv.cuStreamCreate(&s.h, streamNonBlocking)); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *stream) destroy() {
	if s.h != 0 {
		s.d.drv.cuStreamDestroy(s.h)
		s.h = 0
	}
}

// launch runs kernel fn on grid blocks of block threads on the stream. Arguments are devPtr, uint64,
// int64, uint32, int32, int (passed as 32 bits), or a pointer to a struct passed by value (*pageDev).
func (s *stream) launch(name string, fn uintptr, grid, block int, args ...any) error {
	if grid <= 0 {
		return nil
	}
	if len(args) > maxArgs {
		return fmt.Errorf("launch %s: %d arguments", name, len(args))
	}
	if grid > 1<<31-1 {
		return fmt.Errorf("launch %s: grid of %d blocks", name, grid)
	}
	for i, a := range args {
		s.argp[i] = uintptr(unsafe.Pointer(&s.vals[i]))
		switch v := a.(type) {
		case devPtr:
			s.vals[i] = uint64(v)
		case uint64:
			s.vals[i] = v
		case int64:
			s.vals[i] = uint64(v)
		case uint32:
			s.vals[i] = uint64(v)
		case int32:
			s.vals[i] = uint64(uint32(v))
		case int:
			s.vals[i] = uint64(uint32(int32(v)))
		case *pageDev:
			s.argp[i] = uintptr(unsafe.Pointer(v))
		default:
			return fmt.Errorf("launch %s: argument %d has type %T", name, i, a)
		}
	}
	res := s.d.drv.cuLaunchKernel(fn, uint32(grid), 1, 1, uint32(block), 1, 1, 0, s.h, unsafe.Pointer(&s.argp[0]), nil)
	runtime.KeepAlive(args)
	return s.d.drv.check("cuLaunchKernel("+name+")", res)
}

// toDevice queues a copy of n bytes from pinned host memory to the device.
func (s *stream) toDevice(dst devPtr, src unsafe.Pointer, n int) error {
	if n == 0 {
		return nil
	}
	return s.d.drv.check("cuMemcpyHtoDAsync", s.d.drv.cuMemcpyHtoDAsync(dst, src, uint64(n), s.h))
}

// toHost queues a copy of n bytes from the device to pinned host memory.
func (s *stream) toHost(dst unsafe.Pointer, src devPtr, n int) error {
	if n == 0 {
		return nil
	}
	return s.d.drv.check("cuMemcpyDtoHAsync", s.d.drv.cuMemcpyDtoHAsync(dst, src, uint64(n), s.h))
}

// onDevice queues a copy of n bytes from src to dst, both on the device.
func (s *stream) onDevice(dst, src devPtr, n int) error {
	if n == 0 {
		return nil
	}
	return s.d.drv.check("cuMemcpyDtoDAsync", s.d.drv.cuMemcpyDtoDAsync(dst, src, uint64(n), s.h))
}

// memset32 queues filling n 32-bit words at p with v.
func (s *stream) memset32(p devPtr, v uint32, n int) error {
	if n == 0 {
		return nil
	}
	return s.d.drv.check("cuMemsetD32Async", s.sc.cuMemsetD32Async(p, v, uint64(n), s.h))
}

// sync waits for everything queued on the stream: asking the stream whether it is done, at first
// at once again (most waits, after short launches and copies, end within microseconds), then,
// once the wait has lasted waitSpin, sleeping between the questions for an eighth of the time
// waited so far (up to waitNapMax), so that a worker waiting on a long walk leaves its core to
// the host's parsing and formatting. A context made to sleep in the driver's own waits
// (SAPIPE_GPU_SYNC=block) does that for every wait, short ones too, and slowed runs of many small
// launches (kernels/cuda/NOTES.md). SAPIPE_GPU_WAIT=driver waits in cuStreamSynchronize instead.
func (s *stream) sync() error {
	if s.waits != nil {
		defer s.waits.add(time.Now())
	}
	if !pollWaits {
		return s.d.drv.check("cuStreamSynchronize", s.d.drv.cuStreamSynchronize(s.h))
	}
	var start time.Time
	for i := 0; ; i++ {
		r := s.sc.cuStreamQuery(s.h)
		if r != cudaErrorNotReady {
			return s.d.drv.check("cuStreamQuery", r)
		}
		if i == 0 {
			start = time.Now()
			continue
		}
		if waited := time.Since(start); waited >= waitSpin {
			time.Sleep(min(waited/8, waitNapMax))
		}
	}
}

// waitTally sums the waits of streams' syncs (a profiled matcher's workers).
type waitTally struct{ n, ns atomic.Int64 }

func (t *waitTally) add(since time.Time) {
	t.n.Add(1)
	t.ns.Add(int64(time.Since(since)))
}

// The stream waits of sync (variables, for measuring): SAPIPE_GPU_WAIT=driver waits in the
// driver; SAPIPE_GPU_WAIT=SPIN/NAP (microseconds) sets waitSpin and waitNapMax.
var (
	pollWaits            = os.Getenv("SAPIPE_GPU_WAIT") != "driver"
	waitSpin, waitNapMax = waitTimes(os.Getenv("SAPIPE_GPU_WAIT"), 200*time.Microsecond, time.Millisecond)
)

// waitTimes reads "SPIN/NAP" in microseconds, else gives spin and nap.
func waitTimes(v string, spin, nap time.Duration) (time.Duration, time.Duration) {
	a, b, ok := strings.Cut(v, "/")
	s, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || s < 0 || n < 1 {
		return spin, nap
	}
	return time.Duration(s) * time.Microsecond, time.Duration(n) * time.Microsecond
}

const cudaErrorNotReady = 600 // CUDA_ERROR_NOT_READY

// event is a CUDA event, for timing work on a stream.
type event uintptr

func (s *stream) newEvent() (event, error) {
	var e uintptr
	err := s.d.drv.check("cuEventCreate", s.d.drv.cuEventCreate(&e, 0))
	return event(e), err
}

func (s *stream) record(e event) error {
	return s.d.drv.check("cuEventRecord", s.d.drv.cuEventRecord(uintptr(e), s.h))
}

// elapsed returns the milliseconds between two recorded, completed events.
func (s *stream) elapsed(a, b event) (float32, error) {
	var ms float32
	err := s.d.drv.check("cuEventElapsedTime", s.d.drv.cuEventElapsedTime(&ms, uintptr(a), uintptr(b)))
	return ms, err
}

func (s *stream) destroyEvent(e event) { s.d.drv.cuEventDestroy(uintptr(e)) }

// devBuf is device memory that grows on demand; its contents are not kept when it grows.
type devBuf struct {
	p devPtr
	n uint64
}

// ensure makes the buffer at least n bytes (and at least 256), a quarter more when it allocates,
// for growth. The caller must have synchronised any stream that still uses the old memory.
func (b *devBuf) ensure(d *device, n uint64) error { return b.ensureRoom(d, n, n/4) }

// ensureExact is ensure without the room to grow: for buffers sized once (a page's build).
func (b *devBuf) ensureExact(d *device, n uint64) error { return b.ensureRoom(d, n, 0) }

func (b *devBuf) ensureRoom(d *device, n, room uint64) error {
	n = max(n, 256)
	if n <= b.n {
		return nil
	}
	b.free(d)
	n += room
	if err := d.drv.check("cuMemAlloc", d.drv.cuMemAlloc(&b.p, n)); err != nil {
		return err
	}
	b.n = n
	d.took(n)
	return nil
}

func (b *devBuf) free(d *device) {
	if b.n != 0 {
		d.drv.cuMemFree(b.p)
		d.allocated.Add(-int64(b.n))
		b.p, b.n = 0, 0
	}
}

// hostBuf is pinned (page-locked) host memory, which asynchronous copies need; it grows on demand
// and keeps its contents when it does.
type hostBuf struct {
	p      unsafe.Pointer
	n      int
	mapped bool // pinHost's (else the driver's)
}

func (h *hostBuf) ensure(d *device, n int) error {
	n = max(n, 256)
	if n <= h.n {
		return nil
	}
	n += n / 4
	p, mapped, err := allocHost(d, n)
	if err != nil {
		return err
	}
	if h.n != 0 {
		copy(unsafe.Slice((*byte)(p), n), unsafe.Slice((*byte)(h.p), h.n))
		freeHost(d, h.p, h.n, h.mapped)
	}
	h.p, h.n, h.mapped = p, n, mapped
	return nil
}

func (h *hostBuf) free(d *device) {
	if h.n != 0 {
		freeHost(d, h.p, h.n, h.mapped)
		h.p, h.n, h.mapped = nil, 0, false
	}
}

// allocHost returns n bytes of pinned memory: mapped and registered (pinHost, mapped true) from
// pinMapped bytes on, where that is faster, else, and where the driver refuses to register mapped
// memory, from the driver's own allocation. freeHost with the same n and mapped gives it back.
func allocHost(d *device, n int) (p unsafe.Pointer, mapped bool, err error) {
	if n >= pinMapped {
		if p, err = pinHost(d, n); err == nil {
			return p, true, nil
		}
		var ce *Error
		if !errors.As(err, &ce) || isOutOfMemory(err) {
			return nil, false, err // the system's mapping failed, or the driver has no room
		}
	}
	err = d.drv.check("cuMemAllocHost", d.drv.cuMemAllocHost(&p, uint64(n)))
	return p, false, err
}

func freeHost(d *device, p unsafe.Pointer, n int, mapped bool) {
	if mapped {
		unpinHost(d, p, n)
	} else {
		d.drv.cuMemFreeHost(p)
	}
}

// pinMapped is the size from which allocHost maps and registers memory itself.
const pinMapped = 1 << 20

// hostSlice views the first n elements of a pinned buffer as a slice of T.
func hostSlice[T any](h *hostBuf, n int) []T {
	if n == 0 {
		return nil
	}
	return unsafe.Slice((*T)(h.p), n)
}
