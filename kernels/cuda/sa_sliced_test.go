package cuda

import (
	"errors"
	"math/rand/v2"
	"slices"
	"testing"
	"unsafe"

	"github.com/sapipe/sapipe/kernels"
	"github.com/sapipe/sapipe/kernels/cpu"
)

// slicedSA builds the suffix array of text on the device in slices of rows suffixes (the text
// and the suffix array in device memory of their own, as a page build has them).
func (b *Backend) slicedSA(text []byte, rows int) ([]int32, saStats, error) {
	n := len(text)
	sa := make([]int32, n)
	for i := range sa {
		sa[i] = -7 // poison: every entry must be written
	}
	var st saStats
	err := b.dev.run(func() error {
		var dt, ds devBuf
		defer dt.free(b.dev)
		defer ds.free(b.dev)
		if err := dt.ensure(b.dev, uint64(n+16)); err != nil {
			return err
		}
		if err := ds.ensure(b.dev, uint64(4*n)); err != nil {
			return err
		}
		if err := b.dev.toDevice(dt.p, unsafe.Pointer(&text[0]), n); err != nil {
			return err
		}
		if err := b.dev.suffixArraySliced(&saDevIO{text: dt.p, sa: ds.p, n: n}, rows, &st); err != nil {
			return err
		}
		return b.dev.toHost(unsafe.Pointer(&sa[0]), ds.p, 4*n)
	})
	return sa, st, err
}

// TestGPUSuffixArraySliced: the sliced construction gives the CPU's suffix array, with slices
// small enough that the texts take many parts and slices a round; where one run of a symbol is
// longer than a slice it reports errNoRoom, and slices of the whole text then do.
func TestGPUSuffixArraySliced(t *testing.T) {
	b := gpuBackend(t)
	rng := rand.New(rand.NewPCG(21, 22))
	cases := []textCase{}
	for _, c := range saCases(rng, true) {
		if len(c.text) >= 2 {
			cases = append(cases, c)
		}
	}
	if !testing.Short() {
		cases = append(cases, textCase{"dna-2e7", randomDNA(rng, 20_000_000)}, textCase{"repeats-2e7", withRepeats(rng, 20_000_000)},
			textCase{"genome-like-2e7", genomeLike(rng, 20_000_000)}, textCase{"bytes-1e7", randomBytes(rng, 10_000_000, 256)})
	}
	parted, sliced, refused := 0, 0, 0
	for _, c := range cases {
		n := len(c.text)
		want := cpuSA(c.text)
		for _, rows := range []int{max(n/7, 64), max(n/2, 64)} {
			got, st, err := b.slicedSA(c.text, rows)
			if errors.Is(err, errNoRoom) {
				refused++
				rows = n
				got, st, err = b.slicedSA(c.text, rows)
			}
			if err != nil {
				t.Fatalf("%s, slices of %d: %v", c.name, rows, err)
			}
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("%s, slices of %d: SA[%d] = %d, want %d (stats %+v)", c.name, rows, i, got[i], want[i], st)
				}
			}
			if st.Parts > 1 {
				parted++
			}
			if st.Slices > 1 {
				sliced++
			}
		}
	}
	t.Logf("%d constructions of %d cases in several parts, %d with rounds of several slices, %d refused (runs longer than a slice)",
		parted, len(cases), sliced, refused)
	if parted < len(cases)/4 || sliced < 10 || refused == 0 {
		t.Errorf("the cases did not exercise the parts, the slices or the refusal")
	}
}

// genomeLike is DNA with N runs, copies of earlier stretches (some reversed) and tandem repeats:
// long groups, and bins of one code.
func genomeLike(rng *rand.Rand, n int) []byte {
	t := randomDNA(rng, n)
	for k := 0; k < n/100_000+1; k++ {
		at, l := rng.IntN(n), 100+rng.IntN(50_000)
		switch k % 3 {
		case 0:
			for i := at; i < min(n, at+l/10); i++ {
				t[i] = 'N'
			}
		case 1:
			from := rng.IntN(n)
			for i := 0; i < l && at+i < n && from+i < n; i++ {
				t[at+i] = t[from+i]
			}
		default:
			p := 1 + rng.IntN(200)
			for i := at + p; i < min(n, at+l); i++ {
				t[i] = t[i-p]
			}
		}
	}
	return t
}

