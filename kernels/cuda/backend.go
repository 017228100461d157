// Package cuda is sapipe's GPU backend: a kernels.Backend that builds suffix arrays and
// Burrows-Wheeler transforms on an NVIDIA GPU, with results identical to kernels/cpu.
//
// Nothing of CUDA is needed to build it: the driver (libcuda.so.1) is opened at run time through
// purego the first time a GPU is wanted, and the kernels (CUDA C in the .cu/.cuh files here) are
// compiled by `make kernels` into sapipe.fatbin, which is embedded. On a host without the driver or
// without a GPU, Open and Devices return an error saying why; nothing is printed.
//
// Data enters as host byte slices, is copied to the device, and only the result comes back: the
// suffix array, or for BWT the transform bytes and the primary index (the SA stays on the GPU).
// All driver calls of a device run on one goroutine locked to its OS thread, which owns the
// device's context; the methods of Backend hand their work to it and may be called concurrently.
package cuda

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/sapipe/sapipe/kernels"
	"github.com/sapipe/sapipe/kernels/cpu"
)

// Options configure Open.
type Options struct {
	// Threads bounds the CPU goroutines of the CPU fallback and of delegated work.
	Threads int
	// Note, when set, receives one line whenever work goes to the CPU instead of the GPU (a text
	// too large for the memory left on the card, say).
	Note func(msg string)
	// MemoryLimit, when positive, bounds the device memory that suffix arrays, transforms and
	// index pages take on each card (sapipe index --gpu-memory): they are sized to it, as to a
	// smaller card. A matcher's budget is MatchOptions.DeviceMemory.
	MemoryLimit int64
}

// Backend runs sapipe's kernels on one GPU.
type Backend struct {
	dev  *device
	cpu  *cpu.Backend
	opts Options

	closeOnce sync.Once
}

// Open opens GPU ordinal (0 is the first) and loads the kernels onto it.
func Open(ordinal int, opts Options) (*Backend, error) {
	if !fatbinOK() {
		return nil, errors.New("this build has no GPU kernels (sapipe.fatbin missing; run make kernels)")
	}
	dev, err := openDevice(ordinal)
	if err != nil {
		return nil, err
	}
	dev.limit = uint64(max(opts.MemoryLimit, 0))
	return &Backend{dev: dev, cpu: cpu.New(opts.Threads), opts: opts}, nil
}

// PeakMemory is the most device memory the backend's buffers have held at once since it was
// opened (the driver's own context aside).
func (b *Backend) PeakMemory() int64 { return b.dev.peak.Load() }

// Name returns "gpu:N (device name)".
func (b *Backend) Name() string {
	return fmt.Sprintf("gpu:%d (%s)", b.dev.info.Ordinal, b.dev.info.Name)
}

// Info describes the GPU.
func (b *Backend) Info() Info { return b.dev.info }

// NewMatcher indexes ref for matching on the GPU (matcher.go); the results are those of
// kernels/cpu. A reference too large for the GPU memory left is matched on the CPU, with a note.
func (b *Backend) NewMatcher(ref *kernels.Reference, opts kernels.MatchOptions) (kernels.Matcher, error) {
	m, err := newMatcher(b, ref, opts, matchConfig{}, nil)
	if errors.Is(err, errNoRoom) {
		b.note(fmt.Sprintf("matching on the CPU: %v", err))
		return b.cpu.NewMatcher(ref, opts)
	}
	if err != nil {
		return nil, err
	}
	return m, nil
}

// NewMatcherFromPages matches against the pages of host (an index file's, kernels/cpu's arrays)
// on the GPU: they are copied to the device, all of them when they fit, else into frames that hold
// pages in turn. Where not even one page fits, host itself matches, with a note.
func (b *Backend) NewMatcherFromPages(ref *kernels.Reference, opts kernels.MatchOptions, host *cpu.Matcher) (kernels.Matcher, error) {
	m, err := newMatcher(b, ref, opts, matchConfig{}, host)
	if errors.Is(err, errNoRoom) {
		b.note(fmt.Sprintf("matching on the CPU: %v", err))
		return host, nil
	}
	if err != nil {
		return nil, err
	}
	return m, nil
}

// NewMatcherFromEarlyPages is NewMatcherFromPages for an index file's pages while the host checks
// them (early: their arrays without C and Deep; checked: the checked pages' matcher): the arrays
// are copied to the device meanwhile when they all fit it, and nothing is matched before the
// checks pass. The checks' error comes first, before any of the device's. With sums (the file's
// checksums) given, the card checks the pages itself (check.go) and checked runs only where they
// fail (for the error's words) or the pages do not all fit.
func (b *Backend) NewMatcherFromEarlyPages(ref *kernels.Reference, opts kernels.MatchOptions, early []cpu.DeviceArrays, sums func() error, checked func() (*cpu.Matcher, error)) (kernels.Matcher, error) {
	e := &earlyPages{arrays: early, sums: sums, checked: sync.OnceValues(checked)}
	m, err := newMatcher(b, ref, opts, matchConfig{early: e}, nil)
	if err == nil {
		return m, nil
	}
	return e.fallback(err, func(host *cpu.Matcher) (kernels.Matcher, error) {
		return b.NewMatcherFromPages(ref, opts, host) // pages loaded in turn, or the CPU
	})
}

// MaxSuffixArray returns the longest text whose suffix array fits the GPU's free memory now (with
// what the pool holds already), so that a caller cuts its texts to fit instead of leaving them to
// the CPU.
func (b *Backend) MaxSuffixArray() int {
	return b.longestFitting(func(n int) uint64 {
		var c carver
		layout(&c, n)
		return c.used + c.used/32 + (64 << 20)
	})
}

