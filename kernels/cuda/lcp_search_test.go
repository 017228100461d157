package cuda

import (
	"math/rand"
	"slices"
	"testing"
	"unsafe"

	"github.com/sapipe/sapipe/kernels/cpu"
)

// TestGPULCPSearch: the device's searches for the next smaller LCP (pg_prev_smaller and
// pg_next_smaller, through lcp_probe) against a scan, on 2^22 rows that are deep but for a few
// dips and one stretch of shallow rows: the climbs go up to the fourth level of block minima,
// depths up to 255 compare the LCP bytes 64 rows at a time, deeper ones read the side table.
func TestGPULCPSearch(t *testing.T) {
	b := gpuBackend(t)
	rng := rand.New(rand.NewSource(11))
	rows := 1<<22 + 17
	n := rows - 2
	vals := make([]int32, rows)
	for i := 1; i < rows-1; i++ {
		vals[i] = int32(300 + rng.Intn(200)) // escaped: in the side table
	}
	for i := 70000; i < 74000; i++ {
		vals[i] = int32(rng.Intn(40))
	}
	for range 40 {
		vals[1+rng.Intn(rows-2)] = int32(1 + rng.Intn(299))
	}
	var low []int // rows under 300, the only ones under a depth of 300 or less
	a := cpu.DeviceArrays{N: n, End: n, WinEnd: n, SA: make([]int32, n+1), LCP: make([]uint8, rows), LCPMin1: make([]int32, (rows+63)/64)}
	for k, v := range vals {
		if v < 300 {
			low = append(low, k)
		}
		if v >= cpu.LCPEscape {
			a.LCP[k] = cpu.LCPEscape
			a.LCPBigRow, a.LCPBigVal = append(a.LCPBigRow, int32(k)), append(a.LCPBigVal, v)
		} else {
			a.LCP[k] = uint8(v)
		}
		if k%64 == 0 || v < a.LCPMin1[k/64] {
			a.LCPMin1[k/64] = v
		}
	}
	a.LCPMin2 = make([]int32, (len(a.LCPMin1)+63)/64)
	for i := range a.LCPMin2 {
		a.LCPMin2[i] = slices.Min(a.LCPMin1[i*64 : min(i*64+64, len(a.LCPMin1))])
	}
	a.LCPUp = cpu.LCPUp(a.LCPMin2)
	h := hostPage{a: a, shape: pageShape{start: 0, end: n, winEnd: n, n: n, nBig: len(a.LCPBigRow)}}
	h.shape.occShape(6)
	h.a.Occ = make([]uint64, h.shape.occWords)
	h.a.Deep = make([]uint64, len(a.LCPMin1))
	h.bytes = pageBytes(h.shape)
	if lens, _ := h.shape.lcpUp(); lens[1] != 1 || lens[0] < 2 {
		t.Fatalf("levels above min2 of %v entries", lens)
	}

	// scan is the search done row by row, jumping over the deep rows when no deep row can do.
	scan := func(k int, d int32, step int) int {
		if d <= 300 {
			i, _ := slices.BinarySearch(low, k)
			if step < 0 && (i == len(low) || low[i] != k) {
				i--
			}
			for ; vals[low[i]] >= d; i += step {
			}
			return low[i]
		}
		for vals[k] >= d {
			k += step
		}
		return k
	}
	const q = 50000
	ks, ds := make([]uint32, q), make([]int32, q)
	for i := range ks {
		k := rng.Intn(rows)
		if i%3 == 0 { // near a shallow row, on either side of a group's edge
			k = min(max(low[rng.Intn(len(low))]+rng.Intn(129)-64, 0), rows-1)
		}
		ks[i], ds[i] = uint32(k), int32(1+rng.Intn(600))
	}
	prev, next := make([]uint32, q), make([]uint32, q)
	err := b.dev.run(func() error {
		d := b.dev
		var base, dk, dd, dp, dn devPtr
		for _, m := range []struct {
			p *devPtr
			n uint64
		}{{&base, h.bytes}, {&dk, 4 * q}, {&dd, 4 * q}, {&dp, 4 * q}, {&dn, 4 * q}} {
			if err := d.drv.check("cuMemAlloc", d.drv.cuMemAlloc(m.p, m.n)); err != nil {
				return err
			}
			defer d.drv.cuMemFree(*m.p)
		}
		desc, err := h.upload(d, base, 0, make([]byte, n))
		if err != nil {
			return err
		}
		if err := d.toDevice(dk, unsafe.Pointer(&ks[0]), 4*q); err != nil {
			return err
		}
		if err := d.toDevice(dd, unsafe.Pointer(&ds[0]), 4*q); err != nil {
			return err
		}
		if err := d.sync(); err != nil {
			return err
		}
		fn, err := d.fn("lcp_probe")
		if err != nil {
			return err
		}
		s, err := newStream(d) // a stream's launch takes the page's descriptor
		if err != nil {
			return err
		}
		defer s.destroy()
		if err := s.launch("lcp_probe", fn, ceilDiv(q, 128), 128, &desc, dk, dd, uint32(q), dp, dn); err != nil {
			return err
		}
		if err := s.sync(); err != nil {
			return err
		}
		if err := d.toHost(unsafe.Pointer(&prev[0]), dp, 4*q); err != nil {
			return err
		}
		if err := d.toHost(unsafe.Pointer(&next[0]), dn, 4*q); err != nil {
			return err
		}
		return d.sync()
	})
	if err != nil {
		t.Fatal(err)
	}
	for i := range ks {
		k, d := int(ks[i]), ds[i]
		if want := scan(k, d, -1); int(prev[i]) != want {
			t.Fatalf("prev smaller of row %d under %d: %d, want %d", k, d, prev[i], want)
		}
		if want := scan(k, d, 1); int(next[i]) != want {
			t.Fatalf("next smaller of row %d under %d: %d, want %d", k, d, next[i], want)
		}
	}
}
