package cuda

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/ebitengine/purego"
)

// The CUDA driver API, bound at run time from libcuda.so.1 through purego: no cgo, no CUDA headers
// or libraries at build time. Only the calls sapipe needs are bound. CUresult is an int32; every
// non-zero result becomes an error naming the call (see check).

// devPtr is a CUdeviceptr: an address in device memory.
type devPtr uint64

// driver holds the bound entry points of one loaded libcuda.
type driver struct {
	handle uintptr

	cuInit                       func(flags uint32) int32
	cuDriverGetVersion           func(v *int32) int32
	cuGetErrorName               func(res int32, s **byte) int32
	cuGetErrorString             func(res int32, s **byte) int32
	cuDeviceGetCount             func(n *int32) int32
	cuDeviceGet                  func(dev *int32, ordinal int32) int32
	cuDeviceGetName              func(name *byte, length int32, dev int32) int32
	cuDeviceTotalMem             func(bytes *uint64, dev int32) int32
	cuDeviceGetAttribute         func(v *int32, attr int32, dev int32) int32
	cuDevicePrimaryCtxRetain     func(ctx *uintptr, dev int32) int32
	cuDevicePrimaryCtxRelease    func(dev int32) int32
	cuDevicePrimaryCtxSetFlags   func(dev int32, flags uint32) int32
	cuCtxSetCurrent              func(ctx uintptr) int32
	cuCtxSynchronize             func() int32
	cuModuleLoadData             func(mod *uintptr, image unsafe.Pointer) int32
	cuModuleUnload               func(mod uintptr) int32
	cuModuleGetFunction          func(fn *uintptr, mod uintptr, name string) int32
	cuFuncSetAttribute           func(fn uintptr, attr int32, value int32) int32
	cuMemGetInfo                 func(free, total *uint64) int32
	cuMemAlloc                   func(p *devPtr, bytes uint64) int32
	cuMemFree                    func(p devPtr) int32
	cuMemAllocHost               func(p *unsafe.Pointer, bytes uint64) int32
	cuMemFreeHost                func(p unsafe.Pointer) int32
	cuMemHostRegister            func(p unsafe.Pointer, bytes uint64, flags uint32) int32
	cuMemHostUnregister          func(p unsafe.Pointer) int32
	cuMemcpyHtoD                 func(dst devPtr, src unsafe.Pointer, bytes uint64) int32
	cuMemcpyDtoH                 func(dst unsafe.Pointer, src devPtr, bytes uint64) int32
	cuMemcpyDtoD                 func(dst, src devPtr, bytes uint64) int32
	cuMemcpyHtoDAsync            func(dst devPtr, src unsafe.Pointer, bytes uint64, stream uintptr) int32
	cuMemcpyDtoHAsync            func(dst unsafe.Pointer, src devPtr, bytes uint64, stream uintptr) int32
	cuMemcpyDtoDAsync            func(dst, src devPtr, bytes uint64, stream uintptr) int32
	cuMemsetD8                   func(p devPtr, v uint8, n uint64) int32
	cuMemsetD32                  func(p devPtr, v uint32, n uint64) int32
	cuStreamCreate               func(s *uintptr, flags uint32) int32
	cuStreamDestroy              func(s uintptr) int32
	cuStreamSynchronize          func(s uintptr) int32
	cuEventCreate                func(e *uintptr, flags uint32) int32
	cuEventDestroy               func(e uintptr) int32
	cuEventRecord                func(e uintptr, s uintptr) int32
	cuEventSynchronize           func(e uintptr) int32
	cuEventElapsedTime           func(ms *float32, start, end uintptr) int32
	cuLaunchKernel               func(fn uintptr, gx, gy, gz, bx, by, bz uint32, shmem uint32, stream uintptr, params unsafe.Pointer, extra unsafe.Pointer) int32
	cuOccupancyMaxActiveBlocksPM func(n *int32, fn uintptr, block int32, shmem uint64) int32
}

// Device attributes (CUdevice_attribute) that sapipe reads.
const (
	attrMultiprocessorCount    = 16
	attrComputeCapabilityMajr  = 75
	attrComputeCapabilityMinr  = 76
	attrMaxSharedPerBlockOptin = 97
)

