package stream

import (
	"context"
	"errors"
	"io"
	"math/rand"
	"sync/atomic"
	"testing"
	"time"
)

func TestOrderedMapKeepsOrder(t *testing.T) {
	for _, workers := range []int{1, 2, 7} {
		n, i := 500, 0
		src := func() (int, error) {
			if i == n {
				return 0, io.EOF
			}
			i++
			return i - 1, nil
		}
		var got []int
		err := OrderedMap(context.Background(), Options{Workers: workers}, src,
			func(_ context.Context, x int) (int, error) {
				time.Sleep(time.Duration(rand.Intn(200)) * time.Microsecond)
				return x * x, nil
			},
			func(y int) error { got = append(got, y); return nil })
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != n {
			t.Fatalf("workers %d: %d results, want %d", workers, len(got), n)
		}
		for k, y := range got {
			if y != k*k {
				t.Fatalf("workers %d: result %d is %d, want %d", workers, k, y, k*k)
			}
		}
	}
}

func TestOrderedMapBoundsInFlight(t *testing.T) {
	var inFlight, peak atomic.Int64
	i := 0
	src := func() (int, error) {
		if i == 200 {
			return 0, io.EOF
		}
		i++
		if v := inFlight.Add(1); v > peak.Load() {
			peak.Store(v)
		}
		return i, nil
	}
	err := OrderedMap(context.Background(), Options{Workers: 3, Window: 5}, src,
		func(_ context.Context, x int) (int, error) { return x, nil },
		func(int) error { time.Sleep(50 * time.Microsecond); inFlight.Add(-1); return nil })
	if err != nil {
		t.Fatal(err)
	}
	// window queued + one being handed to a worker + one just read
	if p := peak.Load(); p > 5+2 {
		t.Fatalf("%d items in flight, window is 5", p)
	}
}

func TestOrderedMapFirstErrorWins(t *testing.T) {
	boom := errors.New("boom")
	for _, where := range []string{"src", "fn", "sink"} {
		i := 0
		src := func() (int, error) {
			i++
			if where == "src" && i == 50 {
				return 0, boom
			}
			return i, nil // endless otherwise: the error must stop it
		}
		fn := func(_ context.Context, x int) (int, error) {
			if where == "fn" && x == 30 {
				return 0, boom
			}
			return x, nil
		}
		sink := func(x int) error {
			if where == "sink" && x == 40 {
				return boom
			}
			return nil
		}
		if err := OrderedMap(context.Background(), Options{Workers: 4}, src, fn, sink); !errors.Is(err, boom) {
			t.Fatalf("error in %s: got %v", where, err)
		}
	}
}

func TestOrderedMapCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	i := 0
	err := OrderedMap(ctx, Options{Workers: 2}, func() (int, error) { i++; return i, nil },
		func(_ context.Context, x int) (int, error) { return x, nil },
		func(x int) error {
			if x == 10 {
				cancel()
			}
			return nil
		})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
}

// TestOrderedMapBudget: the items between a worker and the sink never cost more than the budget,
// an item costing more than all of it runs alone, and the results keep their order.
func TestOrderedMapBudget(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	costs := make([]int64, 300)
	for i := range costs {
		costs[i] = 1 + rng.Int63n(10)
		if i%50 == 7 {
			costs[i] = 80 // over the budget
		}
	}
	const budget = 25
	var inFlight, peak, alone atomic.Int64
	var peakItems atomic.Int64
	var items atomic.Int64
	i := 0
	src := func() (int, error) {
		if i == len(costs) {
			return 0, io.EOF
		}
		i++
		return i - 1, nil
	}
	var got []int
	err := OrderedMapBudget(context.Background(), Options{Workers: 6, Window: 12}, budget, func(k int) int64 { return costs[k] }, src,
		func(_ context.Context, k int) (int, error) {
			c := min(costs[k], budget)
			raiseTo(&peak, inFlight.Add(c))
			raiseTo(&peakItems, items.Add(1))
			if costs[k] > budget && items.Load() == 1 {
				alone.Add(1)
			}
			time.Sleep(time.Duration(rand.Intn(100)) * time.Microsecond)
			return k, nil
		},
		func(k int) error {
			inFlight.Add(-min(costs[k], budget))
			items.Add(-1)
			got = append(got, k)
			return nil
		})
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range got {
		if v != k {
			t.Fatalf("result %d is item %d", k, v)
		}
	}
	if len(got) != len(costs) {
		t.Fatalf("%d results", len(got))
	}
	if peak.Load() > budget {
		t.Errorf("items costing %d in flight, budget %d", peak.Load(), budget)
	}
	if peakItems.Load() < 2 {
		t.Errorf("never more than one item in flight")
	}
	if alone.Load() != 6 {
		t.Errorf("%d of the 6 items over the budget ran alone", alone.Load())
	}
}

// TestOrderedMapBudgetError: a source waiting for the budget is released when the pipeline fails.
func TestOrderedMapBudgetError(t *testing.T) {
	boom := errors.New("boom")
	done := make(chan error, 1)
	go func() {
		i := 0
		done <- OrderedMapBudget(context.Background(), Options{Workers: 2}, 10, func(int) int64 { return 10 },
			func() (int, error) { i++; return i, nil },
			func(_ context.Context, x int) (int, error) { return x, nil },
			func(int) error { time.Sleep(time.Millisecond); return boom })
	}()
	select {
	case err := <-done:
		if !errors.Is(err, boom) {
			t.Errorf("error %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the pipeline did not stop")
	}
}

// raiseTo sets *m to v if v is larger, atomically (a load and a store could lose a larger value
// stored between them).
func raiseTo(m *atomic.Int64, v int64) {
	for old := m.Load(); v > old && !m.CompareAndSwap(old, v); old = m.Load() {
	}
}
