package formats

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"slices"
	"sync"

	"github.com/klauspost/compress/flate"
	"github.com/klauspost/compress/gzip"
)

// BGZF (bgzip, htslib, samtools: FASTQ and FASTA of sequencing pipelines, faidx-indexed genomes)
// is gzip cut into members of at most 64 KiB, each naming its own size in a "BC" extra field. A
// gzip stream is inflated on one goroutine, at a few hundred MB/s, while the GPU matches millions
// of reads a second; BGZF's members are independent, so bgzfReader cuts the stream into jobs of
// members on one goroutine (reading only their headers) and inflates the jobs on every core,
// handing their bytes out in order. A member that is not BGZF (a plain gzip stream appended) ends
// the parallel reading: from it on, the stream is read by the gzip reader as before, which also
// gives gzip's own errors for whatever follows.

const (
	bgzfJobMembers = 16       // members a job inflates: about 1 MiB of output
	bgzfMaxMember  = 64 << 10 // BGZF's limit on a member's size, and on its output
)

// isBGZF reports whether head, the first bytes of a gzip stream, starts a BGZF member.
func isBGZF(head []byte) bool {
	_, ok := bgzfSize(head)
	return ok
}

// bgzfSize returns the size of the gzip member that head starts, from its BC extra field, and
// whether head starts one: the gzip magic, deflate, FEXTRA the only flag (no name, comment or header
// CRC between the extra field and the data), the extra field whole in head.
func bgzfSize(head []byte) (int, bool) {
	if len(head) < 12 || head[0] != 0x1f || head[1] != 0x8b || head[2] != 8 || head[3] != 4 {
		return 0, false
	}
	xlen := int(binary.LittleEndian.Uint16(head[10:]))
	if len(head) < 12+xlen {
		return 0, false
	}
	for x := head[12 : 12+xlen]; len(x) >= 4; {
		slen := int(binary.LittleEndian.Uint16(x[2:]))
		if x[0] == 'B' && x[1] == 'C' && slen == 2 && len(x) >= 6 {
			size := int(binary.LittleEndian.Uint16(x[4:])) + 1
			if size < 12+xlen+8 {
				return 0, false
			}
			return size, true
		}
		if len(x) < 4+slen {
			break
		}
		x = x[4+slen:]
	}
	return 0, false
}

// bgzfJob is some consecutive members of the stream and, once done is closed, their bytes.
type bgzfJob struct {
	in      []byte // the members, whole
	members []int  // where each ends in in
	out     []byte
	err     error         // the first member that failed; out holds the members before it
	tail    bool          // not members: the rest of the stream is read by the gzip reader
	done    chan struct{} // closed when out and err are set
}

// bgzfReader is an io.ReadCloser of the bytes of a BGZF stream.
type bgzfReader struct {
	src   *bufio.Reader
	order chan *bgzfJob // jobs in the stream's order, to Read
	work  chan *bgzfJob // jobs to inflate
	free  chan *bgzfJob // jobs handed out, for reuse
	quit  chan struct{}

	cur  *bgzfJob
	off  int
	rest io.Reader // the gzip reader of the stream after the BGZF members, once reached
	gz   *gzip.Reader
	err  error
	once sync.Once
}

// newBGZFReader starts reading the BGZF stream src on threads goroutines.
func newBGZFReader(src *bufio.Reader, threads int) *bgzfReader {
	threads = max(threads, 1)
	// Jobs in flight (cut, inflated, waiting for Read) are bounded by order's room: about
	// threads+3 MiB of output and their members, whatever the stream's size.
	r := &bgzfReader{src: src, order: make(chan *bgzfJob, threads+2), work: make(chan *bgzfJob, threads),
		free: make(chan *bgzfJob, threads+4), quit: make(chan struct{})}
	go r.cut()
	for range threads {
		go r.inflate()
	}
	return r
}

// cut reads the members' headers and bytes into jobs, handed to the workers and, in order, to Read.
// At the stream's end, a member that is not BGZF (then a tail job follows the members) or a read
// error, it stops.
func (r *bgzfReader) cut() {
	defer close(r.order)
	defer close(r.work)
	for {
		var j *bgzfJob
		select {
		case j = <-r.free:
		default:
			j = &bgzfJob{}
		}
		j.in, j.members, j.out, j.err, j.tail = j.in[:0], j.members[:0], j.out[:0], nil, false
		j.done = make(chan struct{})
		rest := false // a member that is not BGZF follows: the gzip reader takes the rest
		for len(j.members) < bgzfJobMembers && !rest && j.err == nil {
			head, err := r.src.Peek(18)
			if len(head) == 0 && err == io.EOF {
				break
			}
			size, ok := bgzfSize(head)
			if !ok && len(head) >= 12 && head[3] == 4 {
				// An extra field longer than 18 bytes: look again with all of it.
				head, _ = r.src.Peek(12 + int(binary.LittleEndian.Uint16(head[10:])))
				size, ok = bgzfSize(head)
			}
			if !ok {
				rest = true // (or says what is wrong with it)
				break
			}
			n := len(j.in)
			j.in = slices.Grow(j.in, size)[:n+size]
			if _, err := io.ReadFull(r.src, j.in[n:]); err != nil {
				if err == io.EOF {
					err = io.ErrUnexpectedEOF
				}
				j.in, j.err = j.in[:n], err
				break
			}
			j.members = append(j.members, len(j.in))
		}
		full := len(j.members) == bgzfJobMembers && j.err == nil
		if len(j.members) > 0 || j.err != nil {
			if !r.send(j) {
				return
			}
		}
		if rest {
			r.send(&bgzfJob{tail: true, done: make(chan struct{})})
		}
		if !full {
			return
		}
	}
}

