package formats

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime/debug"
	"sync"
	"testing"
)

// readBlocks reads every record of the file at path as sapipe mummer does with a BlockFile: the
// chunks asked for on workers goroutines at once (each started after the one before it, as a
// pipeline hands them out), parsed by ParseChunk in order until one is refused, then Reader from
// that chunk on. It returns the records, the error that ended them, how many chunks ParseChunk
// accepted, and whether the file was read in blocks (else by readChunked).
func readBlocks(t testing.TB, path string, size, workers int) ([]rec, error, int, bool) {
	bf, err := OpenBlocks(path, size)
	if err != nil {
		t.Fatal(err)
	}
	if bf == nil {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		recs, err, accepted := readChunked(t, path, f, max(size, 1), 1)
		return recs, err, accepted, false
	}
	defer bf.Close()
	chunks := make([]Chunk, bf.Blocks())
	starts, ends := make([]int64, len(chunks)), make([]int64, len(chunks))
	var wg sync.WaitGroup
	sem := make(chan struct{}, workers)
	for i := range chunks {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			chunks[i], starts[i], ends[i], _ = bf.Chunk(i, nil)
		})
	}
	wg.Wait()
	var k chunkTally
	var at int64 // where the next chunk is to start: the end of the last one accepted
	for i := range chunks {
		if k.take(t, &chunks[i]) {
			if starts[i] != at {
				t.Fatalf("chunk %d starts at %d, the one before ended at %d", i, starts[i], at)
			}
			at = ends[i]
			continue
		}
		r, err := bf.Resume(at, k.nrec)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		out, err := readRest(r, k.out)
		return out, err, k.accepted, true
	}
	return k.out, nil, k.accepted, true
}

// TestBlocksMatchReader: records and errors read from a file in blocks of every size, on one
// goroutine and on several, with the next block's first record looked for in a few bytes or in
// 64 KiB, are Reader's, word for word, on corner cases, messy, plain and damaged inputs.
func TestBlocksMatchReader(t *testing.T) {
	defer func(o int, m bool) { blockOver, mapBlocks = o, m }(blockOver, mapBlocks)
	inputs := chunkInputs(rand.New(rand.NewPCG(7, 11)), 120, 30)
	path := filepath.Join(t.TempDir(), "in.fq")
	blocks := 0
	for i, in := range inputs {
		if err := os.WriteFile(path, in, 0o644); err != nil {
			t.Fatal(err)
		}
		want, werr := readAll(path, bytes.NewReader(in), defaultBufSize)
		for size := 1; size <= len(in)+1; size += 1 + size/10 {
			blockOver = []int{1, 3, 64 << 10}[(i+size)%3]
			mapBlocks = size%2 == 0 // a mapping or pread
			got, err, _, used := readBlocks(t, path, size, 1+size%4)
			if used {
				blocks++
			}
			if fmtRecs(got) != fmtRecs(want) || errString(err) != errString(werr) {
				t.Fatalf("input %d %q, blocks of %d (%d over, in blocks %v):\ngot  %s %v\nwant %s %v", i, in, size, blockOver, used, fmtRecs(got), err, fmtRecs(want), werr)
			}
		}
	}
	if blocks < len(inputs) {
		t.Errorf("only %d files of %d sizes read in blocks", blocks, len(inputs))
	}
}

