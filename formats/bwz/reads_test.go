package bwz

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
)

// readsGenome is a seeded random genome.
func readsGenome(seed uint64, n int) []byte {
	rng := rand.New(rand.NewPCG(seed, 7))
	g := make([]byte, n)
	for i := range g {
		g[i] = "ACGT"[rng.IntN(4)]
	}
	return g
}

// simRead is a read of the genome: its place, strand, length and substitutions.
func simRead(rng *rand.Rand, g []byte, l int, errRate float64) (seq, qual []byte) {
	p := rng.IntN(len(g) - l + 1)
	seq = bytes.Clone(g[p : p+l])
	if rng.IntN(2) == 1 {
		revComp(seq)
	}
	qual = make([]byte, l)
	for i := range seq {
		qual[i] = "#+5?FIJ"[min(6, rng.IntN(8))]
		if rng.Float64() < errRate {
			seq[i] = "ACGT"[(strings.IndexByte("ACGT", seq[i])+1+rng.IntN(3))&3]
			qual[i] = '#'
		}
	}
	return seq, qual
}

func revComp(s []byte) {
	for i, j := 0, len(s)-1; i <= j; i, j = i+1, j-1 {
		s[i], s[j] = comp(s[j]), comp(s[i])
	}
}

func comp(c byte) byte {
	switch c {
	case 'A':
		return 'T'
	case 'C':
		return 'G'
	case 'G':
		return 'C'
	case 'T':
		return 'A'
	}
	return c
}

// readsFile is a FASTQ (or FASTA) file of n reads of a random genome, the knobs its odd shapes.
type readsFile struct {
	n, length  int
	fasta      bool
	width      int  // FASTA line width (0: one line)
	crlf       bool // "\r\n" line ends
	noFinalEOL bool
	plusName   bool // FASTQ '+' lines repeat the name
	oddity     func(rng *rand.Rand, i int, name, seq, qual []byte) ([]byte, []byte, []byte)
}

func (f readsFile) make(seed uint64) []byte {
	rng := rand.New(rand.NewPCG(seed, 9))
	g := readsGenome(seed, 20000)
	eol := "\n"
	if f.crlf {
		eol = "\r\n"
	}
	var b []byte
	for i := 0; i < f.n; i++ {
		l := f.length
		if l == 0 {
			l = 30 + rng.IntN(200)
		}
		seq, qual := simRead(rng, g, l, 0.01)
		name := fmt.Appendf(nil, "sim.%d %d/1", 1000+i, rng.IntN(3))
		if f.oddity != nil {
			name, seq, qual = f.oddity(rng, i, name, seq, qual)
		}
		if f.fasta {
			b = append(append(append(b, '>'), name...), eol...)
			if f.width == 0 && len(seq) > 0 {
				b = append(append(b, seq...), eol...)
			}
			for s := seq; f.width > 0 && len(s) > 0; {
				k := min(len(s), f.width)
				b = append(append(b, s[:k]...), eol...)
				s = s[k:]
			}
			continue
		}
		b = append(append(append(b, '@'), name...), eol...)
		b = append(append(b, seq...), eol...)
		b = append(b, '+')
		if f.plusName {
			b = append(b, name...)
		}
		b = append(append(append(b, eol...), qual...), eol...)
	}
	if f.noFinalEOL {
		b = b[:len(b)-len(eol)]
	}
	return b
}

// readsOthers puts bytes other than A, C, G and T in reads: IUPAC codes, N, punctuation, whole
// reads of N, and empty reads.
func readsOthers(rng *rand.Rand, i int, name, seq, qual []byte) ([]byte, []byte, []byte) {
	switch i % 7 {
	case 0:
		for k := 0; k < 3 && len(seq) > 0; k++ {
			seq[rng.IntN(len(seq))] = "NRYKM.-*n"[rng.IntN(9)]
		}
	case 1:
		for k := range seq {
			seq[k] = 'N'
		}
	case 2:
		seq, qual = seq[:0], qual[:0]
	case 3:
		if len(seq) > 10 {
			copy(seq[len(seq)-10:], "NNNNNNNNNN")
		}
	}
	return name, seq, qual
}

