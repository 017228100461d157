package cuda

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/sapipe/sapipe/kernels"
	"github.com/sapipe/sapipe/kernels/cpu"
	"github.com/sapipe/sapipe/stages"
)

// BenchmarkGPUMummerEndToEnd is `sapipe mummer -maxmatch -l 20 -b -c` through stages with the GPU
// matcher: reference file to index, query file (SAPIPE_BENCH_READS, default the test data's reads)
// to output file, with the time of each phase, for profiling the whole pipeline
// (-test.cpuprofile) on the GPU machine. MB/s counts bytes of the query file.
func BenchmarkGPUMummerEndToEnd(b *testing.B) {
	g := gpuBackend(b)
	refPath := dataFile("ecoli.fa")
	reads := os.Getenv("SAPIPE_BENCH_READS")
	if reads == "" {
		reads = dataFile("reads_1M.fq", "reads_200k.fq", "reads_20k.fq")
	}
	if _, err := os.Stat(reads); err != nil {
		b.Skipf("no reads: %v", err)
	}
	out := filepath.Join(b.TempDir(), "out.mums")
	opts := stages.MummerOptions{Mode: kernels.MaxMatch, MinLen: 20, Strands: stages.Strands{Forward: true, Reverse: true},
		ReversePositions: true, Threads: runtime.NumCPU(), BatchSize: 1 << 19}
	if ref, err := stages.LoadReference(refPath, false, nil); err == nil {
		sa := make([]int32, len(ref.Text))
		t0 := time.Now()
		cpu.SuffixArray(ref.Text, sa)
		t1 := time.Now()
		_ = g.SuffixArray(ref.Text, sa)
		t2 := time.Now()
		_ = g.SuffixArray(ref.Text, sa)
		b.Logf("reference suffix array: CPU %v, GPU %v (first), %v (second)", t1.Sub(t0), t2.Sub(t1), time.Since(t2))
	}
	var size int64
	for range b.N {
		t0 := time.Now()
		ref, err := stages.LoadReference(refPath, false, nil)
		if err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		m, err := newMatcher(g, ref, kernels.MatchOptions{Mode: opts.Mode, MinLen: opts.MinLen}, matchConfig{}, nil)
		if err != nil {
			b.Fatal(err)
		}
		t2 := time.Now()
		f, err := os.Create(out)
		if err != nil {
			b.Fatal(err)
		}
		if err := stages.Mummer(context.Background(), opts, ref, m, []string{reads}, nil, f); err != nil {
			b.Fatal(err)
		}
		if err := f.Close(); err != nil {
			b.Fatal(err)
		}
		t3 := time.Now()
		m.Close()
		st, _ := os.Stat(out)
		b.Logf("reference %v, index %v, match and print %v (%d MB out); %s", t1.Sub(t0), t2.Sub(t1), t3.Sub(t2), st.Size()>>20, m.Stats())
		if fi, err := os.Stat(reads); err == nil {
			size = fi.Size()
		}
	}
	b.SetBytes(size)
}