// TestBlocksUsed: plain inputs are parsed in blocks, not left to Reader, whatever the reach of the
// first look past a block (records longer than blockOver), with FASTQ quality lines that begin with
// '@', and with a last block inside the last record.
func TestBlocksUsed(t *testing.T) {
	defer func(o int, m bool) { blockOver, mapBlocks = o, m }(blockOver, mapBlocks)
	rng := rand.New(rand.NewPCG(1, 2))
	path := filepath.Join(t.TempDir(), "in")
	for k, over := range []int{5, 64 << 10, 5} {
		blockOver, mapBlocks = over, k < 2
		for _, fastq := range []bool{false, true} {
			in := plainInput(rng, 2000, fastq)
			if !fastq {
				in = append([]byte("\n\n"), in...)
			} else {
				// Blank lines first, and quality lines that begin with '@'.
				in = append([]byte("\n \n"), bytes.ReplaceAll(in, []byte("\n+\nF"), []byte("\n+\n@"))...)
			}
			if err := os.WriteFile(path, in, 0o644); err != nil {
				t.Fatal(err)
			}
			want, _ := readAll(path, bytes.NewReader(in), defaultBufSize)
			// Blocks of 1000 bytes, and two blocks, the second inside the last record (which the
			// file's end ends).
			for _, size := range []int{1000, len(in) - 3} {
				got, err, accepted, used := readBlocks(t, path, size, 3)
				if !used || err != nil || accepted != (len(in)+size-1)/size || fmtRecs(got) != fmtRecs(want) {
					t.Errorf("fastq %v, %d over, mapped %v: in blocks %v, %d chunks of %d bytes accepted, error %v, records equal %v",
						fastq, over, mapBlocks, used, accepted, len(in), err, fmtRecs(got) == fmtRecs(want))
				}
			}
		}
	}
}

// TestBlocksGrown: a file that grows after it is opened is read whole: its last chunk goes to
// Reader, which reads on past the size it had (mapped or read with pread).
func TestBlocksGrown(t *testing.T) {
	defer func(m bool) { mapBlocks = m }(mapBlocks)
	for _, mapBlocks = range []bool{true, false} {
		testBlocksGrown(t)
	}
}

func testBlocksGrown(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	path := filepath.Join(t.TempDir(), "in.fq")
	in := plainInput(rng, 300, true)
	more := plainInput(rng, 20, true)
	if err := os.WriteFile(path, in, 0o644); err != nil {
		t.Fatal(err)
	}
	bf, err := OpenBlocks(path, 500)
	if err != nil || bf == nil {
		t.Fatalf("OpenBlocks: %v, %v", bf, err)
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write(more)
	f.Close()
	var last Chunk
	for i := range bf.Blocks() {
		last, _, _, _ = bf.Chunk(i, nil)
	}
	if !last.Odd {
		t.Fatal("the last chunk of a grown file was not left to Reader")
	}
	bf.Close()
	all := append(append([]byte(nil), in...), more...)
	want, _ := readAll(path, bytes.NewReader(all), defaultBufSize)
	got, err, _, used := readBlocks(t, path, 500, 2) // opened again: the whole file, in blocks
	if !used || err != nil || fmtRecs(got) != fmtRecs(want) {
		t.Fatalf("in blocks %v, error %v", used, err)
	}
}

// TestBlocksClose: a chunk asked for after Close is Odd.
func TestBlocksClose(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	path := filepath.Join(t.TempDir(), "in.fq")
	if err := os.WriteFile(path, plainInput(rng, 300, true), 0o644); err != nil {
		t.Fatal(err)
	}
	bf, err := OpenBlocks(path, 500)
	if err != nil || bf == nil {
		t.Fatalf("OpenBlocks: %v, %v", bf, err)
	}
	if c, _, _, _ := bf.Chunk(1, nil); c.Odd {
		t.Error("a chunk is Odd before Close")
	}
	bf.Close()
	if c, _, _, _ := bf.Chunk(1, nil); !c.Odd {
		t.Error("a chunk asked for after Close is not Odd")
	}
}

// TestBlocksTruncated: a mapped file cut short while it is read gives Odd chunks, and reading a
// chunk's bytes past the new end gives errFileChanged through CatchFault, not a crash.
func TestBlocksTruncated(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	path := filepath.Join(t.TempDir(), "in.fq")
	if err := os.WriteFile(path, plainInput(rng, 3000, true), 0o644); err != nil {
		t.Fatal(err)
	}
	bf, err := OpenBlocks(path, 1<<14)
	if err != nil || bf == nil {
		t.Fatalf("OpenBlocks: %v, %v", bf, err)
	}
	defer bf.Close()
	if !bf.Mapped() {
		t.Skip("no mapping on this system")
	}
	c, _, _, _ := bf.Chunk(bf.Blocks()-2, nil)
	if c.Odd || len(c.Data) == 0 {
		t.Fatal("no chunk before the file is cut")
	}
	if err := os.Truncate(path, 0); err != nil {
		t.Fatal(err)
	}
	read := func() (err error) {
		defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
		defer CatchFault(&err, path)
		_ = bytes.Count(c.Data, []byte{'\n'})
		return nil
	}
	if err := read(); !errors.Is(err, errFileChanged) {
		t.Errorf("reading a chunk of a file cut short: %v", err)
	}
	for i := range bf.Blocks() {
		if c, _, _, _ := bf.Chunk(i, nil); !c.Odd {
			t.Errorf("chunk %d of a file cut short is not Odd", i)
		}
	}
}

// FuzzBlocks: whatever the file, the block size and the look past a block, blocks give Reader's
// records and error, long sequences read from the mapping included.
func FuzzBlocks(f *testing.F) {
	for _, c := range chunkCases() {
		f.Add([]byte(c), uint16(3), uint8(1))
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, in []byte, size uint16, over uint8) {
		defer func(o, s, p, w, b int) { blockOver, longSeq, longPart, longWindow, resumeBufSize = o, s, p, w, b }(blockOver, longSeq,
			longPart, longWindow, resumeBufSize)
		blockOver = 1 + int(over)
		// A Reader that takes over reads sequences past a few bytes from the mapping, in parts
		// and windows of a few bytes (scanSeqMapped), through a buffer of a few.
		longSeq, longPart, longWindow, resumeBufSize = 1+int(over%16), 1+int(over%5), 4+int(size%64), 1+int(size%9)
		path := filepath.Join(dir, "in")
		if err := os.WriteFile(path, in, 0o644); err != nil {
			t.Fatal(err)
		}
		want, werr := readAll(path, bytes.NewReader(in), defaultBufSize)
		got, err, _, _ := readBlocks(t, path, 1+int(size%2048), 1+int(over%3))
		if fmtRecs(got) != fmtRecs(want) || errString(err) != errString(werr) {
			t.Fatalf("blocks of %d:\ngot  %s %v\nwant %s %v", 1+size%2048, fmtRecs(got), err, fmtRecs(want), werr)
		}
	})
}

