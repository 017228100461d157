package cpu

// LCP fills lcp (len(lcp) == len(sa)) with the longest common prefix of each suffix-array row and
// the row before it (lcp[0] = 0), by the permuted-LCP method of Kärkkäinen, Manzini and Puglisi:
// in text order the LCP drops by at most one per step, so the total work is linear.
func LCP(text []byte, sa, lcp []int32) {
	n := len(sa)
	if n == 0 {
		return
	}
	// phi[p] is the suffix that precedes suffix p in sa; then, in place, the PLCP of p.
	phi := make([]int32, n)
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
	for i, p := range sa {
		lcp[i] = phi[p]
	}
}
