package stages

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/sapipe/sapipe/formats"
)

// memShards collects shards in memory.
type memShards struct {
	mu     sync.Mutex
	bufs   []*bytes.Buffer
	closed []bool
}

type memShard struct {
	s   *memShards
	i   int
	buf *bytes.Buffer // its own, so that writing never reads s.bufs while create appends to it
}

func (m memShard) Write(p []byte) (int, error) { return m.buf.Write(p) }
func (m memShard) Close() error {
	m.s.mu.Lock()
	defer m.s.mu.Unlock()
	if m.s.closed[m.i] {
		return errors.New("closed twice")
	}
	m.s.closed[m.i] = true
	return nil
}

func (s *memShards) create(i int) (io.WriteCloser, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if i != len(s.bufs) {
		return nil, fmt.Errorf("shard %d opened after %d", i, len(s.bufs))
	}
	buf := new(bytes.Buffer)
	s.bufs = append(s.bufs, buf)
	s.closed = append(s.closed, false)
	return memShard{s, i, buf}, nil
}

type splitRec struct {
	name, seq string
}

// readRecs reads every record of data with formats.Reader.
func readRecs(data []byte) ([]splitRec, error) {
	r, err := formats.NewReader("x", bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	var out []splitRec
	for {
		rec, err := r.Next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, splitRec{string(rec.Name), string(rec.Seq)})
	}
}

// readSet writes n records with random lengths (empty ones included), wrapped FASTA or FASTQ.
func readSet(rng *rand.Rand, n int, fastq bool) []byte {
	var b bytes.Buffer
	for i := range n {
		l := rng.IntN(150)
		if rng.IntN(6) == 0 {
			l = 0
		}
		s := make([]byte, l)
		for j := range s {
			s[j] = "ACGTN"[rng.IntN(5)]
		}
		if fastq {
			fmt.Fprintf(&b, "@q%d d\n%s\n+\n%s\n", i, s, bytes.Repeat([]byte("I"), l))
			continue
		}
		fmt.Fprintf(&b, ">q%d desc\n", i)
		for j := 0; j < l; j += 60 {
			fmt.Fprintf(&b, "%s\n", s[j:min(j+60, l)])
		}
	}
	return b.Bytes()
}

func splitFile(t *testing.T, data []byte, opts SplitOptions) ([][]byte, error) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "in")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	var m memShards
	n, err := Split(context.Background(), path, nil, opts, m.create)
	for i, c := range m.closed {
		if !c {
			t.Errorf("shard %d not closed", i)
		}
	}
	if err != nil {
		return nil, err
	}
	if n != len(m.bufs) {
		t.Fatalf("Split says %d shards, wrote %d", n, len(m.bufs))
	}
	out := make([][]byte, n)
	for i, b := range m.bufs {
		out[i] = b.Bytes()
	}
	return out, nil
}

// checkShards: the shards put together are the input, each reads on its own, and together they
// hold the input's records in order. It returns each shard's records and bases.
func checkShards(t *testing.T, what string, data []byte, shards [][]byte) (recs [][]splitRec) {
	t.Helper()
	if got := bytes.Join(shards, nil); !bytes.Equal(got, data) {
		t.Fatalf("%s: shards put together differ from the input", what)
	}
	want, err := readRecs(data)
	if err != nil {
		t.Fatal(err)
	}
	var all []splitRec
	for i, s := range shards {
		r, err := readRecs(s)
		if err != nil || len(r) == 0 {
			t.Fatalf("%s: shard %d (%q) reads as %d records, %v", what, i, s, len(r), err)
		}
		recs = append(recs, r)
		all = append(all, r...)
	}
	if fmt.Sprint(all) != fmt.Sprint(want) {
		t.Fatalf("%s: the shards' records differ from the input's", what)
	}
	return recs
}

func bases(rs []splitRec) (n int64) {
	for _, r := range rs {
		n += int64(len(r.seq))
	}
	return n
}

// lastUnit returns how many records the last unit of a shard holds: its last nonempty record and
// the empty FASTA records before it (or all of them, when the shard holds empty records only).
func lastUnit(rs []splitRec, fastq bool) int {
	if fastq {
		return 1
	}
	i := len(rs) - 1
	for i >= 0 && rs[i].seq == "" {
		i--
	}
	if i < 0 {
		return len(rs)
	}
	j := i
	for j > 0 && rs[j-1].seq == "" {
		j--
	}
	return len(rs) - j
}

