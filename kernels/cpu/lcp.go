package cpu

// LCP fills lcp (len(lcp) == len(sa)) with the longest common prefix of each suffix-array row and
// the row before it (lcp[0] = 0), by the permuted-LCP method of Kärkkäinen, Manzini and Puglisi:
// in text order the LCP drops by at most one per step, so the total work is linear.
func LCP(text []byte, sa, lcp []int32) {
	plcp := PLCP(text, sa)
	for i, p := range sa {
		lcp[i] = plcp[p]
	}
}

// PLCP returns the permuted LCP array of text: plcp[p] is the longest common prefix of suffix p
// and the suffix before it in sa (0 for sa[0]).
func PLCP(text []byte, sa []int32) []int32 {
	n := len(sa)
	// phi[p] is the suffix that precedes suffix p in sa; then, in place, the PLCP of p.
	phi := make([]int32, n)
	if n == 0 {
		return phi
	}
	phi[sa[0]] = -1
	for i := 1; i < n; i++ {
		phi[sa[i]] = sa[i-1]
	}
	l := 0
	for p := 0; p < n; p++ {
		q := int(phi[p])
		if q < 0 {
			phi[p] = 0
			l = 0
			continue
		}
		for p+l < n && q+l < n && text[p+l] == text[q+l] {
			l++
		}
		phi[p] = int32(l)
		l = max(l-1, 0)
	}
	return phi
}

// lcpEscape marks a compactLCP entry whose value is in the side table.
const lcpEscape = 255

// compactLCP is an LCP array in one byte per row, with the values of lcpEscape and more kept
// exactly in a sorted side table, and the minimum of every block of 64 rows (min1) and of every
// 64 blocks (min2) for the searches of the next smaller value. Long common prefixes are rare
// between the suffixes of a genome, so it takes a quarter of the memory of plain int32 values,
// and the byte array stays in cache far longer while matching.
type compactLCP struct {
	small  []uint8
	bigRow []int32 // rows whose value is >= lcpEscape, ascending
	bigVal []int32
	min1   []int32
	min2   []int32
}

// newCompactLCP stores the n values at(0), ..., at(n-1).
func newCompactLCP(n int, at func(k int) int32) *compactLCP {
	l := &compactLCP{small: make([]uint8, n), min1: make([]int32, (n+63)/64)}
	for k := 0; k < n; k++ {
		v := at(k)
		if v >= lcpEscape {
			l.small[k] = lcpEscape
			l.bigRow = append(l.bigRow, int32(k))
			l.bigVal = append(l.bigVal, v)
		} else {
			l.small[k] = uint8(v)
		}
		if b := k >> 6; k&63 == 0 || v < l.min1[b] {
			l.min1[b] = v
		}
	}
	l.min2 = blockMins(l.min1)
	return l
}

// at returns the value of row k.
func (l *compactLCP) at(k int) int32 {
	if v := l.small[k]; v < lcpEscape {
		return int32(v)
	}
	return l.big(k)
}

func (l *compactLCP) big(k int) int32 {
	lo, hi := 0, len(l.bigRow)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if l.bigRow[m] < int32(k) {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return l.bigVal[lo]
}

// less reports whether the value of row k is less than d.
func (l *compactLCP) less(k int, d int32) bool {
	if v := l.small[k]; v < lcpEscape {
		return int32(v) < d
	}
	return d > lcpEscape && l.big(k) < d
}

// Bytes returns the memory the array holds.
func (l *compactLCP) Bytes() int {
	return len(l.small) + 4*(len(l.bigRow)+len(l.bigVal)+len(l.min1)+len(l.min2))
}

// blockMins returns the minimum of each block of 64 values of a.
func blockMins(a []int32) []int32 {
	m := make([]int32, (len(a)+63)/64)
	for b := range m {
		lo, hi := b*64, min(b*64+64, len(a))
		v := a[lo]
		for _, x := range a[lo+1 : hi] {
			v = min(v, x)
		}
		m[b] = v
	}
	return m
}

// prevSmaller returns the largest k' <= k with a value < d (d >= 1; row 0 has value 0).
func (l *compactLCP) prevSmaller(k int, d int32) int {
	i := k
	for {
		if l.less(i, d) {
			return i
		}
		if i&63 == 0 {
			break
		}
		i--
	}
	b := i>>6 - 1
	for l.min1[b] >= d {
		if b&63 == 0 {
			s := b>>6 - 1
			for l.min2[s] >= d {
				s--
			}
			b = s*64 + 63
			for l.min1[b] >= d {
				b--
			}
			break
		}
		b--
	}
	for i = b*64 + 63; !l.less(i, d); i-- {
	}
	return i
}

// nextSmaller returns the smallest k' >= k with a value < d (d >= 1; the last row has value 0).
func (l *compactLCP) nextSmaller(k int, d int32) int {
	i := k
	for {
		if l.less(i, d) {
			return i
		}
		i++
		if i&63 == 0 {
			break
		}
	}
	b := i >> 6
	for l.min1[b] >= d {
		b++
		if b&63 == 0 {
			s := b >> 6
			for l.min2[s] >= d {
				s++
			}
			b = s * 64
			for l.min1[b] >= d {
				b++
			}
			break
		}
	}
	for i = b * 64; !l.less(i, d); i++ {
	}
	return i
}
