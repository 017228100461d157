package main

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/sapipe/sapipe/stages"
)

// compressInput is a few hundred kB of text-like data, seeded.
func compressInput(seed uint64, n int) []byte {
	rng := rand.New(rand.NewPCG(seed, 1))
	words := strings.Fields("acgt sapipe compress block sort suffix array transform rank run length model mix")
	var b []byte
	for len(b) < n {
		b = append(b, words[rng.IntN(len(words))]...)
		b = append(b, " \n"[rng.IntN(2)])
	}
	return b[:n]
}

func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o640); err != nil {
		t.Fatal(err)
	}
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

func TestCompressFiles(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.txt"), filepath.Join(dir, "b.txt")
	da, db := compressInput(1, 300000), compressInput(2, 1000)
	writeFile(t, a, da)
	writeFile(t, b, db)

	// compress both: inputs replaced by .bwz files with the same mode
	if _, stderr, st := runSapipe(t, nil, "compress", "--device", "cpu", "-b", "64k", a, b); st != 0 {
		t.Fatalf("compress: status %d: %s", st, stderr)
	}
	if exists(a) || exists(b) || !exists(a+".bwz") || !exists(b+".bwz") {
		t.Fatal("compress did not replace the inputs by .bwz files")
	}
	if fi, _ := os.Stat(a + ".bwz"); fi.Mode().Perm() != 0o640 {
		t.Errorf("mode %v, want the input's 0640", fi.Mode().Perm())
	}
	// test them
	if _, stderr, st := runSapipe(t, nil, "decompress", "-t", a+".bwz", b+".bwz"); st != 0 {
		t.Fatalf("-t: status %d: %s", st, stderr)
	}
	// -c concatenates both to stdout, keeping the files
	out, stderr, st := runSapipe(t, nil, "decompress", "-c", a+".bwz", b+".bwz")
	if st != 0 || !bytes.Equal(out, append(append([]byte(nil), da...), db...)) {
		t.Fatalf("decompress -c: status %d, %d bytes: %s", st, len(out), stderr)
	}
	// decompress -k keeps the .bwz files
	if _, stderr, st := runSapipe(t, nil, "decompress", "-k", a+".bwz"); st != 0 || !exists(a+".bwz") {
		t.Fatalf("decompress -k: status %d: %s", st, stderr)
	}
	if got, _ := os.ReadFile(a); !bytes.Equal(got, da) {
		t.Fatal("decompressed a.txt differs")
	}
	// the output exists: refused without -f, nothing touched
	_, stderr, st = runSapipe(t, nil, "decompress", a+".bwz")
	if st != 1 || !strings.Contains(string(stderr), "exists") || !exists(a+".bwz") {
		t.Fatalf("decompress onto an existing file: status %d: %s", st, stderr)
	}
	if _, stderr, st := runSapipe(t, nil, "compress", "-d", "-f", a+".bwz"); st != 0 || exists(a+".bwz") {
		t.Fatalf("compress -d -f: status %d: %s", st, stderr)
	}
	if got, _ := os.ReadFile(a); !bytes.Equal(got, da) {
		t.Fatal("a.txt differs after -d -f")
	}
	// .bwz files are not compressed again; a file without the suffix decompresses to .out
	_, stderr, st = runSapipe(t, nil, "compress", "--device", "cpu", "-k", b+".bwz")
	if st != 1 || !strings.Contains(string(stderr), "suffix") {
		t.Errorf("compressing a .bwz file: status %d: %s", st, stderr)
	}
	odd := filepath.Join(dir, "odd")
	if err := os.Rename(b+".bwz", odd); err != nil {
		t.Fatal(err)
	}
	if _, stderr, st := runSapipe(t, nil, "decompress", "-q", odd); st != 0 {
		t.Fatalf("decompressing a file without the suffix: status %d: %s", st, stderr)
	}
	if got, _ := os.ReadFile(odd + ".out"); !bytes.Equal(got, db) {
		t.Error("odd.out differs")
	}
}

