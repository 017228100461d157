package stages

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"testing"
)

// TestFileWriter writes batches of random lengths into a file at offsets on several goroutines,
// after some text already there, with the mapped windows (Linux) from various offsets and of a
// page to a few, and checks the file's bytes, its length and its offset after close.
func TestFileWriter(t *testing.T) {
	page := int64(os.Getpagesize())
	defer func(from, window int64) { mappedOutputFrom, mappedOutputWindow = from, window }(mappedOutputFrom, mappedOutputWindow)
	rng := rand.New(rand.NewPCG(8, 1))
	for _, c := range []struct{ from, window int64 }{
		{64 << 20, 256 << 20}, {0, page}, {100, 3 * page}, {5 * page, 2 * page}, {0, 64 * page},
	} {
		mappedOutputFrom, mappedOutputWindow = c.from, c.window
		for k, head := range []string{"", "head\n", ""} {
			path := filepath.Join(t.TempDir(), "out")
			flags := os.O_RDWR | os.O_CREATE | os.O_TRUNC
			if k == 2 { // as a shell opens stdout's file: opened again for mapping
				flags = os.O_WRONLY | os.O_CREATE | os.O_TRUNC
			}
			f, err := os.OpenFile(path, flags, 0o644)
			if err != nil {
				t.Fatal(err)
			}
			f.WriteString(head)
			fw := newFileWriter(f, 3)
			if fw == nil {
				t.Fatal("no file writer for a regular file")
			}
			if runtime.GOOS == "linux" && localFS(f) && fw.mapw == nil {
				t.Fatalf("flags %#x: no mapped windows", flags)
			}
			var want bytes.Buffer
			var done atomic.Int64
			n := 200
			for i := range n {
				l := rng.IntN(int(3 * page))
				if i%7 == 0 {
					l = rng.IntN(20)
				}
				text := make([]byte, l)
				for k := range text {
					text[k] = byte('a' + rng.IntN(26))
				}
				want.Write(text)
				if err := fw.write(text, func() { done.Add(1) }); err != nil {
					t.Fatal(err)
				}
			}
			if err := fw.close(); err != nil {
				t.Fatal(err)
			}
			if done.Load() != int64(n) {
				t.Errorf("from %d window %d: %d batches done, want %d", c.from, c.window, done.Load(), n)
			}
			f.WriteString("tail\n")
			f.Close()
			got, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if w := head + want.String() + "tail\n"; string(got) != w {
				t.Errorf("from %d window %d head %q: %d bytes, want %d (same: %v)", c.from, c.window, head, len(got), len(w), bytes.Equal(got[:min(len(got), len(w))], []byte(w)[:min(len(got), len(w))]))
			}
		}
	}
}

// BenchmarkFileWriter writes 1 GiB in batches of 2 MiB into a new file in SAPIPE_BENCH_DIR (or
// the temporary directory) on four writers: through mapped windows past the first 64 MiB (Linux),
// and by pwrite alone.
func BenchmarkFileWriter(b *testing.B) {
	defer func(from int64) { mappedOutputFrom = from }(mappedOutputFrom)
	dir := os.Getenv("SAPIPE_BENCH_DIR")
	if dir == "" {
		dir = b.TempDir()
	}
	text := bytes.Repeat([]byte("pattern\t1234567\t+\n"), 2<<20/18)
	const total = 1 << 30
	for _, c := range []struct {
		name string
		from int64
	}{{"mapped", mappedOutputFrom}, {"pwrite", 1 << 62}} {
		b.Run(c.name, func(b *testing.B) {
			mappedOutputFrom = c.from
			b.SetBytes(total)
			for b.Loop() {
				f, err := os.CreateTemp(dir, "bench*")
				if err != nil {
					b.Fatal(err)
				}
				fw := newFileWriter(f, 4)
				for n := 0; n < total; n += len(text) {
					if err := fw.write(text, func() {}); err != nil {
						b.Fatal(err)
					}
				}
				if err := fw.close(); err != nil {
					b.Fatal(err)
				}
				f.Close()
				os.Remove(f.Name())
			}
		})
	}
}
