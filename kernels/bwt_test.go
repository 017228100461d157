package kernels

import (
	"bytes"
	"slices"
	"testing"
)

// TestBWTFromSA checks the definition on texts small enough to sort rotations of text+sentinel
// by hand.
func TestBWTFromSA(t *testing.T) {
	for _, c := range []struct {
		text, bwt string
		primary   int
	}{
		{"", "", 0},
		{"a", "a", 1},
		{"banana", "annbaa", 4},
		{"abracadabra", "ardrcaaaabb", 3},
		{"aaaa", "aaaa", 4},
	} {
		text := []byte(c.text)
		sa := make([]int32, len(text))
		for i := range sa {
			sa[i] = int32(i)
		}
		slices.SortFunc(sa, func(a, b int32) int { return bytes.Compare(text[a:], text[b:]) })
		dst := make([]byte, len(text))
		p := BWTFromSA(text, sa, dst)
		if string(dst) != c.bwt || p != c.primary {
			t.Errorf("BWT(%q) = %q, %d; want %q, %d", c.text, dst, p, c.bwt, c.primary)
		}
	}
}