func TestSplitRecordsAndBytes(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range 200 {
		fastq := i%2 == 1
		data := readSet(rng, 1+rng.IntN(60), fastq)
		if recs, _ := readRecs(data); len(recs) == 1 && recs[0].seq == "" && !fastq {
			continue // refused by the reader, as by mummer
		}
		// Records.
		r := 1 + rng.IntN(10)
		shards, err := splitFile(t, data, SplitOptions{Records: r, Writers: 1 + i%3})
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		recs := checkShards(t, fmt.Sprintf("case %d --records %d", i, r), data, shards)
		for k, rs := range recs {
			last := k == len(recs)-1
			if !last && len(rs) < r || len(rs)-lastUnit(rs, fastq) >= r {
				t.Fatalf("case %d --records %d: shard %d has %d records (last unit %d)", i, r, k, len(rs), lastUnit(rs, fastq))
			}
		}
		// Bytes.
		b := int64(1 + rng.IntN(2000))
		shards, err = splitFile(t, data, SplitOptions{Bytes: b, Writers: 2})
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		checkShards(t, fmt.Sprintf("case %d --bytes %d", i, b), data, shards)
		for k, s := range shards {
			rs, _ := readRecs(s)
			if int64(len(s)) > b && unitCount(rs, fastq) > 1 {
				t.Fatalf("case %d --bytes %d: shard %d has %d bytes in %d units", i, b, k, len(s), unitCount(rs, fastq))
			}
			if k+1 < len(shards) && int64(len(s))+firstUnitBytes(shards[k+1], fastq) <= b {
				t.Fatalf("case %d --bytes %d: shard %d (%d bytes) cut before a unit that fits", i, b, k, len(s))
			}
		}
	}
}

// unitCount counts the units of records: nonempty FASTA records, or FASTQ records; at least 1.
func unitCount(rs []splitRec, fastq bool) int {
	n := 0
	for _, r := range rs {
		if fastq || r.seq != "" {
			n++
		}
	}
	return max(n, 1)
}

// firstUnitBytes is the size of the first unit of a shard.
func firstUnitBytes(s []byte, fastq bool) int64 {
	r, _ := formats.NewRawReader("x", bytes.NewReader(s))
	var n int64
	for {
		rec, err := r.Next()
		if err != nil {
			return n + int64(len(r.Trailer()))
		}
		n += int64(len(rec.Raw))
		if fastq || rec.SeqLen > 0 {
			return n
		}
	}
}

