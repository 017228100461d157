package main

import "math"

// mutation says how a copy differs from its source: per base, the probability of a
// substitution and of a small insertion or deletion (1 to maxIndel bases, shorter ones likelier).
type mutation struct {
	sub, indel float64
	maxIndel   int
}

// edit records one change made by mutate, for tests: at src position pos, kind 's'
// (substitution), 'i' (n bases inserted before pos) or 'd' (n bases deleted from pos).
type edit struct {
	pos  int
	kind byte
	n    int
}

// complement maps a base to its complement, keeping case; anything else becomes N (or n).
var complement = func() (t [256]byte) {
	for i := range t {
		t[i] = 'N'
		if i >= 'a' && i <= 'z' {
			t[i] = 'n'
		}
	}
	for _, p := range []string{"AT", "TA", "CG", "GC", "at", "ta", "cg", "gc"} {
		t[p[0]] = p[1]
	}
	return t
}()

// baseIndex is the 2-bit code of a base (either case), 4 for anything else.
var baseIndex = func() (t [256]byte) {
	for i := range t {
		t[i] = 4
	}
	for i, c := range "ACGT" {
		t[c], t[c|0x20] = byte(i), byte(i)
	}
	return t
}()

const bases = "ACGT"

// reverseComplement turns s into its reverse complement in place.
func reverseComplement(s []byte) {
	for i, j := 0, len(s)-1; i <= j; i, j = i+1, j-1 {
		s[i], s[j] = complement[s[j]], complement[s[i]]
	}
}

// substitute returns a base other than c, of the same case; an N (or any non-ACGT byte) stays.
func substitute(c byte, r *rng) byte {
	k := baseIndex[c]
	if k == 4 {
		return c
	}
	return bases[(int(k)+1+r.intn(3))&3] | (c & 0x20)
}

// randomBase returns a uniform random base in the case of c.
func randomBase(c byte, r *rng) byte {
	return bases[r.next()>>62] | (c & 0x20)
}

// mutate appends to dst a copy of src with substitutions and indels as m says and returns it.
// With log non-nil, every change is recorded there.
func mutate(dst, src []byte, m mutation, r *rng, log *[]edit) []byte {
	rate := m.sub + m.indel
	if rate <= 0 {
		return append(dst, src...)
	}
	if rate >= 1 {
		rate = 0.999
	}
	subShare := m.sub / rate
	logq := math.Log1p(-rate)
	i := 0
	for {
		k := r.skipLog(logq)
		if k >= len(src)-i {
			return append(dst, src[i:]...)
		}
		dst = append(dst, src[i:i+k]...)
		i += k
		if r.float() < subShare {
			dst = append(dst, substitute(src[i], r))
			if log != nil {
				*log = append(*log, edit{i, 's', 1})
			}
			i++
			continue
		}
		n := 1
		for n < m.maxIndel && r.next()&1 == 0 {
			n++
		}
		if r.next()&1 == 0 {
			for range n {
				dst = append(dst, randomBase(src[i], r))
			}
			if log != nil {
				*log = append(*log, edit{i, 'i', n})
			}
		} else {
			n = min(n, len(src)-i)
			if log != nil {
				*log = append(*log, edit{i, 'd', n})
			}
			i += n
		}
	}
}
