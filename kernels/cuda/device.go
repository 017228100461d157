package cuda

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync/atomic"
	"time"
	"unsafe"
)

// A device is one GPU with its primary context, the loaded kernels and a goroutine locked to its OS
// thread that makes every driver call for it: a CUDA context is current per thread, so all work is
// sent to that goroutine as closures (run), which execute one at a time.
type device struct {
	drv  *driver
	info Info
	dev  int32
	ctx  uintptr
	mod  uintptr
	fns  map[string]uintptr

	jobs chan func()
	quit chan struct{}
	done chan struct{} // closed when the device goroutine has torn the device down

	// Launch arguments live here, in memory the garbage collector never moves, while
	// cuLaunchKernel copies them: args holds the values, argp points at each.
	args *[maxArgs]uint64
	argp *[maxArgs]uintptr

	pool  pool   // device memory kept between calls
	stage stager // pinned host buffers for large copies

	// limit, when not zero, bounds the device memory this device's buffers and pool take
	// together (Options.MemoryLimit); allocated is what they hold now.
	limit           uint64
	allocated, peak atomic.Int64 // peak: the most allocated at once (tests)

	prof *kernelProfile // when set, every launch is timed with events
}

// kernelProfile accumulates the device time of each kernel, measured with events around each
// launch (for NOTES.md; it costs a little time per launch).
type kernelProfile struct {
	events  []uintptr // free events
	pending []timedLaunch
	Time    map[string]float64 // milliseconds per kernel name
	Count   map[string]int
}

type timedLaunch struct {
	name       string
	start, end uintptr
}

func (d *device) event() (uintptr, error) {
	p := d.prof
	if n := len(p.events); n > 0 {
		e := p.events[n-1]
		p.events = p.events[:n-1]
		return e, nil
	}
	var e uintptr
	err := d.drv.check("cuEventCreate", d.drv.cuEventCreate(&e, 0))
	return e, err
}

// collect adds the times of the launches recorded so far; the device must be synchronised.
func (d *device) collect() error {
	p := d.prof
	if p == nil {
		return nil
	}
	for _, l := range p.pending {
		var ms float32
		if err := d.drv.check("cuEventElapsedTime", d.drv.cuEventElapsedTime(&ms, l.start, l.end)); err != nil {
			return err
		}
		p.Time[l.name] += float64(ms)
		p.Count[l.name]++
		p.events = append(p.events, l.start, l.end)
	}
	p.pending = p.pending[:0]
	return nil
}

const maxArgs = 24

// openDevice starts the device goroutine, makes the primary context of ordinal current on its
// thread and loads the embedded kernels.
func openDevice(ordinal int) (*device, error) {
	drv, err := getDriver()
	if err != nil {
		return nil, err
	}
	var n int32
	if err := drv.check("cuDeviceGetCount", drv.cuDeviceGetCount(&n)); err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, errors.New("the CUDA driver reports no GPU")
	}
	if ordinal < 0 || ordinal >= int(n) {
		return nil, fmt.Errorf("no GPU %d (the driver reports %d)", ordinal, n)
	}
	info, err := drv.deviceInfo(ordinal)
	if err != nil {
		return nil, err
	}
	if info.Major < 8 {
		return nil, fmt.Errorf("GPU %d (%s) has compute capability %d.%d; sapipe needs 8.0 or newer", ordinal, info.Name, info.Major, info.Minor)
	}
	d := &device{
		drv:  drv,
		info: info,
		fns:  make(map[string]uintptr),
		jobs: make(chan func()),
		quit: make(chan struct{}),
		done: make(chan struct{}),
		args: new([maxArgs]uint64),
		argp: new([maxArgs]uintptr),
	}
	for i := range d.argp {
		d.argp[i] = uintptr(unsafe.Pointer(&d.args[i]))
	}
	started := make(chan error)
	go d.loop(started)
	if err := <-started; err != nil {
		return nil, err
	}
	return d, nil
}

// loop is the device goroutine.
func (d *device) loop(started chan<- error) {
	runtime.LockOSThread()
	// The thread stays locked: when loop returns, the runtime ends it with its context binding.
	err := d.setup()
	started <- err
	if err != nil {
		close(d.done)
		return
	}
	for {
		select {
		case f := <-d.jobs:
			f()
		case <-d.quit:
			d.teardown()
			close(d.done)
			return
		}
	}
}

