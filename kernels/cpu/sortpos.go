package cpu

import "slices"

// radixMin is the shortest run of positions that sortPositions sorts by radix: below it the
// comparison sort is as fast, and the radix sort's counts cost more than its passes save.
const radixMin = 256

// sortPositions sorts s, whose values lie in [0, 2^32), ascending, and returns tmp, the
// scratch of a long run's radix sort (grown as needed; pass it back for the next call). A
// pattern's occurrences come from its suffix array rows in suffix order, which is random in text
// order; a repeat's short patterns have millions, where a comparison sort costs about log2 of
// their number in passes and a radix sort of the offsets' four bytes at most four (a byte that
// every offset shares is skipped). PagedSearcher sorts a page's 32-bit offsets (half the bytes
// to move of 64-bit positions: BenchmarkSortPositions), Searcher its positions.
func sortPositions[T int64 | uint32](s []T, tmp []T) []T {
	if len(s) < radixMin {
		slices.Sort(s)
		return tmp
	}
	var count [4][256]int
	for _, v := range s {
		k := uint32(v)
		count[0][byte(k)]++
		count[1][byte(k>>8)]++
		count[2][byte(k>>16)]++
		count[3][byte(k>>24)]++
	}
	tmp = slices.Grow(tmp[:0], len(s))[:len(s)]
	src, dst := s, tmp
	for d := range 4 {
		shift := 8 * d
		c := &count[d]
		if c[byte(uint32(src[0])>>shift)] == len(src) {
			continue // every offset has this byte: nothing moves
		}
		at := 0
		for b, n := range c {
			c[b] = at
			at += n
		}
		for _, v := range src {
			b := byte(uint32(v) >> shift)
			dst[c[b]] = v
			c[b]++
		}
		src, dst = dst, src
	}
	if &src[0] != &s[0] {
		copy(s, src)
	}
	return tmp
}