// TestSplitShards: -n N gives N shards, each closed at the first unit that reaches its share of
// the bases, unless the units left are needed one per remaining shard.
func TestSplitShards(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for i := range 200 {
		fastq := i%2 == 1
		data := readSet(rng, 1+rng.IntN(60), fastq)
		all, _ := readRecs(data)
		if len(all) == 1 && all[0].seq == "" && !fastq {
			continue
		}
		n := 1 + rng.IntN(8)
		shards, err := splitFile(t, data, SplitOptions{Shards: n, Writers: 1 + i%4})
		// Units: nonempty records (FASTA) or records (FASTQ), or one when all are empty.
		units := unitCount(all, fastq)
		if units < n {
			if err == nil || !strings.Contains(err.Error(), "too few") {
				t.Fatalf("case %d: %d units, %d shards: %v", i, units, n, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		if len(shards) != n {
			t.Fatalf("case %d: %d shards, want %d", i, len(shards), n)
		}
		recs := checkShards(t, fmt.Sprintf("case %d -n %d", i, n), data, shards)
		total := bases(all)
		var cum int64
		unitsBefore := 0
		for k, rs := range recs[:n-1] {
			lu := lastUnit(rs, fastq)
			before := cum + bases(rs[:len(rs)-lu])
			cum += bases(rs)
			shardUnits := unitCount(rs, fastq)
			unitsBefore += shardUnits
			forced := units-unitsBefore == n-1-k
			if !forced && cum*int64(n) < int64(k+1)*total {
				t.Fatalf("case %d: shard %d ends at %d of %d bases, before its share", i, k, cum, total)
			}
			if shardUnits > 1 && before*int64(n) >= int64(k+1)*total {
				t.Fatalf("case %d: shard %d had its share at %d bases and went on", i, k, before)
			}
		}
	}
}

func TestSplitDeterministic(t *testing.T) {
	data := readSet(rand.New(rand.NewPCG(1, 1)), 3000, true)
	var first [][]byte
	for w := 1; w <= 4; w++ {
		shards, err := splitFile(t, data, SplitOptions{Shards: 7, Writers: w})
		if err != nil {
			t.Fatal(err)
		}
		if first == nil {
			first = shards
		} else if fmt.Sprint(shards) != fmt.Sprint(first) {
			t.Fatalf("%d writers: other shards", w)
		}
	}
}

func TestSplitErrors(t *testing.T) {
	for _, c := range []struct {
		in   string
		opts SplitOptions
		msg  string
	}{
		{"", SplitOptions{Records: 1}, "no records"},
		{"  \n", SplitOptions{Records: 1}, "no records"},
		{">a\nAC\n>b\nGG\n", SplitOptions{Shards: 3}, "too few for 3 shards"},
		{">a\nAC\n>b\n>c\nGG\n", SplitOptions{Shards: 3}, "too few for 3 shards"},
		{">a\n", SplitOptions{Records: 1}, "empty sequence"},
		{"@a\nAC\n+\nII\n@b\nAC\n+\nI\n", SplitOptions{Records: 1}, "record 2 (line 8): truncated record"},
		{">a\nAC\n", SplitOptions{Records: 1, Bytes: 3}, "exactly one"},
	} {
		_, err := splitFile(t, []byte(c.in), c.opts)
		if err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%q %+v: %v; want %q", c.in, c.opts, err, c.msg)
		}
	}
	var m memShards
	if _, err := Split(context.Background(), "-", strings.NewReader(">a\nA\n"), SplitOptions{Shards: 1}, m.create); err == nil || !strings.Contains(err.Error(), "stdin") {
		t.Errorf("-n on stdin: %v", err)
	}
	if _, err := Split(context.Background(), filepath.Join(t.TempDir(), "nosuch"), nil, SplitOptions{Records: 1}, m.create); err == nil || !strings.Contains(err.Error(), "nosuch") {
		t.Errorf("missing file: %v", err)
	}
	// A failing shard writer stops the split with its error.
	failing := func(i int) (io.WriteCloser, error) {
		if i == 2 {
			return nil, errors.New("disk full")
		}
		return nopShard{}, nil
	}
	data := readSet(rand.New(rand.NewPCG(1, 2)), 50, false)
	path := filepath.Join(t.TempDir(), "in.fa")
	os.WriteFile(path, data, 0o644)
	if _, err := Split(context.Background(), path, nil, SplitOptions{Records: 5}, failing); err == nil || err.Error() != "disk full" {
		t.Errorf("failing writer: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Split(ctx, path, nil, SplitOptions{Records: 5}, m.create); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

type nopShard struct{}

func (nopShard) Write(p []byte) (int, error) { return len(p), nil }
func (nopShard) Close() error                { return nil }

// TestSplitStdin: --records and --bytes read stdin, compressed or not.
func TestSplitStdin(t *testing.T) {
	data := readSet(rand.New(rand.NewPCG(9, 9)), 100, false)
	var z bytes.Buffer
	zw, _ := formats.NewCompressor(&z, "gzip")
	zw.Write(data)
	zw.Close()
	var m memShards
	n, err := Split(context.Background(), "-", bytes.NewReader(z.Bytes()), SplitOptions{Records: 30, Writers: 2}, m.create)
	if err != nil || n != len(m.bufs) {
		t.Fatalf("%d shards, %v", n, err)
	}
	shards := make([][]byte, n)
	for i, b := range m.bufs {
		shards[i] = b.Bytes()
	}
	checkShards(t, "stdin", data, shards)
}

func BenchmarkSplit(b *testing.B) {
	data := readSet(rand.New(rand.NewPCG(1, 1)), 200000, true)
	path := filepath.Join(b.TempDir(), "in.fq")
	os.WriteFile(path, data, 0o644)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := Split(context.Background(), path, nil, SplitOptions{Shards: 8, Writers: 2}, func(int) (io.WriteCloser, error) { return nopShard{}, nil }); err != nil {
			b.Fatal(err)
		}
	}
}
