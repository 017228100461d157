package formats

// Reading a whole reference: every record of a FASTA or FASTQ file, concatenated into one encoded
// text with a separator between neighbours, as MUMmer concatenates them (see the top of fastx.go
// for what a record is).
//
// A plain regular file is mapped and read on many goroutines: it is cut at positions outside every
// header line (cutFASTA), a first pass counts each piece's sequence bytes and records and notes
// the bytes it holds, the caller turns those into an alphabet, and a second pass writes each
// piece's codes straight to its place in the text. Anything else (compressed, stdin, a pipe, a
// FASTQ file, a system without mmap) is read in one pass as a stream, its folded bytes kept in
// blocks of memory that are encoded into the text and freed one by one at the end. Either way the
// text, its record starts and names, and every error (its words, its record and line) are those
// that Reader's records would give.

import (
	"fmt"
	"io"
	"os"
	"runtime"
)

// ReferenceOptions say how ReadReference reads and encodes a reference.
type ReferenceOptions struct {
	// Fold maps a sequence byte of the file to the byte that stands for it in the text before
	// encoding (lowercase, say); 0 is the separator's. Required.
	Fold *[256]byte
	// Encode is called once, with the folded bytes that occur in the sequences (seen[0] may be
	// set or not), and returns the code of every folded byte, the separator's (0) included.
	// Required.
	Encode func(seen *[256]bool) *[256]byte
	// Threads is how many goroutines parse a plain file; 0: GOMAXPROCS.
	Threads int
	// ChunkSize is how many bytes of input are parsed at a time; 0: a default.
	ChunkSize int
	// Stdin is read for the path "-"; nil: os.Stdin.
	Stdin io.Reader
}

// defaultRefChunk is the bytes of input parsed at a time: enough to make a chunk's bookkeeping
// vanish, small enough that the chunks share out evenly among cores and that the mapped pages
// of the chunks in flight are little memory.
const defaultRefChunk = 4 << 20

// ReferenceText is a reference's records concatenated: 1 byte a base, plus a separator between
// records.
type ReferenceText struct {
	Text   []byte   // the codes of the records' bytes, a separator's code between records
	Starts []int    // Starts[i] is the offset in Text of record i
	Names  []string // the records' names (the header's first word)
}

// ReadReference reads every record of the file at path ("-": opts.Stdin) into a ReferenceText.
// A file without records, or whose only record is empty, is an error, worded as MUMmer words it.
func ReadReference(path string, opts ReferenceOptions) (*ReferenceText, error) {
	if opts.Threads <= 0 {
		opts.Threads = runtime.GOMAXPROCS(0)
	}
	if opts.ChunkSize <= 0 {
		opts.ChunkSize = defaultRefChunk
	}
	opts.ChunkSize = min(opts.ChunkSize, 1<<30)
	if path == "-" {
		stdin := opts.Stdin
		if stdin == nil {
			stdin = os.Stdin
		}
		return readReferenceStream("-", stdin, &opts)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err // "open PATH: no such file or directory", as Open says
	}
	defer f.Close()
	if t, ok, err := readReferenceMapped(path, f, &opts); ok {
		return t, err
	}
	return readReferenceStream(path, f, &opts)
}

// noSequences is the error for an input without records.
func noSequences(name string) error {
	return fmt.Errorf("%s: no sequences in multiple fasta file", name)
}

// emptyFASTA is Reader's error for a FASTA input whose only record, its header at line, is empty.
func emptyFASTA(name string, line int) error {
	return fmt.Errorf("%s: record 1 (line %d): empty sequence in multiple fasta file", name, line)
}

// readFailure is Reader's error for a read error met in record rec (1-based) at line.
func readFailure(in *input, rec, line int, err error) error {
	return fmt.Errorf("%s: record %d (line %d): %s", in.name, rec, line, oneLine(in.describe(err)))
}

// codeTable returns the codes of the file's bytes and of the separator, given the file bytes seen
// in sequences (white space among them or not).
func codeTable(opts *ReferenceOptions, seenRaw *[256]bool) (comp [256]byte, sep byte) {
	var seen [256]bool
	for c, ok := range seenRaw {
		if ok && !isSpace[c] {
			seen[opts.Fold[c]] = true
		}
	}
	code := opts.Encode(&seen)
	for c := range comp {
		comp[c] = code[opts.Fold[c]]
	}
	return comp, code[0]
}
