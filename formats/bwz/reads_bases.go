package bwz

import (
	"math/bits"
)

// The bases of a read set are coded as the consensus of their contigs (reads_layout.go) and, read
// by read in input order, each read's place in the consensus, its strand, and the bases where it
// differs from the consensus. Bytes other than A, C, G and T (N, IUPAC codes, anything) are
// coded apart as exceptions, and lowercase as runs, before any of it: the read coder skips
// the exceptions' places, which the decoder then already knows.

// dnaModel predicts a sequence of bases (codes 0..3) from the bases before it: each base is two
// binary decisions, each mixing the predictions of contexts of dnaOrders bases, the short ones in
// direct tables and the long ones hashed.
type dnaModel struct {
	hist   uint64 // the last 32 bases, 2 bits each, the latest lowest
	tables [maxDNAOrders][]ctr
	shift  [maxDNAOrders]uint // 64 - log2 of the table's rows
	rows   [maxDNAOrders]uint32
	w      [256 * 3][maxDNAOrders + 1]int32
	st     [maxDNAOrders + 1]int32
	rate   int32
}

const maxDNAOrders = 12

var dnaOrders = []int{1, 2, 3, 4, 6, 8}
var dnaHashBits = 22

// newDNAModel returns a model for about n bases: its hashed tables are sized to them.
func newDNAModel(n int) *dnaModel {
	m := &dnaModel{}
	hashBits := min(max(bits.Len(uint(n)), 12), dnaHashBits)
	m.rate = 3
	for i, k := range dnaOrders {
		b := min(2*k, hashBits)
		m.tables[i] = make([]ctr, 4<<b)
		m.shift[i] = uint(64 - b)
		m.rows[i] = uint32(1<<b - 1)
	}
	for i := range m.w {
		for j := range dnaOrders {
			m.w[i][j] = 1 << 16 / 4
		}
	}
	return m
}

// rowsFor returns the table rows of each order for the bases before the next.
func (m *dnaModel) rowsFor(rows *[maxDNAOrders]uint32) {
	for i, k := range dnaOrders {
		ctx := m.hist & (1<<(2*k) - 1)
		if 2*k <= 64-int(m.shift[i]) {
			rows[i] = uint32(ctx)
		} else {
			rows[i] = uint32((ctx+uint64(k))*0x9E3779B97F4A7C15>>m.shift[i]) & m.rows[i]
		}
	}
}

// codeBase codes (or decodes) one base.
func (m *dnaModel) codeBase(a *arith, b byte) byte {
	var rows [maxDNAOrders]uint32
	m.rowsFor(&rows)
	node := 1
	o2 := int(m.hist & 255)
	for level := 1; level >= 0; level-- {
		bit := int(b>>uint(level)) & 1
		ws := &m.w[o2*3+node-1]
		var dot int64
		for i := range dnaOrders {
			s := m.tables[i][rows[i]*4+uint32(node)].st()
			m.st[i] = s
			dot += int64(s) * int64(ws[i])
		}
		m.st[len(dnaOrders)] = 256
		dot += 256 * int64(ws[len(dnaOrders)])
		wsl := ws[:len(dnaOrders)+1]
		p := squash16x(int32(dot >> 16))
		bit = a.code(p, bit)
		err := (int32(bit)<<16 - int32(p)) >> 4
		for i := range wsl {
			wsl[i] = clampW(wsl[i] + (m.st[i]*err*m.rate)>>10)
		}
		for i := range dnaOrders {
			m.tables[i][rows[i]*4+uint32(node)].update(bit, 255)
		}
		node = node<<1 | bit
	}
	base := byte(node - 4)
	m.hist = m.hist<<2 | uint64(base)
	return base
}
