package bwz

import (
	"encoding/binary"
)

// A read-set payload (format version 5) codes a block of FASTQ or FASTA records as a read set:
// the names tokenised, the bases as contigs and each read's place in them, the qualities with a
// context model, and the rest (line ends, line widths, lengths, other bytes, lowercase) apart.
// doc.go gives the layout.

// readsChunkBases is how many bases a chunk of reads has, at least: chunks are coded and
// decoded in parallel.
var readsChunkBases uint32 = 4 << 20

const (
	readsPayloadVersion = 5
	// ReadsMinRatio bounds how much a read-set payload may expand to: a block of n bytes has a
	// payload of at least n>>ReadsMinRatio bytes, so that a lying header cannot make a reader
	// allocate much for a small payload. (The encoder codes such a block as bytes instead.)
	ReadsMinRatio = 12
)

// Read-set kinds and flags in the payload.
const (
	readsFASTQ = 0
	readsFASTA = 1

	readsCRLF     = 1 << 0
	readsFinalEOL = 1 << 1
)

// IsReadSet reports whether payload, a block's, codes a read set (rather than a transform).
func IsReadSet(payload []byte) bool { return len(payload) > 0 && payload[0] == readsPayloadVersion }

// EncodeReads appends to dst the read-set payload of block, or returns ok false when block is not
// a read set that this coding suits (parseReads says which), or codes too small for a payload to
// be allowed (ReadsMinRatio). threads bound the goroutines it codes on.
func EncodeReads(dst, block []byte, threads int) (out []byte, ok bool) {
	rs := parseReads(block)
	if rs == nil {
		return dst, false
	}
	if rs.size() != len(block) || !rs.printsAs(block) {
		return dst, false // not printed back exactly: a case the parser missed
	}
	out = encodeReadSet(dst, rs, threads)
	if len(out)-len(dst) < len(block)>>ReadsMinRatio {
		return dst, false
	}
	return out, true
}

// chunkEnds cuts the reads into chunks of at least readsChunkBases bases: it returns where each
// chunk ends (a read index; the last is the number of reads).
func chunkEnds(seqEnd []uint32) []int {
	var ends []int
	last := uint32(0)
	for i, e := range seqEnd {
		if e-last >= readsChunkBases && len(seqEnd)-i > 1 {
			ends = append(ends, i+1)
			last = e
		}
	}
	if len(ends) > 0 && seqEnd[len(seqEnd)-1]-last < readsChunkBases/2 {
		ends = ends[:len(ends)-1] // a short last chunk joins the one before
	}
	return append(ends, len(seqEnd))
}

