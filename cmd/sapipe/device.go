package main

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"

	"github.com/urfave/cli/v2"

	"github.com/sapipe/sapipe/kernels"
	"github.com/sapipe/sapipe/kernels/device"
)

// deviceEnv names the environment variable that sets --device when the option is not given, so
// that a workflow engine can choose the device per job without changing command lines.
const deviceEnv = "SAPIPE_DEVICE"

// deviceFlag is the --device option of every command.
func deviceFlag() cli.Flag {
	return &cli.StringFlag{
		Name:    "device",
		Value:   "auto",
		EnvVars: []string{deviceEnv},
		Usage:   "compute device `D`: auto (every usable GPU, else the CPU), cpu, gpu (the first GPU), gpu:N, gpu:N,M,... or gpu:all",
	}
}

// threadsFlag is the -t option of the commands that take it.
func threadsFlag(usage string) cli.Flag {
	return &cli.IntFlag{Name: "t", Aliases: []string{"threads"}, Value: runtime.GOMAXPROCS(0), Usage: usage + " (`N`)"}
}

// Below these many bytes of input, in the files a command names, --device auto uses the CPU
// without starting CUDA: a GPU's fixed cost (cuInit, a context, the teardown at exit: ~0.3 s on
// the lent H200) is more than the CPU's work on that much. Matching and searching: 2,000
// patterns took 0.02 s on the CPU, 0.33 s on the GPU; the lambda phage's reads 0.02 s against
// 0.32 s. Suffix arrays: E. coli's (4.6 MB) took 0.14 s on the CPU's 16 cores, 0.35 s on the GPU.
const (
	smallInput   = 1 << 20 // mummer, count, locate
	smallSAInput = 8 << 20 // sa, bwt, index
)

// autoDevice returns "cpu" when spec is auto and paths are regular files holding fewer than
// limit bytes in all; otherwise spec (also for stdin, "-", whose size is unknown, and for a path
// that cannot be read, whose error the command reports).
func autoDevice(spec string, limit int64, paths ...string) string {
	if spec != "auto" && spec != "" || len(paths) == 0 {
		return spec
	}
	if total, all := regularSize(paths); !all || total >= limit {
		return spec
	}
	return "cpu"
}

// namesGPU reports whether a --device value names GPUs (gpu, gpu:all, gpu:N,...), whose opening
// never gives the CPU: it either opens them or fails.
func namesGPU(spec string) bool { return spec == "gpu" || strings.HasPrefix(spec, "gpu:") }

// regularSize returns the bytes of the regular files among paths, and whether every path is one
// (stdin, "-", and a path that cannot be read are not).
func regularSize(paths []string) (total int64, all bool) {
	all = true
	for _, p := range paths {
		if fi, err := os.Stat(p); p != "-" && err == nil && fi.Mode().IsRegular() {
			total += fi.Size()
		} else {
			all = false
		}
	}
	return total, all
}

// talk is what a command prints on stderr besides its errors: nothing (-q), the notes of the
// device (a GPU that is there but unusable, work handed to the CPU), or also why no GPU is used
// on a host without any CUDA driver (-v).
type talk struct{ quiet, verbose bool }

// talkOf reads -q and -v (a command without them gets the default, notes only).
func talkOf(c *cli.Context) talk { return talk{quiet: c.Bool("q"), verbose: c.Bool("v")} }

// openBackend opens the backend that spec (the --device value) names; a command calls it once.
// With auto and no usable GPU it says on stderr, in one line, why the CPU is used, when a driver
// is there but fails or with -v; not with -q.
func openBackend(e *env, spec string, threads int, t talk) (kernels.Backend, error) {
	return openBackendLimit(e, spec, threads, t, 0)
}

// openBackendLimit is openBackend with the device memory of suffix arrays, transforms and index
// pages bounded on each GPU (limit 0: none).
func openBackendLimit(e *env, spec string, threads int, t talk, limit int64) (kernels.Backend, error) {
	b, note, err := openBackendNote(e, spec, threads, t, limit)
	if err != nil {
		return nil, err
	}
	if note != "" && !t.quiet {
		printNote(e, note)
	}
	return b, nil
}

// noteMu serialises the notes of backends, which may come from their goroutines.
var noteMu sync.Mutex

// printNote writes one note line on stderr.
func printNote(e *env, note string) {
	noteMu.Lock()
	fmt.Fprintf(e.stderr, "sapipe: %s\n", oneLine(note))
	noteMu.Unlock()
}

// openBackendNote is openBackend without printing the note of the choice of device: it returns it
// instead, for a caller that opens the backend on another goroutine and prints the note once it
// has it. The backend's later notes (work handed to the CPU, SAPIPE_GPU_PROFILE's summary) are
// printed as they come, unless quiet.
func openBackendNote(e *env, spec string, threads int, t talk, limit int64) (kernels.Backend, string, error) {
	if threads < 1 {
		return nil, "", usageError{fmt.Sprintf("-t %d: want a positive number of threads", threads)}
	}
	opts := device.Options{Threads: threads, Verbose: t.verbose, MemoryLimit: limit}
	if !t.quiet {
		opts.Note = func(msg string) { printNote(e, msg) }
	}
	b, note, err := device.Open(spec, opts)
	if errors.Is(err, device.ErrNoGPU) {
		return nil, "", fmt.Errorf("--device %s: %w", spec, err)
	}
	if err != nil {
		return nil, "", err
	}
	return b, note, nil
}

// checkDeviceSpec checks the form of a --device value without opening anything, for commands
// that run on the CPU whatever the device (unbwt).
func checkDeviceSpec(spec string) error {
	switch spec {
	case "", "auto", "cpu", "gpu", "gpu:all":
		return nil
	}
	if _, ok := device.Ordinals(spec); ok {
		return nil
	}
	return usageError{fmt.Sprintf("--device %s: want auto, cpu, gpu, gpu:all, gpu:N or gpu:N,M,...", spec)}
}
