package cpu

import (
	"slices"
	"unsafe"
)

// Sorting the suffixes of a reduced string whose names are nearly all distinct, by prefix
// doubling (Manber and Myers, 1993) instead of another level of SA-IS. The deep levels of the
// recursion are like that (the LMS substrings of a string of LMS substring names seldom repeat),
// and there SA-IS pays in every pass for per-symbol tables as large as the string, while after a
// bucket sort by first symbol most suffixes are alone in their group or nearly, and a few rounds
// of doubling sort the rest. A string whose groups do not break up quickly (repeats of many
// symbols) goes back to SA-IS: the rounds stop once they have visited doublingWork entries per
// symbol.
//
// Every access to the ranks is at random, so the passes ask for the ranks they will need many
// entries ahead (prefetchIdx), and a round's groups are sorted in parallel parts: first every
// group is sorted and its new ranks set aside, then the ranks are updated.

const (
	doublingWork = 4
	dblTasks     = 16 // parts of a round, claimed by the team's threads in turn
	dblChunk     = 32 // entries a prefetch covers
	dblAhead     = 64 // entries between asking for a rank and using it
)

// doublingDense reports whether a string of n symbols with k distinct ones is worth sorting by
// doubling on threads threads: at least 35% of its symbols distinct on several threads, 50% on
// one. The Linux tar's second reduced level (9 M symbols, 39% distinct, repeats of up to ~2,000
// of them) takes ~0.65 s by doubling on 2 threads, ~0.8 s by SA-IS. On one thread SA-IS wins
// there (doubling's rounds no longer share out): the tar's first 100 MiB took 4.46-4.59 s
// against 4.73-4.93 s and 35 MB less at the peak, 64 MiB of Go sources 2.82-3.06 s against 3.08
// s, DNA with repeats 4.96-5.19 s against 5.12-5.67 s (whose third level is 48% distinct); E.
// coli's dense level (89% distinct, 418 K symbols) still goes faster by doubling (0.096-0.103 s
// against 0.124-0.130 s by SA-IS).
func doublingDense(n, k, threads int) bool {
	if threads == 1 {
		return 2*k >= n
	}
	return 20*k >= 7*n
}