func TestCompressPipe(t *testing.T) {
	data := compressInput(3, 500000)
	for _, args := range [][]string{{"-1"}, {"-b", "100000", "-p", "3"}, {"-9", "-p", "1"}} {
		c, stderr, st := runSapipe(t, data, append([]string{"compress", "--device", "cpu"}, args...)...)
		if st != 0 || len(stderr) != 0 {
			t.Fatalf("%v: status %d: %s", args, st, stderr)
		}
		out, stderr, st := runSapipe(t, c, "compress", "-dc")
		if st != 0 || !bytes.Equal(out, data) {
			t.Fatalf("%v: decompress status %d: %s", args, st, stderr)
		}
	}
	// concatenated streams decode to the concatenation
	c1, _, _ := runSapipe(t, []byte("one\n"), "compress", "--device", "cpu")
	c2, _, _ := runSapipe(t, []byte("two\n"), "compress", "--device", "cpu")
	out, _, st := runSapipe(t, append(c1, c2...), "decompress")
	if st != 0 || string(out) != "one\ntwo\n" {
		t.Fatalf("concatenated: status %d, %q", st, out)
	}
	// empty input
	c, _, st := runSapipe(t, nil, "compress", "--device", "cpu")
	if out, _, st2 := runSapipe(t, c, "decompress"); st != 0 || st2 != 0 || len(out) != 0 {
		t.Fatalf("empty input: %d %d %q", st, st2, out)
	}
}

// TestDecompressDamaged: damaged input is one error line per bad block with -t, an error naming
// the block otherwise, and the damaged file is neither replaced nor removed.
func TestDecompressDamaged(t *testing.T) {
	dir := t.TempDir()
	data := compressInput(4, 400000)
	c, _, _ := runSapipe(t, data, "compress", "--device", "cpu", "-b", "100k")
	bad := append([]byte(nil), c...)
	bad[len(bad)/2] ^= 0x04
	path := filepath.Join(dir, "bad.bwz")
	writeFile(t, path, bad)

	_, stderr, st := runSapipe(t, nil, "decompress", path)
	if st != 1 || !strings.Contains(string(stderr), "block ") || bytes.Count(stderr, []byte("\n")) != 1 {
		t.Fatalf("decompress: status %d, stderr %q", st, stderr)
	}
	if !exists(path) || exists(filepath.Join(dir, "bad")) {
		t.Fatal("a failed decompression must leave the input and no output")
	}
	if leftovers, _ := filepath.Glob(filepath.Join(dir, ".bad*")); len(leftovers) != 0 {
		t.Fatalf("temporary files left: %v", leftovers)
	}
	_, stderr, st = runSapipe(t, nil, "decompress", "-t", path)
	if st != 1 || !strings.Contains(string(stderr), "block ") || !strings.Contains(string(stderr), "damaged") {
		t.Fatalf("-t: status %d, stderr %q", st, stderr)
	}
	// foreign and truncated input
	for name, in := range map[string][]byte{"foreign": []byte("BZh9 this is not it"), "truncated": c[:len(c)-5]} {
		_, stderr, st := runSapipe(t, in, "decompress")
		if st != 1 || !bytes.HasPrefix(stderr, []byte("sapipe: stdin: ")) {
			t.Errorf("%s: status %d, stderr %q", name, st, stderr)
		}
	}
}