// longestFitting returns the longest text whose need (bytes, increasing with the length) fits
// the device memory available now (roomNow), 0 when that cannot be asked.
func (b *Backend) longestFitting(need func(n int) uint64) int {
	var avail uint64
	if err := b.dev.run(func() error {
		var err error
		avail, err = b.dev.roomNow()
		return err
	}); err != nil {
		return 0
	}
	lo, hi := 0, kernels.MaxWindow
	for lo < hi {
		mid := lo + (hi-lo+1)/2
		if need(mid) <= avail {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo
}

// SuffixArray fills sa with the suffix array of text, built on the GPU. A text too large for the
// GPU memory left is done on the CPU, with a note.
func (b *Backend) SuffixArray(text []byte, sa []int32) error {
	if len(sa) != len(text) {
		return fmt.Errorf("suffix array of %d entries for a text of %d bytes", len(sa), len(text))
	}
	if int64(len(text)) > 1<<31-1 {
		return kernels.ErrTooLarge
	}
	switch len(text) {
	case 0:
		return nil
	case 1:
		sa[0] = 0
		return nil
	}
	err := b.dev.run(func() error {
		_, err := b.dev.suffixArray(text, sa, nil, nil, 0, nil, nil)
		return err
	})
	if errors.Is(err, errNoRoom) {
		b.note(fmt.Sprintf("suffix array on the CPU: %v", err))
		return b.cpu.SuffixArray(text, sa)
	}
	return err
}

// BWT writes the transform of each src[i] to dst[i] and its primary index to primary[i], one
// block after another on the GPU; a block too large for the GPU memory left is done on the CPU,
// with a note.
func (b *Backend) BWT(src, dst [][]byte, primary []int) error {
	if len(dst) != len(src) || len(primary) != len(src) {
		return fmt.Errorf("BWT of %d blocks into %d outputs and %d primary indexes", len(src), len(dst), len(primary))
	}
	for i, s := range src {
		if int64(len(s)) > 1<<31-1 {
			return kernels.ErrTooLarge
		}
		if len(dst[i]) != len(s) {
			return fmt.Errorf("BWT block %d: %d bytes into %d", i, len(s), len(dst[i]))
		}
	}
	for i, s := range src {
		if len(s) <= 1 {
			primary[i] = kernels.BWTFromSA(s, make([]int32, len(s)), dst[i])
			continue
		}
		err := b.dev.run(func() error {
			p, err := b.dev.suffixArray(s, nil, dst[i], nil, 0, nil, nil)
			primary[i] = p
			return err
		})
		if errors.Is(err, errNoRoom) {
			b.note(fmt.Sprintf("BWT block %d on the CPU: %v", i, err))
			err = b.cpu.BWT(src[i:i+1], dst[i:i+1], primary[i:i+1])
		}
		if err != nil {
			return fmt.Errorf("BWT block %d: %w", i, err)
		}
	}
	return nil
}

// BWTSampled writes the transform of text to dst and returns its primary index and the rows of
// every 1<<shift-th text position (kernels/cpu.BWTSampled's result), built on the GPU; only the
// transform and the samples cross back, not the suffix array. A text too large for the GPU
// memory left is done on the CPU, with a note.
func (b *Backend) BWTSampled(text, dst []byte, shift uint, threads int) (int, []uint32, error) {
	n := len(text)
	if len(dst) != n {
		return 0, nil, fmt.Errorf("BWT of %d bytes into %d", n, len(dst))
	}
	if int64(n) > 1<<31-1 {
		return 0, nil, kernels.ErrTooLarge
	}
	if n <= 1 || shift >= 31 {
		p, s := cpu.BWTSampled(text, make([]int32, n), dst, shift, threads) // [0] is the SA of one byte
		return p, s, nil
	}
	samples := make([]uint32, (n-1)>>shift)
	var primary int
	queued := time.Now()
	err := b.dev.run(func() error {
		var what string
		start := time.Now()
		if traceOn {
			what = fmt.Sprintf("BWT of %d bytes on %s", n, b.Name())
			trace(what+": waited for the device", queued)
		}
		p, err := b.dev.suffixArray(text, nil, dst, samples, shift, nil, nil)
		primary = p
		if traceOn {
			trace(what+": sorted", start)
		}
		return err
	})
	if errors.Is(err, errNoRoom) {
		b.note(fmt.Sprintf("BWT on the CPU: %v", err))
		sa := make([]int32, n)
		if err := b.cpu.SuffixArray(text, sa); err != nil {
			return 0, nil, err
		}
		p, s := cpu.BWTSampled(text, sa, dst, shift, threads)
		return p, s, nil
	}
	return primary, samples, err
}

// suffixArrayStats is SuffixArray with the construction's statistics, for tests and benchmarks.
func (b *Backend) suffixArrayStats(text []byte, sa []int32) (saStats, error) {
	var st saStats
	err := b.dev.run(func() error {
		_, err := b.dev.suffixArray(text, sa, nil, nil, 0, &st, nil)
		return err
	})
	return st, err
}

func (b *Backend) note(msg string) {
	if b.opts.Note != nil {
		b.opts.Note(msg)
	}
}

// Close frees the device memory, stops the device goroutine and releases the context, and returns
// when that is done. The Backend is unusable after.
func (b *Backend) Close() error {
	b.closeOnce.Do(b.dev.close)
	<-b.dev.done
	return nil
}

var _ kernels.Backend = (*Backend)(nil)