// sortDoubling fills sa with the suffix array of t, whose symbols are in [0, k), and reports
// true; or gives up (sa then holds garbage; t is unchanged) and reports false. Its tables come
// from mem.
func sortDoubling(t, sa []int32, k int, mem *saScratch, tm *team) bool {
	n := len(t)
	rank, next := mem.take(n), mem.take(n)
	// Bucket sort by first symbol, each part of the text counting its symbols and placing its
	// suffixes with a table of its own. A suffix's rank is the start of its group in sa:
	// suffixes in one group agree on their first h symbols (h = 1, then 2, 4, ...), and the
	// groups are in the order of those.
	// A table of k counts per part: two, or more while they take at most n/2 entries in all.
	parts := max(min(tm.parts(n), 2), min(tm.parts(n), n/(2*k)))
	var cnts [maxThreads][]int32
	for p := range parts {
		cnts[p] = mem.take(k)
	}
	tm.run(parts, func(p int) {
		cnt := cnts[p]
		clear(cnt)
		cp := unsafe.Pointer(unsafe.SliceData(cnt))
		for i0, hi := n*p/parts, n*(p+1)/parts; i0 < hi; i0 += dblChunk {
			askAhead(cp, t, i0, hi)
			for _, c := range t[i0:min(i0+dblChunk, hi)] {
				cnt[c]++
			}
		}
	})
	// Part p's suffixes starting with c go to sa from cnts[p][c] on. The symbols are cut into
	// parts too: each sums its counts, then sets its positions from the sum of those before.
	var (
		base [maxThreads + 1]int32
		gs   [maxThreads][]int32 // the groups of more than one suffix: start, end, start, ...
	)
	tm.run(parts, func(q int) {
		sum, groups := int32(0), 0
		for c := k * q / parts; c < k*(q+1)/parts; c++ {
			tot := int32(0)
			for p := range parts {
				tot += cnts[p][c]
			}
			sum += tot
			groups += int(bit(tot > 1))
		}
		base[q+1] = sum
		// Sized at once: grown by appends, the lists cost more than the rest of the round
		// (fresh pages faulted in; 0.2 s of 9.6 for the Linux tar on one thread).
		gs[q] = make([]int32, 0, 2*groups)
	})
	for q := range parts {
		base[q+1] += base[q]
	}
	tm.run(parts, func(q int) {
		sum, g := base[q], gs[q][:0]
		for c := k * q / parts; c < k*(q+1)/parts; c++ {
			a := sum
			for p := range parts {
				v := cnts[p][c]
				cnts[p][c] = sum
				sum += v
			}
			if sum-a > 1 {
				g = append(g, a, sum)
			}
		}
		gs[q] = g
	})
	groups := gs[0]
	if parts > 1 {
		total := 0
		for q := range parts {
			total += len(gs[q])
		}
		groups = make([]int32, 0, total)
		for q := range parts {
			groups = append(groups, gs[q]...)
		}
	}
	tm.run(parts, func(p int) {
		cnt := cnts[p]
		cp := unsafe.Pointer(unsafe.SliceData(cnt))
		for i0, hi := n*p/parts, n*(p+1)/parts; i0 < hi; i0 += dblChunk {
			askAhead(cp, t, i0, hi)
			for x, c := range t[i0:min(i0+dblChunk, hi)] {
				sa[cnt[c]] = int32(i0 + x)
				cnt[c]++
			}
		}
	})
	// Now the last part's table holds the end of each bucket, which is where the next begins:
	// a suffix's first rank is its bucket's start (the end of the bucket before).
	end := cnts[parts-1]
	ep := unsafe.Pointer(unsafe.SliceData(end))
	tm.run(parts, func(p int) {
		for i0, hi := n*p/parts, n*(p+1)/parts; i0 < hi; i0 += dblChunk {
			askAhead(ep, t, i0, hi)
			r := rank[i0:min(i0+dblChunk, hi)]
			for x, c := range t[i0 : i0+len(r)] {
				r[x] = 0
				if c > 0 {
					r[x] = end[c-1]
				}
			}
		}
	})
	var (
		cut   [dblTasks + 1]int
		nexts [dblTasks][]int32
		keys  [dblTasks][]uint64
	)
	work := 0
	for h := 1; len(groups) > 0; h *= 2 {
		// Cut the groups into parts of about as many entries.
		total := 0
		for g := 0; g < len(groups); g += 2 {
			total += int(groups[g+1] - groups[g])
		}
		if work += total; work > doublingWork*n {
			return false
		}
		tasks := 1
		if total >= 1<<14 {
			tasks = dblTasks
		}
		cut[0], cut[tasks] = 0, len(groups)
		acc, x := 0, 1
		for g := 0; g < len(groups) && x < tasks; g += 2 {
			acc += int(groups[g+1] - groups[g])
			for x < tasks && acc >= total*x/tasks {
				cut[x] = g + 2
				x++
			}
		}
		for ; x < tasks; x++ {
			cut[x] = len(groups)
		}
		// Sort each group by the rank h symbols on (the end of the string lowest), with the
		// ranks of the last round: the new ranks wait in next until every group is sorted.
		tm.run(tasks, func(x int) {
			nexts[x], keys[x] = sortGroups(sa, rank, next, groups[cut[x]:cut[x+1]], h, nexts[x][:0], keys[x])
		})
		tm.run(tasks, func(x int) {
			updateRanks(sa, rank, next, groups[cut[x]:cut[x+1]])
		})
		groups = groups[:0]
		for x := range tasks {
			groups = append(groups, nexts[x]...)
		}
	}
	return true
}

// askAhead asks for the int32 entries at table that the chunk of t[:hi] dblAhead on from i0
// indexes.
func askAhead(table unsafe.Pointer, t []int32, i0, hi int) {
	if j := i0 + dblAhead; j < hi {
		prefetchIdx(table, t[j:min(j+dblChunk, hi)], 0, 2)
	}
}

