package cpu

import (
	"errors"
	"fmt"
)

// ErrInvalidBWT reports a transform and primary index that no text has: the walk back through the
// rows closes before it has visited them all. Damaged data usually ends this way.
var ErrInvalidBWT = errors.New("not a valid BWT")

// maxInverseBWT is the longest transform InverseBWT takes: its row indexes (n+1 rows, the
// sentinel's included) are held in uint32.
const maxInverseBWT = 1<<32 - 2

// InverseBWT writes to dst (len(dst) == len(bwt)) the text whose transform, as defined in package
// kernels (kernels.BWTFromSA), is bwt with primary index primary. It returns an error, and leaves
// dst undefined, when the lengths differ, primary is out of range (1..len(bwt), or 0 for an empty
// transform) or the pair is not the transform of any text (ErrInvalidBWT).
//
// It uses 4 bytes of scratch per input byte. The walk from row to row is a chain of dependent
// random reads, so its speed is that of memory latency; blocks invert independently, so callers
// run several at once.
func InverseBWT(bwt []byte, primary int, dst []byte) error {
	n := len(bwt)
	if len(dst) != n {
		return fmt.Errorf("inverse BWT: output length %d, want %d", len(dst), n)
	}
	if n == 0 {
		if primary != 0 {
			return fmt.Errorf("inverse BWT: primary index %d of an empty block, want 0", primary)
		}
		return nil
	}
	if primary < 1 || primary > n {
		return fmt.Errorf("inverse BWT: primary index %d out of range 1..%d", primary, n)
	}
	if uint64(n) > maxInverseBWT {
		return fmt.Errorf("inverse BWT: block of %d bytes is too long (at most %d)", n, uint64(maxInverseBWT))
	}

	// The full last column L has n+1 rows: bwt with the sentinel inserted at row primary. Its
	// first column F is L sorted, the sentinel first. next[r] is the row of L that holds the
	// occurrence of F[r]; following next from the row of the whole text visits the suffixes
	// 1, 2, ..., n in turn, and L at each of those rows is the byte before that suffix.
	var count [256]int
	for _, c := range bwt {
		count[c]++
	}
	var start [256]int // first row in F of each byte; row 0 is the sentinel
	s := 1
	for c := range count {
		start[c] = s
		s += count[c]
	}
	next := make([]uint32, n+1)
	if n <= packedMax {
		// The byte of L at row j is the c that put j in c's bucket: entries carry it in their low
		// 8 bits, so that a step of the walk touches one random cache line, not two.
		next[0] = uint32(primary) << 8
		for i, c := range bwt[:primary] {
			next[start[c]] = uint32(i)<<8 | uint32(c)
			start[c]++
		}
		for i, c := range bwt[primary:] {
			next[start[c]] = uint32(primary+1+i)<<8 | uint32(c)
			start[c]++
		}
		e := next[primary]
		for k := range dst {
			if int(e>>8) == primary {
				return cycleError(k, n)
			}
			dst[k] = byte(e)
			e = next[e>>8]
		}
		return nil
	}
	next[0] = uint32(primary)
	for i, c := range bwt[:primary] {
		next[start[c]] = uint32(i)
		start[c]++
	}
	for i, c := range bwt[primary:] {
		next[start[c]] = uint32(primary + 1 + i)
		start[c]++
	}
	// Row r > primary of L is bwt[r-1]; the subtraction of the sign bit avoids a branch that
	// random rows would mispredict half the time.
	r := primary
	for k := range dst {
		r = int(next[r])
		if r == primary {
			return cycleError(k, n)
		}
		dst[k] = bwt[r-int(uint(primary-r)>>(bitsOfUint-1))]
	}
	return nil
}

func cycleError(k, n int) error {
	return fmt.Errorf("inverse BWT: %w (the rows close into a cycle after %d of %d bytes)", ErrInvalidBWT, k, n)
}

// packedMax is the longest transform whose walk packs a row (24 bits) and a byte into a uint32.
// A variable so that tests reach both walks.
var packedMax = 1<<24 - 1

const bitsOfUint = 32 << (^uint(0) >> 63)
