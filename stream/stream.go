// Package stream is sapipe's small pipeline runtime: an ordered parallel map with bounded memory,
// cancellation through context, and first-error-wins shutdown.
//
// Items enter through a source function, are transformed by several workers at once, and leave
// through a sink function in exactly the order they entered, whatever order the workers finish in.
// At most a fixed number of items are in flight, so memory is bounded by that window, not by the
// length of the stream, and a slow sink holds back the source (backpressure). OrderedMapBudget
// bounds them by what they cost as well, for items of very different sizes.
package stream

import (
	"context"
	"errors"
	"io"
	"sync"

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
	cost int64 // what the item took of the budget
	done chan struct{}
}

// OrderedMap calls src until it returns io.EOF, applies fn to each item on opts.Workers goroutines,
// and passes the results to sink in source order. The first error from src, fn or sink (or ctx's)
// stops the pipeline and is returned; io.EOF from src is the normal end.
func OrderedMap[In, Out any](ctx context.Context, opts Options, src func() (In, error), fn func(context.Context, In) (Out, error), sink func(Out) error) error {
	return OrderedMapBudget(ctx, opts, 0, nil, src, fn, sink)
}

// OrderedMapBudget is OrderedMap with the items in flight bounded by budget as well (memory, say):
// each item takes cost(item) of it from when src has returned it until sink has taken its result,
// and goes to a worker only once that much is free. An item that costs more than the whole budget
// waits until it is alone. A budget of 0 or less bounds nothing.
func OrderedMapBudget[In, Out any](ctx context.Context, opts Options, budget int64, cost func(In) int64, src func() (In, error), fn func(context.Context, In) (Out, error), sink func(Out) error) error {
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
	var b *meter
	if budget > 0 {
		b = newMeter(budget)
	}

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
			if b != nil {
				if s.cost, err = b.take(ctx, cost(in)); err != nil {
					return err
				}
			}
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
			b.give(s.cost)
		}
		return nil
	})
	return g.Wait()
}

// meter is a budget that items take from and give back to.
type meter struct {
	mu    sync.Mutex
	total int64
	free  int64
	freed chan struct{} // closed (and replaced) when some is given back
}

func newMeter(total int64) *meter {
	return &meter{total: total, free: total, freed: make(chan struct{})}
}

// take waits until n is free (all of the budget, if n is more) or ctx is done, and takes it; it
// returns what it took.
func (m *meter) take(ctx context.Context, n int64) (int64, error) {
	n = min(max(n, 0), m.total)
	for {
		m.mu.Lock()
		if m.free >= n {
			m.free -= n
			m.mu.Unlock()
			return n, nil
		}
		freed := m.freed
		m.mu.Unlock()
		select {
		case <-freed:
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
}

// give gives n back; a nil meter takes and gives nothing.
func (m *meter) give(n int64) {
	if m == nil {
		return
	}
	m.mu.Lock()
	m.free += n
	close(m.freed)
	m.freed = make(chan struct{})
	m.mu.Unlock()
}