// groupWalk asks for the ranks at base + sa[j] for the entries j of groups, dblAhead entries
// before they are used: ensure(upto) has asked for all of the first upto entries.
type groupWalk struct {
	base   unsafe.Pointer
	sa     []int32
	groups []int32
	g, j   int // the next entry to ask for: sa[j], in the group at groups[g]
	asked  int // entries asked for
}

func (w *groupWalk) ensure(upto int) {
	for w.asked < upto && w.g < len(w.groups) {
		if w.j < int(w.groups[w.g]) {
			w.j = int(w.groups[w.g])
		}
		e := int(w.groups[w.g+1])
		c := min(e-w.j, upto-w.asked, dblChunk)
		if c > 0 {
			prefetchIdx(w.base, w.sa[w.j:w.j+c], 0, 2)
		}
		w.j += c
		w.asked += c
		if w.j == e {
			w.g += 2
		}
	}
}

// sortGroups sorts each of groups by the rank h entries on, writes the new ranks (the start of
// each entry's new group) to next at the entries' indexes, and appends the new groups of more
// than one entry to out. It moves each group's start to the end of its first new group: the
// entries before keep their rank (the group's start), and updateRanks sets the others'.
func sortGroups(sa, rank, next, groups []int32, h int, out []int32, keys []uint64) ([]int32, []uint64) {
	n := len(sa)
	w := groupWalk{base: unsafe.Add(unsafe.Pointer(unsafe.SliceData(rank)), 4*h), sa: sa, groups: groups}
	done := 0
	for g := 0; g < len(groups); g += 2 {
		a, b := int(groups[g]), int(groups[g+1])
		keys = keys[:0]
		for j0 := a; j0 < b; j0 += dblChunk {
			j1 := min(j0+dblChunk, b)
			w.ensure(done + (j1 - a) + dblAhead)
			for _, p := range sa[j0:j1] {
				key := uint64(0)
				if q := int(p) + h; q < n {
					key = uint64(rank[q]) + 1
				}
				keys = append(keys, key<<32|uint64(p))
			}
		}
		done += b - a
		switch {
		case len(keys) == 2:
			if keys[0] > keys[1] {
				keys[0], keys[1] = keys[1], keys[0]
			}
		case len(keys) <= 16:
			for i := 1; i < len(keys); i++ {
				v := keys[i]
				j := i
				for ; j > 0 && keys[j-1] > v; j-- {
					keys[j] = keys[j-1]
				}
				keys[j] = v
			}
		default:
			slices.Sort(keys)
		}
		start, first := a, b
		prev := keys[0] >> 32
		for x, kp := range keys {
			j := a + x
			sa[j] = int32(uint32(kp))
			if kp>>32 != prev {
				if j-start > 1 {
					out = append(out, int32(start), int32(j))
				}
				first = min(first, j)
				start, prev = j, kp>>32
			}
			next[j] = int32(start)
		}
		if b-start > 1 {
			out = append(out, int32(start), int32(b))
		}
		// The walk has asked for this group's entries: its start is no longer read.
		groups[g] = int32(first)
	}
	return out, keys
}

// updateRanks sets the rank of each suffix in groups (as sortGroups left them: the entries whose
// rank changes) to the one sortGroups left in next.
func updateRanks(sa, rank, next, groups []int32) {
	w := groupWalk{base: unsafe.Pointer(unsafe.SliceData(rank)), sa: sa, groups: groups}
	done := 0
	for g := 0; g < len(groups); g += 2 {
		a, b := int(groups[g]), int(groups[g+1])
		for j0 := a; j0 < b; j0 += dblChunk {
			j1 := min(j0+dblChunk, b)
			w.ensure(done + (j1 - a) + dblAhead)
			for j, p := range sa[j0:j1] {
				rank[p] = next[j0+j]
			}
		}
		done += b - a
	}
}
