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

// listRuns returns w's runs of x that are at least minLen long, in the order they occur. It looks
// at every minLen-th position only (a run minLen long holds one), so a symbol as common as a base
// is listed in a pass over n/minLen positions, not stopped at every occurrence.
func listRuns(w []byte, x byte, minLen int) []SymRun {
	var rs []SymRun
	minLen = max(minLen, 1)
	for i := minLen - 1; i < len(w); {
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
		if e-s >= minLen {
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
