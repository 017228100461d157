package cuda

import (
	"testing"
	"time"
)

// TestWaitTimes: SAPIPE_GPU_WAIT's "SPIN/NAP" in microseconds, the defaults otherwise.
func TestWaitTimes(t *testing.T) {
	spin, nap := 200*time.Microsecond, time.Millisecond
	for _, c := range []struct {
		v         string
		spin, nap time.Duration
	}{
		{"", spin, nap}, {"driver", spin, nap}, {"1000/100", time.Millisecond, 100 * time.Microsecond},
		{"0/50", 0, 50 * time.Microsecond}, {"5/0", spin, nap}, {"-1/5", spin, nap}, {"1000", spin, nap}, {"a/b", spin, nap},
	} {
		if s, n := waitTimes(c.v, spin, nap); s != c.spin || n != c.nap {
			t.Errorf("waitTimes(%q) = %v, %v; want %v, %v", c.v, s, n, c.spin, c.nap)
		}
	}
}
