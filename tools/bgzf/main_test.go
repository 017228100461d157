package main

import (
	"bytes"
	"fmt"
	"io"
	"testing"

	"github.com/klauspost/compress/gzip"

	"github.com/sapipe/sapipe/formats"
)

// TestCompress: what bgzf writes is gzip (the gzip reader gives the input back) and BGZF
// (formats reads its records through the parallel inflation: the same records), for inputs of
// none, one and many blocks.
func TestCompress(t *testing.T) {
	for _, reads := range []int{0, 3, 5000} {
		var in bytes.Buffer
		for r := range reads {
			fmt.Fprintf(&in, "@r%d\nACGTTGCA%04d\n+\nIIIIIIIIIIII\n", r, r%10000)
		}
		var out bytes.Buffer
		if err := compress(&out, bytes.NewReader(in.Bytes()), 4, 6); err != nil {
			t.Fatal(err)
		}
		z, err := gzip.NewReader(bytes.NewReader(out.Bytes()))
		if err != nil {
			t.Fatal(err)
		}
		back, err := io.ReadAll(z)
		if err != nil || !bytes.Equal(back, in.Bytes()) {
			t.Fatalf("%d reads: %d bytes back through gzip, %v", reads, len(back), err)
		}
		if out.Len() < 18 || out.Bytes()[3] != 4 || out.Bytes()[12] != 'B' || out.Bytes()[13] != 'C' {
			t.Fatalf("%d reads: not BGZF", reads)
		}
		rd, err := formats.NewReader("in.fq.gz", bytes.NewReader(out.Bytes()))
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for {
			rec, err := rd.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if want := fmt.Sprintf("r%d", n); string(rec.Name) != want {
				t.Fatalf("record %d named %q", n, rec.Name)
			}
			n++
		}
		if n != reads {
			t.Fatalf("%d records read, %d written", n, reads)
		}
	}
}
