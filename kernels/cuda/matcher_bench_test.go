package cuda

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/sapipe/sapipe/kernels"
	"github.com/sapipe/sapipe/kernels/cpu"
)

// Matching alone (no parsing, no printing): simulated 150 bp reads with 0.5% substitutions from
// E. coli, both strands, -maxmatch -l 20 and -mumreference, in batches of 512 Ki bases as stages
// makes them, 16 goroutines calling Match as stages' workers do. MB/s counts query bases (one
// strand); reads/s is reported too. BenchmarkCPUMatcherReads is the same on kernels/cpu.

const benchReads = 400_000

var (
	benchOnce    sync.Once
	benchRef     *kernels.Reference
	benchBatches []*kernels.Batch
)

func benchInput(b *testing.B) (*kernels.Reference, []*kernels.Batch) {
	benchOnce.Do(func() {
		genome, err := loadSeqs(dataFile("ecoli.fa", "ecoli_k12_mg1655.fna.gz"), 0)
		if err != nil || len(genome) == 0 {
			return
		}
		rb := kernels.NewReferenceBuilder(false)
		rb.Add("ecoli", genome[0])
		ref, err := rb.Build()
		if err != nil {
			return
		}
		rng := rand.New(rand.NewPCG(23, 24))
		var seqs [][]byte
		for range benchReads {
			k := rng.IntN(len(genome[0]) - 150)
			seqs = append(seqs, mutateSeq(rng, genome[0][k:k+150], 0.005))
		}
		per := (1 << 19) / 150
		for i := 0; i < len(seqs); i += per {
			benchBatches = append(benchBatches, queryBatch(seqs[i:min(i+per, len(seqs))], &ref.Alpha, true, false, 1<<30))
		}
		benchRef = ref
	})
	if benchRef == nil {
		b.Skip("no E. coli genome among the test data")
	}
	return benchRef, benchBatches
}

// matchAll runs every batch through m from 16 goroutines.
func matchAll(b *testing.B, m kernels.Matcher, batches []*kernels.Batch) int {
	var wg sync.WaitGroup
	var mu sync.Mutex
	total := 0
	next := make(chan *kernels.Batch)
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var res kernels.Result
			for bt := range next {
				res.Reset()
				if err := m.Match(bt, &res); err != nil {
					b.Error(err)
				}
				mu.Lock()
				total += len(res.Matches)
				mu.Unlock()
			}
		}()
	}
	for _, bt := range batches {
		next <- bt
	}
	close(next)
	wg.Wait()
	return total
}

func benchMatcher(b *testing.B, newM func(ref *kernels.Reference, opts kernels.MatchOptions) (kernels.Matcher, error)) {
	ref, batches := benchInput(b)
	for _, mode := range []kernels.Mode{kernels.MaxMatch, kernels.MumReference} {
		b.Run(mode.String()[1:], func(b *testing.B) {
			t0 := time.Now()
			m, err := newM(ref, kernels.MatchOptions{Mode: mode, MinLen: 20})
			if err != nil {
				b.Fatal(err)
			}
			defer m.Close()
			b.ReportMetric(time.Since(t0).Seconds(), "index-s")
			matchAll(b, m, batches[:1]) // warm up
			b.SetBytes(150 * benchReads)
			b.ResetTimer()
			matches := 0
			for range b.N {
				matches = matchAll(b, m, batches)
			}
			b.StopTimer()
			b.ReportMetric(float64(benchReads)*float64(b.N)/b.Elapsed().Seconds(), "reads/s")
			b.ReportMetric(float64(matches), "matches")
			if g, ok := m.(*gpuMatcher); ok {
				b.Log(g.Stats())
			}
		})
	}
}

func BenchmarkGPUMatcherReads(b *testing.B) {
	g := gpuBackend(b)
	benchMatcher(b, func(ref *kernels.Reference, opts kernels.MatchOptions) (kernels.Matcher, error) {
		return newMatcher(g, ref, opts, matchConfig{}, nil)
	})
}

func BenchmarkCPUMatcherReads(b *testing.B) {
	benchMatcher(b, func(ref *kernels.Reference, opts kernels.MatchOptions) (kernels.Matcher, error) {
		return cpu.NewMatcher(ref, opts, runtime.NumCPU())
	})
}