// readsCases are read sets of every shape the coding keeps byte for byte.
func readsCases() map[string][]byte {
	lower := func(rng *rand.Rand, i int, name, seq, qual []byte) ([]byte, []byte, []byte) {
		if i%3 == 0 {
			k := rng.IntN(len(seq) + 1)
			copy(seq[k:], bytes.ToLower(seq[k:]))
		}
		return name, seq, qual
	}
	others := readsOthers
	names := func(rng *rand.Rand, i int, name, seq, qual []byte) ([]byte, []byte, []byte) {
		switch i % 6 {
		case 0:
			name = fmt.Appendf(nil, "HWI-ST1234:8:1101:%d:%d 1:N:0:ATCACG", 1000+i*3, rng.IntN(20000))
		case 1:
			name = nil
		case 2:
			name = fmt.Appendf(nil, "r%05d\tx=007 y=%d", i, rng.Uint64())
		case 3:
			name = []byte("123456789012345678901234567890 \x01\xff@>+")
		}
		return name, seq, qual
	}
	c := map[string][]byte{
		"fastq":               readsFile{n: 300, length: 100}.make(1),
		"fastq varied":        readsFile{n: 300}.make(2),
		"fastq crlf":          readsFile{n: 200, length: 80, crlf: true}.make(3),
		"fastq no final eol":  readsFile{n: 100, length: 80, noFinalEOL: true}.make(4),
		"fastq crlf no eol":   readsFile{n: 100, length: 80, crlf: true, noFinalEOL: true}.make(5),
		"fastq plus name":     readsFile{n: 100, length: 60, plusName: true}.make(6),
		"fastq lowercase":     readsFile{n: 200, oddity: lower}.make(7),
		"fastq others":        readsFile{n: 300, oddity: others}.make(8),
		"fastq names":         readsFile{n: 300, oddity: names}.make(9),
		"fasta":               readsFile{n: 300, length: 150, fasta: true}.make(10),
		"fasta varied":        readsFile{n: 300, fasta: true}.make(11),
		"fasta wrapped":       readsFile{n: 300, fasta: true, width: 60}.make(12),
		"fasta crlf wrapped":  readsFile{n: 100, fasta: true, width: 70, crlf: true, noFinalEOL: true}.make(13),
		"fasta others":        readsFile{n: 300, fasta: true, width: 50, oddity: others}.make(14),
		"fasta lowercase":     readsFile{n: 200, fasta: true, oddity: lower}.make(15),
		"fasta names no eol":  readsFile{n: 200, fasta: true, oddity: names, noFinalEOL: true}.make(16),
		"fastq plus mixed":    nil,
		"fasta irregular":     nil,
		"fastq one base":      readsFile{n: 40, length: 1}.make(17),
		"fastq empty reads":   readsFile{n: 40, length: 0, oddity: func(_ *rand.Rand, _ int, n, s, q []byte) ([]byte, []byte, []byte) { return n, s[:0], q[:0] }}.make(18),
		"fasta empty records": readsFile{n: 40, fasta: true, oddity: func(_ *rand.Rand, _ int, n, s, q []byte) ([]byte, []byte, []byte) { return n, s[:0], q[:0] }}.make(19),
	}
	// '+' lines of every kind
	pm := readsFile{n: 60, length: 50}.make(20)
	pm = bytes.Replace(pm, []byte("+\n"), []byte("+sim.1003 1/1\n"), 5)
	pm = bytes.Replace(pm, []byte("+\n"), []byte("+something else\n"), 3)
	c["fastq plus mixed"] = pm
	// FASTA records whose lines are not all of the width, and empty lines
	fa := readsFile{n: 80, fasta: true, width: 40}.make(21)
	fa = bytes.Replace(fa, []byte("\n>"), []byte("\n\n>"), 3)
	lines := bytes.Split(fa, []byte("\n"))
	for i := range lines {
		if i%17 == 5 && len(lines[i]) > 20 && lines[i][0] != '>' {
			lines[i] = append(append(bytes.Clone(lines[i][:10]), '\n'), lines[i][10:]...)
		}
	}
	c["fasta irregular"] = bytes.Join(lines, []byte("\n"))
	return c
}

func TestReadsRoundTrip(t *testing.T) {
	for name, in := range readsCases() {
		t.Run(name, func(t *testing.T) {
			rs := parseReads(in)
			if rs == nil {
				t.Fatal("not parsed as a read set")
			}
			if back := rs.appendText(nil); !bytes.Equal(back, in) || rs.size() != len(in) {
				t.Fatalf("the parse prints back %d bytes (size %d), not the %d", len(back), rs.size(), len(in))
			}
			for _, threads := range []int{1, 3} {
				p, ok := EncodeReads(nil, in, threads)
				if !ok {
					t.Fatal("not coded as a read set")
				}
				if !IsReadSet(p) {
					t.Fatal("not a read-set payload")
				}
				out, err := DecodeReads(p, len(in), threads)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(out, in) {
					t.Fatalf("decoded %d bytes differ from the %d coded", len(out), len(in))
				}
			}
		})
	}
}

