package bwz

// The bases of a read set are coded as the consensus of their contigs (reads_layout.go) and, read
// by read in input order, each read's place in the consensus, its strand, and the bases where it
// differs from the consensus. Bytes other than A, C, G and T (N, IUPAC codes, anything) are
// coded apart as exceptions, and lowercase as runs, before any of it: the read coder skips
// the exceptions' places, which the decoder then already knows.

// dnaModel predicts a sequence of bases (codes 0..3) from the bases before it: each base is two
// binary decisions, each mixing the predictions of the contexts of dnaOrders bases before it,
// with a weight set chosen by the 4 bases before and the decision.
type dnaModel struct {
	hist   uint64 // the last 32 bases, 2 bits each, the latest lowest
	tables [len(dnaOrders)][]ctr
	w      [256 * 3][len(dnaOrders) + 1]int32
	st     [len(dnaOrders) + 1]int32
}

// dnaOrders are the contexts' lengths, in bases. Longer ones (up to 22, hashed) cost E. coli's
// consensus more than they saved, and twice the time; 1, 3 as well lost nothing (0.06%).
var dnaOrders = [...]int{2, 4, 6, 8}

// newDNAModel returns a model with fresh tables.
func newDNAModel() *dnaModel {
	m := &dnaModel{}
	for i, k := range dnaOrders {
		m.tables[i] = make([]ctr, 4<<(2*k))
	}
	for i := range m.w {
		for j := range dnaOrders {
			m.w[i][j] = int32(1 << 16 / len(dnaOrders))
		}
	}
	return m
}

// codeBase codes (or decodes) one base.
func (m *dnaModel) codeBase(a *arith, b byte) byte {
	var rows [len(dnaOrders)]uint32
	for i, k := range dnaOrders {
		rows[i] = uint32(m.hist&(1<<(2*k)-1)) * 4
	}
	node := 1
	o4 := int(m.hist & 255)
	for level := 1; level >= 0; level-- {
		bit := int(b>>uint(level)) & 1
		ws := &m.w[o4*3+node-1]
		var dot int64
		for i := range dnaOrders {
			s := m.tables[i][rows[i]+uint32(node)].st()
			m.st[i] = s
			dot += int64(s) * int64(ws[i])
		}
		m.st[len(dnaOrders)] = 256
		dot += 256 * int64(ws[len(dnaOrders)])
		p := squash16x(int32(dot >> 16))
		bit = a.code(p, bit)
		err := (int32(bit)<<16 - int32(p)) >> 4
		for i := range ws {
			ws[i] = clampW(ws[i] + (m.st[i]*err*3)>>10)
		}
		for i := range dnaOrders {
			m.tables[i][rows[i]+uint32(node)].update(bit, 255)
		}
		node = node<<1 | bit
	}
	base := byte(node - 4)
	m.hist = m.hist<<2 | uint64(base)
	return base
}
