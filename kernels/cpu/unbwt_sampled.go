package cpu

import (
	"fmt"
	"sync"
	"unsafe"

	"github.com/sapipe/sapipe/internal/bytecount"
)

// The inverse BWT walks from row to row, one dependent random read per byte: on a block larger
// than the caches each step waits for memory, and one walk runs at a few MB/s. Knowing the rows of
// a few text positions (one every 1<<shift bytes) lets the walk start at each of them: many walks
// advance in lock step, their reads overlap in the memory system, and they split over threads.
// BWTSampled writes those rows at transform time, from the suffix array; InverseBWTSampled uses
// them. The transform is the one of package kernels (kernels.BWTFromSA).

// BWTSampled writes to dst the transform of text whose suffix array is sa, as kernels.BWTFromSA
// does, and returns its primary index and the rows of text positions k<<shift for k = 1, 2, ...,
// (n-1)>>shift. It splits the work over up to threads goroutines.
func BWTSampled(text []byte, sa []int32, dst []byte, shift uint, threads int) (primary int, samples []uint32) {
	n := len(text)
	if n == 0 {
		return 0, nil
	}
	samples = make([]uint32, (n-1)>>shift)
	chunks := splitRange(n, threads, sampledChunk)
	// find the primary index first: it decides where each row's byte goes in dst
	found := make([]int, len(chunks))
	parallelChunks(chunks, func(ci, lo, hi int) {
		found[ci] = -1
		for i, s := range sa[lo:hi] {
			if s == 0 {
				found[ci] = lo + i + 1
				return
			}
		}
	})
	for _, p := range found {
		if p > 0 {
			primary = p
		}
	}
	mask := int32(1)<<shift - 1
	dst[0] = text[n-1]
	// Row i+1 holds the suffix at sa[i]. Rows before the primary one (the sentinel's, where
	// sa[primary-1] == 0) go to dst[i+1], those after it to dst[i].
	parallelChunks(chunks, func(_, lo, hi int) {
		if a := min(hi, primary-1); lo < a {
			bwtRows(dst[lo+1:a+1], text, sa[lo:a], lo+1, samples, mask, shift)
		}
		if b := max(lo, primary); b < hi {
			bwtRows(dst[b:hi], text, sa[b:hi], b+1, samples, mask, shift)
		}
	})
	return primary, samples
}

// BWTThreads is kernels.BWTFromSA on up to threads goroutines, asking for the text bytes ahead
// (BWTSampled without samples).
func BWTThreads(text []byte, sa []int32, dst []byte, threads int) (primary int) {
	primary, _ = BWTSampled(text, sa, dst, 31, threads) // no position under 2^31 is a sample
	return primary
}

// sampledChunk is the fewest rows BWTSampled gives a thread (a variable for the tests).
var sampledChunk = 1 << 20

// bwtRows writes text[s-1] to dst[x] for each s = sa[x] (none of them 0), and the row (row+x)
// of each text position s that is a multiple of mask+1 to samples[s>>shift-1]. The text is read
// at random: the bytes of one over 8 MiB are asked for 2*pfDist rows ahead (text[s], on the
// line of text[s-1] but at every 64th byte). The Linux tar's 100 MiB on 2 threads: 1.05-1.27 s
// without, 0.46-0.53 s with. A text of 4 MiB, which the caches hold, went faster without (11-13
// against 17-21 ms on 4 MiB of the tar, alternated; 8 MiB about even, 16 MiB 78-93 against
// 100-105 ms).
func bwtRows(dst, text []byte, sa []int32, row int, samples []uint32, mask int32, shift uint) {
	sa = sa[:len(dst)]
	tp := unsafe.Pointer(unsafe.SliceData(text))
	ask := len(text) > 8<<20
	for i0 := 0; i0 < len(sa); i0 += pfStep {
		if a := i0 + 2*pfDist; ask && a < len(sa) {
			prefetchIdx(tp, sa[a:min(a+pfStep, len(sa))], 0, 0)
		}
		for x := i0; x < min(i0+pfStep, len(sa)); x++ {
			s := sa[x]
			dst[x] = text[s-1]
			if s&mask == 0 {
				samples[s>>shift-1] = uint32(row + x)
			}
		}
	}
}

