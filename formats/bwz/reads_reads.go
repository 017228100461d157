package bwz

import (
	"math"
	"math/bits"
)

// The reads' places in the consensus and their differences from it, read by read in input order
// (reads_bases.go says what the parts are).

// readsModel is the state of one chunk's coding of places and differences.
type readsModel struct {
	strand ctr
	// count is how many bases of a read differ from the consensus, asked as "more than k?" for
	// k = 0, 1, ..., by the errors its qualities expect (FASTQ) and k.
	count [16 * 16]ctr
	// diff is whether a base differs, by its quality (FASTQ), its place in the read and how
	// many differences are left to place: a read's bases after its last difference are not
	// asked about.
	diff [64 * 32 * 4]ctr
	// alt is which of the other three bases it is, by the consensus base and the quality.
	alt [4 * 8][3]ctr
}

// qualErr[q] is the error rate a quality byte q stands for, 10^(-(q-33)/10), in 1/65536ths.
var qualErr = func() (t [256]uint32) {
	for q := range t {
		t[q] = uint32(65536 * math.Pow(10, -float64(max(q-33, 0))/10))
	}
	return t
}()

const diffLimit = 1023

// codeUniform codes v, 0 <= v < n, at even odds over the n values.
func (a *arith) codeUniform(v, n uint64) uint64 {
	lo := uint64(0)
	for n > 1 {
		half := n / 2
		p1 := uint32((n - half) << 16 / n) // the upper part's share
		p1 = min(max(p1, 1), 65535)
		bit := 0
		if v >= lo+half {
			bit = 1
		}
		if a.code(p1, bit) == 1 {
			lo += half
			n -= half
		} else {
			n = half
		}
	}
	return lo
}

// codeRead codes one read: s holds its base codes (decoding: baseWild where the exceptions put
// a byte, anything elsewhere, and the decoded bases are written in), q its qualities (nil for
// FASTA), cons the consensus. pos and rc are its place (encoding). It returns false on a place
// out of range (decoding).
func (m *readsModel) codeRead(a *arith, s, q, cons []byte, pos int, rc bool) bool {
	l := len(s)
	wild := 0
	for _, c := range s {
		if c >= baseWild {
			wild++
		}
	}
	if wild == l {
		return true // nothing to place
	}
	if l > len(cons) {
		return false
	}
	pos = int(a.codeUniform(uint64(pos), uint64(len(cons)-l+1)))
	r := a.codeBit(&m.strand, b2i(rc), numLimit)
	// the reference: the consensus there, on the read's strand (in ref, reversed and
	// complemented when r is 1)
	ref := cons[pos : pos+l]
	refAt := func(i int) byte { return ref[i] }
	if r == 1 {
		refAt = func(i int) byte { return 3 - ref[l-1-i] }
	}
	// the number of differences, by the errors the qualities expect
	n, expect := 0, uint32(0)
	for i, c := range s {
		if c >= baseWild {
			continue
		}
		if q != nil {
			expect += qualErr[q[i]]
		}
		if !a.dec && c != refAt(i) {
			n++
		}
	}
	eb := min(bits.Len32(expect>>10), 15) << 4
	k := 0
	for ; k < l-wild; k++ {
		if a.codeBit(&m.count[eb|min(k, 15)], b2i(n > k), numLimit) == 0 {
			break
		}
	}
	if k == 0 {
		if a.dec { // the read is the reference but for its exceptions
			if r == 0 {
				for i, c := range s {
					if c < baseWild {
						s[i] = ref[i]
					}
				}
			} else {
				for i, c := range s {
					if c < baseWild {
						s[i] = 3 - ref[l-1-i]
					}
				}
			}
		}
		return true
	}
	left := k // differences left to place
	for i := 0; i < l; i++ {
		c := s[i]
		if c >= baseWild {
			continue
		}
		x := refAt(i)
		if left == 0 {
			if a.dec {
				s[i] = x
			}
			continue
		}
		qv := 0
		if q != nil {
			qv = int(min(max(q[i], 33), 96) - 33)
		}
		ctx := (qv<<5|min(i>>3, 31))<<2 | min(left-1, 3)
		if a.codeBit(&m.diff[ctx], b2i(c != x), diffLimit) == 0 {
			if a.dec {
				s[i] = x
			}
			continue
		}
		left--
		// which other base: j in 0..2 is the base x+1+j (mod 4)
		alt := &m.alt[int(x)<<3|qv>>3]
		j := (int(c) - int(x) - 1) & 3
		if a.codeBit(&alt[0], b2i(j == 0), numLimit) == 0 {
			j = 1 + a.codeBit(&alt[1], b2i(j == 2), numLimit)
		} else {
			j = 0
		}
		if a.dec {
			s[i] = byte((int(x) + 1 + j) & 3)
		}
	}
	return left == 0 // a decoder that placed fewer differences than counted read garbage
}
