package stages

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/sapipe/sapipe/formats"
	"github.com/sapipe/sapipe/kernels"
	"github.com/sapipe/sapipe/kernels/cpu"
)

// randomFasta returns a multi-record FASTA text with repeats, mixed case and a few N and IUPAC
// bytes, and the records' sequences.
func randomFasta(rng *rand.Rand, records, maxLen int) (string, []string) {
	var fa strings.Builder
	var seqs []string
	var all []byte
	for i := range records {
		n := rng.IntN(maxLen + 1)
		if i == 0 {
			n = max(n, 1)
		}
		s := make([]byte, n)
		for j := range s {
			s[j] = "acgtACGT"[rng.IntN(8)]
			if rng.IntN(200) == 0 {
				s[j] = "nNrykm"[rng.IntN(6)]
			}
		}
		if len(all) > 40 && n > 40 && rng.IntN(2) == 0 { // a repeat of earlier sequence
			l := 20 + rng.IntN(min(len(all), n)-20)
			a, b := rng.IntN(len(all)-l+1), rng.IntN(n-l+1)
			copy(s[b:], all[a:a+l])
		}
		all = append(all, s...)
		seqs = append(seqs, string(s))
		fmt.Fprintf(&fa, ">rec%d some description\n", i+1)
		for j := 0; j < len(s); j += 60 {
			fmt.Fprintf(&fa, "%s\n", s[j:min(j+60, len(s))])
		}
	}
	return fa.String(), seqs
}