// ErrNoDriver reports that no CUDA driver library is installed: libcuda.so.1 (or the library
// SAPIPE_LIBCUDA names) is not on the loader's path. That is the normal state of a CPU node, which
// --device auto passes over without a word.
var ErrNoDriver = errors.New("no CUDA driver")

// ErrBadDriver reports a CUDA driver library that is there but cannot be used: it fails to load
// (a broken or foreign file) or lacks an entry point sapipe needs (a driver too old).
var ErrBadDriver = errors.New("unusable CUDA driver")

// libraryNames are tried in order; the versioned name is what the driver installs.
var libraryNames = []string{"libcuda.so.1", "libcuda.so"}

// LibraryEnv names the environment variable that, when set, replaces libraryNames with one
// library name or path: a driver installed off the loader's path, or (in tests) none at all.
const LibraryEnv = "SAPIPE_LIBCUDA"

var (
	driverOnce sync.Once
	theDriver  *driver
	driverErr  error
)

// getDriver loads and initialises the CUDA driver the first time it is called.
func getDriver() (*driver, error) {
	driverOnce.Do(func() {
		names := libraryNames
		if v := os.Getenv(LibraryEnv); v != "" {
			names = []string{v}
		}
		t0 := time.Now()
		theDriver, driverErr = loadDriver(names)
		trace("driver loaded", t0)
	})
	return theDriver, driverErr
}

// dlopen opens a library and, when that fails, reads the loader's message. dlerror's state is
// per OS thread, so both calls run on one locked thread: otherwise the goroutine can move between
// them and read another thread's message (or none), which made the note vary from run to run.
func dlopen(name string) (uintptr, string) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	h, err := purego.Dlopen(name, purego.RTLD_NOW|purego.RTLD_GLOBAL)
	if err != nil {
		return 0, err.Error()
	}
	return h, ""
}

// loaderNotFound reports whether a message of the dynamic loader says that the library file does
// not exist (Go never calls setlocale, so the C library speaks the "C" locale's English).
func loaderNotFound(msg string) bool {
	return strings.Contains(msg, "No such file or directory")
}

// firstLine returns the first line of s, trimmed, for messages that must be one line.
func firstLine(s string) string {
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		s = s[:i]
	}
	return strings.TrimSpace(s)
}

// loadDriver opens the first library of names that loads, binds its entry points and calls cuInit.
// It prints nothing and never exits: every failure is returned, as one line that does not depend
// on the loader's wording when no library is found (ErrNoDriver) and carries the first line of its
// message when one is found but fails to load (ErrBadDriver).
func loadDriver(names []string) (*driver, error) {
	var h uintptr
	for _, name := range names {
		var msg string
		if h, msg = dlopen(name); h != 0 {
			break
		}
		if !loaderNotFound(msg) {
			return nil, fmt.Errorf("%w: cannot load %s: %s", ErrBadDriver, name, firstLine(msg))
		}
	}
	if h == 0 {
		return nil, fmt.Errorf("%w: %s not found", ErrNoDriver, names[0])
	}
	d := &driver{handle: h}
	for _, b := range d.entryPoints() {
		sym, err := purego.Dlsym(h, b.name)
		if err != nil || sym == 0 {
			purego.Dlclose(h)
			return nil, fmt.Errorf("%w: %s lacks %s (driver too old?)", ErrBadDriver, names[0], b.name)
		}
		purego.RegisterFunc(b.fptr, sym)
	}
	t0 := time.Now()
	if err := d.check("cuInit", d.cuInit(0)); err != nil {
		return nil, err
	}
	trace("cuInit", t0)
	return d, nil
}

// binding is one driver entry point: where its Go function goes, and its name in libcuda.
type binding struct {
	fptr any
	name string
}

// EntryPoints lists the names of the driver's entry points that sapipe binds when it loads the
// driver (those bound later, such as the stream calls, are not required to start). Tests of hosts
// with a stand-in driver library build one that defines them.
func EntryPoints() []string {
	var names []string
	for _, b := range (&driver{}).entryPoints() {
		names = append(names, b.name)
	}
	for _, b := range (&streamCalls{}).entryPoints() {
		names = append(names, b.name)
	}
	return names
}

