package cpu

import (
	"bytes"
	"cmp"
	"slices"

	"github.com/sapipe/sapipe/kernels"
)

// RunEmitDepth is the depth from which a -maxmatch walk inside a run of one symbol takes its
// matches from the window's runs of that symbol (emitRuns, and kernels/cuda's run ranges) rather
// than climbing the enclosing intervals one level a symbol: fewer levels cost less than finding
// the runs.
const RunEmitDepth = 256

// SymRun is a run of one symbol in a window: it starts at window position S and is N long.
type SymRun struct{ S, N int }

// ListRuns returns w's runs of x that are at least minLen long, in the order they occur.
func ListRuns(w []byte, x byte, minLen int) []SymRun {
	var rs []SymRun
	for i := bytes.IndexByte(w, x); i >= 0; {
		j := i + 1
		for j < len(w) && w[j] == x {
			j++
		}
		if j-i >= minLen {
			rs = append(rs, SymRun{i, j - i})
		}
		if i = bytes.IndexByte(w[j:], x); i >= 0 {
			i += j
		}
	}
	return rs
}

// RunSymbols returns, in increasing order, the symbols (codes from kernels.FirstCode) that w has
// a run of at least atLeast of. It looks at every atLeast-th position (a run that long holds
// one) and at the runs through them, so a text without long runs is read atLeast times faster
// than a byte at a time.
func RunSymbols(w []byte, atLeast int) []byte {
	atLeast = max(atLeast, 1)
	var has [256]bool
	for i := atLeast - 1; i < len(w); {
		x := w[i]
		if x < kernels.FirstCode || has[x] {
			i += atLeast
			continue
		}
		a, b := i, i+1
		for a > 0 && w[a-1] == x {
			a--
		}
		for b < len(w) && w[b] == x {
			b++
		}
		if b-a >= atLeast {
			has[x] = true
		}
		// The next position looked at is past this run: a run of megabases is read once.
		i += atLeast
		if i < b {
			i += (b - i + atLeast - 1) / atLeast * atLeast
		}
	}
	var syms []byte
	for x, ok := range has {
		if ok {
			syms = append(syms, byte(x))
		}
	}
	return syms
}

// sortRunsByLength orders runs by length, shortest first, keeping the text order of equal ones.
func sortRunsByLength(rs []SymRun) {
	slices.SortStableFunc(rs, func(a, b SymRun) int { return cmp.Compare(a.N, b.N) })
}
