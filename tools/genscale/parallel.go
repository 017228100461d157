package main

import (
	"sync"
	"sync/atomic"
)

// parallelFor runs fn(i) for every i in [0, n) on threads goroutines. The pieces must not
// depend on each other (each draws from its own generator), so the order they run in does not
// matter.
func parallelFor(n, threads int, fn func(i int)) {
	threads = max(1, min(threads, n))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range threads {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				fn(i)
			}
		}()
	}
	wg.Wait()
}

// ordered runs produce(i, buf) for every i in [0, n) on threads goroutines and hands each
// result to consume in the order of i, with at most a few results per thread in flight, so that
// memory stays bounded whatever n is. produce appends to buf (an empty buffer, reused once
// consume has returned) and returns it. The first error of consume stops the run.
func ordered(n, threads int, produce func(i int, buf []byte) []byte, consume func(b []byte) error) error {
	threads = max(1, threads)
	window := 2 * threads
	type job struct {
		i   int
		out chan []byte
	}
	work := make(chan job, window)
	queue := make(chan job, window)
	stop := make(chan struct{})
	pool := make(chan []byte, 2*window+2)
	go func() {
		defer close(work)
		defer close(queue)
		for i := range n {
			j := job{i, make(chan []byte, 1)}
			select {
			case queue <- j:
			case <-stop:
				return
			}
			work <- j
		}
	}()
	var wg sync.WaitGroup
	for range threads {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range work {
				var buf []byte
				select {
				case buf = <-pool:
				default:
				}
				j.out <- produce(j.i, buf[:0])
			}
		}()
	}
	var err error
	for j := range queue {
		b := <-j.out
		if err = consume(b); err != nil {
			close(stop)
			break
		}
		select {
		case pool <- b:
		default:
		}
	}
	if err != nil {
		// Let the feeder and the workers finish what they hold; their results are dropped.
		for j := range queue {
			<-j.out
		}
	}
	wg.Wait()
	return err
}
