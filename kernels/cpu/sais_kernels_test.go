package cpu

import (
	"encoding/binary"
	"fmt"
	"math/rand"
	"slices"
	"testing"
	"unsafe"
)

// kernelTexts returns a byte text and an int32 text of n symbols, with runs of equal symbols.
func kernelTexts(rng *rand.Rand, n int) ([]byte, []int32) {
	b := make([]byte, n)
	w := make([]int32, n)
	for i := range n {
		if i > 0 && rng.Intn(3) == 0 {
			b[i], w[i] = b[i-1], w[i-1]
			continue
		}
		b[i] = byte(rng.Intn(256))
		w[i] = int32(rng.Intn(1 << 20))
	}
	return b, w
}

// The stage 1 scans of wide entries (texts of 2^30 bytes or more), as kinds of scan for the tests.
const (
	scanLWide = 10 + iota
	scanRWide
)

// kernelEntries returns n entries of the kind of scan: positions below len with the flags that
// kind of scan meets, zeros among them.
func kernelEntries(rng *rand.Rand, n, length int, kind int) []int32 {
	e := make([]int32, n)
	for i := range e {
		p := int32(rng.Intn(length))
		if rng.Intn(10) == 0 {
			p = 0
		}
		switch kind {
		case scanL, scanR:
			if rng.Intn(2) == 0 {
				p |= kernPB
			}
			if rng.Intn(4) == 0 {
				p |= saFlag
			}
		case scanLWide, scanRWide:
			if rng.Intn(4) == 0 {
				p |= saFlag
			}
		default:
			if rng.Intn(2) == 0 && p > 0 {
				p |= saFlag
			}
		}
		e[i] = p
	}
	return e
}

// runGather runs a gather kernel (the assembly or the Go definition) on a copy of entries, with
// the side table side (nil: one side) and its chunk multiplier, and returns the records of each
// side as bytes, the group advance and the entries afterwards; a byte text's records are counted
// too, and the counts come last in the records of the last side.
func runGather[T symbol](t []T, entries []int32, kind int, side []byte, chunk uint64, goVersion bool) ([maxSides][]byte, int32, []int32) {
	sa := slices.Clone(entries)
	size := 12
	if kind == scanFL || kind == scanFR {
		size = 8
	}
	var bufs [maxSides][]byte
	a := &scanArgs{t: unsafe.Pointer(unsafe.SliceData(t)), n: len(sa), chunk: chunk}
	if side != nil {
		a.side = &side[0]
	}
	var cnt []int32
	if unsafe.Sizeof(t[0]) == 1 {
		cnt = make([]int32, 4*256)
		for i := range cnt {
			cnt[i] = int32(i % 7) // counts go on from what is there
		}
		a.cnt = unsafe.Pointer(&cnt[0])
	}
	for s := range bufs {
		bufs[s] = make([]byte, size*(len(sa)+1))
		a.wp[s] = unsafe.Pointer(unsafe.SliceData(bufs[s]))
	}
	if len(sa) > 0 {
		a.sa = unsafe.Pointer(&sa[0])
		if kind == scanR || kind == scanFR || kind == scanRWide {
			a.sa = unsafe.Pointer(&sa[len(sa)-1])
		}
	}
	switch {
	case kind == scanLWide && goVersion:
		gatherLWGo[T](a)
	case kind == scanLWide:
		gatherLW[T](a)
	case kind == scanRWide && goVersion:
		gatherRWGo[T](a)
	case kind == scanRWide:
		gatherRW[T](a)
	case kind == scanL && goVersion:
		gatherLGo[T](a)
	case kind == scanL:
		gatherL[T](a)
	case kind == scanR && goVersion:
		gatherRGo[T](a)
	case kind == scanR:
		gatherR[T](a)
	case kind == scanFL && goVersion:
		gatherFLGo[T](a)
	case kind == scanFL:
		gatherFL[T](a)
	case goVersion:
		gatherFRGo[T](a)
	default:
		gatherFR[T](a)
	}
	var out [maxSides][]byte
	for s := range bufs {
		n := uintptr(a.wp[s]) - uintptr(unsafe.Pointer(unsafe.SliceData(bufs[s])))
		out[s] = bufs[s][:n]
	}
	for _, c := range cnt {
		out[maxSides-1] = binary.LittleEndian.AppendUint32(out[maxSides-1], uint32(c))
	}
	return out, a.d, sa
}

