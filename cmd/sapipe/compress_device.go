package main

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/sapipe/sapipe/kernels"
	"github.com/sapipe/sapipe/kernels/cpu"
	"github.com/sapipe/sapipe/kernels/cuda"
	"github.com/sapipe/sapipe/kernels/device"
	"github.com/sapipe/sapipe/stages"
)

// openCompressGPU opens the GPUs that spec (gpu, gpu:all, gpu:N or gpu:N,M,...) names; tests replace it.
var openCompressGPU = func(spec string, opts device.Options) (kernels.Backend, error) {
	b, _, err := device.Open(spec, opts)
	return b, err
}

// When --device auto starts the GPU (see stages.StartingBackend); tests lower them.
var (
	compressLargeBlock     = stages.DefaultLargeBlock
	compressStartPerThread = stages.DefaultStartPerThread
)

// deviceError is the failure to open the GPU that --device gpu or gpu:N requires: the
// command's error, whatever file it came up in.
type deviceError struct{ err error }

func (e deviceError) Error() string { return e.err.Error() }
func (e deviceError) Unwrap() error { return e.err }

// compressBackends chooses the backend of each block that compress sorts. With --device cpu it
// is the CPU. Otherwise the CPU sorts while the GPU opens on another goroutine, which takes a few
// hundred milliseconds: at once for gpu and gpu:N, whose failure is the command's; for auto only
// once a large block or much data has been read (a small input never starts CUDA), and if it
// fails the CPU goes on, with a note.
func compressBackends(e *env, cfg *compressConfig) (stages.BlockBackends, *stages.StartingBackend, error) {
	if cfg.device == "cpu" {
		b, err := openBackend(e, cfg.device, cfg.threads, talk{quiet: cfg.quiet, verbose: cfg.verbose})
		if err != nil {
			return nil, nil, err
		}
		return stages.OneBackend{Backend: b}, nil, nil
	}
	opts := device.Options{Threads: cfg.threads}
	if !cfg.quiet {
		opts.Note = func(msg string) { printNote(e, msg) }
	}
	auto := cfg.device == "" || cfg.device == "auto"
	spec := cfg.device
	if auto {
		spec = "gpu:all" // every usable GPU, the blocks spread over them
	}
	t0 := time.Now()
	s := &stages.StartingBackend{
		CPU: cpu.New(cfg.threads),
		Open: func() (kernels.Backend, error) {
			cuda.Trace("opening the backend", t0) // for auto: when the input made it worth it
			b, err := openCompressGPU(spec, opts)
			cuda.Trace("backend opened", t0)
			if err != nil && !auto {
				if errors.Is(err, device.ErrNoGPU) {
					err = fmt.Errorf("--device %s: %w", cfg.device, err)
				}
				err = deviceError{err}
			}
			return b, err
		},
		Required:   !auto,
		LargeBlock: compressLargeBlock,
		StartBytes: int64(cfg.threads) * int64(compressStartPerThread),
		OnFail: func(err error) {
			// A host without any CUDA driver is a CPU node: nothing to say unless asked (-v).
			if !cfg.quiet && (cfg.verbose || !errors.Is(err, cuda.ErrNoDriver)) {
				printNote(e, fmt.Sprintf("using the CPU: %v", err))
			}
		},
	}
	if s.Required {
		s.Start()
	}
	return s, s, nil
}

// blocksOn says where the blocks of a file were sorted: "3 blocks on cpu", or "25 blocks: 19
// on gpu:0 (NVIDIA H200), 6 on the CPU while it started".
func blocksOn(st stages.CompressStats) string {
	switch len(st.On) {
	case 0:
		return fmt.Sprintf("%d blocks", st.Blocks)
	case 1:
		return fmt.Sprintf("%d blocks on %s", st.Blocks, st.On[0].Backend)
	}
	on := slices.Clone(st.On)
	slices.SortStableFunc(on, func(a, b stages.BlocksOn) int { // the CPU last
		return boolInt(a.Backend == "cpu") - boolInt(b.Backend == "cpu")
	})
	var parts []string
	for _, o := range on {
		where := o.Backend
		if where == "cpu" {
			where = "the CPU while it started"
		}
		parts = append(parts, fmt.Sprintf("%d on %s", o.Blocks, where))
	}
	return fmt.Sprintf("%d blocks: %s", st.Blocks, strings.Join(parts, ", "))
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
