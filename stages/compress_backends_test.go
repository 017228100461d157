package stages

import (
	"bytes"
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sapipe/sapipe/kernels"
	"github.com/sapipe/sapipe/kernels/cpu"
)

// fakeGPU is the CPU backend dressed as a GPU: it makes a block's transform and samples itself,
// as the CUDA backend does, from the CPU's code.
type fakeGPU struct {
	*cpu.Backend
	blocks   atomic.Int32
	closed   atomic.Bool
	closedCh chan struct{} // closed by Close, when set
}

func (g *fakeGPU) Name() string { return "fake-gpu" }

func (g *fakeGPU) BWTSampled(text, dst []byte, shift uint, threads int) (int, []uint32, error) {
	g.blocks.Add(1)
	sa := make([]int32, len(text))
	if err := g.SuffixArray(text, sa); err != nil {
		return 0, nil, err
	}
	p, samples := cpu.BWTSampled(text, sa, dst, shift, threads)
	return p, samples, nil
}

func (g *fakeGPU) Close() error {
	if !g.closed.Swap(true) && g.closedCh != nil {
		close(g.closedCh)
	}
	return nil
}

var _ sampledBWTBackend = (*fakeGPU)(nil)

// countingCPU is the CPU backend counting the blocks it sorts; each calls hook, when set, first.
type countingCPU struct {
	*cpu.Backend
	blocks atomic.Int32
	hook   func(block int)
}

func (c *countingCPU) SuffixArrayThreads(text []byte, sa []int32, threads int) error {
	n := int(c.blocks.Add(1))
	if c.hook != nil {
		c.hook(n)
	}
	return c.Backend.SuffixArrayThreads(text, sa, threads)
}

var _ threadedSorter = (*countingCPU)(nil)

// opener is a fake Open that waits for release (when set) and counts its calls.
type opener struct {
	calls   atomic.Int32
	called  chan struct{} // closed on the first call
	release chan struct{} // Open returns once it is closed; nil: at once
	b       kernels.Backend
	err     error
	once    sync.Once
}

func newOpener(b kernels.Backend, err error, release chan struct{}) *opener {
	return &opener{called: make(chan struct{}), release: release, b: b, err: err}
}

func (o *opener) open() (kernels.Backend, error) {
	o.calls.Add(1)
	o.once.Do(func() { close(o.called) })
	if o.release != nil {
		<-o.release
	}
	return o.b, o.err
}

func compressWith(t *testing.T, bb BlockBackends, data []byte, blockSize, threads int) ([]byte, CompressStats, error) {
	t.Helper()
	var out bytes.Buffer
	st, err := CompressWith(context.Background(), bb, CompressOptions{BlockSize: blockSize, Threads: threads, SegmentSize: 64 << 10}, bytes.NewReader(data), &out)
	return out.Bytes(), st, err
}

func blocksOn(st CompressStats, name string) int {
	for _, o := range st.On {
		if o.Backend == name {
			return o.Blocks
		}
	}
	return 0
}

// newRig is a StartingBackend on a counting CPU and a fake GPU whose open waits for release.
func newRig(threads int, required bool, large int, start int64) (*StartingBackend, *fakeGPU, *countingCPU, *opener, chan struct{}) {
	gpu := &fakeGPU{Backend: cpu.New(threads)}
	release := make(chan struct{})
	op := newOpener(gpu, nil, release)
	c := &countingCPU{Backend: cpu.New(threads)}
	s := &StartingBackend{CPU: c, Open: op.open, Required: required, LargeBlock: large, StartBytes: start}
	return s, gpu, c, op, release
}

