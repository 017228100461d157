package cuda

import (
	"bytes"
	"cmp"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/ulikunitz/xz"

	"github.com/sapipe/sapipe/formats"
)

// Benchmark inputs: those of the libcubwt bar in issue 3. On the GPU machine they come from
// $SAPIPE_GPU_DATA (gpu-pack.sh's data folder); here from ../shared/data and bench-data/.

var benchInputs = []string{"ecoli", "genomes4", "acgt100M", "linux100M"}

func dataDirs() []string {
	var dirs []string
	if d := os.Getenv("SAPIPE_GPU_DATA"); d != "" {
		dirs = append(dirs, d)
	}
	return append(dirs, "../../../shared/data", "../../bench-data/debian")
}

func findData(name string) (string, bool) {
	for _, d := range dataDirs() {
		p := filepath.Join(d, name)
		if _, err := os.Stat(p); err == nil {
			return p, true
		}
	}
	return "", false
}

// fastaSeq returns the sequences of the FASTA file name, concatenated without headers or newlines.
func fastaSeq(name string) ([]byte, error) {
	p, ok := findData(name)
	if !ok {
		return nil, os.ErrNotExist
	}
	r, err := formats.Open(p)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	var seq []byte
	for {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			return seq, nil
		}
		if err != nil {
			return nil, err
		}
		seq = append(seq, rec.Seq...)
	}
}

var (
	benchMu    sync.Mutex
	benchCache = map[string][]byte{}
)

// benchText loads input name once, or skips the benchmark when its data is not here.
func benchText(tb testing.TB, name string) []byte {
	benchMu.Lock()
	defer benchMu.Unlock()
	if t, ok := benchCache[name]; ok {
		return t
	}
	var text []byte
	var err error
	switch name {
	case "ecoli":
		text, err = fastaSeq("ecoli_k12_mg1655.fna.gz")
	case "genomes4":
		for _, f := range []string{"ecoli_k12_mg1655.fna.gz", "at1pct.fa.gz", "ce1pct.fa.gz", "dm1pct.fa.gz"} {
			var s []byte
			if s, err = fastaSeq(f); err != nil {
				break
			}
			text = append(text, s...)
		}
	case "acgt100M":
		text = randomDNA(rand.New(rand.NewPCG(100, 1)), 100_000_000)
	case "linux100M":
		if p, ok := findData("linux-6.1-100M.tar"); ok {
			text, err = os.ReadFile(p)
		} else if p, ok := findData("linux-6.1-100M.tar.xz"); ok {
			var f *os.File
			if f, err = os.Open(p); err == nil {
				defer f.Close()
				var zr *xz.Reader
				if zr, err = xz.NewReader(f); err == nil {
					var buf bytes.Buffer
					_, err = buf.ReadFrom(zr)
					text = buf.Bytes()
				}
			}
		} else {
			err = os.ErrNotExist
		}
	}
	if err != nil {
		tb.Skipf("%s: %v", name, err)
	}
	benchCache[name] = text
	return text
}