// TestBlocksLongSequences: where a Reader takes over a file from a BlockFile, sequences longer
// than longSeq are read from a mapping on several goroutines (scanSeqMapped), in windows and parts
// of a few bytes here, so that a record's end, CRLF line ends, spaces and a '>' inside a line
// fall at every place against them: the records, errors and line numbers are Reader's.
func TestBlocksLongSequences(t *testing.T) {
	defer func(s, p, w, b int) { longSeq, longPart, longWindow, resumeBufSize = s, p, w, b }(longSeq, longPart, longWindow, resumeBufSize)
	rng := rand.New(rand.NewPCG(3, 17))
	inputs := chunkInputs(rng, 60, 20)
	for range 40 {
		var b bytes.Buffer
		for r := range 1 + rng.IntN(4) {
			b.WriteString(">s")
			b.WriteByte(byte('0' + r))
			b.WriteString(" x\n")
			n := rng.IntN(3000)
			for i := range n {
				b.WriteByte("ACGTN"[rng.IntN(5)])
				switch {
				case rng.IntN(60) == 0:
					b.WriteString("\r\n")
				case rng.IntN(50) == 0:
					b.WriteByte('\n')
				case rng.IntN(400) == 0:
					b.WriteString(" \t")
				case i == n/2 && rng.IntN(8) == 0:
					b.WriteString(">mid\n") // a record starts inside a line
				}
			}
			b.WriteByte('\n')
		}
		if rng.IntN(4) == 0 {
			b.WriteString("@not fasta\n") // a bad record after the long ones: its line number
		}
		inputs = append(inputs, b.Bytes())
	}
	path := filepath.Join(t.TempDir(), "in.fa")
	before := mappedSeqs.Load()
	for i, in := range inputs {
		if err := os.WriteFile(path, in, 0o644); err != nil {
			t.Fatal(err)
		}
		want, werr := readAll(path, bytes.NewReader(in), defaultBufSize)
		for _, size := range []int{1, 64, 1000} {
			longSeq, longPart, longWindow, resumeBufSize = 1+i%50, 1+i%7, 8+i%300, 1+size%13
			got, err, _, _ := readBlocks(t, path, size, 1+i%3)
			if fmtRecs(got) != fmtRecs(want) || errString(err) != errString(werr) {
				t.Fatalf("input %d %q, blocks of %d, long %d part %d window %d:\ngot  %s %v\nwant %s %v", i, in, size, longSeq, longPart,
					longWindow, fmtRecs(got), err, fmtRecs(want), werr)
			}
		}
		// The whole file resumed at its start, record by record against Open's Reader, with
		// the lines counted after each (later records' messages count from them).
		bf, err := OpenBlocks(path, 1)
		if err != nil || bf == nil {
			continue
		}
		rd, err := bf.Resume(0, 0)
		if err != nil {
			t.Fatal(err)
		}
		serial, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		for k := 0; ; k++ {
			a, aerr := rd.Next()
			b, berr := serial.Next()
			if errString(aerr) != errString(berr) || (a == nil) != (b == nil) || a != nil && (string(a.Name) != string(b.Name) || string(a.Seq) != string(b.Seq)) {
				t.Fatalf("input %d record %d: %v %v against %v %v", i, k, a, aerr, b, berr)
			}
			if rd.nl != serial.nl {
				t.Fatalf("input %d record %d: %d lines read against %d", i, k, rd.nl, serial.nl)
			}
			if aerr != nil {
				break
			}
		}
		rd.Close()
		serial.Close()
	}
	if n := mappedSeqs.Load() - before; n < int64(len(inputs)) {
		t.Errorf("only %d sequences read from a mapping", n)
	}
}