// TestGatherKernels compares the gather kernels with their Go definitions on random runs: the byte
// kernels with one side, the int32 ones with side tables of 1 to 16 sides.
func TestGatherKernels(t *testing.T) {
	var a scanArgs // the layout the assembly knows
	if unsafe.Offsetof(a.chunk) != 32 || unsafe.Offsetof(a.side) != 40 || unsafe.Offsetof(a.wp) != 48 || unsafe.Offsetof(a.cnt) != 176 {
		t.Fatal("scanArgs: not the layout of sais_kernels_amd64.s")
	}
	rng := rand.New(rand.NewSource(6))
	tb, tw := kernelTexts(rng, 5000)
	// Side tables for the int32 symbols (below 2^20): one from bucket sizes, and random ones.
	type table struct {
		side  []byte
		chunk uint64
	}
	var tables []table
	for _, sides := range []int{1, 2, 3, 16} {
		start := make([]int32, 1<<20+1)
		for c := range 1 << 20 {
			start[c+1] = start[c] + int32(rng.Intn(5))
		}
		side := make([]byte, maxChunks)
		tables = append(tables, table{side, sideTable(side, start, sides)})
		rnd := make([]byte, maxChunks)
		for x := range rnd {
			rnd[x] = byte(rng.Intn(sides))
		}
		tables = append(tables, table{rnd, 1 << (32 - 8)})
	}
	for _, kind := range []int{scanL, scanR, scanFL, scanFR, scanLWide, scanRWide} {
		for _, n := range []int{0, 1, 2, 63, 64, 65, 127, 128, 200, 1000} {
			for x, tab := range tables {
				entries := kernelEntries(rng, n, len(tb), kind)
				name := fmt.Sprintf("kind %d, %d entries, table %d", kind, n, x)
				check := func(w string, ga, gb [maxSides][]byte, da, db int32, ea, eb []int32) {
					for s := range maxSides {
						if !slices.Equal(ga[s], gb[s]) {
							t.Fatalf("%s, %s: kernel differs from its definition on side %d", name, w, s)
						}
					}
					if da != db || !slices.Equal(ea, eb) {
						t.Fatalf("%s, %s: kernel differs from its definition (group %d, want %d)", name, w, da, db)
					}
				}
				ga, da, ea := runGather(tb, entries, kind, nil, 0, false)
				gb, db, eb := runGather(tb, entries, kind, nil, 0, true)
				check("bytes", ga, gb, da, db, ea, eb)
				if kind == scanLWide || kind == scanRWide {
					continue // bytes only (gatherLW, gatherRW)
				}
				ga, da, ea = runGather(tw, entries, kind, tab.side, tab.chunk, false)
				gb, db, eb = runGather(tw, entries, kind, tab.side, tab.chunk, true)
				check("int32", ga, gb, da, db, ea, eb)
			}
		}
	}
}

// TestSideTable checks that the sides of a level's buckets are ranges of symbols in order, that
// every symbol has one, and that they balance the suffixes to within a chunk's buckets.
func TestSideTable(t *testing.T) {
	rng := rand.New(rand.NewSource(8))
	for _, k := range []int{1, 2, 100, maxChunks, maxChunks + 1, 1 << 16, 3<<20 + 5} {
		for _, sides := range []int{1, 2, 5, 16} {
			start := make([]int32, k+1)
			for c := range k {
				start[c+1] = start[c] + int32(rng.Intn(8))
			}
			side := make([]byte, maxChunks)
			chunk := sideTable(side, start, sides)
			a := scanArgs{side: &side[0], chunk: chunk}
			var count [maxSides]int64
			biggest := int64(0) // the most suffixes in one chunk
			last, lastChunk, inChunk := 0, -1, int64(0)
			for c := range k {
				s := a.sideOf(int32(c))
				if s < last || s >= sides {
					t.Fatalf("k %d, %d sides: symbol %d on side %d after %d", k, sides, c, s, last)
				}
				last = s
				count[s] += int64(start[c+1] - start[c])
				if x := int(uint64(c) * chunk >> 32); x != lastChunk {
					lastChunk, inChunk = x, 0
				}
				inChunk += int64(start[c+1] - start[c])
				biggest = max(biggest, inChunk)
			}
			for s := range sides {
				if over := count[s] - int64(start[k])/int64(sides); over > biggest+1 {
					t.Fatalf("k %d, %d sides: side %d holds %d suffixes of %d", k, sides, s, count[s], start[k])
				}
			}
		}
	}
}

