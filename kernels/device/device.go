// Package device chooses the compute backend of a run, once, from the --device option: "auto"
// (every usable GPU, else the CPU), "cpu", "gpu" (the first GPU, or an error), "gpu:N" (GPU N),
// "gpu:N,M,..." (those GPUs) or "gpu:all" (every usable GPU, or an error). Several GPUs make one
// backend (cuda.Group) that spreads the work over them, with the results of one.
package device

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/sapipe/sapipe/kernels"
	"github.com/sapipe/sapipe/kernels/cpu"
	"github.com/sapipe/sapipe/kernels/cuda"
)

// Options configure Open.
type Options struct {
	Threads int // CPU goroutines (the CPU backend, and host-side work of a GPU backend)
	// Note, when set, receives one line each time a GPU backend hands work to the CPU (a text
	// larger than the GPU memory left, say); a command prints it on stderr unless quiet.
	Note func(msg string)
	// Verbose makes auto say why it uses the CPU also when no CUDA driver is installed, which it
	// otherwise passes over in silence: a CPU node is a normal place to run.
	Verbose bool
	// MemoryLimit, when positive, bounds the device memory of suffix arrays, transforms and index
	// pages on each GPU (cuda.Options.MemoryLimit).
	MemoryLimit int64
}

// ErrNoGPU reports that no usable GPU was found; the wrapped error says why.
var ErrNoGPU = errors.New("no usable GPU")

// openGPU opens GPU ordinal through the CUDA backend, which loads the driver on first use. Every
// failure (no driver, no device, an unsupported device) wraps ErrNoGPU and says why.
var openGPU = func(ordinal int, opts Options) (kernels.Backend, error) {
	b, err := cuda.Open(ordinal, cuda.Options{Threads: opts.Threads, Note: opts.Note, MemoryLimit: opts.MemoryLimit})
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNoGPU, err)
	}
	return b, nil
}

// openGroup opens the GPUs of ordinals as one backend.
var openGroup = func(ordinals []int, opts Options) (kernels.Backend, error) {
	g, err := cuda.OpenGroup(ordinals, cuda.Options{Threads: opts.Threads, Note: opts.Note, MemoryLimit: opts.MemoryLimit})
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNoGPU, err)
	}
	return g, nil
}

// usableGPUs lists the ordinals of the GPUs sapipe can use (compute capability 8.0 or newer).
var usableGPUs = func() ([]int, error) {
	infos, err := cuda.Devices()
	if err != nil {
		return nil, err
	}
	ords := cuda.Usable(infos)
	if len(ords) == 0 {
		return nil, fmt.Errorf("the CUDA driver reports %d GPUs, none of compute capability 8.0 or newer", len(infos))
	}
	return ords, nil
}

// openAll opens every usable GPU: one backend, or a group of them.
func openAll(opts Options) (kernels.Backend, error) {
	ords, err := usableGPUs()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNoGPU, err)
	}
	if len(ords) == 1 {
		return openGPU(ords[0], opts)
	}
	return openGroup(ords, opts)
}

// Ordinals parses the GPUs of a --device value of the form gpu:N or gpu:N,M,... (distinct, in
// order); ok is false for any other form.
func Ordinals(spec string) (ords []int, ok bool) {
	list, found := strings.CutPrefix(spec, "gpu:")
	if !found || list == "all" {
		return nil, false
	}
	for _, f := range strings.Split(list, ",") {
		n, err := strconv.Atoi(f)
		if err != nil || n < 0 || slices.Contains(ords, n) {
			return nil, false
		}
		ords = append(ords, n)
	}
	return ords, len(ords) > 0
}

// Open returns the backend that spec names. With "auto" and no usable GPU it returns the CPU
// backend and a note saying why no GPU is used, for one line on stderr: when a driver is there
// but fails (no device, a driver too old, no memory), or with opts.Verbose. A host without any
// CUDA driver library gets no note.
func Open(spec string, opts Options) (b kernels.Backend, note string, err error) {
	switch {
	case spec == "" || spec == "auto":
		b, err := openAll(opts)
		if err == nil {
			return b, "", nil
		}
		note := fmt.Sprintf("using the CPU: %v", err)
		if errors.Is(err, cuda.ErrNoDriver) && !opts.Verbose {
			note = ""
		}
		return cpu.New(opts.Threads), note, nil
	case spec == "cpu":
		return cpu.New(opts.Threads), "", nil
	case spec == "gpu":
		b, err := openGPU(0, opts)
		return b, "", err
	case spec == "gpu:all":
		b, err := openAll(opts)
		return b, "", err
	case strings.HasPrefix(spec, "gpu:"):
		ords, ok := Ordinals(spec)
		if !ok {
			return nil, "", fmt.Errorf("--device %s: want auto, cpu, gpu, gpu:all, gpu:N or gpu:N,M,... with distinct device numbers", spec)
		}
		if len(ords) == 1 {
			b, err := openGPU(ords[0], opts)
			return b, "", err
		}
		b, err := openGroup(ords, opts)
		return b, "", err
	}
	return nil, "", fmt.Errorf("--device %s: want auto, cpu, gpu, gpu:all, gpu:N or gpu:N,M,...", spec)
}