func (d *device) setup() error {
	drv := d.drv
	t0 := time.Now()
	defer trace("device set up", t0)
	if err := drv.check("cuDeviceGet", drv.cuDeviceGet(&d.dev, int32(d.info.Ordinal))); err != nil {
		return err
	}
	if flags, ok := syncFlags(); ok {
		// Best effort: a context already active (another backend of the same card) keeps its own.
		drv.cuDevicePrimaryCtxSetFlags(d.dev, flags)
	}
	if err := drv.check("cuDevicePrimaryCtxRetain", drv.cuDevicePrimaryCtxRetain(&d.ctx, d.dev)); err != nil {
		return err
	}
	if err := drv.check("cuCtxSetCurrent", drv.cuCtxSetCurrent(d.ctx)); err != nil {
		drv.cuDevicePrimaryCtxRelease(d.dev)
		return err
	}
	trace("context", t0)
	// The fatbin is copied to 8-byte-aligned memory: the driver reads its header in place.
	img := make([]uint64, (len(fatbin)+8)/8)
	copy(unsafe.Slice((*byte)(unsafe.Pointer(&img[0])), len(img)*8), fatbin)
	err := drv.check("cuModuleLoadData", drv.cuModuleLoadData(&d.mod, unsafe.Pointer(&img[0])))
	runtime.KeepAlive(img)
	if err != nil {
		drv.cuDevicePrimaryCtxRelease(d.dev)
		return err
	}
	return nil
}

func (d *device) teardown() {
	t0 := time.Now()
	defer trace("device torn down", t0)
	d.pool.release(d)
	trace("device pool released", t0)
	d.stageFree()
	trace("device ring freed", t0)
	if d.mod != 0 {
		d.drv.cuModuleUnload(d.mod)
	}
	trace("device module unloaded", t0)
	d.drv.cuDevicePrimaryCtxRelease(d.dev)
}

// syncFlags returns the context's scheduling flags that SAPIPE_GPU_SYNC asks for: spin (the
// driver spins while it waits for the device), yield (it yields its thread while it waits) or
// block (the thread sleeps until the device is done); unset or other, the driver's choice (it
// spins where the host has more cores than active contexts). Spinning costs a core for every
// device worker that waits, which a run bound by the host's parsing and formatting needs.
func syncFlags() (uint32, bool) {
	switch os.Getenv("SAPIPE_GPU_SYNC") {
	case "spin":
		return 0x01, true // CU_CTX_SCHED_SPIN
	case "yield":
		return 0x02, true // CU_CTX_SCHED_YIELD
	case "block":
		return 0x04, true // CU_CTX_SCHED_BLOCKING_SYNC
	}
	return 0, false
}

// run executes f on the device goroutine and returns its error.
func (d *device) run(f func() error) error {
	done := make(chan error, 1)
	select {
	case d.jobs <- func() { done <- f() }:
	case <-d.quit:
		return errors.New("GPU backend is closed")
	}
	return <-done
}

// close stops the device goroutine after the jobs sent before it.
func (d *device) close() {
	select {
	case <-d.quit:
	default:
		close(d.quit)
	}
}

// fn returns the kernel called name, looking it up once. Device goroutine only.
func (d *device) fn(name string) (uintptr, error) {
	if f, ok := d.fns[name]; ok {
		return f, nil
	}
	var f uintptr
	if err := d.drv.check("cuModuleGetFunction("+name+")", d.drv.cuModuleGetFunction(&f, d.mod, name)); err != nil {
		return 0, err
	}
	d.fns[name] = f
	return f, nil
}

// launch runs kernel name on grid blocks of block threads with shmem bytes of dynamic shared
// memory. Arguments are devPtr, uint64, int64, uint32, int32 or int (passed as 32 bits).
// Device goroutine only.
func (d *device) launch(name string, grid, block, shmem int, args ...any) error {
	if grid <= 0 {
		return nil
	}
	f, err := d.fn(name)
	if err != nil {
		return err
	}
	if len(args) > maxArgs {
		return fmt.Errorf("launch %s: %d arguments", name, len(args))
	}
	for i, a := range args {
		switch v := a.(type) {
		case devPtr:
			d.args[i] = uint64(v)
		case uint64:
			d.args[i] = v
		case int64:
			d.args[i] = uint64(v)
		case uint32:
			d.args[i] = uint64(v)
		case int32:
			d.args[i] = uint64(uint32(v))
		case int:
			d.args[i] = uint64(uint32(int32(v)))
		default:
			return fmt.Errorf("launch %s: argument %d has type %T", name, i, a)
		}
	}
	gx, gy := grid, 1
	if gx > 1<<31-1 {
		return fmt.Errorf("launch %s: grid of %d blocks", name, grid)
	}
	var tl timedLaunch
	if d.prof != nil {
		tl.name = name
		if tl.start, err = d.event(); err != nil {
			return err
		}
		if tl.end, err = d.event(); err != nil {
			return err
		}
		if err := d.drv.check("cuEventRecord", d.drv.cuEventRecord(tl.start, 0)); err != nil {
			return err
		}
	}
	res := d.drv.cuLaunchKernel(f, uint32(gx), uint32(gy), 1, uint32(block), 1, 1, uint32(shmem), 0,
		unsafe.Pointer(&d.argp[0]), nil)
	if err := d.drv.check("cuLaunchKernel("+name+")", res); err != nil {
		return err
	}
	if d.prof != nil {
		if err := d.drv.check("cuEventRecord", d.drv.cuEventRecord(tl.end, 0)); err != nil {
			return err
		}
		d.prof.pending = append(d.prof.pending, tl)
	}
	return nil
}

