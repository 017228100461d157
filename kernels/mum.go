package kernels

import (
	"cmp"
	"slices"
)

// FilterMums keeps the MumReference candidates of one query sequence (one strand) that are also
// unique in the query, the way MUMmer 3.23 does: candidates are sorted by reference position, longer
// first on ties, and a candidate whose reference span ends where an earlier one's does, or inside
// it, is dropped, together with an earlier candidate that starts at the same position and ends at
// the same place. The survivors come back in that sorted order, which is MUMmer's output order for
// -mum. cands is reordered in place; the result shares its memory.
func FilterMums(cands []Match) []Match {
	if len(cands) == 0 {
		return cands
	}
	slices.SortFunc(cands, func(a, b Match) int {
		if a.Ref != b.Ref {
			return cmp.Compare(a.Ref, b.Ref)
		}
		if a.Len != b.Len {
			return int(b.Len) - int(a.Len)
		}
		return int(a.Query) - int(b.Query)
	})
	out := cands[:0]
	var right int64 // MUMmer starts this at 0, so a first candidate ending at position 0 is dropped
	dropPrev := false
	for i, c := range cands {
		dropCur := false
		end := c.Ref + int64(c.Len) - 1
		switch {
		case right > end:
			dropCur = true
		case right == end:
			dropCur = true
			if i > 0 && !dropPrev && cands[i-1].Ref == c.Ref {
				dropPrev = true
			}
		default:
			right = end
		}
		if i > 0 && !dropPrev {
			out = append(out, cands[i-1])
		}
		dropPrev = dropCur
	}
	if !dropPrev {
		out = append(out, cands[len(cands)-1])
	}
	return out
}