// encodeReadSet appends rs's payload to dst (sectionIndex says in which order its sections go).
func encodeReadSet(dst []byte, rs *readSet, threads int) []byte {
	chunks := chunkEnds(rs.seqEnd)
	sections := make([][]byte, 2, 8)
	// the structure first, from the sequences' bytes, which then become base codes in place
	// (exceptions wild)
	sections[0] = encodeStructure(rs)
	codes := rs.seq
	for i, c := range codes {
		if b := baseCode[c]; b >= 0 {
			codes[i] = byte(b)
		} else {
			codes[i] = baseWild
		}
	}
	rs.seq = nil
	var alpha []byte
	var ranks []byte
	if rs.fastq {
		alpha = qualAlphabet(rs.qual)
	}
	// the layout, beside the names and qualities; then the consensus beside the reads
	var lay *layout
	quals := make([][]byte, len(chunks))
	jobs := []func(){
		func() { lay = layoutReads(codes, rs.seqEnd, threads) },
		func() { sections[1] = encodeNames(rs) },
	}
	if rs.fastq {
		ranks = make([]byte, len(rs.qual))
		var rank [256]byte
		for i, c := range alpha {
			rank[c] = byte(i)
		}
		for i, c := range rs.qual {
			ranks[i] = rank[c]
		}
		for k := range chunks {
			jobs = append(jobs, func() { quals[k] = encodeQualChunk(rs, ranks, alpha, chunks, k) })
		}
	}
	parallel(len(jobs), threads, func(i int) { jobs[i]() })
	x := newSectionIndex(len(lay.cons), len(chunks), rs.fastq)
	sections = append(sections, make([][]byte, x.count()-2)...)
	for k, q := range quals {
		sections[x.qual(k)] = q
	}
	parallel(x.cons+len(chunks), threads, func(k int) {
		if k < x.cons {
			from, to := segment(k, consensusPart, len(lay.cons))
			sections[x.consensus(k)] = encodeConsensus(lay.cons[from:to])
			return
		}
		k -= x.cons
		sections[x.reads(k)] = encodeReadsChunk(rs, codes, lay, chunks, k)
	})

	dst = append(dst, readsPayloadVersion)
	kind, flags := byte(readsFASTA), byte(0)
	if rs.fastq {
		kind = readsFASTQ
	}
	if rs.crlf {
		flags |= readsCRLF
	}
	if rs.finalEOL {
		flags |= readsFinalEOL
	}
	dst = append(dst, kind, flags)
	dst = binary.AppendUvarint(dst, uint64(rs.n))
	dst = binary.AppendUvarint(dst, uint64(len(codes)))
	dst = binary.AppendUvarint(dst, uint64(len(rs.names)))
	dst = binary.AppendUvarint(dst, uint64(len(lay.cons)))
	dst = binary.AppendUvarint(dst, uint64(len(chunks)))
	for _, e := range chunks[:len(chunks)-1] {
		dst = binary.AppendUvarint(dst, uint64(e))
	}
	if rs.fastq {
		dst = append(dst, byte(len(alpha))) // at most 255: '\n' is none
		dst = append(dst, alpha...)
	}
	for _, s := range sections {
		dst = binary.AppendUvarint(dst, uint64(len(s)))
	}
	for _, s := range sections {
		dst = append(dst, s...)
	}
	return dst
}

// consensusPart is how many bases of the consensus one section holds (the last fewer): the parts
// are coded and decoded in parallel, each from fresh models. It is fixed by the format (a
// variable for the tests only).
var consensusPart = 2 << 20

// sectionIndex numbers a payload's sections: the structure, the names, the consensus's parts,
// the chunks' qualities (FASTQ) and the chunks' reads.
type sectionIndex struct {
	cons, chunks int
	fastq        bool
}

func newSectionIndex(consensus, chunks int, fastq bool) sectionIndex {
	return sectionIndex{cons: max(1, (consensus+consensusPart-1)/consensusPart), chunks: chunks, fastq: fastq}
}

func (x sectionIndex) consensus(i int) int { return 2 + i }
func (x sectionIndex) qual(k int) int      { return 2 + x.cons + k }
func (x sectionIndex) reads(k int) int {
	if x.fastq {
		return 2 + x.cons + x.chunks + k
	}
	return 2 + x.cons + k
}
func (x sectionIndex) count() int { return x.reads(x.chunks) }

func chunkRange(chunks []int, k int) (int, int) {
	if k == 0 {
		return 0, chunks[0]
	}
	return chunks[k-1], chunks[k]
}

// chunkBases returns where chunk k's bases start and end in the read set, and each of its reads'
// ends from that start.
func (rs *readSet) chunkBases(chunks []int, k int) (b0, b1 uint32, ends []uint32) {
	r0, r1 := chunkRange(chunks, k)
	b0 = rs.start(rs.seqEnd, r0)
	ends = make([]uint32, r1-r0)
	for i := range ends {
		ends[i] = rs.seqEnd[r0+i] - b0
	}
	return b0, rs.seqEnd[r1-1], ends
}

// readAt returns read i's codes (from codes, laid out as the bases) and its qualities (nil in a
// FASTA set).
func (rs *readSet) readAt(codes []byte, i int) (s, q []byte) {
	b, e := rs.start(rs.seqEnd, i), rs.seqEnd[i]
	if rs.fastq {
		q = rs.qual[b:e]
	}
	return codes[b:e], q
}

