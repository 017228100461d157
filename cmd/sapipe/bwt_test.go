package main

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sapipe/sapipe/formats"
)

func TestParseSize(t *testing.T) {
	for s, want := range map[string]int{"1": 1, "900k": 900 << 10, "900K": 900 << 10, "8M": 8 << 20, "8m": 8 << 20, "1G": 1 << 30, "1g": 1 << 30, "2147483647": formats.MaxBWTBlock} {
		if got, err := parseSize(s); err != nil || got != want {
			t.Errorf("%q: %d, %v; want %d", s, got, err, want)
		}
	}
	for _, s := range []string{"", "0", "-1", "+5", "2G", "2048M", "2147483648", "1.5M", "8MB", "k", "M", "abc", "99999999999999999999", "9999999999G"} {
		if _, err := parseSize(s); err == nil || !strings.HasPrefix(err.Error(), "-b "+s+": ") {
			t.Errorf("%q: %v", s, err)
		}
	}
}

// TestBWTCommandRoundTrip: bwt then unbwt restores random, empty, tiny and uniform inputs at
// block sizes on both sides of the input's length, from files and stdin.
func TestBWTCommandRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	dir := t.TempDir()
	texts := [][]byte{{}, {0}, {'z'}, bytes.Repeat([]byte{'a'}, 5000), bytes.Repeat([]byte("acgt"), 1500)}
	for _, n := range []int{100, 1024, 1025, 6000} {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.UintN(256))
		}
		texts = append(texts, b)
	}
	for i, text := range texts {
		in := filepath.Join(dir, fmt.Sprintf("in%d", i))
		os.WriteFile(in, text, 0o644)
		for _, bs := range []string{"1k", "1", "7", fmt.Sprint(max(len(text), 1)), fmt.Sprint(len(text) + 1), "8M", ""} {
			if bs == "1" && len(text) > 1100 {
				continue
			}
			args := []string{"bwt", "-t", "3"}
			if bs != "" {
				args = append(args, "-b", bs)
			}
			enc, stderr, st := runSapipe(t, nil, append(args, in)...)
			if st != 0 || len(stderr) != 0 || !bytes.HasPrefix(enc, []byte(formats.BWTMagic)) {
				t.Fatalf("%v on %d bytes: status %d: %s", args, len(text), st, stderr)
			}
			if enc2, _, _ := runSapipe(t, text, args...); !bytes.Equal(enc2, enc) {
				t.Fatalf("%v: stdin and file give different streams", args)
			}
			got, stderr, st := runSapipe(t, enc, "unbwt")
			if st != 0 || len(stderr) != 0 || !bytes.Equal(got, text) {
				t.Fatalf("%v on %d bytes: unbwt status %d (%s), %d bytes back", args, len(text), st, stderr, len(got))
			}
		}
		// Files in and out with -o.
		bwtFile, back := filepath.Join(dir, "x.bwt"), filepath.Join(dir, "x.back")
		if _, stderr, st := runSapipe(t, nil, "bwt", "-b", "1k", "-o", bwtFile, in); st != 0 {
			t.Fatalf("bwt -o: %s", stderr)
		}
		if _, stderr, st := runSapipe(t, nil, "unbwt", "-o", back, bwtFile); st != 0 {
			t.Fatalf("unbwt -o: %s", stderr)
		}
		if b, _ := os.ReadFile(back); !bytes.Equal(b, text) {
			t.Fatalf("%d bytes: the restored file differs", len(text))
		}
	}
}

// TestBWTCommandRealData round-trips real genome files and checks the stream's block count.
func TestBWTCommandRealData(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	for _, name := range []string{"ecoli.fa", "dm1pct.fa.gz"} {
		path := filepath.Join(rawDataDir, name)
		text, err := os.ReadFile(path)
		if err != nil {
			t.Skipf("real data not available: %v", err)
		}
		enc, stderr, st := runSapipe(t, nil, "bwt", "-b", "1M", path)
		if st != 0 {
			t.Fatalf("%s: %s", name, stderr)
		}
		blocks := (len(text) + 1<<20 - 1) >> 20
		if want := 16 + blocks*16 + len(text) + 28; len(enc) != want {
			t.Errorf("%s: stream of %d bytes, want %d (%d blocks)", name, len(enc), want, blocks)
		}
		got, stderr, st := runSapipe(t, enc, "unbwt", "-t", "2")
		if st != 0 || !bytes.Equal(got, text) {
			t.Fatalf("%s: status %d (%s), round trip differs", name, st, stderr)
		}
	}
}

