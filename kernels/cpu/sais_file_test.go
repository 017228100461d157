package cpu

import (
	"os"
	"testing"
)

// BenchmarkSuffixArrayFile times SuffixArray on the file named by $SAFILE (skipped without it):
// SAFILE=../../bench-data/sa/ecoli.seq go test -run XXX -bench SuffixArrayFile ./kernels/cpu
func BenchmarkSuffixArrayFile(b *testing.B) {
	name := os.Getenv("SAFILE")
	if name == "" {
		b.Skip("SAFILE not set")
	}
	text, err := os.ReadFile(name)
	if err != nil {
		b.Fatal(err)
	}
	benchmarkSuffixArray(b, text)
}
