package stages

import (
	"context"
	"sync"
)

// chunkLedger is what a source that reads whole-record chunks, parsed on the workers, keeps so
// that a refused chunk can be handed back to a record reader (formats.ChunkReader.Resume): the
// data of the chunks handed out and not yet written, in order, and the records and newlines of
// the current file's chunks already written. mummer's queries and count/locate's patterns share it.
type chunkLedger struct {
	mu      sync.Mutex
	pending [][]byte      // data of the chunks handed out and not yet written, in order
	drained chan struct{} // closed when pending empties, while the source waits for that

	// The sink's side.
	sinkFile               int // file of the chunk written last
	fileRecords, fileLines int // records and newlines of sinkFile's chunks written
}

// handOut records a chunk handed to the pipeline.
func (l *chunkLedger) handOut(data []byte) {
	l.mu.Lock()
	l.pending = append(l.pending, data)
	l.mu.Unlock()
}

// waitDrained waits until every chunk handed out has been written.
func (l *chunkLedger) waitDrained(ctx context.Context) error {
	l.mu.Lock()
	if len(l.pending) == 0 {
		l.mu.Unlock()
		return nil
	}
	ch := make(chan struct{})
	l.drained = ch
	l.mu.Unlock()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// written records that the first pending chunk, of file, holding records records and lines
// newlines, is written.
func (l *chunkLedger) written(file, records, lines int) {
	l.mu.Lock()
	l.pending = l.pending[1:]
	if len(l.pending) == 0 && l.drained != nil {
		close(l.drained)
		l.drained = nil
	}
	l.mu.Unlock()
	if file != l.sinkFile {
		l.sinkFile, l.fileRecords, l.fileLines = file, 0, 0
	}
	l.fileRecords += records
	l.fileLines += lines
}

// resumeFrom returns what a record reader of file needs to take over at the first pending
// chunk: the pending chunks' data, and the records and newlines of file before them.
func (l *chunkLedger) resumeFrom(file int) (data [][]byte, records, lines int) {
	if l.sinkFile == file {
		records, lines = l.fileRecords, l.fileLines
	}
	return l.pending, records, lines
}
