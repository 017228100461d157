package formats

// ReleaseBuffers drops the reader's record buffers that have grown beyond limit bytes, once the
// caller is done with the last record (its Name and Seq are those buffers): a genome-long record
// read among short ones would otherwise keep its memory for the rest of the run.
func (r *Reader) ReleaseBuffers(limit int) {
	if cap(r.seqBuf) > limit {
		r.seqBuf, r.rec.Seq = nil, nil
	}
	if cap(r.nameBuf) > limit {
		r.nameBuf, r.rec.Name = nil, nil
	}
}