// TestGPUIndexPageSliced: index pages whose suffix arrays are built in slices of 4096 rows are the
// CPU's, array for array.
// TestSliceCuts: slices end where a group starts, hold at most the rows asked for (counting every
// tile they touch), cover the rows in order, and a group larger than a slice is refused.
func TestSliceCuts(t *testing.T) {
	none := ^uint32(0)
	rng := rand.New(rand.NewPCG(35, 36))
	for range 200 {
		tiles := 1 + rng.IntN(40)
		n := (tiles-1)*spRows + 1 + rng.IntN(spRows)
		tileA, tileF := make([]uint32, tiles), make([]uint32, tiles)
		for i := range tiles {
			tileA[i] = uint32(rng.IntN(spRows / 4))
			tileF[i] = none
			if rng.IntN(3) > 0 {
				if f := i*spRows + rng.IntN(spRows); f < n {
					tileF[i] = uint32(f)
				}
			}
		}
		rows := spRows/4 + rng.IntN(4*spRows)
		cuts, err := sliceCuts(tileA, tileF, n, rows)
		if err != nil {
			if !errors.Is(err, errNoRoom) {
				t.Fatal(err)
			}
			continue
		}
		at := 0
		for _, c := range cuts {
			if c[0] != at || c[1] <= c[0] {
				t.Fatalf("cuts %v do not follow each other", cuts)
			}
			if c[1] < n && (tileF[c[1]/spRows] != uint32(c[1])) {
				t.Fatalf("cut at %d, not a tile's first head", c[1])
			}
			sum := 0
			for i := c[0] / spRows; i <= (c[1]-1)/spRows; i++ {
				sum += int(tileA[i])
			}
			if c[1] < n && sum > rows {
				t.Fatalf("slice %v touches tiles of %d rows, more than %d", c, sum, rows)
			}
			at = c[1]
		}
		if at != n {
			t.Fatalf("cuts %v end at %d, not %d", cuts, at, n)
		}
	}
	// One tile of more rows than a slice, without a head inside: refused.
	if _, err := sliceCuts([]uint32{10, 5000, 10}, []uint32{0, none, 2 * spRows}, 3*spRows, 1000); !errors.Is(err, errNoRoom) {
		t.Errorf("a group larger than a slice: %v", err)
	}
}

// TestIndexPageBytes: building a page of DNA (with N: 6 codes) alone needs at most 16 bytes a
// base of the window at its peak (margins aside), for windows from 100 million codes to the
// largest; a wider alphabet needs more for its rank structure.
func TestIndexPageBytes(t *testing.T) {
	for _, n := range []int{100_000_000, 1_550_000_000, 1<<31 - 3} {
		for _, sigma := range []int{6, 26} {
			b := float64(indexPageNeed(n, sigma)) / float64(n)
			t.Logf("%d codes < %d: %.2f bytes a base", n, sigma, b)
			if sigma == 6 && b > 16 {
				t.Errorf("a page of %d DNA codes needs %.2f bytes a base", n, b)
			}
		}
	}
}

func TestGPUIndexPageSliced(t *testing.T) {
	b := gpuBackend(t)
	defer func() { sliceRowsForced = 0 }()
	sliceRowsForced = 4096
	rng := rand.New(rand.NewPCG(33, 34))
	host := cpu.New(2)
	for _, c := range pageCases(rng, 8, 4000) {
		n := len(c.ref.Text)
		for i, bd := range cpu.PageBoundsOverlap(n, n/3, 200) {
			w := bd[2] - bd[0]
			sa := make([]int32, w+1)
			if err := host.SuffixArray(c.ref.Text[bd[0]:bd[2]], sa[1:]); err != nil {
				t.Fatal(err)
			}
			k := cpu.KmerLength(w, c.ref.Alpha.Size)
			wp, _ := cpu.NewPageFromSAKmers(c.ref.Text, c.ref.Alpha.Size, bd[0], bd[1], bd[2], sa, k, 2)
			gp, _, err := b.IndexPage(c.ref.Text, c.ref.Alpha.Size, bd[0], bd[1], bd[2], k, 2)
			if err != nil {
				t.Fatalf("%s page %d: %v", c.name, i, err)
			}
			wa, ga := wp.Arrays(), gp.Arrays()
			if !slices.Equal(ga.SA, wa.SA) || !slices.Equal(ga.LCPBytes, wa.LCPBytes) || !slices.Equal(ga.Occ, wa.Occ) {
				t.Fatalf("%s page %d (%d codes): arrays differ from the CPU's", c.name, i, w)
			}
		}
	}
}

