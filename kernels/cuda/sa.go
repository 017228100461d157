package cuda

import (
	"errors"
	"fmt"
	"math/bits"
	"time"
	"unsafe"
)

// Host side of the GPU suffix array (the kernels and the method are described in sa.cuh). Every
// function here runs on the device goroutine.

// Tile sizes, as in the .cu sources.
const (
	scanTile     = 256 * 8 // SC_TILE
	minRadixTile = 256 * 8 // the smallest radix-sort tile
	keysTile     = 256 * 4 // IK_TILE
)

// Tuning, variables so that the profile test can compare choices on the device.
var (
	// radixItems is the items per thread of the radix-sort kernels (8, 12 or 16).
	radixItems = 8
	// shortKeyMaxBits: alphabets of codes this wide or narrower (DNA, DNA with N) start with a key of only
	// about log2(n)+12 bits instead of 64, which leaves few suffixes tied on random-like
	// sequence and saves radix passes; 0 turns this off.
	shortKeyMaxBits = 3
	// useStaging sends large copies through the pinned ring (transfer.go).
	useStaging = true
	// onesweep selects the one-launch-per-pass radix sort (radix_pass); otherwise each pass is
	// a histogram, a scan and a scatter.
	onesweep        = true
	onesweepItems   = 8  // 8 or 12
	onesweepItems32 = 12 // 8, 12 or 16, for 32-bit keys
	// short32Max: up to this length, texts of 2-bit codes (DNA) start with 32-bit keys (16
	// bases; random-like sequence then leaves about n*n/2^32 suffixes tied, which the first
	// round sorts), which halve the bytes each radix pass moves; 0 turns this off. (With 3-bit
	// codes, 10 characters leave too many ties: the four genomes ran 5% slower.)
	short32Max = 1 << 28
	// smallItems and smallRadixBits choose the shared-memory sort of small groups
	// (sa_small_sort_ITEMS_BITS: 16/4, 8/4 or 8/6); a tile holds 256*smallItems members and
	// groups of up to a quarter of that are small.
	smallItems, smallRadixBits = 8, 6
	// partitionMin: from this many active suffixes on, rank updates are partitioned by
	// position before they are stored (rank_scatter).
	partitionMin = 1 << 24
)

func smallTile() int  { return 256 * smallItems }
func smallGroup() int { return smallTile() / 4 }
func smallStep() int  { return smallTile() - smallGroup() + 1 }

// errNoRoom reports that a text does not fit the device memory left; the backend then uses the CPU.
var errNoRoom = errors.New("not enough GPU memory")

// memLimit, when not zero, caps the device memory a construction may use (tests of the fallback).
var memLimit uint64

// limitLeft returns what the device's limit (Options.MemoryLimit, or memLimit when a test sets
// one: the smaller) leaves to the pool now, besides the device's other buffers; ok is false when
// there is no limit.
func (d *device) limitLeft() (left uint64, ok bool) {
	lim := d.limit
	if memLimit != 0 && (lim == 0 || memLimit < lim) {
		lim = memLimit
	}
	if lim == 0 {
		return 0, false
	}
	others := uint64(max(d.allocated.Load()-int64(d.pool.size), 0))
	if others >= lim {
		return 0, true
	}
	return lim - others, true
}

// roomNow returns the device memory a computation may take now: what the card has free plus what
// the pool holds, within what the limit leaves when there is one. Device goroutine only.
func (d *device) roomNow() (uint64, error) {
	free, _, err := d.memInfo()
	if err != nil {
		return 0, err
	}
	avail := free + d.pool.size
	if left, ok := d.limitLeft(); ok {
		avail = min(avail, left)
	}
	return avail, nil
}

