package cuda

import (
	"cmp"
	"slices"
	"sync"
	"unsafe"

	"github.com/sapipe/sapipe/kernels/cpu"
)

// runFrom is the depth from which mm_chain takes a -maxmatch position's matches inside a run of
// one symbol from the page's runs (match.cuh, MT_RUN_RANGE): cpu.RunEmitDepth, lowered by tests;
// 0 turns run ranges off.
var runFrom = cpu.RunEmitDepth

// runJumpFrom is the depth from which a start state inside a run is moved on by the page's runs
// (match.cuh's pg_run_jump): runFrom, or the minimum length where that is more (the lists hold
// the runs at least that long); 0 with run ranges off.
func runJumpFrom(minLen int) int {
	if runFrom <= 0 {
		return 0
	}
	return max(runFrom, minLen)
}

// runLists are the pages' runs of one symbol on the device, for run ranges: for each page, made
// from the host's text the first time a -maxmatch launch visits it, and kept while the matcher
// lives (16 bytes a run at least the minimum length long, of the symbols that have a run of
// runFrom: the gaps of N of an assembly, a few thousand).
type runLists struct {
	mu    sync.Mutex
	made  []bool
	bufs  []devBuf // runOff (257 words, to runOffBytes), runs, runsPos
	lists []int    // how many runs bufs[i] holds
}

// runOffBytes is where a page's runs start in its buffer, after runOff.
const runOffBytes = 1040

// hostRuns makes the lists of runs for the window w of a page (match.cuh, MT_RUN_RANGE): off[x]
// to off[x+1] are the runs of symbol x, those at least minLen long of the symbols with a run of
// from, in runs as (window position, length, next code or MT_RUN_END, 0) by length then next
// code, and in byPos as (window position, length) by position. It returns nils where there are
// none.
func hostRuns(w []byte, minLen, from, threads int) (off []uint32, runs [][4]uint32, byPos [][2]uint32) {
	if from <= 0 {
		return nil, nil, nil
	}
	syms := cpu.RunSymbols(w, from, threads)
	if len(syms) == 0 {
		return nil, nil, nil
	}
	off = make([]uint32, 257)
	for x := range 256 {
		off[x] = uint32(len(runs))
		if !slices.Contains(syms, byte(x)) {
			continue
		}
		at := len(runs)
		for _, r := range cpu.ListRuns(w, byte(x), minLen, threads) {
			next := uint32(runEnd)
			if e := r.S + r.N; e < len(w) {
				next = uint32(w[e])
			}
			runs = append(runs, [4]uint32{uint32(r.S), uint32(r.N), next, 0})
			byPos = append(byPos, [2]uint32{uint32(r.S), uint32(r.N)})
		}
		slices.SortFunc(runs[at:], func(a, b [4]uint32) int {
			if c := cmp.Compare(a[1], b[1]); c != 0 {
				return c
			}
			return cmp.Compare(a[2], b[2])
		})
	}
	off[256] = uint32(len(runs))
	if len(runs) == 0 {
		return nil, nil, nil
	}
	return off, runs, byPos
}

// runEnd is match.cuh's MT_RUN_END.
const runEnd = 0x100

// pageLists are the device addresses of a page's lists of runs (match.cuh); all 0 where it has
// none.
type pageLists struct{ runs, runsPos, runOff devPtr }

// pageRuns returns page i's lists (desc is its descriptor), making them on w's stream the first
// time.
func (m *gpuMatcher) pageRuns(w *worker, i int, desc *pageDev) (pageLists, error) {
	r := &m.runs
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.made == nil {
		r.made, r.bufs, r.lists = make([]bool, m.npages), make([]devBuf, m.npages), make([]int, m.npages)
	}
	if !r.made[i] {
		start, end := int(desc.start), int(desc.start)+int(desc.n)
		if end <= len(m.ref.Text) {
			o, rs, byPos := hostRuns(m.ref.Text[start:end], m.opts.MinLen, runFrom, m.threads)
			if rs != nil {
				b := &r.bufs[i]
				if err := b.ensureExact(m.dev, uint64(runOffBytes+24*len(rs))); err != nil {
					return pageLists{}, err
				}
				for _, cp := range []struct {
					at  devPtr
					src unsafe.Pointer
					n   int
				}{{0, unsafe.Pointer(&o[0]), 4 * len(o)}, {runOffBytes, unsafe.Pointer(&rs[0]), 16 * len(rs)},
					{devPtr(runOffBytes + 16*len(rs)), unsafe.Pointer(&byPos[0]), 8 * len(byPos)}} {
					if err := w.s.toDevice(b.p+cp.at, cp.src, cp.n); err != nil {
						return pageLists{}, err
					}
				}
				// The copies read Go memory: done before it goes.
				if err := w.s.sync(); err != nil {
					return pageLists{}, err
				}
				r.lists[i] = len(rs)
			}
		}
		r.made[i] = true
	}
	n := r.lists[i]
	if n == 0 {
		return pageLists{}, nil
	}
	p := r.bufs[i].p
	return pageLists{runs: p + runOffBytes, runsPos: p + runOffBytes + devPtr(16*n), runOff: p}, nil
}

// free releases the lists. Device goroutine only.
func (r *runLists) free(d *device) {
	for i := range r.bufs {
		r.bufs[i].free(d)
	}
}