// InverseBWTSampled writes to dst (len(dst) == len(bwt)) the text whose transform is bwt with
// primary index primary and sampled rows samples (as BWTSampled returns them, for the same
// shift), walking from every sample at once on up to threads goroutines. It checks the indexes'
// ranges, not their truth: wrong samples give wrong text, never a crash, and a caller that must
// know checks a checksum of the result.
func InverseBWTSampled(bwt []byte, primary int, samples []uint32, shift uint, dst []byte, threads int) error {
	n := len(bwt)
	if len(dst) != n {
		return fmt.Errorf("inverse BWT: output length %d, want %d", len(dst), n)
	}
	if n == 0 {
		if primary != 0 || len(samples) != 0 {
			return fmt.Errorf("inverse BWT: primary index %d of an empty block, want 0", primary)
		}
		return nil
	}
	if primary < 1 || primary > n {
		return fmt.Errorf("inverse BWT: primary index %d out of range 1..%d", primary, n)
	}
	if int64(n) >= 1<<32-1 {
		return fmt.Errorf("inverse BWT: block of %d bytes is too long", n)
	}
	if shift < 4 || shift > 31 || len(samples) != (n-1)>>shift {
		return fmt.Errorf("inverse BWT: %d sampled rows at distance 2^%d for %d bytes, want %d", len(samples), shift, n, (n-1)>>shift)
	}
	for _, s := range samples {
		if s < 1 || int64(s) > int64(n) {
			return fmt.Errorf("inverse BWT: sampled row %d out of range 1..%d", s, n)
		}
	}
	chunks := splitRange(n, threads, 1<<20)

	// count each byte, per chunk, so that chunks can place their rows independently
	counts := make([][256]uint32, len(chunks))
	parallelChunks(chunks, func(ci, lo, hi int) {
		counts[ci] = bytecount.Of(bwt[lo:hi])
	})
	var cstart [257]uint32 // first row of each byte in F; row 0 is the sentinel
	pos := make([][256]uint32, len(chunks))
	s := uint32(1)
	for c := 0; c < 256; c++ {
		cstart[c] = s
		for ci := range chunks {
			pos[ci][c] = s
			s += counts[ci][c]
		}
	}
	cstart[256] = s

	// walk k starts at the row of text position k<<shift
	starts := make([]uint32, len(samples)+1)
	starts[0] = uint32(primary)
	copy(starts[1:], samples)
	walks := splitRange(len(starts), threads, 1)
	if n < packedLimit {
		// rows fit in 24 bits: keep F's byte beside each link, one read per step
		// link[r] for a row r of F: the row of L that holds the same occurrence of F[r]
		link := make([]uint32, n+1)
		adviseHugeTable(link)
		link[0] = uint32(primary) << 8
		parallelChunks(chunks, func(ci, lo, hi int) {
			placeLinks(link, bwt, lo, hi, primary, &pos[ci], true)
		})
		// link[r] is the row of the next text position and, in its low byte, F[r]: the text's
		// byte at r's position. So a step emits link[r]&255 and moves to link[r]>>8.
		parallelChunks(walks, func(_, lo, hi int) {
			walkPacked(link, starts[lo:hi], lo, shift, dst)
		})
		return nil
	}
	link := make([]uint32, n+1)
	link[0] = uint32(primary)
	parallelChunks(chunks, func(ci, lo, hi int) {
		placeLinks(link, bwt, lo, hi, primary, &pos[ci], false)
	})
	// F's byte at a row comes from the bucket bounds: fc[r>>fShift] is the byte at the start of
	// r's stretch of rows, and a few comparisons with cstart finish the lookup.
	const fShift = 8
	fc := make([]byte, (n+1)>>fShift+1)
	c := 0
	for i := range fc {
		r := uint32(i) << fShift
		for c < 255 && r >= cstart[c+1] {
			c++
		}
		fc[i] = byte(c)
	}
	parallelChunks(walks, func(_, lo, hi int) {
		walkLookup(link, fc, &cstart, starts[lo:hi], lo, shift, dst)
	})
	return nil
}