// TestReadsChunks: reads in several chunks (models started afresh in each) decode in order.
func TestReadsChunks(t *testing.T) {
	if testing.Short() {
		t.Skip("codes 13 MB")
	}
	defer func(b uint32, c int) { readsChunkBases, consensusPart = b, c }(readsChunkBases, consensusPart)
	readsChunkBases, consensusPart = 1<<20, 5000
	in := readsFile{n: 40000, length: 150}.make(30) // 6M bases: 5 chunks
	p, ok := EncodeReads(nil, in, 2)
	if !ok {
		t.Fatal("not coded")
	}
	h, err := parseReadsHeader(p, len(in))
	if err != nil || len(h.chunks) < 2 || h.index.cons < 2 {
		t.Fatalf("%v, %d chunks, %d parts of consensus", err, len(h.chunks), h.index.cons)
	}
	out, err := DecodeReads(p, len(in), 2)
	if err != nil || !bytes.Equal(out, in) {
		t.Fatalf("round trip: %v", err)
	}
	// a 20 kbp genome at 300x: the bases cost its consensus, about 5 kB, and each read's place
	// (15 bits and a strand) and its errors (1% of 150 bases, about 8 bits each)
	sizes := ReadsSections(p, len(in))
	if bases := sizes[2] + sizes[4]; bases > 40000*(16+12)/8+6000 {
		t.Errorf("bases coded in %d bytes (consensus %d, reads %d)", bases, sizes[2], sizes[4])
	}
}

// TestReadsRefused: what is not a read set that prints back exactly is left to the bytes'
// coding.
func TestReadsRefused(t *testing.T) {
	fq := readsFile{n: 100, length: 50}.make(40)
	fa := readsFile{n: 100, length: 50, fasta: true}.make(41)
	cases := map[string][]byte{
		"empty":             nil,
		"text":              []byte(strings.Repeat("a line of text\n", 100)),
		"few records":       readsFile{n: minReadRecords - 1, length: 50}.make(42),
		"mixed line ends":   bytes.Replace(fq, []byte("\n"), []byte("\r\n"), 7),
		"mixed line ends 2": bytes.Replace(readsFile{n: 100, length: 50, crlf: true}.make(43), []byte("\r\n"), []byte("\n"), 9),
		"short quality":     bytes.Replace(fq, []byte("\n+\n"), []byte("\n+\nI"), 1),
		"three lines":       bytes.Replace(fq, []byte("\n+\n"), []byte("\n"), 1),
		"not dna":           readsFile{n: 100, length: 50, fasta: true, oddity: func(_ *rand.Rand, _ int, n, s, q []byte) ([]byte, []byte, []byte) { return n, []byte("MKVLAAGIVQR"), q }}.make(44),
		"text before":       append([]byte("# a comment\n"), fa...),
		"genome":            append([]byte(">chr1\n"), bytes.Repeat([]byte(strings.Repeat("ACGT", 20)+"\n"), 2000)...),
		"cr in fastq":       bytes.Replace(fq, []byte("\n"), []byte("\r\n"), 1),
	}
	for name, in := range cases {
		if p, ok := EncodeReads(nil, in, 1); ok {
			t.Errorf("%s: coded as a read set (%d bytes)", name, len(p))
		}
	}
}

func TestRecordsEnd(t *testing.T) {
	fq := readsFile{n: 10, length: 20}.make(50)
	recs := bytes.SplitAfter(fq, []byte("\n"))
	for cut := 0; cut <= len(fq); cut++ {
		end := RecordsEnd(fq[:cut])
		// the end of the last whole record in fq[:cut]
		want, off := 0, 0
		for i, l := range recs {
			off += len(l)
			if off > cut {
				break
			}
			if i%4 == 3 {
				want = off
			}
		}
		if end != want {
			t.Fatalf("RecordsEnd(fq[:%d]) = %d, want %d", cut, end, want)
		}
	}
	fa := []byte(">a\nACGT\nAC\n>b\nGG\n>c\nT")
	if e := RecordsEnd(fa); e != bytes.LastIndex(fa, []byte(">")) {
		t.Errorf("FASTA: %d", e)
	}
	for _, s := range []string{"", "x", "@a\nAC\n+\nI", ">only one\nACGT\n"} {
		if e := RecordsEnd([]byte(s)); e != 0 {
			t.Errorf("%q: %d", s, e)
		}
	}
}

