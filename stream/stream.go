// Package stream is sapipe's small pipeline runtime: an ordered parallel map with bounded memory,
// cancellation through context, and first-error-wins shutdown.
//
// Items enter through a source function, are transformed by several workers at once, and leave
// through a sink function in exactly the order they entered, whatever order the workers finish in.
// At most a fixed number of items are in flight, so memory is bounded by that window, not by the
// length of the stream, and a slow sink holds back the source (backpressure).
package stream

import (
	"context"
	"errors"
	"io"

	"golang.org/x/sync/errgroup"
)

// Options configure OrderedMap.
type Options struct {
	Workers int // goroutines running fn; at least 1
	Window  int // items in flight at most; default 4*Workers
}

type slot[Out any] struct {
	out  Out
	err  error
	done chan struct{}
}

// OrderedMap calls src until it returns io.EOF, applies fn to each item on opts.Workers goroutines,
// and passes the results to sink in source order. The first error from src, fn or sink (or ctx's)
// stops the pipeline and is returned; io.EOF from src is the normal end.
func OrderedMap[In, Out any](ctx context.Context, opts Options, src func() (In, error), fn func(context.Context, In) (Out, error), sink func(Out) error) error {
	workers := max(1, opts.Workers)
	window := opts.Window
	if window <= 0 {
		window = 4 * workers
	}
	g, ctx := errgroup.WithContext(ctx)
	type job struct {
		in In
		s  *slot[Out]
	}
	jobs := make(chan job)
	order := make(chan *slot[Out], window)

	g.Go(func() error { // source: reads items, hands them out and records their order
		defer close(jobs)
		defer close(order)
		for {
			in, err := src()
			if errors.Is(err, io.EOF) {
				return nil
			}
			if err != nil {
				return err
			}
			s := &slot[Out]{done: make(chan struct{})}
			select {
			case order <- s:
			case <-ctx.Done():
				return ctx.Err()
			}
			select {
			case jobs <- job{in, s}:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	})
	for w := 0; w < workers; w++ {
		g.Go(func() error {
			for j := range jobs {
				j.s.out, j.s.err = fn(ctx, j.in)
				close(j.s.done)
				if j.s.err != nil {
					return j.s.err
				}
			}
			return nil
		})
	}
	g.Go(func() error { // sink: takes results in source order
		for s := range order {
			select {
			case <-s.done:
			case <-ctx.Done():
				return ctx.Err()
			}
			if s.err != nil {
				return s.err
			}
			if err := sink(s.out); err != nil {
				return err
			}
		}
		return nil
	})
	return g.Wait()
}