// TestUnBWTCommandErrors: damaged, truncated and foreign input give one line naming the file and
// the block, and -o leaves nothing behind.
func TestUnBWTCommandErrors(t *testing.T) {
	rng := rand.New(rand.NewPCG(33, 34))
	dir := t.TempDir()
	text := make([]byte, 5000)
	for i := range text {
		text[i] = "acgtn"[rng.IntN(5)]
	}
	enc, stderr, st := runSapipe(t, text, "bwt", "-b", "2000")
	if st != 0 {
		t.Fatal(string(stderr))
	}
	damaged := bytes.Clone(enc)
	damaged[16+2016+16+100] ^= 0x20 // in the transform of block 2
	badPrimary := bytes.Clone(enc)
	badPrimary[16+4] = 0xff // block 1's primary index (caught by the block header's checksum)
	in := filepath.Join(dir, "in.bwt")
	for _, c := range []struct {
		name string
		data []byte
		msg  string
	}{
		{"damaged transform", damaged, in + ": block 2 (at byte 2032): damaged BWT stream: "},
		{"damaged header", badPrimary, in + ": block 1 (at byte 16): damaged BWT stream: block header checksum mismatch"},
		{"truncated", enc[:3000], in + ": block 2 (at byte 2032): damaged BWT stream: truncated"},
		{"no trailer", enc[:len(enc)-28], in + ": block 4 (at byte " + fmt.Sprint(len(enc)-28) + "): damaged BWT stream: truncated"},
		{"trailing data", append(bytes.Clone(enc), '\n'), in + ": trailer"},
		{"FASTA", []byte(">r\nacgt\n"), in + ": header (at byte 0): not a sapipe BWT stream"},
		{"empty", nil, in + ": header (at byte 0): not a sapipe BWT stream (empty input)"},
	} {
		os.WriteFile(in, c.data, 0o644)
		out := filepath.Join(dir, "out")
		_, stderr, st := runSapipe(t, nil, "unbwt", "-o", out, in)
		if st != 1 || !bytes.HasPrefix(stderr, []byte("sapipe: "+c.msg)) || bytes.Count(stderr, []byte("\n")) != 1 {
			t.Errorf("%s: status %d, stderr %q; want one line starting %q", c.name, st, stderr, c.msg)
		}
		if ents, _ := os.ReadDir(dir); len(ents) != 1 {
			t.Errorf("%s: -o left %v", c.name, ents)
		}
	}
	if _, stderr, st := runSapipe(t, nil, "unbwt", filepath.Join(dir, "nosuch.bwt")); st != 1 || !bytes.Contains(stderr, []byte("nosuch.bwt: no such file")) {
		t.Errorf("missing file: status %d, stderr %q", st, stderr)
	}
	if _, stderr, st := runSapipe(t, []byte("junk"), "unbwt"); st != 1 || !bytes.HasPrefix(stderr, []byte("sapipe: stdin: header")) {
		t.Errorf("junk on stdin: status %d, stderr %q", st, stderr)
	}
}

func TestBWTCommandErrors(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in")
	os.WriteFile(in, []byte("banana"), 0o644)
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"bwt", "-b", "0", in}, "-b 0: want a block size"},
		{[]string{"bwt", "-b", "2G", in}, "-b 2G: want a block size"},
		{[]string{"bwt", "-b", "1.5M", in}, "-b 1.5M: want a block size"},
		{[]string{"bwt", filepath.Join(dir, "nosuch"), "-b", "1k"}, "one input file at most"},
		{[]string{"bwt", filepath.Join(dir, "nosuch")}, "nosuch: no such file or directory"},
		{[]string{"bwt", dir}, "reading " + dir + ": is a directory"},
		{[]string{"unbwt", dir}, dir + ": header (at byte 0): reading: is a directory"},
		{[]string{"unbwt", in, in}, "one input file at most"},
		{[]string{"bwt", "-o", filepath.Join(dir, "nodir", "x"), in}, "nodir"},
	} {
		out, stderr, st := runSapipe(t, nil, c.args...)
		if st != 1 || len(out) != 0 || !bytes.HasPrefix(stderr, []byte("sapipe: ")) || !bytes.Contains(stderr, []byte(c.msg)) || bytes.Count(stderr, []byte("\n")) != 1 {
			t.Errorf("%v: status %d, stderr %q; want one line with %q", c.args, st, stderr, c.msg)
		}
	}
	// A failed run with -o leaves nothing.
	runSapipe(t, nil, "bwt", "-o", filepath.Join(dir, "out.bwt"), dir)
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("-o left %v", ents)
	}
}