func TestCompressUsage(t *testing.T) {
	for _, args := range [][]string{
		{"compress", "-1", "-9"},
		{"compress", "-b", "0"},
		{"compress", "-b", "2G"},
		{"compress", "-b", "1M", "-5"},
		{"compress", "-p", "0"},
		{"compress", "--device", "tpu"},
		{"compress", "--memory", "12x"},
		{"decompress", "--memory", "0"},
		{"decompress", "-x"},
	} {
		_, stderr, st := runSapipe(t, []byte("x"), args...)
		if st != 1 || !bytes.HasPrefix(stderr, []byte("sapipe: ")) || bytes.Count(stderr, []byte("\n")) != 1 {
			t.Errorf("%v: status %d, stderr %q", args, st, stderr)
		}
	}
	// a missing file is reported, the others are still done
	dir := t.TempDir()
	good := filepath.Join(dir, "good")
	writeFile(t, good, []byte("good data\n"))
	_, stderr, st := runSapipe(t, nil, "compress", "--device", "cpu", filepath.Join(dir, "missing"), good)
	if st != 1 || !strings.Contains(string(stderr), "missing") || !exists(good+".bwz") {
		t.Errorf("missing file: status %d, stderr %q", st, stderr)
	}
}

// TestCompressMemoryFlag: --memory holds back the blocks in flight (-v says so) and changes no
// byte of the output.
func TestCompressMemoryFlag(t *testing.T) {
	in := compressInput(9, 600<<10)
	want, stderr, st := runSapipe(t, in, "compress", "-q", "--device", "cpu", "-b", "64k", "-p", "4", "--memory", "64G")
	if st != 0 {
		t.Fatalf("status %d: %s", st, stderr)
	}
	got, stderr, st := runSapipe(t, in, "compress", "-v", "--device", "cpu", "-b", "64k", "-p", "4", "--memory", "900k")
	if st != 0 || !bytes.Equal(got, want) {
		t.Fatalf("--memory 900k: status %d (%s), the output differs", st, stderr)
	}
	if !strings.Contains(string(stderr), "at most 2 in flight") {
		t.Errorf("-v says %q", stderr)
	}
	back, stderr, st := runSapipe(t, got, "decompress", "--memory", "1k")
	if st != 0 || !bytes.Equal(back, in) {
		t.Errorf("decompress --memory 1k: status %d (%s)", st, stderr)
	}
}

// TestMemoryNote: -v's count of blocks in flight under --memory is of the blocks compressed,
// read sets' (up to 1 GiB each by default) where the input was a read set.
func TestMemoryNote(t *testing.T) {
	cfg := &compressConfig{blockSize: 128 << 20, readsBlockSize: 1 << 30, threads: 8, memory: 16 << 30}
	if got := memoryNote(cfg, stages.CompressStats{Blocks: 9}); got != "" {
		t.Errorf("128 MiB blocks under 16 GiB: %q, want nothing (8 + 1 fit)", got)
	}
	if got, want := memoryNote(cfg, stages.CompressStats{Blocks: 9, ReadSets: 9}), "; --memory 16384M: at most 2 in flight"; got != want {
		t.Errorf("read sets of 1 GiB under 16 GiB: %q, want %q", got, want)
	}
	if got := memoryNote(cfg, stages.CompressStats{Blocks: 1, ReadSets: 1}); got != "" {
		t.Errorf("one block: %q", got)
	}
}

// TestCgroupLimits: the memory limits of a process's control groups and their ancestors, version
// 2 and version 1, "max" and version 1's huge numbers meaning none.
func TestCgroupLimits(t *testing.T) {
	root := t.TempDir()
	put := func(file, text string) {
		t.Helper()
		p := filepath.Join(root, file)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		writeFile(t, p, []byte(text))
	}
	put("memory.max", "max\n")
	put("job/memory.max", "8589934592\n")
	put("job/step/memory.max", "max\n")
	put("memory/memory.limit_in_bytes", "9223372036854771712\n")
	put("memory/docker/abc/memory.limit_in_bytes", "4294967296\n")
	self := filepath.Join(root, "self")
	for _, c := range []struct {
		text string
		want []int64
	}{
		{"0::/job/step\n", []int64{8 << 30}},
		{"0::/\n", nil},
		{"4:memory:/docker/abc\n0::/\n", []int64{4 << 30}},
		{"4:cpu,memory:/docker/abc\n0::/job/step\n", []int64{4 << 30, 8 << 30}},
		{"3:cpu:/docker/abc\ngarbage\n", nil},
	} {
		writeFile(t, self, []byte(c.text))
		got := cgroupLimits(self, root)
		if fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("%q: %v, want %v", c.text, got, c.want)
		}
	}
	if cgroupLimits(filepath.Join(root, "none"), root) != nil {
		t.Error("limits without a cgroup file")
	}
	if runtime.GOOS == "linux" && memoryLimit() <= 0 {
		t.Error("no memory limit found on Linux")
	}
}

