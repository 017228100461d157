package bwz

// Read names are cut into tokens, runs of digits and runs of other bytes, and each token is
// coded against the token in the same place of the previous name: the same again, a number that
// moved by a small step, a new number, or new bytes. Names of instruments (an instrument, a run,
// a flow cell lane and tile, then x and y) and of archives (a run and a counter) then cost a few
// bits a read.

import "strconv"

const (
	nameMaxTokens = 48 // tokens past these are one token with the rest of the name
	nameMaxDigits = 18 // longer runs of digits are bytes (they fit no uint64 step)
)

// Token operations.
const (
	tokSame   = iota // the previous name's token in this place
	tokStep          // a number: the previous name's number here plus a step
	tokNumber        // a number
	tokBytes         // bytes
	tokEnd           // the name ends
	numTokOps
)

// nameToken is one token: digits (a number without leading zeros, its value in num) or bytes.
type nameToken struct {
	text  []byte
	num   uint64
	isNum bool
}

// tokenizeName appends the tokens of name to dst.
func tokenizeName(dst []nameToken, name []byte) []nameToken {
	for i := 0; i < len(name); {
		if len(dst) == nameMaxTokens-1 {
			return append(dst, nameToken{text: name[i:]})
		}
		j := i
		digit := isDigit(name[i])
		for j < len(name) && isDigit(name[j]) == digit {
			j++
		}
		t := nameToken{text: name[i:j]}
		if digit && j-i <= nameMaxDigits && (name[i] != '0' || j-i == 1) {
			t.isNum = true
			for _, c := range name[i:j] {
				t.num = t.num*10 + uint64(c-'0')
			}
		}
		dst = append(dst, t)
		i = j
	}
	return dst
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// nameModel is the state of the names' coding.
type nameModel struct {
	op     [nameMaxTokens][numTokOps][numTokOps - 1]ctr // by place and the previous name's op there
	step   [nameMaxTokens]numModel
	stepS  [nameMaxTokens]ctr
	num    [nameMaxTokens]numModel
	length [nameMaxTokens]numModel
	bytes  [64]byteModel // by the previous byte's low 6 bits
	prev   []nameToken
	prevOp [nameMaxTokens]int
	cur    []nameToken
	toks   []nameToken // encoding: the name's tokens
}

// codeOp codes an operation as up to four yes/no decisions.
func (m *nameModel) codeOp(a *arith, t, op int) int {
	c := &m.op[t][m.prevOp[t]]
	k := 0
	for ; k < numTokOps-1; k++ {
		stop := 0
		if op == k {
			stop = 1
		}
		if a.codeBit(&c[k], stop, numLimit) == 1 {
			break
		}
	}
	return k
}

// codeName codes one name (decoding, it appends the name to dst; encoding, dst is returned as
// is). max bounds a decoded name's length; false means the name was longer (corrupt).
func (m *nameModel) codeName(a *arith, name, dst []byte, max int) ([]byte, bool) {
	if !a.dec {
		m.toks = tokenizeName(m.toks[:0], name)
	}
	m.cur = m.cur[:0]
	start := len(dst)
	for t := 0; t < nameMaxTokens; t++ {
		var tok nameToken
		var p *nameToken
		if t < len(m.prev) {
			p = &m.prev[t]
		}
		op := tokEnd
		if !a.dec && t < len(m.toks) {
			tok = m.toks[t]
			switch {
			case p != nil && p.isNum == tok.isNum && string(p.text) == string(tok.text):
				op = tokSame
			case tok.isNum && p != nil && p.isNum && tok.num-p.num+(1<<20) < 1<<21:
				op = tokStep
			case tok.isNum:
				op = tokNumber
			default:
				op = tokBytes
			}
		}
		op = m.codeOp(a, t, op)
		m.prevOp[t] = op
		if op == tokEnd {
			break
		}
		if (op == tokSame || op == tokStep) && p == nil || op == tokStep && !p.isNum {
			return dst, false
		}
		switch op {
		case tokSame:
			tok = *p
		case tokStep:
			d := a.codeSigned(&m.stepS[t], &m.step[t], int64(tok.num-p.num))
			tok.num, tok.isNum = p.num+uint64(d), true
		case tokNumber:
			tok.num, tok.isNum = a.codeNum(&m.num[t], tok.num), true
		case tokBytes:
			l := int(a.codeNum(&m.length[t], uint64(len(tok.text))))
			if a.dec && l > max-(len(dst)-start) {
				return dst, false
			}
			if a.dec {
				text := make([]byte, l)
				prev := byte(0)
				for i := range text {
					text[i] = a.codeByte(&m.bytes[prev&63], 0)
					prev = text[i]
				}
				tok.text = text
			} else {
				prev := byte(0)
				for _, c := range tok.text {
					a.codeByte(&m.bytes[prev&63], c)
					prev = c
				}
			}
		}
		if a.dec {
			if tok.isNum && op != tokSame {
				tok.text = strconv.AppendUint(nil, tok.num, 10)
			}
			if len(tok.text) > max-(len(dst)-start) {
				return dst, false
			}
			dst = append(dst, tok.text...)
		}
		m.cur = append(m.cur, tok)
	}
	if a.dec && len(m.cur) == nameMaxTokens {
		return dst, false // no end after the last token: the encoder always codes one
	}
	// Encoding, the tokens point into the caller's name, which stays put while it codes the next.
	m.prev, m.cur = m.cur, m.prev
	return dst, true
}