// TestReadsDamage: a read-set payload damaged anywhere fails to decode with an error wrapping
// ErrCorrupt, or decodes to other bytes (which the block's data CRC then refuses), never panics.
func TestReadsDamage(t *testing.T) {
	in := readsFile{n: 100, oddity: readsOthers}.make(61)
	p, ok := EncodeReads(nil, in, 1)
	if !ok {
		t.Fatal("not coded")
	}
	// where each section's coder flushed: its last four bytes may be slack
	h, err := parseReadsHeader(p, len(in))
	if err != nil {
		t.Fatal(err)
	}
	slack := map[int]bool{}
	off := len(p)
	for i := len(h.sections) - 1; i >= 0; i-- {
		for k := 1; k <= 4; k++ {
			slack[off-k] = true
		}
		off -= len(h.sections[i])
	}
	rng := rand.New(rand.NewPCG(60, 1))
	step := max(1, len(p)*8/400)
	for bit := 0; bit < len(p)*8; bit += 1 + rng.IntN(step) {
		bad := bytes.Clone(p)
		bad[bit/8] ^= 1 << (bit % 8)
		out, err := DecodeReads(bad, len(in), 2)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("bit %d: error %v does not wrap ErrCorrupt", bit, err)
			}
			continue
		}
		if bytes.Equal(out, in) && !slack[bit/8] {
			t.Errorf("bit %d of %d flipped and the same bytes decode", bit, len(p)*8)
		}
	}
	// truncated and lengthened
	for _, bad := range [][]byte{p[:len(p)-1], p[:len(p)/2], append(bytes.Clone(p), 0), p[:3]} {
		if _, err := DecodeReads(bad, len(in), 1); err == nil {
			t.Errorf("a payload of %d bytes for %d decoded", len(bad), len(p))
		}
	}
	// a block length that is not the payload's
	for _, n := range []int{len(in) - 1, len(in) + 1, len(p) << (ReadsMinRatio + 1)} {
		if _, err := DecodeReads(p, n, 1); err == nil || !errors.Is(err, ErrCorrupt) {
			t.Errorf("length %d for %d: %v", n, len(in), err)
		}
	}
}

// TestReadsStreamFlips: every bit of a version-5 stream of a read-set block is checked: flipping
// any of them is an error of the reader or of the decoding.
func TestReadsStreamFlips(t *testing.T) {
	in := readsFile{n: 40, length: 30}.make(70)
	p, ok := EncodeReads(nil, in, 1)
	if !ok {
		t.Fatal("not coded")
	}
	s := AppendReadsHeader(nil, 1<<20)
	s = AppendBlock(s, BlockHeader{Index: 0, Length: len(in), Primary: 1, CRC: CRC(in)}, p)
	s = AppendTrailer(s, Trailer{Blocks: 1, Total: uint64(len(in)), CRC: CRC(in)})
	decode := func(s []byte) error {
		fr := NewReader(bytes.NewReader(s))
		for {
			f, err := fr.Next()
			if err == io.EOF {
				return nil
			}
			if err != nil {
				return err
			}
			if f.Kind != FrameBlock {
				continue
			}
			out, err := DecodeReads(f.Payload, f.Block.Length, 1)
			if err != nil {
				return err
			}
			if CRC(out) != f.Block.CRC || f.Block.Primary != 1 {
				return errors.New("data CRC")
			}
		}
	}
	if err := decode(s); err != nil {
		t.Fatal(err)
	}
	for bit := 0; bit < len(s)*8; bit++ {
		bad := bytes.Clone(s)
		bad[bit/8] ^= 1 << (bit % 8)
		if decode(bad) == nil {
			t.Fatalf("bit %d of %d flipped and not found", bit, len(s)*8)
		}
	}
}

// TestReadsAmplicon: reads of one short region (an amplicon's, or a repeat's) fall into one
// contig however many share each minimizer, and poly-A reads do too.
func TestReadsAmplicon(t *testing.T) {
	rng := rand.New(rand.NewPCG(80, 1))
	g := readsGenome(81, 220)
	var b []byte
	for i := 0; i < 20000; i++ {
		s, q := simRead(rng, g, 100, 0.005)
		if i%10 == 0 {
			s = bytes.Repeat([]byte("A"), 100)
		}
		b = fmt.Appendf(b, "@a%d\n%s\n+\n%s\n", i, s, q)
	}
	p, ok := EncodeReads(nil, b, 2)
	if !ok {
		t.Fatal("not coded")
	}
	if out, err := DecodeReads(p, len(b), 2); err != nil || !bytes.Equal(out, b) {
		t.Fatalf("round trip: %v", err)
	}
	// places of about 8 bits and a strand, 0.5 differences a read
	sizes := ReadsSections(p, len(b))
	if sizes[2] > 1000 || sizes[4] > 20000*16/8 {
		t.Errorf("consensus %d bytes, reads %d", sizes[2], sizes[4])
	}
}
