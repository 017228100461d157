package bwz

// The reads' places in the consensus and their differences from it, read by read in input order
// (reads_bases.go says what the parts are).

// readsModel is the state of one chunk's coding of places and differences.
type readsModel struct {
	strand ctr
	// diff is whether a base differs from the consensus, by the base's quality (FASTQ), its
	// place in the read and how many bases of the read differed before it.
	diff [64 * 32 * 4]ctr
	// alt is which of the other three bases it is, by the consensus base and the quality.
	alt [4 * 8][3]ctr
}

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
	ref := cons[pos : pos+l]
	miss := 0
	for i := 0; i < l; i++ {
		c := s[i]
		if c >= baseWild {
			continue
		}
		var e byte
		if r == 1 {
			e = 3 - ref[l-1-i]
		} else {
			e = ref[i]
		}
		qv := 0
		if q != nil {
			qv = int(min(max(q[i], 33), 96) - 33)
		}
		ctx := (qv<<5|min(i>>3, 31))<<2 | min(miss, 3)
		d := 0
		if c != e {
			d = 1
		}
		if a.codeBit(&m.diff[ctx], d, diffLimit) == 0 {
			if a.dec {
				s[i] = e
			}
			continue
		}
		miss++
		// which other base: k in 0..2 is the base e+1+k (mod 4)
		alt := &m.alt[int(e)<<3|qv>>3]
		k := (int(c) - int(e) - 1) & 3
		if a.codeBit(&alt[0], b2i(k == 0), numLimit) == 0 {
			k = 1 + a.codeBit(&alt[1], b2i(k == 2), numLimit)
		} else {
			k = 0
		}
		if a.dec {
			s[i] = byte((int(e) + 1 + k) & 3)
		}
	}
	return true
}