// placeLinks sets link[p[b]] for each byte b of bwt[lo:hi], in order, to its row (with the byte
// in the low 8 bits, packed), p[b] counting up: bwt[x] is row x before the primary row, x+1 after
// it. Each p[b] stays inside b's bucket of rows (at most n), so the writes go through a pointer.
//
// Four bytes a step: their counters are all read before any is written back, each taken
// from an earlier one of the four when the bytes are equal (three in four neighbours are, in the
// transform of text). One byte a step, each counter's read waited for the write of the byte
// before (store to load forwarding): 3.5 against 1.6-1.9 ns a byte on 4 MiB of the Linux tar's
// transform.
func placeLinks(link []uint32, bwt []byte, lo, hi, primary int, p *[256]uint32, packed bool) {
	lp := unsafe.Pointer(unsafe.SliceData(link))
	for _, part := range [2][3]int{{lo, min(hi, primary), 0}, {max(lo, primary), hi, 1}} {
		a, b, off := part[0], part[1], part[2]
		if a >= b {
			continue
		}
		row := uint32(a + off)
		s := bwt[a:b]
		i := 0
		for ; i+3 < len(s); i += 4 {
			c0, c1, c2, c3 := s[i], s[i+1], s[i+2], s[i+3]
			q0, q1, q2, q3 := p[c0], p[c1], p[c2], p[c3]
			if c1 == c0 {
				q1 = q0 + 1
			}
			if c2 == c0 {
				q2 = q0 + 1
			}
			if c2 == c1 {
				q2 = q1 + 1
			}
			if c3 == c0 {
				q3 = q0 + 1
			}
			if c3 == c1 {
				q3 = q1 + 1
			}
			if c3 == c2 {
				q3 = q2 + 1
			}
			// in order, so that the last of equal bytes leaves its counter past all of them
			p[c0], p[c1], p[c2], p[c3] = q0+1, q1+1, q2+1, q3+1
			v0, v1, v2, v3 := row, row+1, row+2, row+3
			if packed {
				v0, v1, v2, v3 = v0<<8|uint32(c0), v1<<8|uint32(c1), v2<<8|uint32(c2), v3<<8|uint32(c3)
			}
			*(*uint32)(unsafe.Add(lp, uintptr(q0)*4)) = v0
			*(*uint32)(unsafe.Add(lp, uintptr(q1)*4)) = v1
			*(*uint32)(unsafe.Add(lp, uintptr(q2)*4)) = v2
			*(*uint32)(unsafe.Add(lp, uintptr(q3)*4)) = v3
			row += 4
		}
		for _, c := range s[i:] {
			v := row
			if packed {
				v = row<<8 | uint32(c)
			}
			*(*uint32)(unsafe.Add(lp, uintptr(p[c])*4)) = v
			p[c]++
			row++
		}
	}
}

// packedLimit is the block length below which rows fit in 24 bits; tests lower it to reach the
// other path.
var packedLimit = 1 << 24

// walkWidth is how many walks advance in lock step: enough reads in flight to hide memory latency.
const walkWidth = 16

// walkGroup sets up the walks g, g+1, ... (at most walkWidth) of starts: their rows, their parts
// of dst (walk first+g+k covers text positions (first+g+k)<<shift onwards), how many walks, and
// how many steps all of them take.
func walkGroup(starts []uint32, g, first int, shift uint, dst []byte) (m int, rows [walkWidth]uint32, out [walkWidth][]byte, full int) {
	n := len(dst)
	step := 1 << shift
	m = min(walkWidth, len(starts)-g)
	full = step
	for k := 0; k < m; k++ {
		rows[k] = starts[g+k]
		p := (first + g + k) << shift
		out[k] = dst[p:min(p+step, n)]
		full = min(full, len(out[k]))
	}
	return m, rows, out, full
}

// The walks' inner loops read links and write bytes through pointers, without bounds checks:
// every row is at most n (the starts are checked, and every link holds a row), link has n+1
// entries, and the first full bytes of every walk's part of dst are its own. A short group (the
// last of a block) goes the checked way.