// TestStartingBackendSplit: the CPU sorts blocks while the fake GPU opens, the GPU the rest once
// it is open, and the output is the CPU's alone, byte for byte.
func TestStartingBackendSplit(t *testing.T) {
	data := benchText(300 << 10)
	const bs, threads = 8 << 10, 2
	want := compressBytes(t, data, bs, threads)
	for _, required := range []bool{true, false} {
		s, gpu, c, op, release := newRig(threads, required, 1<<20, 3*bs)
		// the third block on the CPU lets the open finish, and waits for it: later blocks see
		// the GPU open
		c.hook = func(n int) {
			if n == 3 {
				close(release)
				<-s.state()
			}
		}
		got, st, err := compressWith(t, s, data, bs, threads)
		if err != nil {
			t.Fatalf("required %v: %v", required, err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("required %v: output differs from the CPU's", required)
		}
		g, cb := int(gpu.blocks.Load()), int(c.blocks.Load())
		if g == 0 || cb < 3 || g+cb != st.Blocks || blocksOn(st, "fake-gpu") != g || blocksOn(st, "cpu") != cb {
			t.Errorf("required %v: %d blocks on the GPU, %d on the CPU, stats %+v", required, g, cb, st.On)
		}
		if op.calls.Load() != 1 {
			t.Errorf("required %v: opened %d times", required, op.calls.Load())
		}
		s.Close()
		if !gpu.closed.Load() {
			t.Errorf("required %v: the GPU was not closed", required)
		}
	}
}

// TestStartingBackendLargeBlockWaits: a block of LargeBlock bytes waits for the open, then goes
// to the GPU; the CPU sorts nothing.
func TestStartingBackendLargeBlockWaits(t *testing.T) {
	data := benchText(40 << 10)
	const bs, threads = 8 << 10, 2
	want := compressBytes(t, data, bs, threads)
	for _, required := range []bool{true, false} {
		s, gpu, c, op, release := newRig(threads, required, bs, 1<<30)
		go func() {
			<-op.called
			close(release)
		}()
		got, st, err := compressWith(t, s, data, bs, threads)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("required %v: %v, or the output differs", required, err)
		}
		if c.blocks.Load() != 0 || int(gpu.blocks.Load()) != st.Blocks {
			t.Errorf("required %v: %d blocks on the CPU, %d on the GPU of %d", required, c.blocks.Load(), gpu.blocks.Load(), st.Blocks)
		}
		s.Close()
	}
}

// TestStartingBackendAuto: auto does not open for a small input, opens once for enough data
// (over several streams), and does not wait for an open that no block needed.
func TestStartingBackendAuto(t *testing.T) {
	data := benchText(64 << 10)
	const bs, threads = 8 << 10, 2
	want := compressBytes(t, data, bs, threads)
	release := make(chan struct{})
	defer close(release)
	gpu := &fakeGPU{Backend: cpu.New(threads)}
	op := newOpener(gpu, nil, release)
	s := &StartingBackend{CPU: cpu.New(threads), Open: op.open, LargeBlock: 1 << 20, StartBytes: 100 << 10}
	got, st, err := compressWith(t, s, data, bs, threads)
	if err != nil || !bytes.Equal(got, want) || blocksOn(st, "cpu") != st.Blocks {
		t.Fatalf("small input: %v, stats %+v, or the output differs", err, st.On)
	}
	if op.calls.Load() != 0 {
		t.Fatalf("small input: opened %d times", op.calls.Load())
	}
	// the second stream passes StartBytes: the open starts, never finishes, and is not waited for
	for range 3 {
		got, _, err = compressWith(t, s, data, bs, threads)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("later streams: %v, or the output differs", err)
		}
	}
	if op.calls.Load() != 1 {
		t.Fatalf("opened %d times, want 1", op.calls.Load())
	}
	if s.Opened() != nil {
		t.Fatal("open before its release")
	}
	s.Close() // returns at once; the backend is closed when the open ends
}