func encodeQualChunk(rs *readSet, ranks, alpha []byte, chunks []int, k int) []byte {
	b0, b1, ends := rs.chunkBases(chunks, k)
	a := newEncoder(nil)
	newQualModel(len(alpha)).codeQualities(a, ranks[b0:b1], ends)
	return a.finish()
}

func encodeReadsChunk(rs *readSet, codes []byte, lay *layout, chunks []int, k int) []byte {
	r0, r1 := chunkRange(chunks, k)
	a := newEncoder(nil)
	m := &readsModel{}
	for i := r0; i < r1; i++ {
		s, q := rs.readAt(codes, i)
		pos := 0
		if c := lay.contig[i]; c >= 0 {
			pos = lay.start[c] + int(lay.off[i])
		}
		m.codeRead(a, s, q, lay.cons, pos, lay.rc[i])
	}
	return a.finish()
}

func encodeConsensus(cons []byte) []byte {
	a := newEncoder(make([]byte, 0, len(cons)/4+16))
	m := newDNAModel()
	for _, c := range cons {
		m.codeBase(a, c)
	}
	return a.finish()
}

func encodeNames(rs *readSet) []byte {
	a := newEncoder(nil)
	m := &nameModel{}
	for i := 0; i < rs.n; i++ {
		m.codeName(a, rs.name(i), nil, 0)
	}
	return a.finish()
}

// structModel is the state of the structure section's coding.
type structModel struct {
	sameLen  ctr
	length   numModel
	plus     [3][2]ctr
	plusLen  numModel
	plusText byteModel
	width    numModel
	irr      numModel
	irrGap   numModel
	lines    numModel
	lineLen  numModel
	excRuns  numModel
	excGap   numModel
	excLen   numModel
	excSame  ctr
	excByte  byteModel
	caseRuns numModel
	caseLen  [2]numModel
}

// encodeStructure codes the reads' lengths, their '+' lines or line layout, the exceptions and
// the lowercase.
func encodeStructure(rs *readSet) []byte {
	a := newEncoder(nil)
	m := &structModel{}
	prev := uint32(0)
	for i := 0; i < rs.n; i++ {
		l := rs.seqEnd[i] - rs.start(rs.seqEnd, i)
		if a.codeBit(&m.sameLen, b2i(l == prev), numLimit) == 0 {
			a.codeNum(&m.length, uint64(l))
		}
		prev = l
	}
	if rs.fastq {
		pk, po := 0, 0
		for _, p := range rs.plus {
			m.codePlus(a, pk, int(p))
			if p == plusOther {
				t := rs.plusText[po]
				po++
				a.codeNum(&m.plusLen, uint64(len(t)))
				for _, c := range t {
					a.codeByte(&m.plusText, c)
				}
			}
			pk = int(p)
		}
	} else {
		a.codeNum(&m.width, uint64(rs.width))
		a.codeNum(&m.irr, uint64(len(rs.irregular)))
		last := -1
		for k, r := range rs.irregular {
			a.codeNum(&m.irrGap, uint64(int(r)-last-1))
			last = int(r)
			a.codeNum(&m.lines, uint64(len(rs.lines[k])))
			for _, l := range rs.lines[k] {
				a.codeNum(&m.lineLen, uint64(l))
			}
		}
	}
	// exceptions: runs of one byte that is not A, C, G or T
	var runs []excRun
	for i := 0; i < len(rs.seq); i++ {
		c := rs.seq[i]
		if baseCode[c] >= 0 {
			continue
		}
		if k := len(runs) - 1; k >= 0 && runs[k].b == c && runs[k].start+runs[k].n == i {
			runs[k].n++
		} else {
			runs = append(runs, excRun{i, 1, c})
		}
	}
	a.codeNum(&m.excRuns, uint64(len(runs)))
	end, pb := 0, byte('N')
	for _, r := range runs {
		a.codeNum(&m.excGap, uint64(r.start-end))
		if a.codeBit(&m.excSame, b2i(r.b == pb), numLimit) == 0 {
			a.codeByte(&m.excByte, r.b)
		}
		a.codeNum(&m.excLen, uint64(r.n-1))
		end, pb = r.start+r.n, r.b
	}
	// lowercase: runs of upper and lower case, starting with upper
	var caseRuns []int
	lower, n := false, 0
	for _, c := range rs.seq {
		if (c >= 'a' && c <= 'z') != lower {
			caseRuns = append(caseRuns, n)
			lower, n = !lower, 0
		}
		n++
	}
	caseRuns = append(caseRuns, n)
	a.codeNum(&m.caseRuns, uint64(len(caseRuns)-1))
	for k, n := range caseRuns[:len(caseRuns)-1] { // the last one is what is left
		a.codeNum(&m.caseLen[k&1], uint64(n))
	}
	return a.finish()
}

