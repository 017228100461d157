package bwz

import (
	"encoding/binary"
	"errors"
	"math"

	"github.com/klauspost/compress/huff0"
)

// The Huffman coder (method methodHuffman) is the fast one, bzip2's scheme with huff0 as the
// entropy coder: move-to-front ranks, runs of rank 0 written as bijective base-2 digits (RUNA,
// RUNB), the symbols cut into groups of huffGroup, and each group coded with the best of up to
// huffTables Huffman tables, chosen by a few rounds of refinement as bzip2 does. The symbols of
// all groups that use one table form one stream, coded by huff0 in chunks; decoding is huff0's
// table-driven decoders, a copy per group and the inverse move-to-front.
//
// Symbols: 0 and 1 are the digits RUNA and RUNB, 2..254 are ranks 1..253, and 255 is rank 254
// or 255, told apart by one bit each in a side array (rank 254 needs all 256 byte values in use).

const (
	huffGroup      = 64
	huffTables     = 6
	huffChunk      = 128 << 10 // symbols per huff0 call, under huff0.BlockSizeMax
	huffIterations = 4
)

// chunk modes
const (
	chunkRaw = iota
	chunkRLE
	chunk1X
	chunk4X
)

// mtfRuns turns src into symbols and the side bits of symbol 255. The symbols are written by
// index into room for all of them (one at most per byte of src), and the list searched and moved
// by inlined code for ranks under 16 (find, shift16): with appends and calls in it the loop kept
// few of its values in registers, and took 155M instructions instead of 116M for 4 MiB of the
// Linux tar's transform (callgrind).
func mtfRuns(src []byte) (syms []byte, side []byte, nside int) {
	syms = make([]byte, len(src)+1)
	o := 0
	mtf := newMTF()
	for i := 0; i < len(src); {
		c := src[i]
		if mtf[0] == c {
			// a run of rank 0, written as its length's digits
			j := i + 1
			for j < len(src) && src[j] == c {
				j++
			}
			for run := j - i; run > 0; run >>= 1 {
				run--
				syms[o] = byte(run & 1)
				o++
			}
			i = j
			continue
		}
		i++
		r := mtf.find(c)
		if r < 16 {
			mtf.shift16(r)
		} else {
			mtf.shiftLong(r)
		}
		mtf[0] = c
		if r >= 254 {
			syms[o] = 255
			o++
			if nside%8 == 0 {
				side = append(side, 0)
			}
			side[nside/8] |= byte(r-254) << (nside % 8)
			nside++
			continue
		}
		syms[o] = byte(r + 1)
		o++
	}
	return syms[:o], side, nside
}

// huffTableCount is how many tables pay for nsyms symbols (bzip2's thresholds, doubled for our
// larger groups' lower selector cost).
func huffTableCount(nsyms int) int {
	switch {
	case nsyms < 200:
		return 1
	case nsyms < 600:
		return 2
	case nsyms < 1200:
		return 3
	case nsyms < 2400:
		return 4
	case nsyms < 4800:
		return 5
	}
	return huffTables
}

// chooseTables assigns each group of syms one of ntables tables, refining the tables' statistics
// from the groups that chose them.
func chooseTables(syms []byte, ntables int) []byte {
	ngroups := (len(syms) + huffGroup - 1) / huffGroup
	sel := make([]byte, ngroups)
	if ntables == 1 {
		return sel
	}
	// start: table t favours the t-th slice of the alphabet by frequency, as bzip2 does
	var freq [256]int
	for _, s := range syms {
		freq[s]++
	}
	var cost [huffTables][256]uint16 // 1/16ths of a bit
	remaining, lo := len(syms), 0
	for t := 0; t < ntables; t++ {
		target := remaining / (ntables - t)
		hi, acc := lo, 0
		for hi < 256 && (acc < target || hi == lo) {
			acc += freq[hi]
			hi++
		}
		for s := range cost[t] {
			if s >= lo && s < hi {
				cost[t][s] = 0
			} else {
				cost[t][s] = 15 * 16
			}
		}
		remaining -= acc
		lo = hi
	}
	// packed costs: tables 0..3 and 4..5, 16 bits each, summed for a group in one go
	var packed [2][256]uint64
	pack := func() {
		for s := 0; s < 256; s++ {
			var a, b uint64
			for t := 0; t < ntables; t++ {
				if t < 4 {
					a |= uint64(cost[t][s]) << (16 * t)
				} else {
					b |= uint64(cost[t][s]) << (16 * (t - 4))
				}
			}
			packed[0][s], packed[1][s] = a, b
		}
	}
	for it := 0; it < huffIterations; it++ {
		pack()
		last := it == huffIterations-1
		// the groups' symbols counted per table for the next round's costs, in two banks (odd
		// and even positions) so that a run of one symbol does not wait on its own increments
		var tfreq [2][huffTables][256]uint32
		for g := range sel {
			grp := syms[g*huffGroup : min((g+1)*huffGroup, len(syms))]
			a, b := groupCosts(grp, &packed)
			best, bc := 0, uint64(math.MaxUint64)
			for t := 0; t < ntables; t++ {
				var c uint64
				if t < 4 {
					c = a >> (16 * t) & 0xFFFF
				} else {
					c = b >> (16 * (t - 4)) & 0xFFFF
				}
				if c < bc {
					best, bc = t, c
				}
			}
			sel[g] = byte(best)
			if last {
				continue
			}
			f0, f1 := &tfreq[0][best], &tfreq[1][best]
			i := 0
			for ; i+1 < len(grp); i += 2 {
				f0[grp[i]]++
				f1[grp[i+1]]++
			}
			if i < len(grp) {
				f0[grp[i]]++
			}
		}
		if last {
			break
		}
		for t := 0; t < ntables; t++ {
			var f [256]uint32
			total := 0
			for s := range f {
				f[s] = tfreq[0][t][s] + tfreq[1][t][s]
				total += int(f[s])
			}
			for s := range cost[t] {
				// -log2 of the smoothed frequency, in 1/16ths of a bit, at most 20 bits
				p := (float64(f[s]) + 0.5) / (float64(total) + 128)
				cost[t][s] = uint16(min(-math.Log2(p)*16, 20*16))
			}
		}
	}
	return sel
}