func TestSoftMemoryLimit(t *testing.T) {
	for _, c := range []struct {
		limit int64
		env   string
		want  int64
	}{
		{10 << 30, "", 9 << 30},
		{10 << 30, "4GiB", 0}, // the user's GOMEMLIMIT stands
		{0, "", 0},            // unknown: leave the runtime alone
	} {
		if got := softMemoryLimit(c.limit, c.env); got != c.want {
			t.Errorf("softMemoryLimit(%d, %q) = %d, want %d", c.limit, c.env, got, c.want)
		}
	}
}

// readsInput is a FASTQ file of n reads of 100 bp from a random 20 kbp genome, seeded.
func readsInput(seed uint64, n int) []byte {
	rng := rand.New(rand.NewPCG(seed, 2))
	g := make([]byte, 20000)
	for i := range g {
		g[i] = "ACGT"[rng.IntN(4)]
	}
	var b []byte
	for i := 0; i < n; i++ {
		p := rng.IntN(len(g) - 100)
		s := bytes.Clone(g[p : p+100])
		s[rng.IntN(100)] = "ACGTN"[rng.IntN(5)]
		b = fmt.Appendf(b, "@read.%d\n%s\n+\n%s\n", i, s, strings.Repeat("F", 100))
	}
	return b
}

// TestCompressReadSet: a FASTQ file is coded as a read set (version 5, -v says so) unless
// --no-reads or -F, and decompresses to itself either way.
func TestCompressReadSet(t *testing.T) {
	fq := readsInput(5, 3000)
	var sizes []int
	for _, args := range [][]string{{"-v"}, {"-v", "-b", "64k"}, {"--no-reads"}, {"-F"}} {
		z, stderr, st := runSapipe(t, fq, append([]string{"compress", "--device", "cpu"}, args...)...)
		if st != 0 {
			t.Fatalf("%v: status %d: %s", args, st, stderr)
		}
		readSet := args[0] == "-v"
		if got := len(z) > 4 && z[4] == 5; got != readSet {
			t.Errorf("%v: version %d", args, z[4])
		}
		if readSet != strings.Contains(string(stderr), "coded as read sets: structure") {
			t.Errorf("%v: -v says %q", args, stderr)
		}
		out, stderr, st := runSapipe(t, z, "decompress", "-c")
		if st != 0 || !bytes.Equal(out, fq) {
			t.Fatalf("%v: decompress status %d: %s", args, st, stderr)
		}
		sizes = append(sizes, len(z))
	}
	if sizes[0]*2 > sizes[2] {
		t.Errorf("a read set coded in %d bytes, as bytes in %d", sizes[0], sizes[2])
	}
}

func TestReadsBlockSize(t *testing.T) {
	for _, c := range []struct {
		memory    int64
		blockSize int
		want      int
	}{{0, 128 << 20, 1 << 30}, {16 << 30, 128 << 20, 1 << 30}, {2 << 30, 128 << 20, (2 << 30) / 7 >> 20 << 20}, {100 << 20, 128 << 20, 128 << 20}} {
		if got := readsBlockSize(c.memory, c.blockSize); got != c.want {
			t.Errorf("readsBlockSize(%d, %d) = %d, want %d", c.memory, c.blockSize, got, c.want)
		}
	}
}
