// Package device chooses the compute backend of a run, once, from the --device option:
// "auto" (a GPU when one is usable, else the CPU), "cpu", "gpu" (the first GPU, or an error) or
// "gpu:N" (GPU N, or an error).
package device

import (
	"errors"
	"fmt"
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
}

// ErrNoGPU reports that no usable GPU was found; the wrapped error says why.
var ErrNoGPU = errors.New("no usable GPU")

// openGPU opens GPU ordinal through the CUDA backend, which loads the driver on first use. Every
// failure (no driver, no device, an unsupported device) wraps ErrNoGPU and says why.
var openGPU = func(ordinal int, opts Options) (kernels.Backend, error) {
	b, err := cuda.Open(ordinal, cuda.Options{Threads: opts.Threads, Note: opts.Note})
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNoGPU, err)
	}
	return b, nil
}

// Open returns the backend that spec names. With "auto" and no usable GPU it returns the CPU
// backend and a note saying why no GPU is used, for one line on stderr: when a driver is there
// but fails (no device, a driver too old, no memory), or with opts.Verbose. A host without any
// CUDA driver library gets no note.
func Open(spec string, opts Options) (b kernels.Backend, note string, err error) {
	switch {
	case spec == "" || spec == "auto":
		b, err := openGPU(0, opts)
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
	case strings.HasPrefix(spec, "gpu:"):
		n, err := strconv.Atoi(spec[4:])
		if err != nil || n < 0 {
			return nil, "", fmt.Errorf("--device %s: want auto, cpu, gpu or gpu:N with N a device number", spec)
		}
		b, err := openGPU(n, opts)
		return b, "", err
	}
	return nil, "", fmt.Errorf("--device %s: want auto, cpu, gpu or gpu:N", spec)
}
