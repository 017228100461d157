package stages

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand"
	"testing"

	"github.com/sapipe/sapipe/formats"
	"github.com/sapipe/sapipe/formats/bwz"
	"github.com/sapipe/sapipe/kernels/cpu"
)

// simReads is a FASTQ (or FASTA) file of n reads of 100 bp from a random 30 kbp genome, on both
// strands, with 1% substitutions.
func simReads(seed int64, n int, fasta bool) []byte {
	rng := rand.New(rand.NewSource(seed))
	g := make([]byte, 30000)
	for i := range g {
		g[i] = "ACGT"[rng.Intn(4)]
	}
	var b bytes.Buffer
	for i := 0; i < n; i++ {
		p := rng.Intn(len(g) - 100)
		s := bytes.Clone(g[p : p+100])
		if rng.Intn(2) == 1 {
			for j, k := 0, len(s)-1; j < k; j, k = j+1, k-1 {
				s[j], s[k] = s[k], s[j]
			}
			for j := range s {
				s[j] = "TGCA"[bytes.IndexByte([]byte("ACGT"), s[j])]
			}
		}
		q := make([]byte, len(s))
		for j := range s {
			q[j] = "#5?I"[rng.Intn(4)]
			if rng.Intn(100) == 0 {
				s[j] = "ACGTN"[rng.Intn(5)]
			}
		}
		if fasta {
			fmt.Fprintf(&b, ">r%d\n%s\n", i, s)
		} else {
			fmt.Fprintf(&b, "@r%d\n%s\n+\n%s\n", i, s, q)
		}
	}
	return b.Bytes()
}

func compressOpts(t testing.TB, data []byte, opts CompressOptions) ([]byte, CompressStats) {
	t.Helper()
	var out bytes.Buffer
	st, err := Compress(context.Background(), cpu.New(opts.Threads), opts, bytes.NewReader(data), &out)
	if err != nil {
		t.Fatal(err)
	}
	return out.Bytes(), st
}

// TestCompressReadSets: a read set is written as a version-5 stream of read-set blocks that end
// where records do, and decompresses to itself, whatever the block size.
func TestCompressReadSets(t *testing.T) {
	for _, fasta := range []bool{false, true} {
		in := simReads(1, 3000, fasta)
		for _, bs := range []int{40 << 10, 1 << 20} {
			z, st := compressOpts(t, in, CompressOptions{BlockSize: 1 << 20, ReadsBlockSize: bs, Threads: 2, Reads: true})
			if z[4] != bwz.ReadsVersion || st.ReadSets != st.Blocks || (st.Blocks == 1) != (bs >= len(in)) {
				t.Fatalf("fasta %v, blocks of %d: version %d, %d read sets of %d blocks", fasta, bs, z[4], st.ReadSets, st.Blocks)
			}
			fr := bwz.NewReader(bytes.NewReader(z))
			off := 0
			for {
				f, err := fr.Next()
				if err != nil {
					break
				}
				if f.Kind != bwz.FrameBlock {
					continue
				}
				off += f.Block.Length
				if f.Block.Length > bs || off < len(in) && in[off] != in[0] {
					t.Fatalf("block %d of %d bytes ends at %d, not at a record", f.Block.Index, f.Block.Length, off)
				}
			}
			if back, err := decompressBytes(z, 2); err != nil || !bytes.Equal(back, in) {
				t.Fatalf("fasta %v, blocks of %d: round trip: %v", fasta, bs, err)
			}
			if bs > len(in) && len(z)*4 > len(in) {
				t.Errorf("fasta %v: %d bytes to %d", fasta, len(in), len(z))
			}
		}
	}
}

// TestCompressReadSetsMixed: blocks that do not parse as records, in a stream that starts as a
// read set, are coded as bytes; what does not start as a read set is written as before (version
// 4, the same bytes with Reads as without).
func TestCompressReadSetsMixed(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	junk := make([]byte, 70000)
	rng.Read(junk)
	fq := simReads(2, 1000, false)
	in := append(append(bytes.Clone(fq), junk...), fq...)
	z, st := compressOpts(t, in, CompressOptions{BlockSize: 1 << 20, ReadsBlockSize: 64 << 10, Threads: 2, Reads: true})
	if st.ReadSets == 0 || st.ReadSets == st.Blocks {
		t.Errorf("%d read sets of %d blocks", st.ReadSets, st.Blocks)
	}
	if back, err := decompressBytes(z, 1); err != nil || !bytes.Equal(back, in) {
		t.Fatalf("round trip: %v", err)
	}
	genome := append([]byte(">chr\n"), bytes.Repeat(append(simReads(4, 1, true)[4:104], '\n'), 2000)...)
	for name, data := range map[string][]byte{"junk first": append(junk, fq...), "genome": genome, "text": []byte(fmt.Sprint(rng.Perm(30000)))} {
		for _, fast := range []bool{false, true} {
			with, _ := compressOpts(t, data, CompressOptions{BlockSize: 64 << 10, ReadsBlockSize: 1 << 20, Threads: 2, Reads: true, Fast: fast})
			without, _ := compressOpts(t, data, CompressOptions{BlockSize: 64 << 10, Threads: 2, Fast: fast})
			if !bytes.Equal(with, without) || with[4] != bwz.Version {
				t.Errorf("%s (fast %v): not written as before", name, fast)
			}
		}
	}
	// with --fast a read set is bytes too
	fast, _ := compressOpts(t, fq, CompressOptions{BlockSize: 1 << 20, Threads: 1, Reads: true, Fast: true})
	if fast[4] != bwz.Version {
		t.Errorf("--fast wrote version %d", fast[4])
	}
}

// TestDecompressReadSetDamage: damage to a read-set block is an error that names the block.
func TestDecompressReadSetDamage(t *testing.T) {
	in := simReads(5, 2000, false)
	z, _ := compressOpts(t, in, CompressOptions{BlockSize: 1 << 20, ReadsBlockSize: 64 << 10, Threads: 2, Reads: true})
	rng := rand.New(rand.NewSource(6))
	for i := 0; i < 40; i++ {
		bad := bytes.Clone(z)
		bit := 16*8 + rng.Intn((len(z)-16-24)*8)
		bad[bit/8] ^= 1 << (bit % 8)
		_, err := decompressBytes(bad, 2)
		var ce *bwz.CorruptError
		if !errors.As(err, &ce) {
			t.Fatalf("bit %d: %v", bit, err)
		}
	}
	rep, err := TestStreams(context.Background(), DecompressOptions{Threads: 2}, bytes.NewReader(z))
	if err != nil || len(rep.Bad) != 0 || rep.Bytes != int64(len(in)) {
		t.Fatalf("test: %+v, %v", rep, err)
	}
}

// TestReadSetInput: the readers of package formats read a read-set stream as the file it holds.
func TestReadSetInput(t *testing.T) {
	fq := simReads(7, 2000, false)
	z, st := compressOpts(t, fq, CompressOptions{BlockSize: 1 << 20, ReadsBlockSize: 100 << 10, Threads: 2, Reads: true})
	if st.ReadSets < 2 {
		t.Fatalf("%d read sets", st.ReadSets)
	}
	want := readNames(t, must(formats.NewReader("plain", bytes.NewReader(fq))))
	got := readNames(t, must(formats.NewReader("reads.fq.bwz", bytes.NewReader(z))))
	if len(got) != len(want) {
		t.Fatalf("%d records, want %d", len(got), len(want))
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("record %d: %q, want %q", i, got[i], want[i])
		}
	}
}
