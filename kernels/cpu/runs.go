package cpu

import (
	"cmp"
	"slices"
)

// RunEmitDepth is the depth from which a -maxmatch walk inside a run of one symbol takes its
// matches from the window's runs of that symbol (emitRuns, and kernels/cuda's run ranges) rather
// than climbing the enclosing intervals one level a symbol: fewer levels cost less than finding
// the runs.
const RunEmitDepth = 256

// SymRun is a run of one symbol in a window: it starts at window position S and is N long.
type SymRun struct{ S, N int }

// ListRuns returns w's runs of x that are at least minLen long, in the order they occur, looked
// for on up to threads goroutines.
func ListRuns(w []byte, x byte, minLen, threads int) []SymRun {
	parts := splitRange(len(w), threads, runPart)
	lists := make([][]SymRun, len(parts))
	parallelChunks(parts, func(i, a, b int) { lists[i] = listRunsIn(w, x, minLen, a, b) })
	return slices.Concat(lists...)
}

// runPart is the least text a goroutine of ListRuns looks at (lowered by tests).
var runPart = 16 << 20

// listRunsIn is ListRuns of the runs whose first position that is minLen-1 modulo minLen lies in
// w[a:b): it looks at those positions only (a run minLen long holds one), so a symbol as common
// as a base is listed in a pass over n/minLen positions, not stopped at every occurrence.
func listRunsIn(w []byte, x byte, minLen, a, b int) []SymRun {
	var rs []SymRun
	minLen = max(minLen, 1)
	for i := firstSample(a, minLen); i < b; {
		if w[i] != x {
			i += minLen
			continue
		}
		s, e := i, i+1
		for s > 0 && w[s-1] == x {
			s--
		}
		for e < len(w) && w[e] == x {
			e++
		}
		if e-s >= minLen && firstSample(s, minLen) >= a {
			rs = append(rs, SymRun{s, e - s})
		}
		i = firstSample(e, minLen)
	}
	return rs
}

// firstSample is the first position at or after a that is step-1 modulo step.
func firstSample(a, step int) int { return a + (step-1-a%step+step)%step }

// sortRunsByLength orders runs by length, shortest first, keeping the text order of equal ones.
func sortRunsByLength(rs []SymRun) {
	slices.SortStableFunc(rs, func(a, b SymRun) int { return cmp.Compare(a.N, b.N) })
}