// sync waits for all launched work. Device goroutine only.
func (d *device) sync() error {
	return d.drv.check("cuCtxSynchronize", d.drv.cuCtxSynchronize())
}

// memInfo returns free and total device memory in bytes. Device goroutine only.
func (d *device) memInfo() (free, total uint64, err error) {
	err = d.drv.check("cuMemGetInfo", d.drv.cuMemGetInfo(&free, &total))
	return
}

// freeMemory is memInfo's free bytes, asked on the device's goroutine.
func (d *device) freeMemory() (free uint64, err error) {
	err = d.run(func() error {
		free, _, err = d.memInfo()
		return err
	})
	return free, err
}

// toDevice copies src to dst. Device goroutine only.
func (d *device) toDevice(dst devPtr, src unsafe.Pointer, n int) error {
	if n == 0 {
		return nil
	}
	return d.drv.check("cuMemcpyHtoD", d.drv.cuMemcpyHtoD(dst, src, uint64(n)))
}

// toHost copies n bytes from src to dst. Device goroutine only.
func (d *device) toHost(dst unsafe.Pointer, src devPtr, n int) error {
	if n == 0 {
		return nil
	}
	return d.drv.check("cuMemcpyDtoH", d.drv.cuMemcpyDtoH(dst, src, uint64(n)))
}

// pool is the device memory a backend keeps between calls: one allocation, grown when a call
// needs more, carved into the arrays of that call.
type pool struct {
	base devPtr
	size uint64
}

// reserve makes the pool at least n bytes. Device goroutine only.
func (p *pool) reserve(d *device, n uint64) error {
	if n <= p.size {
		return nil
	}
	p.release(d)
	var ptr devPtr
	if err := d.drv.check("cuMemAlloc", d.drv.cuMemAlloc(&ptr, n)); err != nil {
		return err
	}
	p.base, p.size = ptr, n
	d.took(n)
	return nil
}

// took counts n more bytes allocated by the device's buffers or pool.
func (d *device) took(n uint64) {
	v := d.allocated.Add(int64(n))
	for p := d.peak.Load(); v > p && !d.peak.CompareAndSwap(p, v); p = d.peak.Load() {
	}
}

func (p *pool) release(d *device) {
	if p.size != 0 {
		d.drv.cuMemFree(p.base)
		d.allocated.Add(-int64(p.size))
		p.base, p.size = 0, 0
	}
}

// carver hands out consecutive 256-byte-aligned pieces of the pool.
type carver struct {
	next devPtr
	used uint64
}

func (c *carver) take(bytes uint64) devPtr {
	bytes = (bytes + 255) &^ 255
	p := c.next + devPtr(c.used)
	c.used += bytes
	return p
}

// fatbinOK reports whether the embedded fatbin looks like one (its magic number).
func fatbinOK() bool {
	return len(fatbin) > 16 && bytes.Equal(fatbin[:4], []byte{0x50, 0xed, 0x55, 0xba})
}

// probe runs the smallest kernel on n values and returns what it wrote: a check that the
// module loads, launches run and copies come back. Device goroutine only.
func (d *device) probe(n int, v uint32) ([]uint32, error) {
	var ptr devPtr
	if err := d.drv.check("cuMemAlloc", d.drv.cuMemAlloc(&ptr, uint64(4*n))); err != nil {
		return nil, err
	}
	defer d.drv.cuMemFree(ptr)
	if err := d.launch("probe", ceilDiv(n, 256), 256, 0, ptr, uint32(n), v); err != nil {
		return nil, err
	}
	out := make([]uint32, n)
	if err := d.toHost(unsafe.Pointer(&out[0]), ptr, 4*n); err != nil {
		return nil, err
	}
	return out, d.sync()
}
