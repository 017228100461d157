package cpu

// The reduced problems of SA-IS: the suffix array of a string of LMS substring names (int32).
// A plain SA-IS with a type bitmap; the top level (sais.go) does the heavy lifting.

// saisInt fills sa with the suffix array of t, whose symbols are in [0, sigma).
func saisInt(t, sa []int32, sigma int) { sais(t, sa, sigma) }

// symbol is what a recursion level sorts: bytes at the top, names of LMS substrings below.
type symbol interface{ ~byte | ~int32 }

// typeBits records whether each position is S-type (its suffix is smaller than the next one).
type typeBits []uint64

func (b typeBits) s(i int) bool { return b[i>>6]>>(uint(i)&63)&1 != 0 }

// lms reports whether i is a leftmost S-type position.
func (b typeBits) lms(i int) bool { return i > 0 && b.s(i) && !b.s(i-1) }

func classify[T symbol](t []T) typeBits {
	n := len(t)
	b := make(typeBits, (n+63)/64)
	// t[n-1] is L-type: the virtual sentinel after it is smaller.
	s := false
	for i := n - 2; i >= 0; i-- {
		s = t[i] < t[i+1] || (t[i] == t[i+1] && s)
		if s {
			b[i>>6] |= 1 << (uint(i) & 63)
		}
	}
	return b
}

// buckets fills bkt with the start (end false) or end (end true) of each symbol's bucket.
func buckets(counts, bkt []int32, end bool) {
	var sum int32
	for c, k := range counts {
		sum += k
		if end {
			bkt[c] = sum
		} else {
			bkt[c] = sum - k
		}
	}
}

func sais[T symbol](t []T, sa []int32, sigma int) {
	n := len(t)
	switch n {
	case 0:
		return
	case 1:
		sa[0] = 0
		return
	}
	saPhaseLevel(n, -1, sigma)
	typ := classify(t)
	counts := make([]int32, sigma)
	for _, c := range t {
		counts[c]++
	}
	bkt := make([]int32, sigma)

	// Stage 1: sort the LMS substrings by inducing from LMS positions in any order.
	for i := range sa {
		sa[i] = -1
	}
	buckets(counts, bkt, true)
	for i := 1; i < n; i++ {
		if typ.lms(i) {
			c := t[i]
			bkt[c]--
			sa[bkt[c]] = int32(i)
		}
	}
	induce(t, sa, typ, counts, bkt)

	// Name the sorted LMS substrings; equal substrings get equal names.
	m := 0
	for _, p := range sa {
		if typ.lms(int(p)) {
			sa[m] = p
			m++
		}
	}
	for i := m; i < n; i++ {
		sa[i] = -1
	}
	names := 0
	prev := -1
	for i := 0; i < m; i++ {
		p := int(sa[i])
		if prev < 0 || !equalLMS(t, typ, p, prev) {
			names++
			prev = p
		}
		// LMS positions are at least two apart and m <= (n-1)/2, so p/2 slots never collide.
		sa[m+p>>1] = int32(names - 1)
	}
	j := n - 1
	for i := n - 1; i >= m; i-- {
		if sa[i] >= 0 {
			sa[j] = sa[i]
			j--
		}
	}

	// Stage 2: sort the LMS suffixes, recursively when names repeat.
	s1, sa1 := sa[n-m:], sa[:m]
	if names < m {
		sais(s1, sa1, names)
	} else {
		for i, c := range s1 {
			sa1[c] = int32(i)
		}
	}

	// Stage 3: place the sorted LMS suffixes at their buckets' ends and induce the rest.
	j = 0
	for i := 1; i < n; i++ {
		if typ.lms(i) {
			s1[j] = int32(i)
			j++
		}
	}
	for i := range sa1 {
		sa1[i] = s1[sa1[i]]
	}
	for i := m; i < n; i++ {
		sa[i] = -1
	}
	buckets(counts, bkt, true)
	for i := m - 1; i >= 0; i-- {
		p := sa[i]
		sa[i] = -1
		c := t[p]
		bkt[c]--
		sa[bkt[c]] = p
	}
	induce(t, sa, typ, counts, bkt)
}

// equalLMS reports whether the LMS substrings at p and q (both LMS positions) are equal in
// symbols and types. A substring that reaches the sentinel equals no other.
func equalLMS[T symbol](t []T, typ typeBits, p, q int) bool {
	n := len(t)
	for d := 0; ; d++ {
		if p+d == n || q+d == n || t[p+d] != t[q+d] || typ.s(p+d) != typ.s(q+d) {
			return false
		}
		if d > 0 && typ.lms(p+d) {
			return true // types agree up to here, so q+d is LMS as well
		}
	}
}

// induce sorts the L-type suffixes from the S-type ones in sa (a left-to-right scan), then the
// S-type suffixes from the L-type ones (right to left).
func induce[T symbol](t []T, sa []int32, typ typeBits, counts, bkt []int32) {
	n := len(t)
	buckets(counts, bkt, false)
	// The suffix before the virtual sentinel comes first in its bucket.
	c := t[n-1]
	sa[bkt[c]] = int32(n - 1)
	bkt[c]++
	for i := 0; i < n; i++ {
		j := int(sa[i]) - 1
		if j >= 0 && !typ.s(j) {
			c := t[j]
			sa[bkt[c]] = int32(j)
			bkt[c]++
		}
	}
	buckets(counts, bkt, true)
	for i := n - 1; i >= 0; i-- {
		j := int(sa[i]) - 1
		if j >= 0 && typ.s(j) {
			c := t[j]
			bkt[c]--
			sa[bkt[c]] = int32(j)
		}
	}
}
