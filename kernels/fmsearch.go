package kernels

// Patterns is a batch of search patterns, encoded against a reference's alphabet (EncodeQuery),
// in flat slices so that the batch crosses into a backend, and onto a GPU, without copying.
type Patterns struct {
	Codes []byte
	Ends  []int // pattern i is Codes[Ends[i-1]:Ends[i]] (Ends[-1] taken as 0)
}

// Add appends one encoded pattern.
func (p *Patterns) Add(codes []byte) {
	p.Codes = append(p.Codes, codes...)
	p.Ends = append(p.Ends, len(p.Codes))
}

// Len returns the number of patterns.
func (p *Patterns) Len() int { return len(p.Ends) }

// Pattern returns the codes of pattern i.
func (p *Patterns) Pattern(i int) []byte {
	start := 0
	if i > 0 {
		start = p.Ends[i-1]
	}
	return p.Codes[start:p.Ends[i]]
}

// Reset empties p for reuse.
func (p *Patterns) Reset() {
	p.Codes = p.Codes[:0]
	p.Ends = p.Ends[:0]
}

// Hits are the results of searching Patterns in a reference text: Count[i] is the number of
// occurrences of pattern i, and when they are located, Pos[PosEnds[i-1]:PosEnds[i]] are their
// start positions in Reference.Text, ascending. An empty pattern, or one holding a code that
// never matches (below FirstCode), has no occurrences.
type Hits struct {
	Count   []int32
	Pos     []int64
	PosEnds []int
}

// Reset empties h for reuse.
func (h *Hits) Reset() {
	h.Count = h.Count[:0]
	h.Pos = h.Pos[:0]
	h.PosEnds = h.PosEnds[:0]
}

// Positions returns the located positions of pattern i.
func (h *Hits) Positions(i int) []int64 {
	start := 0
	if i > 0 {
		start = h.PosEnds[i-1]
	}
	return h.Pos[start:h.PosEnds[i]]
}

// Searcher counts, and optionally locates, the occurrences of patterns in one indexed reference
// text. Every implementation gives identical Hits. It is safe for concurrent use.
type Searcher interface {
	// Search appends the hits of every pattern of p to h: one Count each, and with locate
	// their positions and one PosEnds entry each.
	Search(p *Patterns, locate bool, h *Hits) error
	Close() error
}
