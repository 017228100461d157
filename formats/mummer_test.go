package formats

import (
	"bufio"
	"bytes"
	"encoding/binary"
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

// TestField8: the word of eight bytes against "%8d", for every value below 10^6 and at every
// digit count, and for lines whose fields are on either side of the word's range.
func TestField8(t *testing.T) {
	check := func(v uint32) {
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], field8(v))
		if got, want := string(b[:]), fmt.Sprintf("%8d", v); got != want {
			t.Fatalf("field8(%d) = %q, want %q", v, got, want)
		}
	}
	for v := range uint32(1000000) {
		check(v)
	}
	for p := uint32(10); p <= 100000000; p *= 10 {
		check(p - 1)
		check(p/2 + 7)
		if p < 100000000 {
			check(p)
			check(p + 1)
		}
	}
	x := uint64(1)
	for range 100000 {
		x = x*6364136223846793005 + 1442695040888963407
		check(uint32(x>>33) % 100000000)
	}
	m := NewMummerWriter(nil, []string{"r"}, false, false, false)
	for _, v := range []int{0, 1, maxField - 1, maxField, maxField + 1, 99999999, 100000000, 100000001, 123456789, 999999999,
		1000000000, 4294967296, 9999999999, 10000000000, 1 << 40, -5} {
		for _, f := range [][3]int{{v, 1, 1}, {1, v, 1}, {1, 1, v}, {v, v, v}} {
			got := string(m.AppendMatch([]byte("x"), 0, f[0], f[1], f[2], nil))
			if want := fmt.Sprintf("x%8d  %8d  %8d\n", f[0], f[1], f[2]); got != want {
				t.Fatalf("AppendMatch%v = %q, want %q", f, got, want)
			}
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

// TestMummerWriterLineBytes: LineBytes is the length of a line whose values fit eight digits, in
// three and four columns.
func TestMummerWriterLineBytes(t *testing.T) {
	for _, c := range []struct {
		names []string
		four  bool
	}{{[]string{"chr"}, false}, {[]string{"chr"}, true}, {[]string{"a", "chr10", "x"}, false}} {
		m := NewMummerWriter(nil, c.names, c.four, false, false)
		for _, v := range [][3]int{{1, 1, 1}, {99999999, 99999999, 99999999}, {1234, 5, 67}} {
			if got, want := m.LineBytes(), len(m.AppendMatch(nil, len(c.names)-1, v[0], v[1], v[2], nil)); got != want {
				t.Errorf("%v four %v: LineBytes %d, a line of %v is %d", c.names, c.four, got, v, want)
			}
		}
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

// BenchmarkAppendMatchChromosome: lines against a chromosome of 250 Mbp, most of its positions of
// nine digits.
func BenchmarkAppendMatchChromosome(b *testing.B) { benchLines(b, 250000000, 150000000) }

// BenchmarkAppendMatchReads: the lines of reads against a bacterial genome (one record, three
// columns), with positions and lengths that vary as they do there.
func BenchmarkAppendMatchReads(b *testing.B) { benchLines(b, 4641652, 150) }

// benchLines formats lines of one record's matches at positions up to refMax and queryMax.
func benchLines(b *testing.B, refMax, queryMax int) {
	m := NewMummerWriter(nil, []string{"chr"}, false, false, false)
	const n = 4096
	var ref, q, l [n]int
	x := uint64(1)
	for i := range n {
		x = x*6364136223846793005 + 1442695040888963407
		ref[i], q[i], l[i] = int(x>>30)%refMax+1, int(x>>20)%queryMax+1, int(x>>8)%131+20
	}
	buf := make([]byte, 0, 64*n)
	b.SetBytes(int64(len(m.AppendMatch(nil, 0, ref[0], q[0], l[0], nil))))
	for i := 0; b.Loop(); i++ {
		if i%n == 0 {
			buf = buf[:0]
		}
		buf = m.AppendMatch(buf, 0, ref[i%n], q[i%n], l[i%n], nil)
	}
}