func (m *structModel) codePlus(a *arith, prev, p int) int {
	if a.codeBit(&m.plus[prev][0], b2i(p == plusNone), numLimit) == 1 {
		return plusNone
	}
	if a.codeBit(&m.plus[prev][1], b2i(p == plusName), numLimit) == 1 {
		return plusName
	}
	return plusOther
}

// DecodeReads decodes a read-set payload of a block of n bytes into the block's bytes. It
// returns an error wrapping ErrCorrupt for anything an encoder would not have written; it
// allocates no more than a few times n, and n is at most 1<<ReadsMinRatio times the payload.
func DecodeReads(payload []byte, n, threads int) ([]byte, error) {
	if len(payload) < n>>ReadsMinRatio {
		return nil, corruptf("read-set payload of %d bytes for a block of %d bytes (at least 1/%d of it, always)", len(payload), n, 1<<ReadsMinRatio)
	}
	h, err := parseReadsHeader(payload, n)
	if err != nil {
		return nil, err
	}
	rs, chunks, alpha, sections := h.rs, h.chunks, h.alpha, h.sections
	nbases, nnames, ncons, nchunks := h.nbases, h.nnames, h.ncons, len(h.chunks)
	// the structure first: lengths, exceptions, case
	codes, extra, err := decodeStructure(sections[0], rs, nbases)
	if err != nil {
		return nil, err
	}
	if rs.fastq {
		rs.qual = make([]byte, nbases)
	}
	x := h.index
	cons := make([]byte, ncons)
	errs := make([]error, 1+x.cons+nchunks)
	jobs := []func(){
		func() { errs[0] = decodeNames(sections[1], rs, nnames) },
	}
	for i := 0; i < x.cons; i++ {
		jobs = append(jobs, func() {
			from, to := segment(i, consensusPart, ncons)
			errs[1+i] = decodeConsensus(sections[x.consensus(i)], cons[from:to])
		})
	}
	if rs.fastq {
		for k := range chunks {
			jobs = append(jobs, func() { errs[1+x.cons+k] = decodeQualChunk(sections[x.qual(k)], rs, alpha, chunks, k) })
		}
	}
	parallel(len(jobs), threads, func(i int) { jobs[i]() })
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	parallel(nchunks, threads, func(k int) {
		errs[1+x.cons+k] = decodeReadsChunk(sections[x.reads(k)], rs, codes, cons, chunks, k)
	})
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	rs.seq = extra.spell(codes)
	if rs.size() != n {
		return nil, corruptf("the read set prints to %d bytes, not %d", rs.size(), n)
	}
	return rs.appendText(make([]byte, 0, n)), nil
}

// readsHeader is what a read-set payload's header says, and its sections.
type readsHeader struct {
	rs                    *readSet
	nbases, nnames, ncons int
	chunks                []int
	alpha                 []byte
	sections              [][]byte
	index                 sectionIndex
}

