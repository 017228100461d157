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
	tables [len(dnaOrders)][][4]ctr
	w      [256 * 3][len(dnaOrders) + 1]int32
}

// dnaOrders are the contexts' lengths, in bases. Longer ones (up to 22, hashed) cost E. coli's
// consensus more than they saved, and twice the time; 1, 3 as well lost nothing (0.06%).
var dnaOrders = [...]int{2, 4, 6, 8}

// codeBase is written out for four orders.
const _ = uint(len(dnaOrders)-4) + uint(4-len(dnaOrders))

// newDNAModel returns a model with fresh tables.
func newDNAModel() *dnaModel {
	m := &dnaModel{}
	for i, k := range dnaOrders {
		m.tables[i] = make([][4]ctr, 1<<(2*k))
	}
	for i := range m.w {
		for j := range dnaOrders {
			m.w[i][j] = int32(1 << 16 / len(dnaOrders))
		}
	}
	return m
}

// codeBase codes (or decodes) one base. (Written out for the four orders: it is most of the
// time a FASTA read set takes to decode.)
func (m *dnaModel) codeBase(a *arith, b byte) byte {
	h := m.hist
	r0 := &m.tables[0][h&(1<<(2*dnaOrders[0])-1)]
	r1 := &m.tables[1][h&(1<<(2*dnaOrders[1])-1)]
	r2 := &m.tables[2][h&(1<<(2*dnaOrders[2])-1)]
	r3 := &m.tables[3][h&(1<<(2*dnaOrders[3])-1)]
	node := 1
	o4 := int(h & 255)
	for level := 1; level >= 0; level-- {
		c0, c1, c2, c3 := &r0[node], &r1[node], &r2[node], &r3[node]
		s0, s1, s2, s3 := c0.st(), c1.st(), c2.st(), c3.st()
		ws := &m.w[o4*3+node-1]
		dot := int64(s0)*int64(ws[0]) + int64(s1)*int64(ws[1]) + int64(s2)*int64(ws[2]) + int64(s3)*int64(ws[3]) + 256*int64(ws[4])
		p := squash16x(int32(dot >> 16))
		bit := a.code(p, int(b>>uint(level))&1)
		err := (int32(bit)<<16 - int32(p)) >> 4
		ws[0] = clampW(ws[0] + (s0*err*3)>>10)
		ws[1] = clampW(ws[1] + (s1*err*3)>>10)
		ws[2] = clampW(ws[2] + (s2*err*3)>>10)
		ws[3] = clampW(ws[3] + (s3*err*3)>>10)
		ws[4] = clampW(ws[4] + (256*err*3)>>10)
		c0.update(bit, 255)
		c1.update(bit, 255)
		c2.update(bit, 255)
		c3.update(bit, 255)
		node = node<<1 | bit
	}
	base := byte(node - 4)
	m.hist = h<<2 | uint64(base)
	return base
}
