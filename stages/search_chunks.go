package stages

import (
	"github.com/sapipe/sapipe/formats"
)

// chunks is the part of PatternSource that reads FASTA and FASTQ patterns in chunks of whole
// records, parsed on the workers: a plain file in blocks that the workers read and cut themselves
// (formats.BlockFile), other input on the source's goroutine (formats.ChunkReader). A chunk that
// formats.ParseChunk refuses stops the pipeline once everything before it is written; resume then
// hands the rest of its file to a formats.Reader. So that this works, a ChunkReader's file has its
// chunks all written before the next file is opened (the Reader needs the chunks read after the
// refused one), and any file's before stdin or a pipe, which cannot be read twice: the files after
// a refused chunk's are opened again.
type chunks struct {
	cr      *formats.ChunkReader // of the file being read, while it is read in chunks
	stopped bool                 // an Odd chunk has been handed out: nothing more to read
	blocks  blockFeed            // or the file is read in blocks (a plain file)

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
	if b.blk != nil {
		s.blocks.written(&b.blockChunk, &b.chunk) // parsed: its names and sequences are copied
	}
}

// resume makes the source read the refused chunk's file on from it with a Reader, once the
// pipeline has stopped.
func (s *PatternSource) resume() error {
	b := s.refusedBatch
	data, nrec, nl := s.resumeFrom(b.file)
	if b.blk != nil {
		// A file read in blocks: a Reader of it from the chunk on, and the files after it
		// opened again (the source may have gone on to them).
		rd, err := b.blk.Resume(s.blocks.at(b.blkIdx), nrec)
		if err != nil {
			return err
		}
		s.Close()
		s.blocks.closeAll()
		s.rd, s.lines, s.file = formats.PatternsFrom(rd), false, b.file
	} else {
		s.rd.Resume(b.chunkFrom, data, nrec, nl)
	}
	s.cr, s.stopped, s.pending, s.drained, s.refusedBatch = nil, false, nil, nil, nil
	return nil
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
	b.newlines = 0
	if b.blk == nil { // a block's file counts its own newlines if a Reader takes it over
		b.newlines = b.chunk.Newlines()
	}
}