// TestPlaceKernels compares the place kernels with their Go definitions on random records.
func TestPlaceKernels(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	for _, kind := range []int{scanL, scanR, scanFL, scanFR} {
		for _, n := range []int{0, 1, 31, 32, 33, 63, 64, 65, 100, 1000} {
			for _, big := range []int32{0, 1} {
				const buckets = 50
				size := 12
				if kind >= scanFL {
					size = 8
				}
				// Buckets of room 2n each, the pointers in the middle; stage 1 pointers in
				// groups of four (two pointers, two last groups).
				ptr := make([]int32, 4*buckets)
				for c := range buckets {
					if kind < scanFL {
						ptr[4*c], ptr[4*c+1] = int32(2*n*(2*c)+n), int32(2*n*(2*c+1)+n)
						ptr[4*c+2], ptr[4*c+3] = int32(rng.Intn(3)), -1
					} else {
						ptr[c] = int32(2*n*c + n)
					}
				}
				recs := make([]byte, size*n)
				for i := range n {
					var h int32
					if kind < scanFL {
						h = 4*int32(rng.Intn(buckets)) + int32(rng.Intn(2))
					} else {
						h = int32(rng.Intn(buckets))
					}
					w := unsafe.Slice((*int32)(unsafe.Pointer(&recs[size*i])), size/4)
					w[0], w[1] = h, int32(rng.Intn(1<<30))
					if size == 12 {
						w[2] = int32(i / 7)
					}
				}
				run := func(goVersion bool) ([]int32, []int32) {
					sa := make([]int32, 4*n*buckets+1)
					p := slices.Clone(ptr)
					a := &placeArgs{n: n, sa: unsafe.Pointer(&sa[0]), ptr: unsafe.Pointer(&p[0]), d: 5, big: big}
					if n > 0 {
						a.rec = unsafe.Pointer(&recs[0])
					}
					switch {
					case kind == scanL && goVersion:
						placeLGo(a)
					case kind == scanL:
						placeL(a)
					case kind == scanR && goVersion:
						placeRGo(a)
					case kind == scanR:
						placeR(a)
					case kind == scanFL && goVersion:
						placeFLGo(a)
					case kind == scanFL:
						placeFL(a)
					case goVersion:
						placeFRGo(a)
					default:
						placeFR(a)
					}
					return sa, p
				}
				sa1, p1 := run(false)
				sa2, p2 := run(true)
				if !slices.Equal(sa1, sa2) || !slices.Equal(p1, p2) {
					t.Fatalf("kind %d, %d records, big %d: kernel differs from its definition", kind, n, big)
				}
			}
		}
	}
}

// TestTextKernels compares the text pass kernels with their Go definitions, with the vector
// kernels where the processor has them (sais_vector_amd64.go) and without.
func TestTextKernels(t *testing.T) {
	testTextKernels(t)
	if setVector(false) {
		defer setVector(true)
		testTextKernels(t)
	}
}