// groupCosts sums the packed costs of the symbols of grp under each table. (A function of its
// own, so that the sums stay in registers: in chooseTables' loop Go kept them on the stack, and
// each symbol's add waited for the last one's store.)
//
//go:noinline
func groupCosts(grp []byte, packed *[2][256]uint64) (a, b uint64) {
	for _, s := range grp {
		a += packed[0][s]
		b += packed[1][s]
	}
	return a, b
}

// appendChunked appends the huff0 coding of b (whose length the decoder knows) in chunks.
func appendChunked(out, b []byte, s *huff0.Scratch) []byte {
	for off := 0; off < len(b); off += huffChunk {
		c := b[off:min(off+huffChunk, len(b))]
		var coded []byte
		var err error
		mode := byte(chunk4X)
		s.Reuse = huff0.ReusePolicyNone
		if len(c) < 1024 {
			mode = chunk1X
			coded, _, err = huff0.Compress1X(c, s)
		} else {
			coded, _, err = huff0.Compress4X(c, s)
		}
		switch {
		case errors.Is(err, huff0.ErrUseRLE):
			out = append(out, chunkRLE, c[0])
		case err != nil || len(coded) >= len(c):
			out = append(out, chunkRaw)
			out = append(out, c...)
		default:
			out = append(out, mode)
			out = binary.AppendUvarint(out, uint64(len(coded)))
			out = append(out, coded...)
		}
	}
	return out
}

// encodeHuffman appends the Huffman coding of src to out:
//
//	uvarint  the number of symbols, S
//	byte     the number of tables, T (huffTableCount(S); 1 to 6)
//	chunks   if T > 1: the tables of the ceil(S/64) groups, move-to-front coded
//	T times  uvarint the length of table t's stream, then its chunks
//	bytes    the side bits of symbol 255, least significant first
//
// where chunks code a known number of bytes in pieces of at most 128 KiB, each a mode byte and:
// 0 the bytes raw, 1 one byte repeated, 2 or 3 a uvarint length and huff0's 1X or 4X coding
// (table and data) of the piece.
func encodeHuffman(src []byte, out []byte) []byte {
	syms, side, nside := mtfRuns(src)
	ntables := huffTableCount(len(syms))
	sel := chooseTables(syms, ntables)
	out = binary.AppendUvarint(out, uint64(len(syms)))
	out = append(out, byte(ntables))
	s := &huff0.Scratch{}
	if ntables > 1 {
		// selectors, move-to-front coded: runs of one table become runs of 0
		var order [huffTables]byte
		for i := range order {
			order[i] = byte(i)
		}
		mtfSel := make([]byte, len(sel))
		for g, t := range sel {
			r := 0
			for order[r] != t {
				r++
			}
			copy(order[1:r+1], order[:r])
			order[0] = t
			mtfSel[g] = byte(r)
		}
		out = appendChunked(out, mtfSel, s)
	}
	// the streams, each preceded by its length
	streams := make([][]byte, ntables)
	for g, t := range sel {
		streams[t] = append(streams[t], syms[g*huffGroup:min((g+1)*huffGroup, len(syms))]...)
	}
	for _, st := range streams {
		out = binary.AppendUvarint(out, uint64(len(st)))
		out = appendChunked(out, st, s)
	}
	out = append(out, side...)
	_ = nside
	return out
}

