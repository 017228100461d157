package stages

import (
	"github.com/sapipe/sapipe/formats"
)

// chunks is the part of PatternSource that reads FASTA and FASTQ patterns in chunks of whole
// records (formats.ChunkReader), parsed on the workers. A chunk that formats.ParseChunk refuses
// stops the pipeline once everything before it is written; resume then hands the rest of its
// file to a formats.Reader. So that this works, a file's chunks are all written before the next
// file is opened: the Reader needs the chunks read after the refused one, all of its file, and
// the next file may be a stream that cannot be read twice.
type chunks struct {
	cr      *formats.ChunkReader // of the file being read, while it is read in chunks
	stopped bool                 // an Odd chunk has been handed out: nothing more to read

	chunkLedger
	refusedBatch *PatternBatch // the sink's side
}

// written records that b is written (or handed to be written).
func (s *PatternSource) written(b *PatternBatch) {
	if b.isChunk {
		s.chunkLedger.written(b.file, int(b.Records), b.newlines)
	} else {
		s.sinkFile = -1
	}
}

// resume makes the source read the refused chunk's file on from it with a Reader, once the
// pipeline has stopped.
func (s *PatternSource) resume() {
	b := s.refusedBatch
	data, nrec, nl := s.resumeFrom(b.file)
	s.rd.Resume(b.chunkFrom, data, nrec, nl)
	s.cr, s.stopped, s.pending, s.drained, s.refusedBatch = nil, false, nil, nil, nil
}

// parseChunk parses the batch's chunk into Data, Names and Seqs.
func (b *PatternBatch) parseChunk() {
	b.Data, b.Names, b.Seqs = b.Data[:0], b.Names[:0], b.Seqs[:0]
	_, ok := formats.ParseChunk(&b.chunk, &b.scratch, func(name, seq []byte) {
		n := len(b.Data)
		b.Data = append(b.Data, name...)
		b.Names = append(b.Names, formats.Span{From: n, To: len(b.Data)})
		n = len(b.Data)
		b.Data = append(b.Data, seq...)
		b.Seqs = append(b.Seqs, formats.Span{From: n, To: len(b.Data)})
	})
	b.refused = !ok
	b.newlines = b.chunk.Newlines()
}
