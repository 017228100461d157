package main

import (
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sapipe/sapipe/kernels"
)

// countingMatcher counts its calls.
type countingMatcher struct{ matches, closes atomic.Int32 }

func (c *countingMatcher) Match(*kernels.Batch, *kernels.Result) error {
	c.matches.Add(1)
	return nil
}

func (c *countingMatcher) Close() error {
	c.closes.Add(1)
	return nil
}

// A pending matcher's Match waits for the build and then matches with what it built; Close
// closes that.
func TestPendingMatcherWaits(t *testing.T) {
	release := make(chan struct{})
	inner := &countingMatcher{}
	p := newPendingMatcher(func() (kernels.Matcher, error) {
		<-release
		return inner, nil
	})
	done := make(chan error, 1)
	go func() { done <- p.Match(&kernels.Batch{}, &kernels.Result{}) }()
	select {
	case err := <-done:
		t.Fatalf("Match returned (%v) before the matcher was built", err)
	case <-time.After(20 * time.Millisecond):
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if inner.matches.Load() != 1 || inner.closes.Load() != 1 {
		t.Errorf("inner matcher: %d matches, %d closes; want 1 and 1", inner.matches.Load(), inner.closes.Load())
	}
}

// A failed build fails every Match with its error, and Close has nothing to close.
func TestPendingMatcherError(t *testing.T) {
	want := errors.New("no device")
	p := newPendingMatcher(func() (kernels.Matcher, error) { return nil, want })
	for range 2 {
		if err := p.Match(&kernels.Batch{}, &kernels.Result{}); !errors.Is(err, want) {
			t.Errorf("Match: %v, want %v", err, want)
		}
	}
	if err := p.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
}
