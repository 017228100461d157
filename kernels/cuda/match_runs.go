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

// runLists are the pages' runs of one symbol on the device, for run ranges and start states
// moved on through runs: for each page, found on the device (rl_mark, rl_list) the first time a
// launch visits it, and kept while the matcher lives (24 bytes a run at least the minimum length
// long, of the symbols that have a run of runFrom: the gaps of N of an assembly, a few thousand).
type runLists struct {
	mu    sync.Mutex
	made  []bool
	bufs  []devBuf // runOff (257 words, to runOffBytes), runs, runsPos
	lists []int    // how many runs bufs[i] holds
}

// runOffBytes is where a page's runs start in its buffer, after runOff.
const runOffBytes = 1040

// maxPageRuns bounds a page's list: a minimum length of a few symbols lists runs by the million,
// and the page then goes without (the searches climb as before: slower in a long run, the same
// matches).
const maxPageRuns = 1 << 22

// runEnd is match.cuh's MT_RUN_END.
const runEnd = 0x100

// orderRuns makes a page's lists (match.cuh, MT_RUN_RANGE) of the runs found, each (window
// position, length, next code or MT_RUN_END, code): off[x] to off[x+1] are symbol x's, in runs as
// (window position, length, next code, 0) by length then next code, and in byPos as (window
// position, length) by position. It returns nils where there are none.
func orderRuns(found [][4]uint32) (off []uint32, runs [][4]uint32, byPos [][2]uint32) {
	if len(found) == 0 {
		return nil, nil, nil
	}
	slices.SortFunc(found, func(a, b [4]uint32) int {
		return cmp.Or(cmp.Compare(a[3], b[3]), cmp.Compare(a[1], b[1]), cmp.Compare(a[2], b[2]), cmp.Compare(a[0], b[0]))
	})
	off = make([]uint32, 257)
	runs = make([][4]uint32, len(found))
	byPos = make([][2]uint32, len(found))
	for i, r := range found {
		runs[i] = [4]uint32{r[0], r[1], r[2], 0}
		byPos[i] = [2]uint32{r[0], r[1]}
		off[r[3]+1] = uint32(i + 1)
	}
	for x := 1; x <= 256; x++ {
		off[x] = max(off[x], off[x-1])
	}
	for x := range 256 {
		slices.SortFunc(byPos[off[x]:off[x+1]], func(a, b [2]uint32) int { return cmp.Compare(a[0], b[0]) })
	}
	return off, runs, byPos
}

// pageLists are the device addresses of a page's lists of runs (match.cuh); all 0 where it has
// none.
type pageLists struct{ runs, runsPos, runOff devPtr }

// pageRuns returns page i's lists (desc is its descriptor), finding them on w's stream the first
// time.
func (m *gpuMatcher) pageRuns(w *worker, i int, desc *pageDev) (pageLists, error) {
	r := &m.runs
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.made == nil {
		r.made, r.bufs, r.lists = make([]bool, m.npages), make([]devBuf, m.npages), make([]int, m.npages)
	}
	if !r.made[i] {
		found, err := w.findRuns(desc, m.opts.MinLen, runFrom)
		if err != nil {
			return pageLists{}, err
		}
		if o, rs, byPos := orderRuns(found); rs != nil {
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
		r.made[i] = true
	}
	n := r.lists[i]
	if n == 0 {
		return pageLists{}, nil
	}
	p := r.bufs[i].p
	return pageLists{runs: p + runOffBytes, runsPos: p + runOffBytes + devPtr(16*n), runOff: p}, nil
}

// findRuns lists the runs at least minLen long of the symbols with a run of from in the window
// of page desc, on the device (a host pass over a page of an index file read 1.5 GB of it): as
// orderRuns takes them. None with from 0, nor where there are over maxPageRuns.
func (w *worker) findRuns(desc *pageDev, minLen, from int) ([][4]uint32, error) {
	m := w.m
	n := int(desc.n)
	if from <= 0 || n == 0 {
		return nil, nil
	}
	minLen = max(minLen, 1)
	text := desc.text + devPtr(desc.start)
	var buf devBuf // the mask (8 words), the count, then the runs from byte 64 on
	defer func() {
		_ = w.s.sync()
		buf.free(m.dev)
	}()
	var count uint32
	list := func(capRuns int) error {
		if err := buf.ensureExact(m.dev, uint64(64+16*capRuns)); err != nil {
			return err
		}
		if err := w.s.memset32(buf.p, 0, 9); err != nil {
			return err
		}
		if err := w.s.launch("rl_mark", m.fn["rl_mark"], ceilDiv(n/from, 256), 256, text, uint32(n), uint32(from), buf.p); err != nil {
			return err
		}
		if err := w.s.launch("rl_list", m.fn["rl_list"], ceilDiv(n/minLen, 256), 256, text, uint32(n), uint32(minLen), buf.p,
			buf.p+64, uint32(capRuns), buf.p+32); err != nil {
			return err
		}
		if err := w.s.toHost(unsafe.Pointer(&count), buf.p+32, 4); err != nil {
			return err
		}
		return w.s.sync()
	}
	const firstCap = 1 << 12
	if err := list(firstCap); err != nil || count == 0 || count > maxPageRuns {
		return nil, err
	}
	if count > firstCap {
		if err := list(int(count)); err != nil {
			return nil, err
		}
	}
	found := make([][4]uint32, count)
	if err := w.s.toHost(unsafe.Pointer(&found[0]), buf.p+64, 16*len(found)); err != nil {
		return nil, err
	}
	return found, w.s.sync()
}

// free releases the lists. Device goroutine only.
func (r *runLists) free(d *device) {
	for i := range r.bufs {
		r.bufs[i].free(d)
	}
}
