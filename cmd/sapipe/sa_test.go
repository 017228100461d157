package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// rawDataDir holds the real data of ../shared/data, beside the repository.
const rawDataDir = "../../../shared/data"

// naiveSuffixArray sorts the suffixes by comparison: the oracle of the sa command.
func naiveSuffixArray(text []byte) []int {
	sa := make([]int, len(text))
	for i := range sa {
		sa[i] = i
	}
	slices.SortFunc(sa, func(a, b int) int { return bytes.Compare(text[a:], text[b:]) })
	return sa
}

// encodeSA writes sa the way the documentation of sapipe sa says each format is.
func encodeSA(sa []int, format string) []byte {
	var b []byte
	for _, p := range sa {
		switch format {
		case "u32":
			b = binary.LittleEndian.AppendUint32(b, uint32(p))
		case "u64":
			b = binary.LittleEndian.AppendUint64(b, uint64(p))
		case "text":
			b = strconv.AppendInt(b, int64(p), 10)
			b = append(b, '\n')
		}
	}
	return b
}

func TestSACommand(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	dir := t.TempDir()
	texts := [][]byte{{}, {'x'}, []byte(">r1 desc\nACGT\nacgt\n"), bytes.Repeat([]byte{'a'}, 300)}
	for _, n := range []int{50, 777, 4000} {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.IntN(1 + rng.IntN(256)))
		}
		texts = append(texts, b)
	}
	for i, text := range texts {
		in := filepath.Join(dir, fmt.Sprintf("in%d", i))
		os.WriteFile(in, text, 0o644)
		sa := naiveSuffixArray(text)
		for _, format := range []string{"u32", "u64", "text", ""} {
			args := []string{"sa"}
			want := encodeSA(sa, "u32") // the default
			if format != "" {
				args = append(args, "--format", format)
				want = encodeSA(sa, format)
			}
			got, stderr, st := runSapipe(t, nil, append(args, in)...)
			if st != 0 || len(stderr) != 0 || !bytes.Equal(got, want) {
				t.Fatalf("%v on %d bytes: status %d (%s), output differs from the naive sort", args, len(text), st, stderr)
			}
			got, _, st = runSapipe(t, text, append(args, "-")...)
			if st != 0 || !bytes.Equal(got, want) {
				t.Fatalf("%v on stdin: status %d, output differs", args, st)
			}
			out := filepath.Join(dir, "out.sa")
			if got, stderr, st := runSapipe(t, text, append(args, "-o", out, "-t", "1")...); st != 0 || len(got) != 0 {
				t.Fatalf("%v -o: status %d: %s", args, st, stderr)
			}
			if b, _ := os.ReadFile(out); !bytes.Equal(b, want) {
				t.Fatalf("%v -o: the file differs", args)
			}
		}
	}
}

func TestSACommandErrors(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.txt")
	os.WriteFile(in, []byte("banana"), 0o644)
	out := filepath.Join(dir, "out.sa")
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{filepath.Join(dir, "nosuch.txt")}, "nosuch.txt: no such file or directory"},
		{[]string{dir}, "reading " + dir + ": is a directory"},
		{[]string{"--format", "u16", in}, "--format u16: want u32, u64 or text"},
		{[]string{in, in}, "one input file at most"},
		{[]string{"--bogus", in}, "bogus"},
		{[]string{"-o", filepath.Join(dir, "nodir", "x.sa"), in}, "nodir"},
	} {
		got, stderr, st := runSapipe(t, nil, append([]string{"sa"}, c.args...)...)
		if st != 1 || len(got) != 0 || !bytes.HasPrefix(stderr, []byte("sapipe: ")) || !bytes.Contains(stderr, []byte(c.msg)) || bytes.Count(stderr, []byte("\n")) != 1 {
			t.Errorf("%v: status %d, stderr %q; want one line with %q", c.args, st, stderr, c.msg)
		}
		// The same with -o: no file appears.
		runSapipe(t, nil, append([]string{"sa", "-o", out}, c.args...)...)
		if ents, _ := os.ReadDir(dir); len(ents) != 1 {
			t.Errorf("%v -o: left %v", c.args, ents)
		}
	}
}

// TestRawBrokenPipe: a reader that goes away ends sa, bwt and unbwt quietly.
func TestRawBrokenPipe(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 24))
	text := make([]byte, 100000)
	for i := range text {
		text[i] = "acgt"[rng.IntN(4)]
	}
	bwt, stderr, st := runSapipe(t, text, "bwt", "-b", "10k")
	if st != 0 {
		t.Fatalf("bwt: %s", stderr)
	}
	for _, c := range []struct {
		args []string
		in   []byte
	}{{[]string{"sa"}, text}, {[]string{"sa", "--format", "text"}, text}, {[]string{"bwt", "-b", "10k"}, text}, {[]string{"unbwt"}, bwt}} {
		var e bytes.Buffer
		st := run(context.Background(), append([]string{"sapipe"}, c.args...), bytes.NewReader(c.in), epipeWriter{}, &e)
		if st != 141 || e.Len() != 0 {
			t.Errorf("%v: status %d, stderr %q; want 141 and nothing", c.args, st, e.String())
		}
	}
}

// TestSARealData checks sapipe sa on the raw bytes of a real genome file: a permutation of the
// positions with every adjacent pair of suffixes in order.
func TestSARealData(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	path := filepath.Join(rawDataDir, "dm1pct.fa")
	text, err := os.ReadFile(path)
	if err != nil {
		t.Skipf("real data not available: %v", err)
	}
	got, stderr, st := runSapipe(t, nil, "sa", "--format", "u32", path)
	if st != 0 || len(got) != 4*len(text) {
		t.Fatalf("status %d (%s), %d bytes of output for %d of input", st, stderr, len(got), len(text))
	}
	seen := make([]bool, len(text))
	prev := -1
	for i := 0; i < len(got); i += 4 {
		p := int(binary.LittleEndian.Uint32(got[i:]))
		if p >= len(text) || seen[p] {
			t.Fatalf("position %d repeated or out of range", p)
		}
		seen[p] = true
		if prev >= 0 && bytes.Compare(text[prev:], text[p:]) >= 0 {
			t.Fatalf("suffixes %d and %d out of order", prev, p)
		}
		prev = p
	}
	if strings.Count(string(text), "\n") == 0 {
		t.Fatal("expected raw FASTA bytes, newlines included")
	}
}