// TestGPUIndexPageLimit: under a device memory limit that sa.go's construction does not fit, a
// page is built on the device all the same (its suffix array in slices), the CPU's arrays, and the
// device's buffers never take more than the limit at once; MaxIndexPage stays within it too.
func TestGPUIndexPageLimit(t *testing.T) {
	b := gpuBackend(t)
	var notes []string
	b.opts.Note = func(s string) { notes = append(notes, s) }
	defer func() { b.opts.Note, b.dev.limit = nil, 0 }()
	rng := rand.New(rand.NewPCG(37, 38))
	host := cpu.New(2)
	rb := kernels.NewReferenceBuilder(false)
	rb.Add("g", genomeLike(rng, 4_000_000))
	ref, err := rb.Build()
	if err != nil {
		t.Fatal(err)
	}
	n := len(ref.Text)
	if err := b.dev.run(func() error { b.dev.pool.release(b.dev); return nil }); err != nil { // a pool of earlier tests
		t.Fatal(err)
	}
	base := b.dev.allocated.Load()
	limit := uint64(base) + indexPageBytes(n, ref.Alpha.Size) + indexPageBytes(n, ref.Alpha.Size)/4
	var c carver
	layout(&c, n)
	if c.used < limit {
		t.Fatalf("the limit %d MiB holds sa.go's construction (%d MiB): no test", limit>>20, c.used>>20)
	}
	b.dev.limit = limit
	b.dev.peak.Store(base)
	if most := b.MaxIndexPage(ref.Alpha.Size); most < n || most > 2*n {
		t.Errorf("MaxIndexPage under a limit of %d MiB: %d codes, want about %d", limit>>20, most, n)
	}
	sa := make([]int32, n+1)
	if err := host.SuffixArray(ref.Text, sa[1:]); err != nil {
		t.Fatal(err)
	}
	k := cpu.KmerLength(n, ref.Alpha.Size)
	wp, _ := cpu.NewPageFromSAKmers(ref.Text, ref.Alpha.Size, 0, n, n, sa, k, 2)
	gp, _, err := b.IndexPage(ref.Text, ref.Alpha.Size, 0, n, n, k, 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(notes) > 0 {
		t.Fatalf("built with notes %q, want on the device", notes)
	}
	wa, ga := wp.Arrays(), gp.Arrays()
	if !slices.Equal(ga.SA, wa.SA) || !slices.Equal(ga.LCPBytes, wa.LCPBytes) || !slices.Equal(ga.Occ, wa.Occ) {
		t.Fatal("arrays differ from the CPU's")
	}
	if peak := uint64(b.dev.peak.Load()); peak > limit {
		t.Errorf("device buffers took %d MiB at once under a limit of %d MiB", peak>>20, limit>>20)
	} else {
		t.Logf("%d codes: peak %.1f bytes a base (limit %.1f), sa.go's construction alone %.1f", n,
			float64(peak-uint64(base))/float64(n), float64(limit-uint64(base))/float64(n), float64(c.used)/float64(n))
	}
}

// TestLimitLeft: what a device's memory limit leaves to its pool is the limit less the device's
// other buffers (the pool itself may be given back and taken again), the test limit when that is
// smaller, and nothing beyond the limit; no limit, no bound.
func TestLimitLeft(t *testing.T) {
	defer func(m uint64) { memLimit = m }(memLimit)
	memLimit = 0
	var d device
	if _, ok := d.limitLeft(); ok {
		t.Fatal("a bound without a limit")
	}
	d.limit = 1000
	d.took(300) // a buffer
	d.took(200) // the pool
	d.pool.size = 200
	if left, ok := d.limitLeft(); !ok || left != 700 {
		t.Errorf("limit 1000, 300 in buffers: %d left, want 700", left)
	}
	memLimit = 600
	if left, _ := d.limitLeft(); left != 300 {
		t.Errorf("a test limit of 600: %d left, want 300", left)
	}
	memLimit = 0
	d.took(900) // more buffers than the limit
	if left, ok := d.limitLeft(); !ok || left != 0 {
		t.Errorf("buffers over the limit: %d left, want 0", left)
	}
	if p := d.peak.Load(); p != 1400 {
		t.Errorf("peak %d, want 1400", p)
	}
}

// TestSlicedRows: the slice chosen for a pool is the largest that fits it, the whole text when
// that fits, and none below the smallest worth running.
func TestSlicedRows(t *testing.T) {
	for _, n := range []int{1 << 16, 10_000_000, 1_550_000_000} {
		for _, rows := range []int{n / 10, n / 3} {
			if rows < slicedMinRows {
				continue // below the smallest worth running: checked last
			}
			avail := slicedBytes(n, rows)
			got := slicedRows(n, avail)
			if got < rows || slicedBytes(n, got) > avail || got < n && slicedBytes(n, got+1) <= avail {
				t.Errorf("n %d, a pool of %d bytes: slices of %d, want the most that fit (%d fit)", n, avail, got, rows)
			}
		}
		if got := slicedRows(n, slicedBytes(n, n)+1); got != n {
			t.Errorf("n %d, room for all: slices of %d", n, got)
		}
		if got := slicedRows(n, slicedBytes(n, slicedMinRows/2)); n > slicedMinRows && got != 0 {
			t.Errorf("n %d, room for half the smallest slice: slices of %d", n, got)
		}
	}
}
