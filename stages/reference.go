package stages

import (
	"io"

	"github.com/sapipe/sapipe/formats"
	"github.com/sapipe/sapipe/kernels"
)

// LoadReference reads every record of path into an encoded reference, on all cores for a plain
// FASTA file (see formats.ReadReference). A path of "-" reads stdin.
func LoadReference(path string, nucleotidesOnly bool, stdin io.Reader) (*kernels.Reference, error) {
	return loadReference(path, nucleotidesOnly, stdin, formats.ReferenceOptions{})
}

// loadReference is LoadReference with the reading options (threads, chunk size) that tests set.
func loadReference(path string, nucleotidesOnly bool, stdin io.Reader, opts formats.ReferenceOptions) (*kernels.Reference, error) {
	fold := kernels.FoldTable(nucleotidesOnly)
	var alpha kernels.Alphabet
	opts.Fold = &fold
	opts.Encode = func(seen *[256]bool) *[256]byte {
		alpha = kernels.NewAlphabet(seen)
		return &alpha.Code
	}
	opts.Stdin = stdin
	t, err := formats.ReadReference(path, opts)
	if err != nil {
		return nil, err
	}
	return &kernels.Reference{Text: t.Text, Starts: t.Starts, Names: t.Names, Alpha: alpha}, nil
}
