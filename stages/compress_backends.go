package stages

import (
	"context"
	"sync"

	"github.com/sapipe/sapipe/kernels"
)

// BlockBackends chooses the backend that sorts each block of CompressWith.
type BlockBackends interface {
	// Read is told the length of each block as it is read, in input order, before the block is
	// sorted.
	Read(n int)
	// For returns the backend that sorts a block of n bytes, waiting for it if it must (until
	// ctx is done).
	For(ctx context.Context, n int) (kernels.Backend, error)
	// Finish is called before anything is written (when the first block is sorted, or at the
	// end of an empty input) and again once every block is sorted; its error fails the
	// compression.
	Finish(ctx context.Context) error
}

// OneBackend is the BlockBackends of a backend that sorts every block.
type OneBackend struct{ kernels.Backend }

func (OneBackend) Read(int)                                            {}
func (o OneBackend) For(context.Context, int) (kernels.Backend, error) { return o.Backend, nil }
func (OneBackend) Finish(context.Context) error                        { return nil }

// The defaults of StartingBackend's thresholds.
const (
	DefaultLargeBlock     = 16 << 20 // a block this large takes seconds on the CPU, a tenth of one on a GPU
	DefaultStartPerThread = 12 << 20 // bytes read a thread before auto starts the GPU
)

// StartingBackend sorts blocks on the CPU while a faster backend (a GPU) starts on another
// goroutine, and on that backend once it is open: a GPU's start-up takes a few hundred
// milliseconds, in which the CPU sorts small blocks, and it pays only for large blocks or much
// data. It is shared by the files of a command: the backend is opened once.
//
// Open starts at once when Required (--device gpu), and its error is then the compression's, even
// if the CPU sorted every block. Otherwise (--device auto) it starts once a block of LargeBlock
// bytes is read, or StartBytes have been read in all; if it fails, OnFail is told and the CPU sorts
// every block. A block of LargeBlock bytes or more waits for the open; a smaller one is sorted on
// the CPU while the open runs.
type StartingBackend struct {
	CPU        kernels.Backend                 // sorts blocks while Open runs, and after it failed
	Open       func() (kernels.Backend, error) // opens the other backend; called at most once, on its own goroutine
	Required   bool                            // start Open at once, and fail with its error
	LargeBlock int                             // blocks this long wait for Open; DefaultLargeBlock when 0
	StartBytes int64                           // bytes read before Open starts, unless Required (DefaultStartPerThread a thread); 0 means LargeBlock
	OnFail     func(err error)                 // told of Open's error when not Required, before a block waiting for it goes on

	mu        sync.Mutex
	started   bool
	lastInput bool // no more blocks after this input's: Sorted closes the opened backend
	read      int64
	done      chan struct{} // closed when b and err are set
	b         kernels.Backend
	err       error
}

func (s *StartingBackend) largeBlock() int {
	if s.LargeBlock > 0 {
		return s.LargeBlock
	}
	return DefaultLargeBlock
}

// startBytes is StartBytes, or LargeBlock's when it is not set.
func (s *StartingBackend) startBytes() int64 {
	if s.StartBytes > 0 {
		return s.StartBytes
	}
	return int64(s.largeBlock())
}

// Start starts opening the backend, if it has not started already.
func (s *StartingBackend) Start() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.startLocked()
}

func (s *StartingBackend) startLocked() {
	if s.started {
		return
	}
	s.started = true
	s.done = make(chan struct{})
	go func() {
		b, err := s.Open()
		if err != nil && b != nil {
			b.Close()
			b = nil
		}
		s.b, s.err = b, err
		if err != nil && !s.Required && s.OnFail != nil {
			s.OnFail(err)
		}
		close(s.done)
	}()
}

// Expect is told, before a file is read, how many bytes it holds and the block size it will be
// cut into: when Read would start the open at the file's first large block, or before its end,
// the open starts now, overlapping the reading (a 100 MiB block takes ~50 ms to read).
func (s *StartingBackend) Expect(size int64, blockSize int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if min(size, int64(blockSize)) >= int64(s.largeBlock()) || s.read+size >= s.startBytes() {
		s.startLocked()
	}
}

// Read starts the open when it is due.
func (s *StartingBackend) Read(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.read += int64(n)
	if s.Required || n >= s.largeBlock() || s.read >= s.startBytes() {
		s.startLocked()
	}
}

// state returns the open's channel, or nil when it has not started.
func (s *StartingBackend) state() chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.done
}

// For returns the opened backend if it is open; else, for a large block, waits for the open;
// else the CPU.
func (s *StartingBackend) For(ctx context.Context, n int) (kernels.Backend, error) {
	done := s.state()
	if done == nil {
		if n < s.largeBlock() {
			return s.CPU, nil
		}
		s.Start() // Read starts it first; this is for callers that skip Read
		done = s.state()
	}
	if n < s.largeBlock() {
		select {
		case <-done:
		default:
			return s.CPU, nil
		}
	}
	select {
	case <-done:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	switch {
	case s.err == nil:
		return s.b, nil
	case s.Required:
		return nil, s.err
	}
	return s.CPU, nil
}

// Finish waits for the open when Required, and returns its error; otherwise it returns at once.
func (s *StartingBackend) Finish(ctx context.Context) error {
	if !s.Required {
		return nil
	}
	s.Start()
	select {
	case <-s.state():
		return s.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Sorted is told that every block of the input has been sorted (their coding may still run).
// After SetLastInput the opened backend is closed now, on another goroutine: a GPU's
// teardown (~0.1 s) then overlaps the coding instead of delaying the exit.
func (s *StartingBackend) Sorted() {
	s.mu.Lock()
	last := s.lastInput
	s.mu.Unlock()
	if !last {
		return
	}
	if b := s.Opened(); b != nil {
		go b.Close()
	}
}

// SetLastInput says that the input about to be compressed is the command's last, so that
// Sorted may close the opened backend.
func (s *StartingBackend) SetLastInput() {
	s.mu.Lock()
	s.lastInput = true
	s.mu.Unlock()
}

// Opened returns the opened backend, or nil when it is not open (not started, still opening, or
// failed).
func (s *StartingBackend) Opened() kernels.Backend {
	done := s.state()
	if done == nil {
		return nil
	}
	select {
	case <-done:
		return s.b
	default:
		return nil
	}
}

// Close closes the opened backend. An open still running is not waited for: the backend it
// opens is closed on the open's goroutine.
func (s *StartingBackend) Close() error {
	done := s.state()
	if done == nil {
		return nil
	}
	select {
	case <-done:
		if s.b != nil {
			return s.b.Close()
		}
	default:
		go func() {
			<-done
			if s.b != nil {
				s.b.Close()
			}
		}()
	}
	return nil
}