// send hands j to the workers (members) and to Read, or only to Read (a tail, or an error alone).
func (r *bgzfReader) send(j *bgzfJob) bool {
	select {
	case r.order <- j:
	case <-r.quit:
		return false
	}
	if j.tail || len(j.members) == 0 {
		close(j.done)
		return true
	}
	select {
	case r.work <- j:
		return true
	case <-r.quit:
		return false
	}
}

// inflate inflates jobs: each member's deflate data, its CRC-32 and size checked.
func (r *bgzfReader) inflate() {
	var fr io.ReadCloser
	var br bytes.Reader // a ByteReader: flate reads no further than its stream's end
	var one [1]byte
	for j := range r.work {
		start, readErr := 0, j.err
		j.err = nil
		for _, end := range j.members {
			m := j.in[start:end]
			start = end
			xlen := int(binary.LittleEndian.Uint16(m[10:]))
			data := m[12+xlen : len(m)-8]
			want := binary.LittleEndian.Uint32(m[len(m)-8:])
			size := int(binary.LittleEndian.Uint32(m[len(m)-4:]))
			if size > bgzfMaxMember {
				j.err = gzip.ErrHeader
				break
			}
			br.Reset(data)
			if fr == nil {
				fr = flate.NewReader(&br)
			} else {
				fr.(flate.Resetter).Reset(&br, nil)
			}
			n := len(j.out)
			j.out = slices.Grow(j.out, size)[:n+size]
			if _, err := io.ReadFull(fr, j.out[n:]); err != nil {
				j.out = j.out[:n]
				if err == io.EOF {
					err = io.ErrUnexpectedEOF
				}
				j.err = err
				break
			}
			if k, err := fr.Read(one[:]); k != 0 || err != io.EOF || br.Len() != 0 {
				// More output than the member says, or bytes after its deflate data: the
				// gzip reader would take those for the checksum.
				j.out = j.out[:n]
				j.err = gzip.ErrChecksum
				break
			}
			if crc32.ChecksumIEEE(j.out[n:]) != want {
				j.out = j.out[:n]
				j.err = gzip.ErrChecksum
				break
			}
		}
		if j.err == nil {
			j.err = readErr
		}
		close(j.done)
	}
}

func (r *bgzfReader) Read(p []byte) (int, error) {
	for {
		if r.rest != nil {
			return r.rest.Read(p)
		}
		if r.cur != nil && r.off < len(r.cur.out) {
			n := copy(p, r.cur.out[r.off:])
			r.off += n
			return n, nil
		}
		if r.cur != nil {
			if r.cur.err != nil {
				r.err = r.cur.err
			}
			if r.err != nil {
				return 0, r.err
			}
			select {
			case r.free <- r.cur:
			default:
			}
			r.cur = nil
		}
		j, ok := <-r.order
		if !ok {
			if r.err == nil {
				r.err = io.EOF
			}
			return 0, r.err
		}
		<-j.done
		if j.tail {
			// Every member before it has been read: the cutter reads src no more.
			z, err := gzip.NewReader(r.src)
			if err != nil {
				r.err = err
				return 0, err
			}
			r.gz, r.rest = z, z
			continue
		}
		r.cur, r.off = j, 0
	}
}

// Close stops the goroutines, without waiting for the one that may be in a read of the source
// (a pipe): it ends when that read does (the source closed, or the process's exit).
func (r *bgzfReader) Close() error {
	r.once.Do(func() {
		close(r.quit)
		go func() {
			for range r.order {
			}
		}()
	})
	if r.gz != nil {
		return r.gz.Close()
	}
	return nil
}

// AppendBGZFMember appends data (at most 65,536 bytes; bgzip puts 65,280 in each) to dst as one
// BGZF member, deflated at level: what tools/bgzf writes, and the tests' inputs.
func AppendBGZFMember(dst, data []byte, level int) ([]byte, error) {
	var def bytes.Buffer
	w, err := flate.NewWriter(&def, level)
	if err != nil {
		return dst, err
	}
	w.Write(data)
	if err := w.Close(); err != nil {
		return dst, err
	}
	size := 18 + def.Len() + 8
	if size > bgzfMaxMember || len(data) > bgzfMaxMember {
		return dst, fmt.Errorf("a BGZF member of %d bytes (%d before deflating)", size, len(data))
	}
	dst = append(dst, 0x1f, 0x8b, 8, 4, 0, 0, 0, 0, 0, 0xff, 6, 0, 'B', 'C', 2, 0)
	dst = binary.LittleEndian.AppendUint16(dst, uint16(size-1))
	dst = append(dst, def.Bytes()...)
	dst = binary.LittleEndian.AppendUint32(dst, crc32.ChecksumIEEE(data))
	return binary.LittleEndian.AppendUint32(dst, uint32(len(data))), nil
}