func testTextKernels(t *testing.T) {
	rng := rand.New(rand.NewSource(8))
	const k = 300
	tb := make([]byte, 3000)
	tw := make([]int32, 3000)
	for i := range tb {
		tb[i], tw[i] = byte(rng.Intn(4)), int32(rng.Intn(k))
		if i > 0 && rng.Intn(4) == 0 {
			tb[i], tw[i] = tb[i-1], tw[i-1]
		}
	}
	// Bytes of all values with long runs (types carried across the vector kernels' blocks).
	runs := make([]byte, len(tb))
	for i := range runs {
		runs[i] = byte(rng.Intn(256))
		if i > 0 && rng.Intn(50) != 0 {
			runs[i] = runs[i-1]
		}
	}
	bytesTexts := [][]byte{tb, runs}
	for r := 0; r < 400; r++ {
		tb := bytesTexts[r&1]
		stop := rng.Intn(1000)
		i := stop - 1 + rng.Intn(1500)
		for pass := range 3 {
			for _, words := range []bool{false, true} {
				run := func(goVersion bool) ([]int32, []int32, textArgs) {
					tab := make([]int32, 4*k)
					for x := range tab {
						tab[x] = int32(4000 + 3*x)
					}
					sa := make([]int32, 20000)
					// gatherLMS stops at stop, or halfway when it finds as many LMS
					// positions as the range holds.
					a := textArgs{i: i, stop: stop, next: 7, nextS: int32(r & 1), tab: unsafe.Pointer(&tab[0]),
						sa: unsafe.Pointer(&sa[0]), trash: 19999, k: 19000, big: int32(r & 2), bottom: int32(19000 - (r%3)*(i-stop)/8)}
					if pass == 2 {
						a.big = 0
					}
					if !words {
						// The vector kernels read the symbol after i from the text.
						a.t, a.big, a.next = unsafe.Pointer(&tb[0]), 0, int32(tb[i+1])
						switch {
						case pass == 0 && goVersion:
							countKindsGo[byte](&a)
						case pass == 0:
							countKindsK[byte](&a)
						case pass == 1 && goVersion:
							placeLMSGo[byte](&a)
						case pass == 1:
							placeLMSK[byte](&a)
						case goVersion:
							gatherLMSGo[byte](&a)
						default:
							gatherLMSK[byte](&a)
						}
					} else {
						a.t, a.next = unsafe.Pointer(&tw[0]), tw[i+1]
						switch {
						case pass == 0 && goVersion:
							countKindsGo[int32](&a)
						case pass == 0:
							countKindsK[int32](&a)
						case pass == 1 && goVersion:
							placeLMSGo[int32](&a)
						case pass == 1:
							placeLMSK[int32](&a)
						case goVersion:
							gatherLMSGo[int32](&a)
						default:
							gatherLMSK[int32](&a)
						}
					}
					// The vector kernels use no trash slot, and gatherLMS's writes
					// below its last LMS position are of no account.
					a.t, a.tab, a.sa, a.trash = nil, nil, nil, 0
					if pass == 2 {
						clear(sa[:a.k])
					}
					return tab, sa, a
				}
				tab1, sa1, a1 := run(false)
				tab2, sa2, a2 := run(true)
				if !slices.Equal(tab1, tab2) || !slices.Equal(sa1, sa2) || a1 != a2 {
					t.Fatalf("pass %d, words %v, i %d, stop %d: kernel differs from its definition", pass, words, i, stop)
				}
			}
		}
	}
}

// TestNameKernels compares the naming kernels with their Go definitions.
func TestNameKernels(t *testing.T) {
	rng := rand.New(rand.NewSource(10))
	for _, n := range []int{0, 1, 2, 3, 63, 64, 65, 127, 128, 129, 300, 2001} {
		// nameRun: distinct even positions, some marked.
		run := make([]int32, n)
		for i, p := range rng.Perm(4 * n)[:n] {
			run[i] = int32(2 * p)
			if rng.Intn(3) == 0 {
				run[i] |= saFlag
			}
		}
		r1, r2 := slices.Clone(run), slices.Clone(run)
		n1, n2 := make([]int32, 4*n+1), make([]int32, 4*n+1)
		if a, b := nameRun(r1, n1, 5), nameRunGo(r2, n2, 5); a != b || !slices.Equal(r1, r2) || !slices.Equal(n1, n2) {
			t.Fatalf("nameRun, %d entries: kernel differs from its definition", n)
		}
		// mapRun.
		s1 := make([]int32, n+1)
		for i := range s1 {
			s1[i] = int32(rng.Intn(1 << 30))
		}
		for i := range run {
			run[i] = int32(rng.Intn(n + 1))
		}
		r1, r2 = slices.Clone(run), slices.Clone(run)
		mapRun(r1, s1)
		mapRunGo(r2, s1)
		if !slices.Equal(r1, r2) {
			t.Fatalf("mapRun, %d entries: kernel differs from its definition", n)
		}
		// compactNames: names plus one, zeros between.
		for i := range run {
			run[i] = 0
			if rng.Intn(3) == 0 {
				run[i] = int32(1 + rng.Intn(1000))
			}
		}
		r1, r2 = slices.Clone(run), slices.Clone(run)
		if a, b := compactNames(r1), compactNamesGo(r2); a != b || !slices.Equal(r1, r2) {
			t.Fatalf("compactNames, %d entries: kernel differs from its definition (%d, want %d)", n, a, b)
		}
		// shiftMarks: positions, some marked.
		for i := range run {
			run[i] = int32(rng.Intn(1 << 30))
			if rng.Intn(3) == 0 {
				run[i] |= saFlag
			}
		}
		r1, r2 = slices.Clone(run), slices.Clone(run)
		shiftMarks(r1)
		shiftMarksGo(r2)
		if !slices.Equal(r1, r2) {
			t.Fatalf("shiftMarks, %d entries: kernel differs from its definition", n)
		}
	}
}