// entryPoints pairs each function of d with its name in libcuda.
func (d *driver) entryPoints() []binding {
	return []binding{
		{&d.cuInit, "cuInit"},
		{&d.cuDriverGetVersion, "cuDriverGetVersion"},
		{&d.cuGetErrorName, "cuGetErrorName"},
		{&d.cuGetErrorString, "cuGetErrorString"},
		{&d.cuDeviceGetCount, "cuDeviceGetCount"},
		{&d.cuDeviceGet, "cuDeviceGet"},
		{&d.cuDeviceGetName, "cuDeviceGetName"},
		{&d.cuDeviceTotalMem, "cuDeviceTotalMem_v2"},
		{&d.cuDeviceGetAttribute, "cuDeviceGetAttribute"},
		{&d.cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain"},
		{&d.cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2"},
		{&d.cuDevicePrimaryCtxSetFlags, "cuDevicePrimaryCtxSetFlags_v2"},
		{&d.cuCtxSetCurrent, "cuCtxSetCurrent"},
		{&d.cuCtxSynchronize, "cuCtxSynchronize"},
		{&d.cuModuleLoadData, "cuModuleLoadData"},
		{&d.cuModuleUnload, "cuModuleUnload"},
		{&d.cuModuleGetFunction, "cuModuleGetFunction"},
		{&d.cuFuncSetAttribute, "cuFuncSetAttribute"},
		{&d.cuMemGetInfo, "cuMemGetInfo_v2"},
		{&d.cuMemAlloc, "cuMemAlloc_v2"},
		{&d.cuMemFree, "cuMemFree_v2"},
		{&d.cuMemAllocHost, "cuMemAllocHost_v2"},
		{&d.cuMemFreeHost, "cuMemFreeHost"},
		{&d.cuMemHostRegister, "cuMemHostRegister_v2"},
		{&d.cuMemHostUnregister, "cuMemHostUnregister"},
		{&d.cuMemcpyHtoD, "cuMemcpyHtoD_v2"},
		{&d.cuMemcpyDtoH, "cuMemcpyDtoH_v2"},
		{&d.cuMemcpyDtoD, "cuMemcpyDtoD_v2"},
		{&d.cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2"},
		{&d.cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2"},
		{&d.cuMemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2"},
		{&d.cuMemsetD8, "cuMemsetD8_v2"},
		{&d.cuMemsetD32, "cuMemsetD32_v2"},
		{&d.cuStreamCreate, "cuStreamCreate"},
		{&d.cuStreamDestroy, "cuStreamDestroy_v2"},
		{&d.cuStreamSynchronize, "cuStreamSynchronize"},
		{&d.cuEventCreate, "cuEventCreate"},
		{&d.cuEventDestroy, "cuEventDestroy_v2"},
		{&d.cuEventRecord, "cuEventRecord"},
		{&d.cuEventSynchronize, "cuEventSynchronize"},
		{&d.cuEventElapsedTime, "cuEventElapsedTime"},
		{&d.cuLaunchKernel, "cuLaunchKernel"},
		{&d.cuOccupancyMaxActiveBlocksPM, "cuOccupancyMaxActiveBlocksPerMultiprocessor"},
	}
}

// traceOn is set by SAPIPE_GPU_TRACE=1: the set-up steps of the driver and the device print
// their times on stderr, to see where a short run's start-up goes.
// Each line gives the step's duration and when it ended, counted from the start of the process
// (of this package's initialisation, which is within a millisecond or two of it).
var (
	traceOn    = os.Getenv("SAPIPE_GPU_TRACE") == "1"
	traceStart = time.Now()
)

func trace(step string, since time.Time) {
	if traceOn {
		now := time.Now()
		fmt.Fprintf(os.Stderr, "sapipe gpu trace: %s %.1f ms (at %.1f ms)\n", step,
			float64(now.Sub(since).Microseconds())/1000, float64(now.Sub(traceStart).Microseconds())/1000)
	}
}

// Trace prints step and how long it took since since, with SAPIPE_GPU_TRACE=1, for commands to
// place their own steps (reading the reference, the queries, the output) among the GPU's.
func Trace(step string, since time.Time) { trace(step, since) }

// Error is a failed driver call: the call's name and its CUresult.
type Error struct {
	Call   string
	Result int32
	Name   string // the CUresult's name from cuGetErrorName, e.g. CUDA_ERROR_NO_DEVICE
	Desc   string // its description from cuGetErrorString
}

func (e *Error) Error() string {
	if e.Desc != "" {
		return fmt.Sprintf("%s: %s (%s)", e.Call, e.Name, e.Desc)
	}
	return fmt.Sprintf("%s: %s", e.Call, e.Name)
}

// Result codes that callers test for.
const (
	resultOutOfMemory = 2
	resultNoDevice    = 100
)

// check turns a CUresult into nil or an *Error naming call.
func (d *driver) check(call string, res int32) error {
	if res == 0 {
		return nil
	}
	e := &Error{Call: call, Result: res, Name: fmt.Sprintf("CUresult %d", res)}
	var s *byte
	if d.cuGetErrorName(res, &s) == 0 && s != nil {
		e.Name = cString(s)
	}
	s = nil
	if d.cuGetErrorString(res, &s) == 0 && s != nil {
		e.Desc = cString(s)
	}
	return e
}

// cString copies a NUL-terminated C string that the driver owns (static storage).
func cString(p *byte) string {
	var b []byte
	for i := 0; i < 4096; i++ {
		c := *(*byte)(unsafe.Add(unsafe.Pointer(p), i))
		if c == 0 {
			break
		}
		b = append(b, c)
	}
	return string(b)
}

// Info describes one GPU.
type Info struct {
	Ordinal      int
	Name         string
	TotalMem     uint64 // bytes
	Major, Minor int    // compute capability
	SMs          int    // multiprocessors
}

// Usable returns the ordinals of the GPUs of infos that sapipe can use: compute capability 8.0
// or newer (the fatbin's oldest code is sm_80).
func Usable(infos []Info) []int {
	var ords []int
	for _, d := range infos {
		if d.Major >= 8 {
			ords = append(ords, d.Ordinal)
		}
	}
	return ords
}

// DriverVersion returns the CUDA version the driver supports, e.g. 13000 for 13.0.
func DriverVersion() (int, error) {
	d, err := getDriver()
	if err != nil {
		return 0, err
	}
	var v int32
	if err := d.check("cuDriverGetVersion", d.cuDriverGetVersion(&v)); err != nil {
		return 0, err
	}
	return int(v), nil
}

// Devices lists the GPUs the driver sees. It loads the driver on first use; on a host without one
// it returns an error wrapping ErrNoDriver, and with a driver but no device one from cuInit or an
// empty list.
func Devices() ([]Info, error) {
	d, err := getDriver()
	if err != nil {
		return nil, err
	}
	var n int32
	if err := d.check("cuDeviceGetCount", d.cuDeviceGetCount(&n)); err != nil {
		return nil, err
	}
	infos := make([]Info, 0, n)
	for i := 0; i < int(n); i++ {
		info, err := d.deviceInfo(i)
		if err != nil {
			return nil, err
		}
		infos = append(infos, info)
	}
	return infos, nil
}

// deviceInfo reads what Info holds of device ordinal. These calls need no context.
func (d *driver) deviceInfo(ordinal int) (Info, error) {
	var dev int32
	if err := d.check("cuDeviceGet", d.cuDeviceGet(&dev, int32(ordinal))); err != nil {
		return Info{}, err
	}
	name := make([]byte, 256)
	if err := d.check("cuDeviceGetName", d.cuDeviceGetName(&name[0], int32(len(name)), dev)); err != nil {
		return Info{}, err
	}
	info := Info{Ordinal: ordinal, Name: cString(&name[0])}
	if err := d.check("cuDeviceTotalMem", d.cuDeviceTotalMem(&info.TotalMem, dev)); err != nil {
		return Info{}, err
	}
	for _, a := range []struct {
		attr int32
		dst  *int
	}{
		{attrComputeCapabilityMajr, &info.Major},
		{attrComputeCapabilityMinr, &info.Minor},
		{attrMultiprocessorCount, &info.SMs},
	} {
		var v int32
		if err := d.check("cuDeviceGetAttribute", d.cuDeviceGetAttribute(&v, a.attr, dev)); err != nil {
			return Info{}, err
		}
		*a.dst = int(v)
	}
	return info, nil
}
