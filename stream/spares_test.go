package stream

import "testing"

// TestSpares: values come back in the order kept, up to the bound; the rest are dropped.
func TestSpares(t *testing.T) {
	s := NewSpares[int](2)
	if _, ok := s.Get(); ok {
		t.Fatal("a value from empty spares")
	}
	for i := range 3 {
		s.Put(i)
	}
	for _, want := range []int{0, 1} {
		if v, ok := s.Get(); !ok || v != want {
			t.Fatalf("got %d %v, want %d", v, ok, want)
		}
	}
	if _, ok := s.Get(); ok {
		t.Fatal("a third value kept beyond the bound of 2")
	}
}