// TestStartingBackendFails: a failed open fails a required compression, even with every block
// sorted on the CPU; under auto the CPU goes on, and OnFail is told once.
func TestStartingBackendFails(t *testing.T) {
	data := benchText(40 << 10)
	const bs, threads = 8 << 10, 2
	want := compressBytes(t, data, bs, threads)
	errNo := errors.New("no usable GPU: none here")
	for _, large := range []int{1 << 20, bs} { // blocks sorted on the CPU meanwhile; blocks waiting
		var release chan struct{}
		var cpuB kernels.Backend = cpu.New(threads)
		if large > bs {
			// the open fails once the CPU has sorted blocks (and the first may wait to be written)
			release = make(chan struct{})
			var once sync.Once
			cpuB = &countingCPU{Backend: cpu.New(threads), hook: func(n int) {
				if n == 3 {
					once.Do(func() { close(release) })
				}
			}}
		}
		s := &StartingBackend{CPU: cpuB, Open: newOpener(nil, errNo, release).open, Required: true, LargeBlock: large}
		out, _, err := compressWith(t, s, data, bs, threads)
		if !errors.Is(err, errNo) {
			t.Errorf("required, large %d: %v, want the open's error", large, err)
		}
		if len(out) != 0 {
			t.Errorf("required, large %d: %d bytes written before the open failed", large, len(out))
		}
	}
	s0 := &StartingBackend{CPU: cpu.New(threads), Open: newOpener(nil, errNo, nil).open, Required: true}
	if out, _, err := compressWith(t, s0, nil, bs, threads); !errors.Is(err, errNo) || len(out) != 0 {
		t.Errorf("required, empty input: %v, %d bytes written", err, len(out))
	}
	var fails atomic.Int32
	s := &StartingBackend{CPU: cpu.New(threads), Open: newOpener(nil, errNo, nil).open, LargeBlock: bs,
		OnFail: func(err error) {
			if errors.Is(err, errNo) {
				fails.Add(1)
			}
		}}
	got, st, err := compressWith(t, s, data, bs, threads)
	if err != nil || !bytes.Equal(got, want) || blocksOn(st, "cpu") != st.Blocks {
		t.Fatalf("auto: %v, stats %+v, or the output differs", err, st.On)
	}
	if fails.Load() != 1 {
		t.Errorf("auto: OnFail told %d times", fails.Load())
	}
}

// TestStartingBackendCanceled: a block waiting for the open stops when the compression is
// canceled.
func TestStartingBackendCanceled(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	s := &StartingBackend{CPU: cpu.New(1), Open: newOpener(nil, nil, release).open, LargeBlock: 10}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.For(ctx, 10); !errors.Is(err, context.Canceled) {
		t.Errorf("%v, want context.Canceled", err)
	}
}

// TestStartingBackendExpect: a file's size starts the open before anything of it is read when
// Read would start it during the file, and not otherwise.
func TestStartingBackendExpect(t *testing.T) {
	for _, c := range []struct {
		size      int64
		blockSize int
		open      bool
	}{
		{10 << 10, 1 << 20, false}, // small file, large blocks: its one block is small
		{200 << 10, 1 << 20, true}, // a large block
		{200 << 10, 4 << 10, true}, // small blocks, but past StartBytes
		{50 << 10, 4 << 10, false},
	} {
		op := newOpener(nil, errors.New("no GPU"), nil)
		s := &StartingBackend{CPU: cpu.New(1), Open: op.open, LargeBlock: 100 << 10, StartBytes: 150 << 10}
		s.Expect(c.size, c.blockSize)
		if got := s.state() != nil; got != c.open {
			t.Errorf("size %d, blocks of %d: open started %v, want %v", c.size, c.blockSize, got, c.open)
		}
	}
}

// TestStartingBackendLastInput: once the last input's blocks are all sorted, the opened backend
// is closed without waiting for the end; before the last input it stays open.
func TestStartingBackendLastInput(t *testing.T) {
	data := benchText(40 << 10)
	const bs, threads = 8 << 10, 2
	want := compressBytes(t, data, bs, threads)
	gpu := &fakeGPU{Backend: cpu.New(threads), closedCh: make(chan struct{})}
	s := &StartingBackend{CPU: cpu.New(threads), Open: newOpener(gpu, nil, nil).open, Required: true}
	s.Start()
	<-s.state()
	got, _, err := compressWith(t, s, data, bs, threads)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("first input: %v, or the output differs", err)
	}
	if gpu.closed.Load() {
		t.Fatal("closed before the last input")
	}
	s.SetLastInput()
	got, _, err = compressWith(t, s, data, bs, threads)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("last input: %v, or the output differs", err)
	}
	select { // closed by Sorted, not by s.Close
	case <-gpu.closedCh:
	case <-time.After(30 * time.Second):
		t.Fatal("the backend was not closed after the last input's blocks were sorted")
	}
	if gpu.blocks.Load() == 0 {
		t.Error("the GPU sorted no block")
	}
}