// budget makes the pool at least need bytes, or returns an error wrapping errNoRoom when the card
// (cuMemGetInfo, plus what the pool already holds) has not that much to spare, or when the
// allocation fails for want of memory all the same (another process took it meanwhile).
func (d *device) budget(need uint64) error {
	if left, ok := d.limitLeft(); ok && need+need/32+(64<<20) > left {
		return fmt.Errorf("%w: need %d MiB, %d MiB allowed", errNoRoom, need>>20, left>>20)
	}
	if need <= d.pool.size {
		return nil
	}
	free, _, err := d.memInfo()
	if err != nil {
		return err
	}
	avail := free + d.pool.size
	// Leave room for the driver and the kernels' own needs.
	if need+need/32+(64<<20) > avail {
		return fmt.Errorf("%w: need %d MiB, %d MiB free", errNoRoom, need>>20, avail>>20)
	}
	err = d.pool.reserve(d, need)
	var ce *Error
	if errors.As(err, &ce) && ce.Result == resultOutOfMemory {
		return fmt.Errorf("%w: %v", errNoRoom, err)
	}
	return err
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// flagTiles is the grid of the kernels that walk all m active suffixes (sa_flags, sa_headidx,
// sa_classify, sa_scatter): tiles of 256 threads times 8 members, or of fewer for small rounds,
// whose few tiles would otherwise leave most SMs idle while each walks its steps.
func flagTiles(m int) int {
	items := 8
	switch {
	case m < 1<<17:
		items = 1
	case m < 1<<20:
		items = 2
	}
	return ceilDiv(m, 256*items)
}

// saBuffers are the device arrays of one suffix-array construction of n bytes.
type saBuffers struct {
	n                      int
	text, codes, hist      devPtr
	k                      [2]devPtr // u64 radix-sort keys
	v                      [2]devPtr // u32 radix-sort values; the first sort's output is the SA
	rank                   devPtr
	actSA, actG            [2]devPtr
	key, ord, headIdx, grp devPtr
	head                   devPtr // u8 flags; the BWT at the end
	counts, offs, sums     devPtr // radix-sort and scan scratch
	status, hist8, starts  devPtr // one-pass radix sort: look-back status, digit counts and starts
	tileMax, cnt, totals   devPtr
}

// layout carves the buffers for n bytes from c and returns them; with c.next zero it only
// measures (c.used is then the bytes needed).
func layout(c *carver, n int) saBuffers {
	u := uint64(n)
	radixTiles := uint64(ceilDiv(n, minRadixTile))
	flagTiles := uint64(ceilDiv(n, 256)) // the most tiles flagTiles gives
	countsLen := 256 * radixTiles
	var b saBuffers
	b.n = n
	b.text = c.take(u + 16)
	b.codes = c.take(256)
	b.hist = c.take(256 * 4)
	b.k[0], b.k[1] = c.take(8*u), c.take(8*u)
	b.v[0], b.v[1] = c.take(4*u), c.take(4*u)
	b.rank = c.take(4 * u)
	b.actSA[0], b.actSA[1] = c.take(4*u), c.take(4*u)
	b.actG[0], b.actG[1] = c.take(4*u), c.take(4*u)
	b.key, b.ord, b.headIdx, b.grp = c.take(4*u), c.take(4*u), c.take(4*u), c.take(4*u)
	b.head = c.take(u)
	b.counts, b.offs = c.take(4*countsLen), c.take(4*countsLen)
	b.sums = c.take(4 * (uint64(ceilDiv(int(max(countsLen, 4*flagTiles)), scanTile)) + 1))
	b.status = c.take(8*256*radixTiles + 64)
	b.hist8, b.starts = c.take(8*256*4), c.take(8*256*4)
	b.tileMax = c.take(4 * flagTiles)
	b.cnt = c.take(4 * 4 * flagTiles)
	b.totals = c.take(64)
	return b
}

// saStats says what one construction did, for tests and notes.
type saStats struct {
	Bits, Chars int // code width and characters in the first key
	Rounds      int // doubling rounds after the first sort
	MaxActive   int // most suffixes in unsorted groups after the first sort
	Parts       int // sliced construction: parts of the first sort
	Slices      int // sliced construction: most slices of a round

	// With Profile set, the device is synchronised after each phase and Phases records the
	// time of each (this slows the whole a little).
	Profile bool
	Phases  []phase
	last    time.Time
}

type phase struct {
	Name   string
	Active int // suffixes in unsorted groups during the phase
	Time   time.Duration
}

// mark ends a phase when profiling.
func (st *saStats) mark(d *device, name string, active int) error {
	if st == nil || !st.Profile {
		return nil
	}
	if err := d.sync(); err != nil {
		return err
	}
	if err := d.collect(); err != nil {
		return err
	}
	now := time.Now()
	if !st.last.IsZero() {
		st.Phases = append(st.Phases, phase{name, active, now.Sub(st.last)})
	}
	st.last = now
	return nil
}

// exclusiveScan writes the exclusive prefix sums of in[0..n) to out, and their total to total
// unless total is 0.
func (d *device) exclusiveScan(in, out devPtr, n int, sums, total devPtr) error {
	tiles := ceilDiv(n, scanTile)
	if err := d.launch("scan_reduce", tiles, 256, 0, in, uint32(n), sums); err != nil {
		return err
	}
	if err := d.launch("scan_single", 1, 1024, 0, sums, uint32(tiles), uint32(0), total); err != nil {
		return err
	}
	return d.launch("scan_down", tiles, 256, 0, in, out, uint32(n), sums)
}

// radixSort sorts n (key, value) pairs held in k[0], v[0] by key bits [lo, hi), 8 bits a pass,
// ping-ponging between the two buffers; it returns the index of the buffers holding the result.
func (d *device) radixSort(b *saBuffers, k, v [2]devPtr, n, lo, hi int) (int, error) {
	if onesweep {
		return d.radixSortOnesweep(b, k, v, n, lo, hi, 8)
	}
	return d.radixSortSplit(b, k, v, n, lo, hi)
}

// radixSortOnesweep counts the digits of all passes in one read, skips the passes whose digit is
// the same in every key, and runs each other pass as one radix_pass launch. With v[0] zero it
// sorts keys alone.
func (d *device) radixSortOnesweep(b *saBuffers, k, v [2]devPtr, n, lo, hi, keyBytes int) (int, error) {
	sfx := ""
	if keyBytes == 4 {
		sfx = "32"
	}
	passes := (hi - lo + 7) / 8
	if passes > 8 {
		return 0, fmt.Errorf("radix sort of %d bits", hi-lo)
	}
	if err := d.drv.check("cuMemsetD32", d.drv.cuMemsetD32(b.hist8, 0, uint64(passes*256))); err != nil {
		return 0, err
	}
	if err := d.launch("radix_hist_all"+sfx, min(ceilDiv(n, 256), 4*d.info.SMs), 256, 0, k[0], uint32(n), uint32(lo), uint32(passes), b.hist8); err != nil {
		return 0, err
	}
	var hist [8 * 256]uint32
	if err := d.toHost(unsafe.Pointer(&hist[0]), b.hist8, 4*256*passes); err != nil {
		return 0, err
	}
	var starts [8 * 256]uint32
	run := digitStarts(hist[:], starts[:], passes, n)
	if len(run) == 0 {
		return 0, nil
	}
	if err := d.toDevice(b.starts, unsafe.Pointer(&starts[0]), 4*256*passes); err != nil {
		return 0, err
	}
	items := onesweepItems
	if keyBytes == 4 {
		items = onesweepItems32
	}
	tile := 256 * items
	tiles := ceilDiv(n, tile)
	counters := b.status + devPtr(8*256*tiles)
	if err := d.drv.check("cuMemsetD32", d.drv.cuMemsetD32(b.status, 0, uint64(2*256*tiles+16))); err != nil {
		return 0, err
	}
	name := fmt.Sprintf("radix_pass%s_%d", sfx, items)
	if v[0] == 0 {
		name = fmt.Sprintf("radix_pass_keys_%d", items)
	}
	cur := 0
	for e, p := range run {
		epoch := e + 1
		if err := d.launch(name, tiles, 256, 0, k[cur], v[cur], uint32(n), uint32(lo+8*p), b.starts+devPtr(4*256*p),
			b.status, counters+devPtr(4*epoch), uint32(epoch), k[1-cur], v[1-cur]); err != nil {
			return 0, err
		}
		cur = 1 - cur
	}
	return cur, nil
}

// digitStarts sets starts[p*256+d] to where the keys of digit d go in pass p (the sum of hist's
// counts of the digits below it) and returns the passes whose digit is not the same for all n
// keys: the onesweep passes to run.
func digitStarts(hist, starts []uint32, passes, n int) []int {
	var run []int
	for p := range passes {
		sum, trivial := uint32(0), false
		for d := range 256 {
			c := hist[p*256+d]
			trivial = trivial || int(c) == n
			starts[p*256+d] = sum
			sum += c
		}
		if !trivial {
			run = append(run, p)
		}
	}
	return run
}

// radixSortSplit sorts n (key, value) pairs held in k[cur], v[cur] by key bits [lo, hi), 8 bits a pass,
// ping-ponging between the two buffers; it returns the index of the buffers holding the result.
func (d *device) radixSortSplit(b *saBuffers, k, v [2]devPtr, n, lo, hi int) (int, error) {
	cur := 0
	tiles := ceilDiv(n, 256*radixItems)
	hist, scatter := fmt.Sprintf("radix_hist_%d", radixItems), fmt.Sprintf("radix_scatter_%d", radixItems)
	for shift := lo; shift < hi; shift += 8 {
		if err := d.launch(hist, tiles, 256, 0, k[cur], uint32(n), uint32(shift), b.counts, uint32(tiles)); err != nil {
			return 0, err
		}
		if err := d.exclusiveScan(b.counts, b.offs, 256*tiles, b.sums, 0); err != nil {
			return 0, err
		}
		if err := d.launch(scatter, tiles, 256, 0, k[cur], v[cur], uint32(n), uint32(shift),
			b.counts, b.offs, uint32(tiles), k[1-cur], v[1-cur]); err != nil {
			return 0, err
		}
		cur = 1 - cur
	}
	return cur, nil
}

// bitsFor returns the bits needed to write x (at least 1).
func bitsFor(x uint64) int { return max(bits.Len64(x), 1) }

// saDevIO is a text in device memory and where its suffix array goes (n int32 entries), for
// suffixArray.
type saDevIO struct {
	text, sa devPtr
	n        int
}

// suffixArray builds the suffix array of text (len >= 2) on the device. With bwt nil it copies
// the SA to sa; otherwise it copies only the transform to bwt and returns the primary index, and
// fills samples (when not nil, (len(text)-1) >> shift entries) with the rows of the sampled text
// positions, as kernels/cpu.BWTSampled does.
//
// With dio set, the text is dio.n bytes already in device memory (text is not read) and the
// suffix array stays there, written to dio.sa.
func (d *device) suffixArray(text []byte, sa []int32, bwt []byte, samples []uint32, shift uint, st *saStats, dio *saDevIO) (primary int, err error) {
	n := len(text)
	if dio != nil {
		n = dio.n
	}
	if dio != nil && sliceRowsForced > 0 {
		return 0, d.suffixArraySliced(dio, sliceRowsForced, st)
	}
	var measure carver
	layout(&measure, n)
	if err := d.budget(measure.used); err != nil {
		if dio != nil && errors.Is(err, errNoRoom) {
			// In slices, as large as the memory allows.
			if rows := d.sliceRoom(n); rows > 0 {
				return 0, d.suffixArraySliced(dio, rows, st)
			}
		}
		return 0, fmt.Errorf("%d bytes: %w", n, err)
	}
	c := carver{next: d.pool.base}
	b := layout(&c, n)
	if err := st.mark(d, "", 0); err != nil {
		return 0, err
	}

	if dio != nil {
		err = d.drv.check("cuMemcpyDtoD", d.drv.cuMemcpyDtoD(b.text, dio.text, uint64(n)))
	} else {
		err = d.send(b.text, text)
	}
	if err != nil {
		return 0, err
	}
	if err := st.mark(d, "copy text to the GPU", 0); err != nil {
		return 0, err
	}
	// The alphabet: codes in byte order, b bits each, c of them in the first key.
	codes, bw, err := d.alphabet(&b, b.text, n)
	if err != nil {
		return 0, err
	}
	chars := 64 / bw
	keyBits := (bw*chars + 7) &^ 7
	keyBytes := 8
	if bw <= shortKeyMaxBits {
		keyBits = min(keyBits, (bitsFor(uint64(n))+12+7)&^7)
		if bw <= 2 && n <= short32Max && onesweep {
			keyBits, keyBytes = min(keyBits, 32), 4
		}
	}
	keyTop := 8 * keyBytes // the key's bits are [keyTop-keyBits, keyTop)
	sfx := ""
	if keyBytes == 4 {
		sfx = "32"
	}
	// The key's first h = keyBits/bw codes are whole; a suffix shorter than tail codes is
	// a group of its own.
	h0, tail := keyBits/bw, (keyBits+bw-1)/bw
	if st != nil {
		st.Bits, st.Chars = bw, h0
	}
	if err := st.mark(d, "alphabet", 0); err != nil {
		return 0, err
	}
	if err := d.toDevice(b.codes, unsafe.Pointer(&codes[0]), 256); err != nil {
		return 0, err
	}
	if err := d.launch("init_keys"+sfx, ceilDiv(n, keysTile), 256, 0, b.text, uint32(n), b.codes, uint32(bw), uint32(chars), b.k[0], b.v[0]); err != nil {
		return 0, err
	}
	if err := st.mark(d, "first keys", 0); err != nil {
		return 0, err
	}
	var cur int
	if keyBytes == 4 {
		cur, err = d.radixSortOnesweep(&b, b.k, b.v, n, keyTop-keyBits, keyTop, 4)
	} else {
		cur, err = d.radixSort(&b, b.k, b.v, n, keyTop-keyBits, keyTop)
	}
	if err != nil {
		return 0, err
	}
	if err := st.mark(d, fmt.Sprintf("first sort (%d bits)", keyBits), n); err != nil {
		return 0, err
	}
	saDev, keysDev, vFree := b.v[cur], b.k[cur], b.v[1-cur]

	// Groups after the first sort.
	ftiles := flagTiles(n)
	if err := d.launch("sa_init_flags"+sfx, ftiles, 256, 0, keysDev, saDev, uint32(n), uint32(n), uint32(keyTop-keyBits), uint32(tail), b.head, b.tileMax); err != nil {
		return 0, err
	}
	var totals [4]uint32
	if err := d.refine(&b, n, ftiles, saDev, 0, 0, b.actSA[0], b.actG[0], &totals); err != nil {
		return 0, err
	}
	if st != nil {
		st.MaxActive = int(totals[0] + totals[2])
	}
	if err := st.mark(d, "first groups", n); err != nil {
		return 0, err
	}
	kb := bitsFor(uint64(n))
	h := uint64(h0)
	act := 0
	for rounds := 0; totals[0]+totals[2] > 0; rounds++ {
		if h >= uint64(n) || rounds > 64 {
			return 0, fmt.Errorf("GPU suffix array: %d suffixes still unsorted at h=%d (internal error)", totals[0]+totals[2], h)
		}
		mSmall, smallGroups, mLarge, largeGroups := int(totals[0]), int(totals[1]), int(totals[2]), int(totals[3])
		m := mSmall + mLarge
		if mSmall > 0 {
			name := fmt.Sprintf("sa_small_sort_%d_%d", smallItems, smallRadixBits)
			if err := d.launch(name, ceilDiv(mSmall, smallStep()), 256, 0, uint32(mSmall), uint32(smallStep()),
				b.actSA[act], b.actG[act], b.key, b.rank, uint32(n), uint32(h), uint32(kb)); err != nil {
				return 0, err
			}
		}
		if mLarge > 0 {
			off := devPtr(4 * mSmall)
			ob := 0
			if largeGroups > 1 {
				ob = bitsFor(uint64(largeGroups - 1))
			}
			vv := [2]devPtr{vFree, b.headIdx}
			if err := d.launch("sa_large_keys", ceilDiv(mLarge, 256), 256, 0, uint32(mLarge), b.actSA[act]+off, b.ord+off, b.rank,
				uint32(n), uint32(h), uint32(kb), b.k[0], vv[0]); err != nil {
				return 0, err
			}
			r, err := d.radixSort(&b, b.k, vv, mLarge, 0, kb+ob)
			if err != nil {
				return 0, err
			}
			if err := d.launch("sa_large_unpack", ceilDiv(mLarge, 256), 256, 0, uint32(mLarge), b.k[r], vv[r], uint32(kb),
				b.key+off, b.actSA[act]+off); err != nil {
				return 0, err
			}
		}
		ftiles := flagTiles(m)
		if err := d.launch("sa_flags", ftiles, 256, 0, b.key, b.actG[act], uint32(m), b.head, b.tileMax); err != nil {
			return 0, err
		}
		if err := d.refine(&b, m, ftiles, b.actSA[act], b.actG[act], saDev, b.actSA[1-act], b.actG[1-act], &totals); err != nil {
			return 0, err
		}
		act = 1 - act
		if err := st.mark(d, fmt.Sprintf("round h=%d: %d+%d in %d+%d groups", h, mSmall, mLarge, smallGroups, largeGroups), m); err != nil {
			return 0, err
		}
		h *= 2
		if st != nil {
			st.Rounds = rounds + 1
		}
	}

	if dio != nil {
		return 0, d.drv.check("cuMemcpyDtoD", d.drv.cuMemcpyDtoD(dio.sa, saDev, uint64(4*n)))
	}
	if bwt == nil {
		if err := d.receive(int32Bytes(sa), saDev); err != nil {
			return 0, err
		}
		return 0, st.mark(d, "copy SA to the host", 0)
	}
	if err := d.launch("bwt_gather", ceilDiv(n, 256), 256, 0, b.text, saDev, b.rank, uint32(n), b.head, b.totals); err != nil {
		return 0, err
	}
	if err := d.receive(bwt, b.head); err != nil {
		return 0, err
	}
	if len(samples) > 0 {
		// The sort keys are free by now: they take the samples.
		if err := d.launch("bwt_samples", ceilDiv(n, 256), 256, 0, saDev, uint32(n), uint32(shift), b.key); err != nil {
			return 0, err
		}
		if err := d.toHost(unsafe.Pointer(&samples[0]), b.key, 4*len(samples)); err != nil {
			return 0, err
		}
	}
	var p uint32
	if err := d.toHost(unsafe.Pointer(&p), b.totals, 4); err != nil {
		return 0, err
	}
	return int(p), st.mark(d, "BWT to the host", 0)
}

// refine runs the steps after a sort over m active members whose head flags are in b.head and
// whose tile maxima are in b.tileMax: head positions, ranks, finished suffixes into saOut
// (0 at the start, when saIn is the SA itself and gposf is 0), and compaction into saNext and
// gNext. totals receives the small members, small groups, large members and large groups left.
func (d *device) refine(b *saBuffers, m, tiles int, saIn, gposf, saOut, saNext, gNext devPtr, totals *[4]uint32) error {
	if err := d.headRanks(b, m, tiles, saIn, gposf); err != nil {
		return err
	}
	if err := d.launch("sa_classify", tiles, 256, 0, uint32(m), b.head, b.headIdx, b.grp, saIn, gposf, saOut, uint32(smallGroup()), b.cnt, uint32(tiles)); err != nil {
		return err
	}
	if err := d.launch("scan_single", 4, 1024, 0, b.cnt, uint32(tiles), uint32(tiles), b.totals); err != nil {
		return err
	}
	if err := d.launch("sa_scatter", tiles, 256, 0, uint32(m), b.head, b.headIdx, b.grp, saIn, gposf, uint32(smallGroup()), b.cnt,
		uint32(tiles), b.totals, saNext, gNext, b.ord); err != nil {
		return err
	}
	return d.toHost(unsafe.Pointer(&totals[0]), b.totals, 16)
}

// headRanks runs the first steps after a sort over m active members whose head flags are in
// b.head and whose tile maxima are in b.tileMax: each member's head (b.headIdx), each group's
// size at its head (b.grp), and the members' ranks. The sort keys in b.k may be overwritten.
func (d *device) headRanks(b *saBuffers, m, tiles int, saIn, gposf devPtr) error {
	if err := d.launch("scan_max_single", 1, 1024, 0, b.tileMax, uint32(tiles)); err != nil {
		return err
	}
	partition := m >= partitionMin
	pairs := devPtr(0)
	if partition {
		pairs = b.k[0]
	}
	if err := d.launch("sa_headidx", tiles, 256, 0, b.head, uint32(m), b.tileMax, saIn, gposf, b.headIdx, b.grp, b.rank, pairs); err != nil {
		return err
	}
	if !partition {
		return nil
	}
	// One radix pass on the top 8 bits of the position, then stores band by band.
	lo := 32 + max(bitsFor(uint64(b.n-1))-8, 0)
	r, err := d.radixSortOnesweep(b, b.k, [2]devPtr{}, m, lo, lo+8, 8)
	if err != nil {
		return err
	}
	return d.launch("rank_scatter", ceilDiv(m, 256), 256, 0, b.k[r], uint32(m), b.rank)
}

// send and receive copy between Go memory and the device, through the pinned ring when
// useStaging is set.
func (d *device) send(dst devPtr, src []byte) error {
	if useStaging {
		return d.copyIn(dst, src)
	}
	return d.toDevice(dst, unsafe.Pointer(&src[0]), len(src))
}

func (d *device) receive(dst []byte, src devPtr) error {
	if useStaging {
		return d.copyOut(dst, src)
	}
	return d.toHost(unsafe.Pointer(&dst[0]), src, len(dst))
}
