package bytecount

import (
	"math/rand"
	"testing"
)

// TestOf compares Of with a plain count on lengths around the four-byte steps, runs and random
// bytes.
func TestOf(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for _, n := range []int{0, 1, 3, 4, 5, 7, 8, 1000, 4099} {
		for _, sigma := range []int{1, 3, 256} {
			b := make([]byte, n)
			for i := range b {
				b[i] = byte(rng.Intn(sigma))
			}
			var want [256]uint32
			for _, x := range b {
				want[x]++
			}
			if got := Of(b); got != want {
				t.Errorf("%d bytes of %d values: counts differ", n, sigma)
			}
		}
	}
}