func writeTemp(t testing.TB, dir, name, data string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestIndexRoundTrip: an index written and read back is the index built, and matching against it
// gives what a matcher built from the FASTA file gives.
func TestIndexRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 2))
	dir := t.TempDir()
	b := cpu.New(2)
	rounds := 40
	if testing.Short() {
		rounds = 10
	}
	for r := range rounds {
		fa, _ := randomFasta(rng, 1+rng.IntN(4), []int{30, 500, 5000}[rng.IntN(3)])
		refPath := writeTemp(t, dir, "ref.fa", fa)
		nuc := rng.IntN(2) == 0
		iopts := IndexOptions{Overlap: DefaultIndexOverlap, Threads: 2}
		if r%2 == 1 { // pages
			iopts = IndexOptions{PageSize: 20 + rng.IntN(3000), Overlap: rng.IntN(40), Threads: 1 + rng.IntN(3)}
		}
		built, err := BuildIndex(b, refPath, nuc, nil, iopts)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := built.Write(&buf, "note\n", 2); err != nil {
			t.Fatal(err)
		}
		saiPath := writeTemp(t, dir, "ref.sai", buf.String())
		// Written into an empty file (through a mapping, or at offsets, on several goroutines),
		// then after what a file holds already (in order): the same bytes.
		defer func(m int64) { mappedWriteMin = m }(mappedWriteMin)
		for k, before := range []string{"", "", "head", ""} {
			mappedWriteMin = 0
			if before == "" && r%2 == 1 {
				mappedWriteMin = 1 << 62
			}
			flags := os.O_RDWR | os.O_CREATE | os.O_TRUNC
			if k == 3 { // as a shell opens stdout's file
				flags = os.O_WRONLY | os.O_CREATE | os.O_TRUNC
			}
			f, err := os.OpenFile(filepath.Join(dir, "direct.sai"), flags, 0o644)
			if err != nil {
				t.Fatal(err)
			}
			f.WriteString(before)
			if err := built.Write(f, "note\n", 3); err != nil {
				t.Fatal(err)
			}
			f.WriteString("tail")
			f.Close()
			if got, _ := os.ReadFile(f.Name()); string(got) != before+buf.String()+"tail" {
				t.Fatalf("round %d: the index written into a file after %q differs from the one written to a buffer", r, before)
			}
		}
		ix, err := OpenIndex(saiPath, 1+rng.IntN(3))
		if err != nil {
			t.Fatalf("round %d: %v", r, err)
		}
		if !reflect.DeepEqual(ix.Ref, built.Ref) || ix.NucleotidesOnly != nuc || ix.Note != "note\n" || len(ix.Pages) != len(built.Pages) ||
			!reflect.DeepEqual(ix.Kmers, built.Kmers) || !reflect.DeepEqual(ix.Tails, built.Tails) || ix.Overlap != iopts.Overlap {
			t.Fatalf("round %d: the index read back differs from the one built", r)
		}
		for i, p := range ix.Pages {
			if !reflect.DeepEqual(p.Arrays(), built.Pages[i].Arrays()) || p.Start != built.Pages[i].Start || p.End != built.Pages[i].End {
				t.Fatalf("round %d: page %d read back differs from the one built", r, i)
			}
		}
		ref, err := LoadReference(refPath, nuc, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(ref, built.Ref) {
			t.Fatalf("round %d: the index's reference differs from LoadReference's", r)
		}
		opts := kernels.MatchOptions{Mode: kernels.Mode(rng.IntN(3)), MinLen: 1 + rng.IntN(min(25, iopts.Overlap+1))}
		want, err := b.NewMatcher(ref, opts)
		if err != nil {
			t.Fatal(err)
		}
		got, err := ix.Matcher(opts)
		if err != nil {
			t.Fatal(err)
		}
		var batch kernels.Batch
		for range 1 + rng.IntN(8) {
			_, qs := randomFasta(rng, 1, 400)
			off := len(batch.Codes)
			batch.Codes = kernels.EncodeQuery(batch.Codes, []byte(qs[0]), &ref.Alpha, rng.IntN(2) == 0, nuc)
			n := len(batch.Codes) - off
			batch.Segs = append(batch.Segs, kernels.Segment{Off: off, Len: n, From: 0, To: n})
		}
		var rw, rg kernels.Result
		if err := want.Match(&batch, &rw); err != nil {
			t.Fatal(err)
		}
		if err := got.Match(&batch, &rg); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(rw, rg) {
			t.Fatalf("round %d: matches against the index differ", r)
		}
		if err := ix.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// naiveOccurrences returns the 0-based starts of the lowercased pattern in the lowercased
// sequence; under nuc only a, c, g, t match.
func naiveOccurrences(seq, pat string, nuc bool) []int {
	seq, pat = strings.ToLower(seq), strings.ToLower(pat)
	if pat == "" {
		return nil
	}
	var out []int
	for i := 0; i+len(pat) <= len(seq); i++ {
		ok := true
		for j := 0; j < len(pat); j++ {
			c := pat[j]
			if seq[i+j] != c || (nuc && !strings.ContainsRune("acgt", rune(c))) {
				ok = false
				break
			}
		}
		if ok {
			out = append(out, i)
		}
	}
	return out
}

func revComp(s string) string {
	comp := map[byte]byte{'a': 't', 'c': 'g', 'g': 'c', 't': 'a', 'A': 'T', 'C': 'G', 'G': 'C', 'T': 'A',
		'r': 'y', 'y': 'r', 'k': 'm', 'm': 'k', 'R': 'Y', 'Y': 'R', 'K': 'M', 'M': 'K'}
	b := make([]byte, len(s))
	for i := range s {
		c, ok := comp[s[i]]
		if !ok {
			c = 'n'
		}
		b[len(s)-1-i] = c
	}
	return string(b)
}

// naiveSearchTable writes what count or locate should print for the named patterns.
func naiveSearchTable(names, seqs []string, recNames, recs []string, strands Strands, locate, nuc bool) string {
	var out strings.Builder
	for i, p := range seqs {
		total := 0
		for _, s := range []struct {
			on   bool
			pat  string
			sign string
		}{{strands.Forward, p, "+"}, {strands.Reverse, revComp(p), "-"}} {
			if !s.on {
				continue
			}
			for r, rec := range recs {
				for _, at := range naiveOccurrences(rec, s.pat, nuc) {
					total++
					if locate {
						fmt.Fprintf(&out, "%s\t%s\t%d\t%s\n", names[i], recNames[r], at+1, s.sign)
					}
				}
			}
		}
		if !locate {
			fmt.Fprintf(&out, "%s\t%d\n", names[i], total)
		}
	}
	return out.String()
}

// TestSearchNaive runs count and locate over random references and patterns in every input form
// and compares them with a brute-force search.
func TestSearchNaive(t *testing.T) {
	rng := rand.New(rand.NewPCG(22, 3))
	dir := t.TempDir()
	rounds := 60
	if testing.Short() {
		rounds = 15
	}
	for r := range rounds {
		fa, recs := randomFasta(rng, 1+rng.IntN(3), []int{20, 300, 3000}[rng.IntN(3)])
		var recNames []string
		for i := range recs {
			recNames = append(recNames, fmt.Sprintf("rec%d", i+1))
		}
		nuc := rng.IntN(3) == 0
		ix, err := BuildIndex(cpu.New(1), writeTemp(t, dir, "ref.fa", fa), nuc, nil, IndexOptions{Overlap: DefaultIndexOverlap, Threads: 2})
		if err != nil {
			t.Fatal(err)
		}
		var names, seqs []string
		all := strings.Join(recs, "")
		for i := range 1 + rng.IntN(60) {
			var p string
			l := rng.IntN(30)
			if rng.IntN(3) > 0 && len(all) >= l {
				a := rng.IntN(len(all) - l + 1)
				p = all[a : a+l]
			} else {
				_, s := randomFasta(rng, 1, l)
				p = s[0]
			}
			if rng.IntN(4) == 0 {
				p = revComp(p)
			}
			seqs = append(seqs, p)
			names = append(names, fmt.Sprintf("p%d", i+1))
		}
		var in strings.Builder
		form := rng.IntN(3)
		for i, p := range seqs {
			switch form {
			case 0:
				fmt.Fprintf(&in, ">%s x\n%s\n", names[i], p)
			case 1:
				fmt.Fprintf(&in, "@%s\n%s\n+\n%s\n", names[i], p, strings.Repeat("I", len(p)))
			default:
				if p == "" {
					p = "-" // a line never names an empty pattern; this one matches nothing
					seqs[i] = "-"
				}
				names[i] = p
				fmt.Fprintf(&in, "%s\r\n\n", p)
			}
		}
		strands := []Strands{{Forward: true}, {Reverse: true}, {Forward: true, Reverse: true}}[rng.IntN(3)]
		locate := rng.IntN(2) == 0
		opts := SearchOptions{Strands: strands, Locate: locate, Threads: 1 + rng.IntN(3), BatchSize: 1 + rng.IntN(200)}
		s, err := ix.Searcher()
		if err != nil {
			t.Fatal(err)
		}
		var got bytes.Buffer
		if err := Search(context.Background(), opts, ix, s, []string{"-"}, strings.NewReader(in.String()), &got); err != nil {
			t.Fatalf("round %d: %v", r, err)
		}
		want := naiveSearchTable(names, seqs, recNames, recs, strands, locate, nuc)
		if got.String() != want {
			t.Fatalf("round %d (form %d, %+v, locate %v, -n %v): got\n%s\nwant\n%s", r, form, strands, locate, nuc, got.String(), want)
		}
	}
}

// resealIndex recomputes every checksum of an index file in place (the layout is the documented
// one), so that the fuzzer's changes reach the checks of the contents.
func resealIndex(data []byte) {
	if len(data) < 64 {
		return
	}
	k := int(binary.LittleEndian.Uint32(data[12:]))
	if k < 0 || k > 64 || len(data) < 64+32*k+4 {
		return
	}
	tab := crc32.MakeTable(crc32.Castagnoli)
	for i := range k {
		e := data[64+32*i : 96+32*i]
		off, length := binary.LittleEndian.Uint64(e[8:]), binary.LittleEndian.Uint64(e[16:])
		if off > uint64(len(data)) || length > uint64(len(data))-off {
			continue
		}
		sec := data[off : off+length]
		var sums []byte
		for c := 0; c < len(sec); c += 1 << 20 {
			sums = binary.LittleEndian.AppendUint32(sums, crc32.Checksum(sec[c:min(c+1<<20, len(sec))], tab))
		}
		binary.LittleEndian.PutUint32(e[24:], crc32.Checksum(sums, tab))
	}
	binary.LittleEndian.PutUint32(data[64+32*k:], crc32.Checksum(data[64:64+32*k], tab))
	binary.LittleEndian.PutUint32(data[60:], crc32.Checksum(data[:60], tab))
}

// FuzzIndexLoad: no file makes loading an index panic or allocate much, whether its checksums
// hold or not (each input is tried as it is and with its checksums recomputed, so that damage
// reaches the checks of the contents); an index that loads can be searched and matched against
// without a panic.
func FuzzIndexLoad(f *testing.F) {
	rng := rand.New(rand.NewPCG(23, 4))
	for _, n := range []int{3, 40} {
		fa, _ := randomFasta(rng, 2, n)
		p := writeTemp(f, f.TempDir(), "ref.fa", fa)
		ix, err := BuildIndex(cpu.New(1), p, false, nil, IndexOptions{Overlap: DefaultIndexOverlap, Threads: 2})
		if err != nil {
			f.Fatal(err)
		}
		var buf bytes.Buffer
		ix.Write(&buf, "", 1)
		f.Add(buf.Bytes())
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, reseal := range []bool{false, true} {
			d := data
			if reseal {
				d = slices.Clone(data)
				resealIndex(d)
			}
			ix, err := ParseIndex("fuzz.sai", d, 1)
			if err != nil {
				if !strings.HasPrefix(err.Error(), "fuzz.sai: ") || strings.Contains(err.Error(), "\n") {
					t.Fatalf("error %q is not one line naming the file", err)
				}
				continue
			}
			exercise(t, ix)
		}
	})
}

// exercise searches and matches against ix with patterns cut from its own text.
func exercise(t *testing.T, ix *Index) {
	s, err := ix.Searcher()
	if err != nil {
		t.Fatal(err)
	}
	var ps kernels.Patterns
	text := ix.Ref.Text
	for i := 0; i < len(text); i += 7 {
		ps.Add(text[i:min(len(text), i+1+i%13)])
	}
	var h kernels.Hits
	if err := s.Search(&ps, true, &h); err != nil {
		t.Fatal(err)
	}
	for i := range ps.Len() {
		for _, p := range h.Positions(i) {
			ix.Ref.RecordOf(int(p))
		}
	}
	for _, mode := range []kernels.Mode{kernels.MumReference, kernels.Mum, kernels.MaxMatch} {
		m, err := ix.Matcher(kernels.MatchOptions{Mode: mode, MinLen: 2})
		if err != nil {
			t.Fatal(err)
		}
		b := kernels.Batch{Codes: text, Segs: []kernels.Segment{{Off: 0, Len: len(text), From: 0, To: len(text)}}}
		var res kernels.Result
		if err := m.Match(&b, &res); err != nil {
			t.Fatal(err)
		}
	}
}

// TestIndexLoadErrors: files that are not indexes, or damaged ones, are errors of one line naming
// the file, from OpenIndex as from ParseIndex.
// TestSearchIndex: an index opened for count and locate leaves the LCP sections alone (a damaged
// one is no error there, and OpenIndex still names it), searches as the whole index does, and
// does not match.
func TestSearchIndex(t *testing.T) {
	pi := newPagedIndex(t, rand.New(rand.NewPCG(25, 6)), 2500, 5, 60)
	dir, ix, good, ps := t.TempDir(), pi.ix, pi.data, pi.ps
	search := func(ix *Index, b kernels.Backend) kernels.Hits {
		t.Helper()
		s, err := ix.SearcherOn(b)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		var h kernels.Hits
		if err := s.Search(ps, true, &h); err != nil {
			t.Fatal(err)
		}
		return h
	}
	want := pi.want
	// Damage every LCP section of the last page (the table's entries name them).
	bad := slices.Clone(good)
	k := int(binary.LittleEndian.Uint32(bad[12:]))
	damaged := 0
	for i := range k {
		e := bad[64+32*i : 96+32*i]
		tag, page := string(e[:4]), binary.LittleEndian.Uint32(e[28:])
		off, length := binary.LittleEndian.Uint64(e[8:]), binary.LittleEndian.Uint64(e[16:])
		if slices.Contains(formats.LCPSections, tag) && int(page) == len(ix.Pages)-1 && length > 0 {
			bad[off+length/2] ^= 0x5a
			damaged++
		}
	}
	if damaged < 3 {
		t.Fatalf("%d LCP sections damaged", damaged)
	}
	p := writeTemp(t, dir, "bad.sai", string(bad))
	if _, err := OpenIndex(p, 2); err == nil || !strings.Contains(err.Error(), "checksum mismatch") || !strings.Contains(err.Error(), "section LC") {
		t.Fatalf("OpenIndex of damaged LCP sections: %v", err)
	}
	for _, checking := range []bool{false, true} {
		open := OpenSearchIndex
		if checking {
			open = OpenSearchIndexChecking
		}
		six, err := open(p, 2)
		if err != nil {
			t.Fatalf("checking %v: %v", checking, err)
		}
		var eb earlyBackend
		var b kernels.Backend
		if checking {
			b = &eb
		}
		if got := search(six, b); !reflect.DeepEqual(got, want) {
			t.Errorf("checking %v: the search-only index's hits differ", checking)
		}
		if checking && eb.searches != len(ix.Pages) {
			t.Errorf("%d early pages searched of %d", eb.searches, len(ix.Pages))
		}
		if _, err := six.Matcher(kernels.MatchOptions{Mode: kernels.MaxMatch, MinLen: 20}); err == nil {
			t.Error("a search-only index matched")
		}
		if err := six.Write(io.Discard, "", 1); err == nil {
			t.Error("a search-only index was written")
		}
		six.Close()
	}
	// Damage elsewhere is still an error.
	bad = slices.Clone(good)
	bad[len(bad)-3] ^= 0x5a // the last section: a page's tail rows
	if six, err := OpenSearchIndex(writeTemp(t, dir, "bad2.sai", string(bad)), 2); err == nil {
		six.Close()
		t.Error("damage outside the LCP was taken")
	}
}

func TestIndexLoadErrors(t *testing.T) {
	rng := rand.New(rand.NewPCG(24, 5))
	dir := t.TempDir()
	fa, _ := randomFasta(rng, 3, 2000)
	refPath := writeTemp(t, dir, "ref.fa", fa)
	ix, err := BuildIndex(cpu.New(2), refPath, false, nil, IndexOptions{Overlap: DefaultIndexOverlap, Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	ix.Write(&buf, "", 2)
	good := buf.Bytes()
	if _, err := OpenIndex(refPath, 1); err == nil || !strings.Contains(err.Error(), "not a sapipe index") {
		t.Errorf("a FASTA file: %v", err)
	}
	if IsIndexFile(refPath) || !IsIndexFile(writeTemp(t, dir, "good.sai", string(good))) || IsIndexFile("-") || IsIndexFile(filepath.Join(dir, "none")) {
		t.Error("IsIndexFile is wrong")
	}
	for i := range 200 {
		d := slices.Clone(good)
		switch i % 3 {
		case 0:
			d[rng.IntN(len(d))] ^= byte(1 + rng.IntN(255))
		case 1:
			d = d[:rng.IntN(len(d))]
		case 2: // damage with the checksums recomputed: the contents' checks catch it, or it loads
			d[64*3+rng.IntN(len(d)-64*3)] ^= byte(1 + rng.IntN(255))
			resealIndex(d)
		}
		p := writeTemp(t, dir, "bad.sai", string(d))
		got, err := OpenIndex(p, 2)
		// With the checks left running, the same error comes from the open or from the matcher.
		var eb earlyBackend
		late, lerr := OpenIndexChecking(p, 2)
		if lerr == nil {
			var m kernels.Matcher
			m, lerr = late.MatcherOn(&eb, kernels.MatchOptions{Mode: kernels.MaxMatch, MinLen: 2})
			if lerr == nil {
				m.Close()
			}
			late.Close()
		}
		if (err == nil) != (lerr == nil) || err != nil && err.Error() != lerr.Error() {
			t.Fatalf("case %d: OpenIndex's error %v, OpenIndexChecking and MatcherOn's %v", i, err, lerr)
		}
		if lerr == nil && !eb.matched {
			t.Fatalf("case %d: the early arrays were not those of the checked pages", i)
		}
		// And from SearcherOn, with the pages taken unchecked in every other case.
		eb = earlyBackend{onDevice: i%2 == 1}
		late, lerr = OpenIndexChecking(p, 2)
		if lerr == nil {
			var s kernels.Searcher
			s, lerr = late.SearcherOn(&eb)
			if lerr == nil {
				s.Close()
			}
			late.Close()
		}
		if (err == nil) != (lerr == nil) || err != nil && err.Error() != lerr.Error() {
			t.Fatalf("case %d: OpenIndex's error %v, OpenIndexChecking and SearcherOn's %v", i, err, lerr)
		}
		if lerr == nil && (!eb.matched || eb.searches != len(got.Pages)) {
			t.Fatalf("case %d: %d early pages searched of %d, or not the checked ones", i, eb.searches, len(got.Pages))
		}
		if err == nil {
			if i%3 != 2 {
				t.Fatalf("case %d: damage went unnoticed", i)
			}
			exercise(t, got)
			got.Close()
			continue
		}
		if !strings.HasPrefix(err.Error(), p+": ") || strings.Contains(err.Error(), "\n") {
			t.Fatalf("case %d: error %q", i, err)
		}
	}
}

// TestSearchPagesOverCards: a backend of several devices that gives each page of an index file
// to one of them (SearchCard) searches as the CPU does, each page on its device; with fewer pages
// than devices, every page is left to the backend itself.
func TestSearchPagesOverCards(t *testing.T) {
	pi := newPagedIndex(t, rand.New(rand.NewPCG(25, 7)), 1500, 3, 70)
	ix, path, ps, want := pi.ix, pi.path, pi.ps, pi.want
	if len(ix.Pages) < 4 {
		t.Fatalf("%d pages", len(ix.Pages))
	}
	for _, cards := range []int{2, 3, len(ix.Pages), len(ix.Pages) + 1} {
		cb := &cardsBackend{}
		for range cards {
			cb.cards = append(cb.cards, &earlyBackend{onDevice: true})
		}
		six, err := OpenSearchIndexChecking(path, 2)
		if err != nil {
			t.Fatal(err)
		}
		s, err := six.SearcherOn(cb)
		if err != nil {
			t.Fatal(err)
		}
		got := searchClose(t, s, ps, true)
		six.Close()
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%d cards: the hits differ from the CPU's", cards)
		}
		searched := 0
		for k, c := range cb.cards {
			if cards <= len(ix.Pages) && (c.searches == 0 || !c.matched) {
				t.Errorf("%d cards: card %d holds %d pages, or not the checked ones", cards, k, c.searches)
			}
			searched += c.searches
		}
		if spread := cards <= len(ix.Pages); spread && searched != len(ix.Pages) || !spread && searched != 0 {
			t.Errorf("%d cards: %d pages on the cards of %d", cards, searched, len(ix.Pages))
		}
		// Counting only: every page goes to its card marked so, and the counts are the CPU's.
		cb = &cardsBackend{}
		for range cards {
			cb.cards = append(cb.cards, &earlyBackend{onDevice: true})
		}
		if six, err = OpenSearchIndexChecking(path, 2); err != nil {
			t.Fatal(err)
		}
		if s, err = six.CountSearcherOn(cb); err != nil {
			t.Fatal(err)
		}
		counted := searchClose(t, s, ps, false)
		six.Close()
		if !slices.Equal(counted.Count, want.Count) {
			t.Fatalf("%d cards, counting only: the counts differ from the CPU's", cards)
		}
		marked := 0
		for _, c := range cb.cards {
			marked += c.counting
		}
		if spread := cards <= len(ix.Pages); spread && marked != len(ix.Pages) || !spread && marked != 0 {
			t.Errorf("%d cards, counting only: %d pages marked so of %d", cards, marked, len(ix.Pages))
		}
	}
}

// pagedIndex is an index of two or more pages over a random reference of three records, its
// file, patterns cut from its text and their hits on the CPU, located.
type pagedIndex struct {
	ix   *Index
	data []byte // the file's bytes
	path string
	ps   *kernels.Patterns
	want kernels.Hits
}

// searchClose returns the hits of ps by s, located or counted, and closes s.
func searchClose(t *testing.T, s kernels.Searcher, ps *kernels.Patterns, locate bool) kernels.Hits {
	t.Helper()
	defer s.Close()
	var h kernels.Hits
	if err := s.Search(ps, locate, &h); err != nil {
		t.Fatal(err)
	}
	return h
}

// newPagedIndex makes a pagedIndex of pages of pageSize whose patterns start every step
// positions, of 1 to most bases.
func newPagedIndex(t *testing.T, rng *rand.Rand, pageSize, step, most int) *pagedIndex {
	t.Helper()
	dir := t.TempDir()
	fa, _ := randomFasta(rng, 3, 3000)
	ix, err := BuildIndex(cpu.New(2), writeTemp(t, dir, "ref.fa", fa), false, nil, IndexOptions{PageSize: pageSize, Overlap: 40, Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(ix.Pages) < 2 {
		t.Fatalf("%d pages", len(ix.Pages))
	}
	var buf bytes.Buffer
	ix.Write(&buf, "", 2)
	pi := &pagedIndex{ix: ix, data: buf.Bytes(), path: writeTemp(t, dir, "ref.sai", buf.String()), ps: &kernels.Patterns{}}
	for i := 0; i < len(ix.Ref.Text); i += step {
		pi.ps.Add(ix.Ref.Text[i:min(len(ix.Ref.Text), i+1+i%most)])
	}
	s, err := ix.SearcherOn(nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Search(pi.ps, true, &pi.want); err != nil {
		t.Fatal(err)
	}
	return pi
}

// TestLocateSearcherChecksSuffixArrays: a device that counts only holds and checks no suffix
// array, so the host checks them before any is read: an index whose suffix array holds a row out
// of range, its checksums recomputed, gives LocateSearcherOn the host's error; the intact one
// counts and locates as the CPU does.
func TestLocateSearcherChecksSuffixArrays(t *testing.T) {
	rng := rand.New(rand.NewPCG(26, 8))
	pi := newPagedIndex(t, rng, 1500, 5, 50)
	dir, good, ps, want := t.TempDir(), pi.data, pi.ps, pi.want
	k := int(binary.LittleEndian.Uint32(good[12:]))
	var sufa [][2]int // each page's suffix array section: offset and rows
	for i := range k {
		e := good[64+32*i : 96+32*i]
		if string(e[:4]) == "SUFA" {
			sufa = append(sufa, [2]int{int(binary.LittleEndian.Uint64(e[8:])), int(binary.LittleEndian.Uint64(e[16:]) / 4)})
		}
	}
	if len(sufa) < 2 {
		t.Fatalf("%d suffix arrays", len(sufa))
	}
	for r := range 2 * len(sufa) {
		data := slices.Clone(good)
		bad := r < len(sufa)
		if bad {
			off, rows := sufa[r][0], sufa[r][1]
			binary.LittleEndian.PutUint32(data[off+4*(1+rng.IntN(rows-1)):], uint32(rows+rng.IntN(1000)))
			resealIndex(data)
		}
		path := writeTemp(t, dir, "ref.sai", string(data))
		_, wantErr := OpenIndex(path, 2)
		if bad != (wantErr != nil) {
			t.Fatalf("round %d: OpenIndex's error %v", r, wantErr)
		}
		// The range is checked in the checksums' pass.
		six, err := OpenSearchIndexChecking(path, 2)
		if err != nil {
			t.Fatal(err)
		}
		s, err := six.LocateSearcherOn(&countingCard{})
		if bad {
			if err == nil || err.Error() != wantErr.Error() {
				t.Fatalf("round %d: a suffix array out of range gave %v, want %v", r, err, wantErr)
			}
			six.Close()
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		got := searchClose(t, s, ps, true)
		six.Close()
		if !reflect.DeepEqual(got, want) {
			t.Fatal("the hits differ from the CPU's")
		}
	}
}

// countingCard is a device that holds what counting needs and checks it (here: passes it), then
// searches the page taken without the host's checks, as kernels/cuda does.
type countingCard struct{ cpu.Backend }

func (*countingCard) NewPatternSearcherEarly(early *cpu.DeviceIndex, sums func() error, unchecked, checked func() (*cpu.Searcher, error)) (kernels.Searcher, error) {
	if !early.CountOnly {
		return nil, errors.New("not counting only")
	}
	if err := sums(); err != nil {
		return nil, err
	}
	return unchecked()
}

// cardsBackend is a backend of several devices that gives the pages of an index to them in
// ranges, as a group of GPUs does.
type cardsBackend struct {
	cpu.Backend
	cards []*earlyBackend
}

func (cb *cardsBackend) SearchCard(i, n int) kernels.Backend {
	if n < len(cb.cards) {
		return nil
	}
	return cb.cards[i*len(cb.cards)/n]
}

// earlyBackend is a backend that takes an index file's early pages as a GPU does, and checks that
// they are the memory of the checked pages.
type earlyBackend struct {
	cpu.Backend
	matched  bool
	searches int
	onDevice bool // search the pages taken unchecked (after the host's checks passed, to compare)
	counting int  // early pages given to be counted only (cpu.DeviceIndex.CountOnly)
	mu       sync.Mutex
}

func (eb *earlyBackend) NewPatternSearcherEarly(early *cpu.DeviceIndex, sums func() error, unchecked, checked func() (*cpu.Searcher, error)) (kernels.Searcher, error) {
	s, err := checked()
	if eb.onDevice && err == nil {
		// As a device that checks the page itself: the checksums, then the page taken unchecked.
		if err = sums(); err == nil {
			s, err = unchecked()
		}
	}
	if err != nil {
		return nil, err
	}
	d := s.Device()
	same := &d.Text[0] == &early.Text[0] && len(d.Text) == len(early.Text) && &d.SA[0] == &early.SA[0] && len(d.SA) == len(early.SA) &&
		&d.Occ[0] == &early.Occ[0] && len(d.Occ) == len(early.Occ) && len(d.Kmers) == len(early.Kmers) && d.KmerLen == early.KmerLen &&
		(len(d.Kmers) == 0 || &d.Kmers[0] == &early.Kmers[0]) && d.Sigma == early.Sigma &&
		d.OccStride == early.OccStride && d.OccCounts == early.OccCounts && d.OccPlanes == early.OccPlanes
	eb.mu.Lock()
	defer eb.mu.Unlock()
	if eb.searches == 0 {
		eb.matched = true
	}
	eb.matched = eb.matched && same
	eb.searches++
	if early.CountOnly {
		eb.counting++
	}
	return s, nil
}

func (eb *earlyBackend) NewMatcherFromEarlyPages(ref *kernels.Reference, opts kernels.MatchOptions, early []cpu.DeviceArrays, sums func() error, checked func() (*cpu.Matcher, error)) (kernels.Matcher, error) {
	m, err := checked()
	if err != nil {
		return nil, err
	}
	pages := m.Pages()
	eb.matched = len(pages) == len(early)
	for i, p := range pages {
		a, e := p.DeviceArrays(), early[i]
		eb.matched = eb.matched && a.Start == e.Start && a.End == e.End && a.WinEnd == e.WinEnd && a.N == e.N &&
			&a.SA[0] == &e.SA[0] && len(a.SA) == len(e.SA) && &a.LCP[0] == &e.LCP[0] && len(a.LCP) == len(e.LCP) &&
			&a.Occ[0] == &e.Occ[0] && len(a.Occ) == len(e.Occ) && len(a.LCPBigRow) == len(e.LCPBigRow) &&
			len(a.LCPMin1) == len(e.LCPMin1) && len(a.LCPMin2) == len(e.LCPMin2) &&
			a.OccPlanes == e.OccPlanes && a.OccCounts == e.OccCounts && a.OccStride == e.OccStride
	}
	return m, nil
}

func BenchmarkOpenIndex(b *testing.B) {
	data, err := os.ReadFile("../../shared/data/ecoli.fa")
	if err != nil {
		b.Skip("no ../shared/data/ecoli.fa")
	}
	dir := b.TempDir()
	ix, err := BuildIndex(cpu.New(2), writeTemp(b, dir, "ecoli.fa", string(data)), false, nil, IndexOptions{Overlap: DefaultIndexOverlap, Threads: 2})
	if err != nil {
		b.Fatal(err)
	}
	f, _ := os.Create(filepath.Join(dir, "ecoli.sai"))
	ix.Write(f, "", 2)
	f.Close()
	st, _ := os.Stat(f.Name())
	b.SetBytes(st.Size())
	for b.Loop() {
		ix, err := OpenIndex(f.Name(), 2)
		if err != nil {
			b.Fatal(err)
		}
		ix.Close()
	}
}

// BenchmarkSearchStage counts 200k patterns of 20-150 bases cut from E. coli (../shared/data),
// from the text of one pattern a line to the count table.
func BenchmarkSearchStage(b *testing.B) {
	data, err := os.ReadFile("../../shared/data/ecoli.fa")
	if err != nil {
		b.Skip("no ../shared/data/ecoli.fa")
	}
	dir := b.TempDir()
	ix, err := BuildIndex(cpu.New(2), writeTemp(b, dir, "ecoli.fa", string(data)), false, nil, IndexOptions{Overlap: DefaultIndexOverlap, Threads: 2})
	if err != nil {
		b.Fatal(err)
	}
	s, _ := ix.Searcher()
	seq := bytes.ToUpper(ix.Ref.Text) // codes, turned back into bases below
	for i, c := range ix.Ref.Text {
		seq[i] = ix.Ref.Alpha.Byte[c]
	}
	rng := rand.New(rand.NewPCG(3, 3))
	var in bytes.Buffer
	for range 200000 {
		l := 20 + rng.IntN(131)
		a := rng.IntN(len(seq) - l)
		in.Write(seq[a : a+l])
		in.WriteByte('\n')
	}
	for _, locate := range []bool{false, true} {
		b.Run(map[bool]string{false: "count", true: "locate"}[locate], func(b *testing.B) {
			b.SetBytes(int64(in.Len()))
			for b.Loop() {
				opts := SearchOptions{Strands: Strands{Forward: true}, Locate: locate, Threads: 2, BatchSize: 1 << 20}
				if err := Search(context.Background(), opts, ix, s, []string{"-"}, bytes.NewReader(in.Bytes()), io.Discard); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(200000*float64(b.N)/b.Elapsed().Seconds(), "patterns/s")
		})
	}
}

// sumsBackend takes an index file's early pages as a GPU that checks their checksums itself
// does: it never asks for the host's checked pages.
type sumsBackend struct{ *cpu.Backend }

func (sumsBackend) NewMatcherFromEarlyPages(ref *kernels.Reference, opts kernels.MatchOptions, early []cpu.DeviceArrays, sums func() error, checked func() (*cpu.Matcher, error)) (kernels.Matcher, error) {
	if err := sums(); err != nil {
		return nil, err
	}
	return stubMatcher{}, nil
}

// TestMatcherOnOverlap: a minimum length over what the index's pages overlap is refused on a
// device that takes the pages early, as the host's checked pages refuse it.
func TestMatcherOnOverlap(t *testing.T) {
	rng := rand.New(rand.NewPCG(25, 26))
	dir := t.TempDir()
	fa, _ := randomFasta(rng, 2, 3000)
	built, err := BuildIndex(cpu.New(2), writeTemp(t, dir, "ref.fa", fa), false, nil, IndexOptions{PageSize: 500, Overlap: 10, Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := built.Write(&buf, "", 2); err != nil {
		t.Fatal(err)
	}
	path := writeTemp(t, dir, "ref.sai", buf.String())
	for _, minLen := range []int{11, 12, 30} {
		ix, err := OpenIndexChecking(path, 2)
		if err != nil {
			t.Fatal(err)
		}
		opts := kernels.MatchOptions{Mode: kernels.MaxMatch, MinLen: minLen}
		_, err = ix.MatcherOn(sumsBackend{cpu.New(2)}, opts)
		if _, want := ix.MatcherOn(nil, opts); (err == nil) != (want == nil) || err != nil && !errors.Is(err, cpu.ErrOverlap) {
			t.Errorf("-l %d: %v, the host's pages: %v", minLen, err, want)
		}
		if (err == nil) != (minLen <= 11) {
			t.Errorf("-l %d against pages overlapping by 10: %v", minLen, err)
		}
		ix.Close()
	}
}