func BenchmarkGPUSuffixArray(b *testing.B) {
	g := gpuBackend(b)
	for _, name := range benchInputs {
		b.Run(name, func(b *testing.B) {
			text := benchText(b, name)
			sa := make([]int32, len(text))
			if err := g.SuffixArray(text, sa); err != nil { // device memory and kernels warm
				b.Fatal(err)
			}
			b.SetBytes(int64(len(text)))
			b.ResetTimer()
			for b.Loop() {
				if err := g.SuffixArray(text, sa); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkGPUBWT(b *testing.B) {
	g := gpuBackend(b)
	for _, name := range benchInputs {
		b.Run(name, func(b *testing.B) {
			text := benchText(b, name)
			dst := [][]byte{make([]byte, len(text))}
			p := []int{0}
			src := [][]byte{text}
			if err := g.BWT(src, dst, p); err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(text)))
			b.ResetTimer()
			for b.Loop() {
				if err := g.BWT(src, dst, p); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestGPUProfile prints where the time of each benchmark input goes, phase by phase and kernel
// by kernel, the copy rates, and the times of the tuning choices; with SAPIPE_GPU_PROFILE=1 only
// (for kernels/cuda/NOTES.md).
func TestGPUProfile(t *testing.T) {
	if os.Getenv("SAPIPE_GPU_PROFILE") != "1" {
		t.Skip("SAPIPE_GPU_PROFILE=1 to run")
	}
	g := gpuBackend(t)
	host := make([]byte, 400<<20)
	for i := range host {
		host[i] = byte(i)
	}
	err := g.dev.run(func() error {
		if err := g.dev.pool.reserve(g.dev, 400<<20); err != nil {
			return err
		}
		type copyVariant struct {
			name             string
			staged, register bool
			chunk, threads   int
		}
		for _, v := range []copyVariant{
			{"pageable", false, false, 0, 0},
			{"staged 8M x8", true, false, 8 << 20, 8},
			{"staged 8M x16", true, false, 8 << 20, 16},
			{"staged 16M x8", true, false, 16 << 20, 8},
			{"staged 4M x8", true, false, 4 << 20, 8},
			{"registered", true, true, 0, 0},
		} {
			useStaging, registerCopies = v.staged, v.register
			if v.chunk != 0 {
				stageMaxChunk, copyThreads = v.chunk, v.threads
			}
			for _, n := range []int{4 << 20, 100 << 20, 400 << 20} {
				best := [2]time.Duration{time.Hour, time.Hour}
				for range 3 {
					t0 := time.Now()
					if err := g.dev.send(g.dev.pool.base, host[:n]); err != nil {
						return err
					}
					if err := g.dev.sync(); err != nil {
						return err
					}
					t1 := time.Now()
					if err := g.dev.receive(host[:n], g.dev.pool.base); err != nil {
						return err
					}
					t2 := time.Now()
					best[0], best[1] = min(best[0], t1.Sub(t0)), min(best[1], t2.Sub(t1))
				}
				t.Logf("copy of %3d MiB (%-14s): to GPU %9v (%4.1f GB/s), to host %9v (%4.1f GB/s)", n>>20, v.name,
					best[0], float64(n)/best[0].Seconds()/1e9, best[1], float64(n)/best[1].Seconds()/1e9)
			}
		}
		useStaging, registerCopies, stageMaxChunk, copyThreads = true, false, 16<<20, 8
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	dump := os.Getenv("SAPIPE_DUMP_INPUTS") // a folder to write the inputs to, for peer tools
	inputs := map[string][]byte{}
	for _, name := range append(benchInputs, "A-2e7") {
		var text []byte
		if name == "A-2e7" {
			text = repeated('A', 20_000_000)
		} else {
			text = benchText(t, name)
			if dump != "" {
				if err := os.WriteFile(filepath.Join(dump, name), text, 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
		inputs[name] = text
		sa := make([]int32, len(text))
		g.SuffixArray(text, sa)
		st := saStats{Profile: true}
		prof := &kernelProfile{Time: map[string]float64{}, Count: map[string]int{}}
		t0 := time.Now()
		err := g.dev.run(func() error {
			g.dev.prof = prof
			defer func() { g.dev.prof = nil }()
			_, err := g.dev.suffixArray(text, sa, nil, nil, 0, &st, nil)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %d bytes, %d-bit codes, first key %d codes, %d rounds, %d active after the first sort, %v in all (profiled)",
			name, len(text), st.Bits, st.Chars, st.Rounds, st.MaxActive, time.Since(t0))
		for _, p := range st.Phases {
			t.Logf("  %-60s %10d %9.3f ms", p.Name, p.Active, p.Time.Seconds()*1e3)
		}
		names := make([]string, 0, len(prof.Time))
		total := 0.0
		for k, v := range prof.Time {
			names = append(names, k)
			total += v
		}
		slices.SortFunc(names, func(a, b string) int { return cmp.Compare(prof.Time[b], prof.Time[a]) })
		t.Logf("  kernels: %.3f ms in all", total)
		for _, k := range names {
			t.Logf("    %-24s %5d launches %9.3f ms", k, prof.Count[k], prof.Time[k])
		}
	}
	// Tuning choices, BWT time best of 3.
	defer saveTuning()()
	for _, name := range []string{"ecoli", "genomes4", "acgt100M", "linux100M"} {
		text := inputs[name]
		if text == nil {
			continue
		}
		dst := [][]byte{make([]byte, len(text))}
		type variant struct {
			sort    sortVariant
			small   smallVariant
			part    int
			items32 int
			max32   int
		}
		def := variant{sortVariant{true, 8}, smallVariant{8, 6}, 1 << 24, 12, 1 << 28}
		vs := []variant{def, {def.sort, def.small, def.part, 8, def.max32}, {def.sort, def.small, def.part, 16, def.max32},
			{def.sort, def.small, def.part, def.items32, 0}, {sortVariant{false, 8}, def.small, def.part, def.items32, def.max32}}
		for _, v := range vs {
			v.sort.set()
			v.small.set()
			partitionMin, onesweepItems32, short32Max = v.part, v.items32, v.max32
			best := time.Hour
			for range 3 {
				t0 := time.Now()
				if err := g.BWT([][]byte{text}, dst, []int{0}); err != nil {
					t.Fatal(err)
				}
				best = min(best, time.Since(t0))
			}
			t.Logf("variant %-10s %-12v %-12v partition from %-9d 32-bit keys up to %-9d (items %2d): BWT %8.3f ms",
				name, v.sort, v.small, v.part, v.max32, v.items32, best.Seconds()*1e3)
		}
	}
}
