package stages

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/sapipe/sapipe/kernels/cpu"
)

// parseSA reads back a suffix array written in format f.
func parseSA(t *testing.T, b []byte, f SAFormat) []int32 {
	t.Helper()
	var sa []int32
	switch f {
	case SAU32:
		if len(b)%4 != 0 {
			t.Fatalf("u32 output of %d bytes", len(b))
		}
		for i := 0; i < len(b); i += 4 {
			sa = append(sa, int32(binary.LittleEndian.Uint32(b[i:])))
		}
	case SAU64:
		if len(b)%8 != 0 {
			t.Fatalf("u64 output of %d bytes", len(b))
		}
		for i := 0; i < len(b); i += 8 {
			v := binary.LittleEndian.Uint64(b[i:])
			if v > 1<<31 {
				t.Fatalf("u64 position %d", v)
			}
			sa = append(sa, int32(v))
		}
	case SAText:
		if len(b) > 0 && b[len(b)-1] != '\n' {
			t.Fatalf("text output does not end in a newline")
		}
		for _, line := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
			if line == "" && len(b) == 0 {
				break
			}
			v, err := strconv.Atoi(line)
			if err != nil {
				t.Fatalf("text output line %q", line)
			}
			sa = append(sa, int32(v))
		}
	}
	return sa
}

func TestSuffixArrayFormats(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	texts := [][]byte{{}, {0}, {'a'}, []byte("banana"), bytes.Repeat([]byte{'a'}, 100), []byte("acgt\nacgt\r\n>x y\n")}
	for _, n := range []int{2, 10, 100, 1000, 3000} {
		for _, sigma := range []int{2, 4, 256} {
			texts = append(texts, randomBytes(rng, n, sigma))
		}
	}
	for _, text := range texts {
		want := naiveSA(text)
		for _, f := range []SAFormat{SAU32, SAU64, SAText} {
			var out bytes.Buffer
			sa, err := BuildSuffixArray(cpu.New(2), text)
			if err != nil {
				t.Fatal(err)
			}
			if err := WriteSuffixArray(&out, sa, f); err != nil {
				t.Fatal(err)
			}
			if got := parseSA(t, out.Bytes(), f); !slicesEqual(got, want) {
				t.Fatalf("format %d, text of %d bytes: suffix array differs from the naive sort", f, len(text))
			}
		}
	}
	var out bytes.Buffer
	sa, _ := BuildSuffixArray(cpu.New(1), []byte("banana"))
	WriteSuffixArray(&out, sa, SAText)
	if out.String() != "5\n3\n1\n0\n4\n2\n" {
		t.Errorf("banana: %q", out.String())
	}
}

func slicesEqual(a, b []int32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestParseSAFormat(t *testing.T) {
	for s, want := range map[string]SAFormat{"u32": SAU32, "u64": SAU64, "text": SAText} {
		if f, err := ParseSAFormat(s); err != nil || f != want {
			t.Errorf("%s: %v, %v", s, f, err)
		}
	}
	for _, s := range []string{"", "U32", "txt", "i32"} {
		if _, err := ParseSAFormat(s); err == nil {
			t.Errorf("%q accepted", s)
		}
	}
}

func TestReadText(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	data := randomBytes(rng, 300000, 256)
	dir := t.TempDir()
	p := filepath.Join(dir, "in")
	os.WriteFile(p, data, 0o644)
	for _, limit := range []int{len(data), len(data) + 1, len(data) - 1, 10} {
		f, _ := os.Open(p)
		for name, r := range map[string]func() ([]byte, error){
			"file":   func() ([]byte, error) { return ReadText("in", f, limit) },
			"stream": func() ([]byte, error) { return ReadText("in", iotest.HalfReader(bytes.NewReader(data)), limit) },
		} {
			got, err := r()
			if limit < len(data) {
				if err == nil || err.Error() != fmt.Sprintf("in: input longer than %d bytes", limit) {
					t.Errorf("%s, limit %d: %v", name, limit, err)
				}
				continue
			}
			if err != nil || !bytes.Equal(got, data) {
				t.Errorf("%s, limit %d: %d bytes, %v", name, limit, len(got), err)
			}
		}
		f.Close()
	}
	d, _ := os.Open(dir)
	defer d.Close()
	if _, err := ReadText(dir, d, 100); err == nil || !strings.HasPrefix(err.Error(), "reading "+dir+": ") {
		t.Errorf("a directory: %v", err)
	}
}
