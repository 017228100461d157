package formats

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestAppendCount: a count line is the name, a tab, the count in decimal and a newline, for any
// count, whatever the buffer held before.
func TestAppendCount(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	for i := range 20000 {
		n := i - 20
		if i > 1000 {
			n = rng.IntN(1 << uint(rng.IntN(40)))
		}
		name := fmt.Sprintf("p%d", rng.IntN(100))
		prefix := []byte("x\t1\n")[:rng.IntN(5)]
		if got, want := string(AppendCount(prefix, []byte(name), n)), string(prefix)+fmt.Sprintf("%s\t%d\n", name, n); got != want {
			t.Fatalf("count %d: %q, want %q", n, got, want)
		}
	}
}