// BenchmarkGPUMatcherLaunch: the device time of one launch's stages (profiled) for 1..16 batches
// of reads gathered into one launch.
func BenchmarkGPUMatcherLaunch(b *testing.B) {
	g := gpuBackend(b)
	ref, batches := benchInput(b)
	for _, k := range []int{1, 4, 16} {
		b.Run(fmt.Sprint(k, "batches"), func(b *testing.B) {
			m, err := newMatcher(g, ref, kernels.MatchOptions{Mode: kernels.MaxMatch, MinLen: 20}, matchConfig{Workers: 1, Profile: true}, nil)
			if err != nil {
				b.Fatal(err)
			}
			defer m.Close()
			one := &kernels.Batch{}
			for _, bt := range batches[:k] {
				off := len(one.Codes)
				one.Codes = append(one.Codes, bt.Codes...)
				for _, sg := range bt.Segs {
					sg.Off += off
					one.Segs = append(one.Segs, sg)
				}
			}
			var res kernels.Result
			b.SetBytes(int64(len(one.Codes) / 2))
			b.ResetTimer()
			for range b.N {
				res.Reset()
				if err := m.Match(one, &res); err != nil {
					b.Fatal(err)
				}
			}
			b.Log(m.Stats())
		})
	}
}

// BenchmarkUnpack: a launch's records turned into each request's matches, into fresh results, as
// the requests' goroutines do it (unpack hands them out, each request's finish converts its
// own, one request after another here): 456 records a read of 150 positions, as -maxmatch -l 30
// gives against the 3.1 Gbp genscale genome, and 1.25, as -maxmatch -l 20 gives against E. coli
// (2-core VM, the first before the requests unpacked their own: 40-75 ns a record appended one by
// one, 3-32 ns with each result grown once first; the spread is the fresh memory's page faults).
func BenchmarkUnpack(b *testing.B) {
	for _, perFour := range []int{4 * 456, 5} {
		b.Run(fmt.Sprintf("%.2f records a read", float64(perFour)/4), func(b *testing.B) {
			const reads, readLen = 14000, 150
			w := worker{m: &gpuMatcher{quit: make(chan struct{})}}
			var batch []*request
			var recs []outRec
			slot := uint32(0)
			for r := 0; r < 2; r++ {
				bt := &kernels.Batch{}
				for i := 0; i < reads/2; i++ {
					bt.Segs = append(bt.Segs, kernels.Segment{Len: readLen, From: 0, To: readLen})
					w.segSlot = append(w.segSlot, slot)
					n := perFour / 4
					if i%4 < perFour%4 {
						n++
					}
					for j := 0; j < n; j++ {
						recs = append(recs, outRec{ref: uint32(j * 1000), len: 30, slot: slot + uint32(j*readLen/n)})
					}
					slot += readLen
				}
				batch = append(batch, &request{b: bt})
			}
			b.SetBytes(int64(len(recs)) * 16)
			b.ResetTimer()
			for range b.N {
				for _, r := range batch {
					r.res = &kernels.Result{}
				}
				w.unpack(batch, recs)
				for _, r := range batch {
					r.finish()
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(recs)), "ns/record")
		})
	}
}

// BenchmarkPack: a launch of 32 Mi positions (eight requests of 2 Mi bases of 150-base reads, both
// strands) packed for the device: the codes copied, the segments cut into pieces. Host memory
// stands in for the pinned buffers.
func BenchmarkPack(b *testing.B) {
	const reads, readLen = 1 << 21 / 150, 150
	w := &worker{m: &gpuMatcher{dev: &device{info: Info{SMs: 132}}, cfg: matchConfig{PieceLen: 1024}}, spans: map[*byte]*codeSpan{}}
	var batch []*request
	positions := 0
	for range 8 {
		bt := &kernels.Batch{Codes: make([]byte, 2*reads*readLen)}
		for i := range bt.Codes {
			bt.Codes[i] = byte(kernels.FirstCode + i%4)
		}
		for i := 0; i < 2*reads; i++ {
			bt.Segs = append(bt.Segs, kernels.Segment{Off: i * readLen, Len: readLen, From: 0, To: readLen})
		}
		positions += 2 * reads * readLen
		batch = append(batch, &request{b: bt})
	}
	pieces := 2 * len(batch) * reads
	b.SetBytes(int64(positions))
	b.ResetTimer()
	for range b.N {
		nPieces, nSlots, err := w.pack(batch)
		if err != nil || nSlots != positions || nPieces != pieces {
			b.Fatalf("%d pieces, %d slots, %v", nPieces, nSlots, err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(pieces/2), "ns/read")
}