// parseReadsHeader reads the header of a read-set payload of a block of n bytes and cuts the
// payload into its sections.
func parseReadsHeader(payload []byte, n int) (*readsHeader, error) {
	p := payload
	if len(p) < 3 || p[0] != readsPayloadVersion {
		return nil, corruptf("not a read-set payload")
	}
	rs := &readSet{fastq: p[1] == readsFASTQ}
	if p[1] > readsFASTA || p[2]&^(readsCRLF|readsFinalEOL) != 0 {
		return nil, corruptf("unknown read-set kind %d or flags %#x", p[1], p[2])
	}
	rs.crlf, rs.finalEOL = p[2]&readsCRLF != 0, p[2]&readsFinalEOL != 0
	p = p[3:]
	var vals [5]uint64
	for i := range vals {
		v, k := binary.Uvarint(p)
		if k <= 0 || v > uint64(n) {
			return nil, corruptf("read-set header field %d out of range", i)
		}
		vals[i] = v
		p = p[k:]
	}
	rs.n = int(vals[0])
	nbases, nnames, ncons, nchunks := int(vals[1]), int(vals[2]), int(vals[3]), int(vals[4])
	if rs.n == 0 || nchunks == 0 || nchunks > rs.n || ncons > nbases {
		return nil, corruptf("read-set header: %d records, %d chunks, %d bases of consensus of %d", rs.n, nchunks, ncons, nbases)
	}
	chunks := make([]int, nchunks)
	last := 0
	for i := 0; i < nchunks-1; i++ {
		v, k := binary.Uvarint(p)
		if k <= 0 || v <= uint64(last) || v >= uint64(rs.n) {
			return nil, corruptf("read-set chunk %d ends out of order", i)
		}
		chunks[i], last = int(v), int(v)
		p = p[k:]
	}
	chunks[nchunks-1] = rs.n
	var alpha []byte
	if rs.fastq {
		if len(p) < 1 || len(p) < 1+int(p[0]) {
			return nil, corruptf("read-set payload ends in the quality alphabet")
		}
		alpha = p[1 : 1+int(p[0])]
		p = p[1+int(p[0]):]
	}
	x := newSectionIndex(ncons, nchunks, rs.fastq)
	nsec := x.count()
	sections := make([][]byte, nsec)
	lens := make([]uint64, nsec)
	for i := range lens {
		v, k := binary.Uvarint(p)
		if k <= 0 || v > uint64(len(payload)) {
			return nil, corruptf("read-set section %d: bad length", i)
		}
		lens[i] = v
		p = p[k:]
	}
	for i, l := range lens {
		if uint64(len(p)) < l {
			return nil, corruptf("read-set section %d: the payload ends early", i)
		}
		sections[i] = p[:l:l]
		p = p[l:]
	}
	if len(p) != 0 {
		return nil, corruptf("%d bytes after the read set's last section", len(p))
	}

	return &readsHeader{rs: rs, nbases: nbases, nnames: nnames, ncons: ncons, chunks: chunks, alpha: alpha, sections: sections, index: x}, nil
}

// ReadsPartNames names the parts of a read-set payload whose sizes ReadsSections returns.
var ReadsPartNames = [...]string{"structure", "names", "consensus", "qualities", "reads"}

// ReadsSections returns the coded sizes of a read-set payload's parts (for reports), in the order
// of ReadsPartNames: structure, names, consensus, qualities (all chunks) and reads (places and
// differences).
func ReadsSections(payload []byte, n int) []int {
	h, err := parseReadsHeader(payload, n)
	if err != nil {
		return nil
	}
	x := h.index
	sizes := []int{len(h.sections[0]), len(h.sections[1]), 0, 0, 0}
	for i := 0; i < x.cons; i++ {
		sizes[2] += len(h.sections[x.consensus(i)])
	}
	for k := 0; k < x.chunks; k++ {
		if x.fastq {
			sizes[3] += len(h.sections[x.qual(k)])
		}
		sizes[4] += len(h.sections[x.reads(k)])
	}
	return sizes
}

// seqExtras are the bases' exceptions and case.
type seqExtras struct {
	exc      []excRun
	caseRuns []int // lengths of runs of upper, then lower, case... (the last run is what is left)
}

type excRun struct {
	start, n int
	b        byte
}

