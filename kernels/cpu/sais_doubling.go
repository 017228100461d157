package cpu

import "slices"

// Sorting the suffixes of a reduced string whose names are nearly all distinct, by prefix
// doubling (Manber and Myers, 1993) instead of another level of SA-IS. The deep levels of the
// recursion are like that (the LMS substrings of a string of LMS substring names seldom repeat),
// and there SA-IS pays in every pass for per-symbol tables as large as the string, while after a
// bucket sort by first symbol almost every suffix is alone in its group, and a round or two of
// doubling sorts the few that are not. A string whose groups do not break up quickly (repeats
// of many symbols) goes back to SA-IS: the rounds stop once they have visited doublingWork
// entries per symbol.

const doublingWork = 4

// doublingDense reports whether a string of n symbols with k distinct ones is worth sorting by
// doubling.
func doublingDense(n, k int) bool { return 5*k >= 3*n }

// sortDoubling fills sa with the suffix array of t, whose symbols are in [0, k), and reports
// true; or gives up (sa then holds garbage; t is unchanged) and reports false. rank (len(t)
// entries) and cnt (k+1) are scratch.
func sortDoubling(t, sa []int32, k int, rank, cnt []int32) bool {
	n := len(t)
	// Bucket sort by first symbol. A suffix's rank is the start of its group in sa: suffixes
	// in one group agree on their first h symbols (h = 1, then 2, 4, ...).
	clear(cnt)
	for _, c := range t {
		cnt[c+1]++
	}
	for c := 1; c <= k; c++ {
		cnt[c] += cnt[c-1]
	}
	var groups []int32 // the groups of more than one suffix: start, end, start, end, ...
	for c := range k {
		if cnt[c+1]-cnt[c] > 1 {
			groups = append(groups, cnt[c], cnt[c+1])
		}
	}
	for i, c := range t {
		rank[i] = cnt[c]
	}
	for i, c := range t {
		sa[cnt[c]] = int32(i)
		cnt[c]++
	}
	var (
		keys     []uint64
		newRanks []int32
		next     []int32
	)
	work := 0
	for h := 1; len(groups) > 0; h *= 2 {
		if work > doublingWork*n {
			return false
		}
		// Sort each group by the rank h symbols on (the end of the string lowest), with the
		// ranks of the last round: the new ranks wait until every group is sorted.
		newRanks, next = newRanks[:0], next[:0]
		for g := 0; g < len(groups); g += 2 {
			a, b := groups[g], groups[g+1]
			work += int(b - a)
			keys = keys[:0]
			for _, p := range sa[a:b] {
				key := uint64(0)
				if q := int(p) + h; q < n {
					key = uint64(rank[q]) + 1
				}
				keys = append(keys, key<<32|uint64(p))
			}
			if len(keys) == 2 {
				if keys[0] > keys[1] {
					keys[0], keys[1] = keys[1], keys[0]
				}
			} else {
				slices.Sort(keys)
			}
			start := a
			for x, kp := range keys {
				j := a + int32(x)
				sa[j] = int32(uint32(kp))
				if x > 0 && kp>>32 != keys[x-1]>>32 {
					if j-start > 1 {
						next = append(next, start, j)
					}
					start = j
				}
				newRanks = append(newRanks, start)
			}
			if b-start > 1 {
				next = append(next, start, b)
			}
		}
		x := 0
		for g := 0; g < len(groups); g += 2 {
			for _, p := range sa[groups[g]:groups[g+1]] {
				rank[p] = newRanks[x]
				x++
			}
		}
		groups, next = next, groups
	}
	return true
}
