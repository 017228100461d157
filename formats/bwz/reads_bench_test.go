package bwz

import (
	"os"
	"testing"
)

// The read-set coders on a file of reads (SAPIPE_READS_FILE, e.g. reads_200k.fq of
// ../shared/tools/make-bench-data.sh), on 2 threads: MB/s of the file.
func readsBenchFile(b *testing.B) []byte {
	path := os.Getenv("SAPIPE_READS_FILE")
	if path == "" {
		b.Skip("SAPIPE_READS_FILE names no file of reads")
	}
	in, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	return in
}

func BenchmarkEncodeReads(b *testing.B) {
	in := readsBenchFile(b)
	b.SetBytes(int64(len(in)))
	var p []byte
	for i := 0; i < b.N; i++ {
		var ok bool
		if p, ok = EncodeReads(p[:0], in, 2); !ok {
			b.Fatal("not a read set")
		}
	}
	b.ReportMetric(float64(len(p)), "bytes")
}

func BenchmarkDecodeReads(b *testing.B) {
	in := readsBenchFile(b)
	p, ok := EncodeReads(nil, in, 2)
	if !ok {
		b.Fatal("not a read set")
	}
	b.SetBytes(int64(len(in)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := DecodeReads(p, len(in), 2); err != nil {
			b.Fatal(err)
		}
	}
}
