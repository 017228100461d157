package formats

import (
	"bufio"
	"bytes"
	"fmt"
	"testing"
)

func TestMummerWriterMatchesPrintf(t *testing.T) {
	cases := []struct {
		names          []string
		four, len, str bool
		rec, r, q, l   int
		want           string
	}{
		{[]string{"r"}, false, false, false, 0, 11, 1, 690, fmt.Sprintf("%8d  %8d  %8d\n", 11, 1, 690)},
		{[]string{"r1", "chrom_9"}, false, false, false, 0, 1, 1, 8, fmt.Sprintf("  %-7s  %8d  %8d  %8d\n", "r1", 1, 1, 8)},
		{[]string{"a"}, true, false, true, 0, 123456789, 5, 3, fmt.Sprintf("  a  %8d  %8d  %8d\nacg\n", 123456789, 5, 3)},
	}
	for _, c := range cases {
		var buf bytes.Buffer
		w := bufio.NewWriter(&buf)
		m := NewMummerWriter(w, c.names, c.four, c.len, c.str)
		if err := m.Match(c.rec, c.r, c.q, c.l, []byte("acg")); err != nil {
			t.Fatal(err)
		}
		w.Flush()
		if buf.String() != c.want {
			t.Errorf("got %q, want %q", buf.String(), c.want)
		}
	}
}

func TestMummerWriterHeader(t *testing.T) {
	var buf bytes.Buffer
	w := bufio.NewWriter(&buf)
	m := NewMummerWriter(w, []string{"r"}, false, true, false)
	m.Header([]byte("q"), false, 690)
	m.Header([]byte("q"), true, 690)
	m.ShowLen = false
	m.Header([]byte("q"), true, 690)
	w.Flush()
	want := "> q  Len = 690\n> q Reverse  Len = 690\n> q Reverse\n"
	if buf.String() != want {
		t.Errorf("got %q, want %q", buf.String(), want)
	}
}

// TestAppendPadded: "%8d" for values around every digit count and the field's width, negatives,
// and random ones.
func TestAppendPadded(t *testing.T) {
	vals := []int{0, 1, 9, 10, 11, 99, 100, 101, 999, 1000, 9999, 10000, 99999, 100000, 999999, 1000000,
		9999999, 10000000, 99999999, 100000000, 123456789, 4294967296, -1, -9, -10, -1234567, -12345678}
	for v := 0; v < 100000; v += 7 {
		vals = append(vals, v)
	}
	for i := 0; i < 64; i++ {
		vals = append(vals, int(uint64(0x9e3779b97f4a7c15)*uint64(i+1)>>(20+i%40)))
	}
	for _, v := range vals {
		if got, want := string(appendPadded([]byte("x"), v)), "x"+fmt.Sprintf("%8d", v); got != want {
			t.Fatalf("appendPadded(%d) = %q, want %q", v, got, want)
		}
	}
}

// TestMummerWriterLongNames: record names padded past the padding constant's length.
func TestMummerWriterLongNames(t *testing.T) {
	long := string(bytes.Repeat([]byte("n"), 150))
	m := NewMummerWriter(nil, []string{"a", long}, false, false, false)
	got := string(m.AppendMatch(nil, 0, 5, 6, 7, nil))
	if want := fmt.Sprintf("  %-150s  %8d  %8d  %8d\n", "a", 5, 6, 7); got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func BenchmarkAppendMatch(b *testing.B) {
	m := NewMummerWriter(nil, []string{"chr1", "chr10"}, false, false, false)
	buf := make([]byte, 0, 64)
	b.SetBytes(int64(len(m.AppendMatch(nil, 1, 1234567, 42, 131, nil))))
	for b.Loop() {
		buf = m.AppendMatch(buf[:0], 1, 1234567, 42, 131, nil)
	}
}
