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