// spell turns base codes into letters: A, C, G, T in their case, and the exceptions as they are.
func (x *seqExtras) spell(codes []byte) []byte {
	i := 0
	for k, n := range x.caseRuns {
		letters := "ACGT"
		if k&1 == 1 {
			letters = "acgt"
		}
		for j := i; j < i+n; j++ {
			codes[j] = letters[codes[j]&3]
		}
		i += n
	}
	letters := "ACGT"
	if len(x.caseRuns)&1 == 1 {
		letters = "acgt"
	}
	for j := i; j < len(codes); j++ {
		codes[j] = letters[codes[j]&3]
	}
	for _, r := range x.exc {
		for j := r.start; j < r.start+r.n; j++ {
			codes[j] = r.b
		}
	}
	return codes
}

// decodeStructure decodes the structure section into rs (lengths, '+' lines or line layout) and
// returns the reads' base codes, baseWild at the exceptions and 0 elsewhere, with the exceptions
// and case runs.
func decodeStructure(sec []byte, rs *readSet, nbases int) ([]byte, *seqExtras, error) {
	a := newDecoder(sec)
	m := &structModel{}
	rs.seqEnd = make([]uint32, rs.n)
	prev, total := uint64(0), uint64(0)
	for i := 0; i < rs.n; i++ {
		l := prev
		if a.codeBit(&m.sameLen, 0, numLimit) == 0 {
			l = a.codeNum(&m.length, 0)
		}
		if l > maxReadLength || total+l > uint64(nbases) {
			return nil, nil, corruptf("read %d: length %d out of range", i, l)
		}
		total += l
		rs.seqEnd[i] = uint32(total)
		prev = l
		if a.overrun() {
			return nil, nil, corruptf("the read set's structure ends early")
		}
	}
	if total != uint64(nbases) {
		return nil, nil, corruptf("the reads' lengths add up to %d, not %d", total, nbases)
	}
	if rs.fastq {
		rs.plus = make([]byte, rs.n)
		pk := 0
		room := uint64(nbases) // bounds the '+' lines' bytes as well
		for i := range rs.plus {
			p := m.codePlus(a, pk, 0)
			rs.plus[i] = byte(p)
			if p == plusOther {
				l := a.codeNum(&m.plusLen, 0)
				if l > room {
					return nil, nil, corruptf("read %d: a '+' line too long", i)
				}
				room -= l
				t := make([]byte, l)
				for j := range t {
					t[j] = a.codeByte(&m.plusText, 0)
				}
				rs.plusText = append(rs.plusText, t)
			}
			pk = p
			if a.overrun() {
				return nil, nil, corruptf("the read set's structure ends early")
			}
		}
	} else {
		w := a.codeNum(&m.width, 0)
		if w > maxReadLength {
			return nil, nil, corruptf("line width %d out of range", w)
		}
		rs.width = int(w)
		nirr := a.codeNum(&m.irr, 0)
		if nirr > uint64(rs.n) {
			return nil, nil, corruptf("%d irregular records of %d", nirr, rs.n)
		}
		last := -1
		room := uint64(nbases) + uint64(rs.n) // lines: at most a byte each, and one empty a record
		for k := 0; k < int(nirr); k++ {
			g := a.codeNum(&m.irrGap, 0)
			if g >= uint64(rs.n-last-1) {
				return nil, nil, corruptf("irregular record out of range")
			}
			r := last + 1 + int(g)
			last = r
			nl := a.codeNum(&m.lines, 0)
			if nl > room {
				return nil, nil, corruptf("record %d: too many lines", r)
			}
			room -= nl
			ll := make([]uint32, nl)
			sum := uint64(0)
			for j := range ll {
				l := a.codeNum(&m.lineLen, 0)
				sum += l
				if sum > maxReadLength {
					return nil, nil, corruptf("record %d: lines too long", r)
				}
				ll[j] = uint32(l)
			}
			if sum != uint64(rs.seqEnd[r]-rs.start(rs.seqEnd, r)) {
				return nil, nil, corruptf("record %d: lines of %d bytes for a sequence of %d", r, sum, rs.seqEnd[r]-rs.start(rs.seqEnd, r))
			}
			rs.irregular = append(rs.irregular, int32(r))
			rs.lines = append(rs.lines, ll)
			if a.overrun() {
				return nil, nil, corruptf("the read set's structure ends early")
			}
		}
	}
	codes := make([]byte, nbases)
	x := &seqExtras{}
	nruns := a.codeNum(&m.excRuns, 0)
	if nruns > uint64(nbases) {
		return nil, nil, corruptf("%d runs of exceptions in %d bases", nruns, nbases)
	}
	end, pb := 0, byte('N')
	for k := 0; k < int(nruns); k++ {
		g := a.codeNum(&m.excGap, 0)
		b := pb
		if a.codeBit(&m.excSame, 0, numLimit) == 0 {
			b = a.codeByte(&m.excByte, 0)
		}
		l := a.codeNum(&m.excLen, 0) + 1
		if g > uint64(nbases-end) || l > uint64(nbases-end)-g || baseCode[b] >= 0 {
			return nil, nil, corruptf("exception run %d out of range", k)
		}
		r := excRun{end + int(g), int(l), b}
		for j := r.start; j < r.start+r.n; j++ {
			codes[j] = baseWild
		}
		x.exc = append(x.exc, r)
		end, pb = r.start+r.n, b
		if a.overrun() {
			return nil, nil, corruptf("the read set's structure ends early")
		}
	}
	ncase := a.codeNum(&m.caseRuns, 0)
	if ncase > uint64(nbases) {
		return nil, nil, corruptf("%d case runs in %d bases", ncase, nbases)
	}
	left := uint64(nbases)
	x.caseRuns = make([]int, ncase)
	for k := range x.caseRuns {
		l := a.codeNum(&m.caseLen[k&1], 0)
		if l > left {
			return nil, nil, corruptf("case run %d out of range", k)
		}
		left -= l
		x.caseRuns[k] = int(l)
	}
	if a.overrun() {
		return nil, nil, corruptf("the read set's structure ends early")
	}
	return codes, x, nil
}

