package stages

import (
	"context"
	"os"
	"runtime/debug"
	"slices"
	"sync"

	"github.com/sapipe/sapipe/formats"
)

// blockFeed is what a source of whole-record chunks keeps of the files it reads in blocks
// (formats.BlockFile), which the workers read and cut themselves: the file being handed out, the
// files not closed yet, and on the sink's side where the next block's chunk is to start. mummer's
// queries and count/locate's patterns share it.
type blockFeed struct {
	bf   *formats.BlockFile // the source's side: the file being handed out,
	next int                // and its next block

	mu   sync.Mutex
	open []*formats.BlockFile // not closed yet (the sink closes a file after its last chunk)

	end int64 // the sink's side: where the last block's chunk written ended
}

// blockChunk is what a batch keeps of its chunk when the chunk is block blkIdx of blk, read and
// cut on a worker (mummer's QueryBatch and count/locate's PatternBatch embed it).
type blockChunk struct {
	blk     *formats.BlockFile // nil: the chunk is not a block's
	blkIdx  int
	blkSpan [2]int64 // where the chunk starts and ends in the file (-1: not known)
	blkBuf  []byte   // the block's buffer, which the chunk's data is a part of
}

// cutBlock reads and cuts the block's chunk into c, then runs work (the parsing, and what reads
// the chunk after it): where the chunk is a part of the file's mapping, a file cut short meanwhile
// faults there, and the fault is returned as an error naming the file.
func (k *blockChunk) cutBlock(c *formats.Chunk, work func() error) (err error) {
	if k.blk.Mapped() {
		defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
		defer formats.CatchFault(&err, k.blk.Name())
	}
	*c, k.blkSpan[0], k.blkSpan[1], k.blkBuf = k.blk.Chunk(k.blkIdx, k.blkBuf)
	return work()
}

// openBlocks opens path for the source in blocks of about size bytes, where it can be read so
// (formats.OpenBlocks), and reports whether it is.
func (f *blockFeed) openBlocks(path string, size int) (bool, error) {
	bf, err := formats.OpenBlocks(path, size)
	if err != nil || bf == nil {
		return false, err
	}
	f.bf, f.next = bf, 0
	f.mu.Lock()
	f.open = append(f.open, bf)
	f.mu.Unlock()
	return true, nil
}

// nextBlock returns the next block of paths[file], the file being handed out, with the ledger
// told of it. After the file's last block it reports ok false, and the source goes on to the
// next file; a chunk refused sends the rest of its file to a Reader and the files after it are
// opened again, so before stdin or a pipe, which cannot be read twice, it waits until every
// chunk handed out is written.
func (f *blockFeed) nextBlock(ctx context.Context, l *chunkLedger, paths []string, file int) (bf *formats.BlockFile, i int, ok bool, err error) {
	if f.bf == nil || f.next == f.bf.Blocks() {
		f.bf = nil
		if file+1 < len(paths) && !isRegular(paths[file+1]) {
			err = l.waitDrained(ctx)
		}
		return nil, 0, false, err
	}
	f.next++
	l.handOut(nil)
	return f.bf, f.next - 1, true, nil
}

// at returns where block i's chunk is to start: at the end of the chunk written before it, or at
// 0 for a file's first (sink goroutine).
func (f *blockFeed) at(i int) int64 {
	if i == 0 {
		return 0
	}
	return f.end
}

// follows reports whether block chunk k starts where the chunk written before it ended (sink
// goroutine): one that does not (the file changed) is refused, and a Reader reads from at(i).
func (f *blockFeed) follows(k *blockChunk) bool { return k.blkSpan[0] == f.at(k.blkIdx) }

// written records that block chunk k, whose chunk is c, is written (sink goroutine): c's data (a
// part of the file's mapping, or of the batch's block buffer) is let go, so that the batch does
// not read into it as a ChunkReader's buffer when reused; its mapped pages leave the process, and
// after its file's last block the file is closed.
func (f *blockFeed) written(k *blockChunk, c *formats.Chunk) {
	bf := k.blk
	c.Data = nil
	f.end = k.blkSpan[1]
	bf.Release(k.blkSpan[0], k.blkSpan[1])
	if k.blkIdx == bf.Blocks()-1 {
		bf.Close()
		f.mu.Lock()
		f.open = slices.DeleteFunc(f.open, func(o *formats.BlockFile) bool { return o == bf })
		f.mu.Unlock()
	}
}

// closeAll closes every file still open (those a Reader took over are left to it).
func (f *blockFeed) closeAll() {
	f.mu.Lock()
	for _, bf := range f.open {
		bf.Close()
	}
	f.open, f.bf = nil, nil
	f.mu.Unlock()
}

// isRegular reports whether path is a regular file (not stdin, a pipe or a device), one that can
// be read again from its start.
func isRegular(path string) bool {
	if path == "-" {
		return false
	}
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular()
}