// BenchmarkResumeLongSequence: a Reader that a BlockFile handed over reads one FASTA record of 64
// Mbp in lines of 60, from the page cache: "mapped" reads past longSeq from a mapping on every
// core (scanSeqMapped), "lines" on one goroutine as before.
func BenchmarkResumeLongSequence(b *testing.B) { benchResume(b, 1, 64<<20) }

// BenchmarkResumeManyRecords: 40 FASTA records of 5 Mbp (a little over longSeq), "mapped" and
// "lines" as above.
func BenchmarkResumeManyRecords(b *testing.B) { benchResume(b, 40, 5_000_000) }

// benchResume reads a file of records random records of about size bases (lines of 60) through a
// Reader that a BlockFile handed over, with scanSeqMapped and without.
func benchResume(b *testing.B, records, size int) {
	rng := rand.New(rand.NewPCG(1, uint64(records)))
	var buf bytes.Buffer
	line := make([]byte, 61)
	line[60] = '\n'
	for r := range records {
		fmt.Fprintf(&buf, ">r%d\n", r)
		for range size / 60 {
			for i := range 60 {
				line[i] = "ACGT"[rng.IntN(4)]
			}
			buf.Write(line)
		}
	}
	path := filepath.Join(b.TempDir(), "in.fa")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		b.Fatal(err)
	}
	for _, v := range []struct {
		name string
		long int
	}{{"mapped", longSeq}, {"lines", 1 << 62}} {
		b.Run(v.name, func(b *testing.B) {
			defer func(l int) { longSeq = l }(longSeq)
			longSeq = v.long
			b.SetBytes(int64(buf.Len()))
			for b.Loop() {
				bf, err := OpenBlocks(path, 1<<20)
				if err != nil || bf == nil {
					b.Fatal("OpenBlocks", err)
				}
				rd, err := bf.Resume(0, 0)
				if err != nil {
					b.Fatal(err)
				}
				n := 0
				for {
					rec, err := rd.Next()
					if err != nil {
						break
					}
					if len(rec.Seq) != size/60*60 {
						b.Fatalf("record %d: %d bases", n, len(rec.Seq))
					}
					n++
				}
				if n != records {
					b.Fatalf("%d records", n)
				}
				rd.Close()
			}
		})
	}
}
