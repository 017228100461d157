package bwz

import (
	"fmt"
	"testing"
)

func TestNamesRoundTrip(t *testing.T) {
	names := []string{"NC_000913.3-1000000", "NC_000913.3-999999", "SRR870667.1 HWI-ST1234:8:1101:1229:2142 length=100", "", "007", "x", "a1b2c3", "99999999999999999999999", "NC_000913.3-999998"}
	for i := 0; i < 100; i++ {
		names = append(names, fmt.Sprintf("HWI:%d:%d:%d/1", i/7, i*37%1000, 1000000-i*i))
	}
	a := newEncoder(nil)
	m := &nameModel{}
	total := 0
	for _, n := range names {
		m.codeName(a, []byte(n), nil, 0)
		total += len(n)
	}
	out := a.finish()
	d := newDecoder(out)
	m = &nameModel{}
	var got []byte
	for i, n := range names {
		start := len(got)
		var ok bool
		got, ok = m.codeName(d, nil, got, total-len(got))
		if !ok || string(got[start:]) != n {
			t.Fatalf("name %d: %q, %v, want %q", i, got[start:], ok, n)
		}
	}
}
