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