func outPointers(out *[walkWidth][]byte) (op [walkWidth]unsafe.Pointer) {
	for k := range op {
		op[k] = unsafe.Pointer(unsafe.SliceData(out[k]))
	}
	return op
}

// walkPacked runs the walks that start at rows starts (walk first+i covers text positions
// (first+i)<<shift onwards), with links that carry F's byte in their low 8 bits. 16 walks of a
// 4 MiB block in lock step, through pointers: 54-81 -> 84-101 MB/s (BenchmarkInverseBWTSampled,
// alternated).
func walkPacked(link []uint32, starts []uint32, first int, shift uint, dst []byte) {
	lp := unsafe.Pointer(unsafe.SliceData(link))
	for g := 0; g < len(starts); g += walkWidth {
		m, rows, out, full := walkGroup(starts, g, first, shift, dst)
		if m == walkWidth {
			op := outPointers(&out)
			for i := 0; i < full; i++ {
				for k := 0; k < walkWidth; k++ {
					e := *(*uint32)(unsafe.Add(lp, uintptr(rows[k])*4))
					*(*byte)(unsafe.Add(op[k], i)) = byte(e)
					rows[k] = e >> 8
				}
			}
		} else {
			for i := 0; i < full; i++ {
				for k := 0; k < m; k++ {
					e := link[rows[k]]
					out[k][i] = byte(e)
					rows[k] = e >> 8
				}
			}
		}
		for k := 0; k < m; k++ { // the last walk of a block may be shorter than the others
			r := rows[k]
			for i := full; i < len(out[k]); i++ {
				e := link[r]
				out[k][i] = byte(e)
				r = e >> 8
			}
		}
	}
}

// walkLookup is walkPacked for links that are rows alone: F's byte comes from the bucket bounds.
func walkLookup(link []uint32, fc []byte, cstart *[257]uint32, starts []uint32, first int, shift uint, dst []byte) {
	fbyte := func(r uint32) byte {
		c := int(fc[r>>8])
		for c < 255 && r >= cstart[c+1] {
			c++
		}
		return byte(c)
	}
	lp := unsafe.Pointer(unsafe.SliceData(link))
	for g := 0; g < len(starts); g += walkWidth {
		m, rows, out, full := walkGroup(starts, g, first, shift, dst)
		if m == walkWidth {
			op := outPointers(&out)
			for i := 0; i < full; i++ {
				for k := 0; k < walkWidth; k++ {
					r := rows[k]
					*(*byte)(unsafe.Add(op[k], i)) = fbyte(r)
					rows[k] = *(*uint32)(unsafe.Add(lp, uintptr(r)*4))
				}
			}
		} else {
			for i := 0; i < full; i++ {
				for k := 0; k < m; k++ {
					r := rows[k]
					out[k][i] = fbyte(r)
					rows[k] = link[r]
				}
			}
		}
		for k := 0; k < m; k++ {
			r := rows[k]
			for i := full; i < len(out[k]); i++ {
				out[k][i] = fbyte(r)
				r = link[r]
			}
		}
	}
}

// splitRange cuts [0, n) into at most threads chunks of at least minChunk (the last may be
// shorter), as [lo, hi) pairs.
func splitRange(n, threads, minChunk int) [][2]int {
	k := max(1, min(threads, n/max(minChunk, 1)))
	chunks := make([][2]int, 0, k)
	for i := 0; i < k; i++ {
		lo, hi := n*i/k, n*(i+1)/k
		chunks = append(chunks, [2]int{lo, hi})
	}
	if n == 0 {
		return chunks[:0]
	}
	return chunks
}

// parallelChunks calls fn on every chunk, each on its own goroutine.
func parallelChunks(chunks [][2]int, fn func(ci, lo, hi int)) {
	if len(chunks) == 1 {
		fn(0, chunks[0][0], chunks[0][1])
		return
	}
	var wg sync.WaitGroup
	for ci, c := range chunks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			fn(ci, c[0], c[1])
		}()
	}
	wg.Wait()
}