func decodeNames(sec []byte, rs *readSet, nnames int) error {
	a := newDecoder(sec)
	m := &nameModel{}
	rs.names = make([]byte, 0, nnames)
	rs.nameEnd = make([]uint32, rs.n)
	for i := 0; i < rs.n; i++ {
		var ok bool
		rs.names, ok = m.codeName(a, nil, rs.names, nnames-len(rs.names))
		if !ok || a.overrun() {
			return corruptf("read %d: bad name", i)
		}
		rs.nameEnd[i] = uint32(len(rs.names))
	}
	if len(rs.names) != nnames {
		return corruptf("names of %d bytes, not %d", len(rs.names), nnames)
	}
	return nil
}

func decodeConsensus(sec, cons []byte) error {
	a := newDecoder(sec)
	m := newDNAModel()
	for i := range cons {
		cons[i] = m.codeBase(a, 0)
		if i&0xFFFF == 0 && a.overrun() {
			return corruptf("the consensus ends early")
		}
	}
	if a.overrun() {
		return corruptf("the consensus ends early")
	}
	return nil
}

func decodeQualChunk(sec []byte, rs *readSet, alpha []byte, chunks []int, k int) error {
	b0, b1, ends := rs.chunkBases(chunks, k)
	q := rs.qual[b0:b1]
	a := newDecoder(sec)
	newQualModel(len(alpha)).codeQualities(a, q, ends)
	if a.overrun() {
		return corruptf("chunk %d: the qualities end early", k)
	}
	for i, r := range q {
		if int(r) >= len(alpha) {
			return corruptf("chunk %d: quality rank %d out of range", k, r)
		}
		q[i] = alpha[r]
	}
	return nil
}

func decodeReadsChunk(sec []byte, rs *readSet, codes, cons []byte, chunks []int, k int) error {
	r0, r1 := chunkRange(chunks, k)
	a := newDecoder(sec)
	m := &readsModel{}
	for i := r0; i < r1; i++ {
		s, q := rs.readAt(codes, i)
		if !m.codeRead(a, s, q, cons, 0, false) || i&1023 == 0 && a.overrun() {
			return corruptf("read %d: bad place", i)
		}
	}
	if a.overrun() {
		return corruptf("chunk %d: the reads end early", k)
	}
	return nil
}