// readChunked decodes n bytes coded by appendChunked from the front of src into dst and returns
// what follows.
func readChunked(src, dst []byte, s *huff0.Scratch) ([]byte, error) {
	for off := 0; off < len(dst); off += huffChunk {
		c := dst[off:min(off+huffChunk, len(dst))]
		if len(src) < 1 {
			return nil, corruptf("Huffman data ends early")
		}
		mode := src[0]
		src = src[1:]
		switch mode {
		case chunkRaw:
			if len(src) < len(c) {
				return nil, corruptf("Huffman data ends early")
			}
			copy(c, src)
			src = src[len(c):]
		case chunkRLE:
			if len(src) < 1 {
				return nil, corruptf("Huffman data ends early")
			}
			fill(c, src[0])
			src = src[1:]
		case chunk1X, chunk4X:
			l, k := binary.Uvarint(src)
			if k <= 0 || l > uint64(len(src)-k) {
				return nil, corruptf("bad Huffman chunk length")
			}
			data := src[k : k+int(l)]
			src = src[k+int(l):]
			var err error
			s, data, err = huff0.ReadTable(data, s)
			if err != nil {
				return nil, corruptf("Huffman table: %v", err)
			}
			var got []byte
			if mode == chunk1X {
				got, err = s.Decoder().Decompress1X(c[:0:len(c)], data)
			} else {
				got, err = s.Decoder().Decompress4X(c[:0:len(c)], data)
			}
			if err != nil || len(got) != len(c) {
				return nil, corruptf("Huffman chunk: %v", err)
			}
		default:
			return nil, corruptf("unknown Huffman chunk mode %d", mode)
		}
	}
	return src, nil
}

// decodeHuffman fills dst from the Huffman coding in src.
func decodeHuffman(src []byte, dst []byte) error {
	n64, k := binary.Uvarint(src)
	if k <= 0 || n64 > uint64(len(dst)) || len(src) < k+1 {
		return corruptf("bad symbol count")
	}
	nsyms := int(n64)
	ntables := int(src[k])
	src = src[k+1:]
	if ntables < 1 || ntables > huffTables || ntables != huffTableCount(nsyms) {
		return corruptf("%d Huffman tables for %d symbols", ntables, nsyms)
	}
	ngroups := (nsyms + huffGroup - 1) / huffGroup
	s := &huff0.Scratch{}
	sel := make([]byte, ngroups)
	var err error
	if ntables > 1 {
		if src, err = readChunked(src, sel, s); err != nil {
			return err
		}
		var order [huffTables]byte
		for i := range order {
			order[i] = byte(i)
		}
		for g, r := range sel {
			if int(r) >= ntables {
				return corruptf("selector %d of %d tables", r, ntables)
			}
			t := order[r]
			copy(order[1:r+1], order[:r])
			order[0] = t
			sel[g] = t
		}
	}
	// each stream's length must be what the selectors give it
	var want [huffTables]int
	for g, t := range sel {
		want[t] += min(huffGroup, nsyms-g*huffGroup)
	}
	streams := make([][]byte, ntables)
	for t := range streams {
		l, k := binary.Uvarint(src)
		if k <= 0 || l != uint64(want[t]) {
			return corruptf("Huffman stream %d: bad length", t)
		}
		src = src[k:]
		streams[t] = make([]byte, l)
		if src, err = readChunked(src, streams[t], s); err != nil {
			return err
		}
	}
	side := src
	// interleave the groups back, then undo the runs and the move-to-front
	syms := make([]byte, nsyms)
	var pos [huffTables]int
	for g, t := range sel {
		n := copy(syms[g*huffGroup:min((g+1)*huffGroup, nsyms)], streams[t][pos[t]:])
		pos[t] += n
	}
	mtf := newMTF()
	out, run, digit, nside := 0, 0, 0, 0
	for _, sym := range syms {
		if sym <= 1 {
			if digit > 30 {
				return corruptf("run too long")
			}
			run += (int(sym) + 1) << digit
			digit++
			continue
		}
		if run > 0 {
			if run > len(dst)-out {
				return corruptf("run of %d overruns the segment", run)
			}
			fillRun(dst, out, run, mtf[0])
			out += run
			run, digit = 0, 0
		}
		r := int(sym) - 1
		if sym == 255 {
			if nside/8 >= len(side) {
				return corruptf("side bits end early")
			}
			r = 254 + int(side[nside/8]>>(nside%8)&1)
			nside++
		}
		if out >= len(dst) {
			return corruptf("symbols overrun the segment")
		}
		c := mtf[r&255] // mtf.take(r), written out: take calls shift, which is too large to be inlined
		if r < 16 {
			mtf.shift16(r)
		} else {
			mtf.shiftLong(r)
		}
		mtf[0] = c
		dst[out] = c
		out++
	}
	if run > 0 {
		if run > len(dst)-out {
			return corruptf("run of %d overruns the segment", run)
		}
		fill(dst[out:out+run], mtf[0])
		out += run
	}
	if out != len(dst) || (nside+7)/8 != len(side) {
		return corruptf("Huffman symbols give %d bytes of %d", out, len(dst))
	}
	return nil
}
