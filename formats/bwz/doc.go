// Package bwz is the .bwz compressed format of `sapipe compress`: the container (stream header,
// independent blocks, trailer), the coding of one block's Burrows-Wheeler transform into a
// payload and back, and the coding of a block of FASTQ or FASTA reads as a read set. It knows
// nothing of suffix arrays or devices: the transform comes in from kernels (through stages) and
// goes back out to the inverse transform in kernels/cpu.
//
// Data enters as a block's transform, primary index and sampled rows (EncodeBlock), or as a
// block of reads (EncodeReads), and leaves as framed bytes (AppendHeader or AppendReadsHeader,
// AppendBlock, AppendTrailer); in the other direction a Reader splits the input into checked
// frames, and DecodeBlock turns a payload back into a transform, DecodeReads a read set's back
// into the block.
//
// # Format, version 4
//
// All integers are little-endian; every checksum is a CRC32C (Castagnoli). A file is one or more
// streams, one after the other (concatenated .bwz files decode to the concatenation of their
// contents). A stream is a header, zero or more blocks, and a trailer:
//
//	stream header, 16 bytes
//	  magic       4  B7 42 57 5A ("\xB7BWZ")
//	  version     1  4 (a reader also reads versions 2 and 3, below)
//	  flags       3  0 (a reader refuses other values)
//	  block size  4  the largest original length of a block in this stream, 1..2^30
//	  check       4  CRC32C of the 12 bytes above
//
//	block, 32 bytes then the payload
//	  tag         4  B7 62 6C 6B ("\xB7blk")
//	  index       4  the block's number in its stream, from 0
//	  length      4  n, the block's original length, 1..block size
//	  primary     4  the primary index of the block's transform, 1..n
//	  payload     4  the payload's length in bytes, 4 .. n + n/256 + 1024 (before version 4, at
//	                 least 4 + 4*((n-1)>>16), room for the sampled rows of n bytes)
//	  payload CRC 4  CRC32C of the payload
//	  data CRC    4  CRC32C of the block's n original bytes
//	  check       4  CRC32C of the 28 bytes above
//	  payload        the coded transform, below
//
//	trailer, 24 bytes
//	  tag         4  B7 65 6E 64 ("\xB7end")
//	  blocks      4  the number of blocks in the stream
//	  total       8  the number of original bytes in the stream
//	  stream CRC  4  CRC32C of all the original bytes of the stream
//	  check       4  CRC32C of the 20 bytes above
//
// A block is decoded from its own frame alone. Its transform is the Burrows-Wheeler transform of
// package kernels of the block's text (the text followed by a virtual sentinel smaller than every
// byte; m bytes, the sentinel left out, and its row is the primary index, 1..m). The text is the
// block's n bytes themselves (m = n), or from version 4 their LZP text (m < n), below. The payload
// is
//
//	version     1  4 (or 3 or 2, below)
//	sample      1  s = 16: rows are sampled every 2^s text positions
//	text        1  (version 4 only) 0: the block's bytes; 1: their LZP text, then
//	  escape      1        the byte that starts a match
//	  minimum     uvarint  L, the shortest match, 8..65536 (64 from this package)
//	  table       1        h, log2 of the table's entries, 10..min(22, max(12, bit length of
//	                       min(n, G))), G below
//	  context     1        c, the bytes of context hashed, 1..8 (6 from this package)
//	  length      uvarint  m, the LZP text's length, 1..n
//	  LZP segment uvarint  G, block bytes per LZP segment, 65536..2^30 (8 MiB from this package)
//	  texts       uvarint  for each of the ceil(n/G) LZP segments, its text's length (they add up
//	                       to m)
//	segment     uvarint  S, the transform's bytes per segment (at least 65536)
//	samples     4 each   the rows (1..m) of text positions k*2^s for k = 1 .. (m-1)>>s, so that
//	                     the inverse transform can start at each of them in parallel
//	segments    for each of the ceil(m/S) segments: method (1 byte) and coded length (uvarint)
//	data        the coded segments, one after the other
//
// The LZP text (lzp.go) takes long repeats out of a block before it is sorted. The block is cut
// into LZP segments of G bytes, each made into its text on its own (so in parallel), and the
// block's text is theirs one after the other. Reading a segment from its position 8 on, each
// position i where a token starts looks up, in a table of 2^h entries,
// the last such position whose c bytes before it hash alike, hash = ((the 8 bytes before i, read
// little-endian) >> (64-8c)) * 0x9E3779B97F4A7C15 >> (64-h) (mod 2^64), and sets the entry to i.
// Where the segment goes on as it did after that position for at least L bytes, the text has the
// escape and the match's length l as l-L+1 in bytes of 255 and a last byte under 255 (the decoder
// copies from the earlier position, overlapping what it writes if need be); elsewhere a byte is
// itself, and the escape byte is written escape, 0. This package writes an LZP text only when it
// is at least 1/32 shorter than the block (blocks of 64 KiB or more; of 4 MiB or more with
// sapipe compress --fast), with
// the block's rarest byte as the escape and h = bit length of min(n, G) - 5, clamped to 12..18;
// a segment whose first eighth loses under 1/64 of its bytes is written without matches.
//
// Segment i holds the transform's bytes [i*S, min((i+1)*S, m)) and is coded independently of the
// others, with one of five methods:
//
//	0 stored   the bytes as they are
//	1 runs     runs of equal bytes: a move-to-front rank and a length per run, each binarised and
//	           coded with adaptive binary models mixed in the logistic domain (runs.go); the
//	           segment's data starts with one byte, the rank mixers' learning shift (10..12)
//	2 direct   every byte through a code for the 15 most frequent bytes plus an escape, modelled
//	           by the codes of the 0 and 2 previous bytes (direct.go)
//	3 Huffman  bzip2's scheme: move-to-front, zero runs as RUNA/RUNB digits, up to 6 Huffman
//	           tables chosen per group of 64 symbols, each table's symbols one huff0 stream
//	           (huffman.go; "sapipe compress --fast")
//	4 runs with frequencies
//	           method 1's runs, ranks and lengths, the ranks predicted also from each byte's
//	           recency-weighted frequency in the runs before (runsfreq.go); the data starts as
//	           method 1's, with the learning shift
//
// Methods 1, 2 and 4 drive a binary range coder with 12-bit probabilities (rangecoder.go); their
// models are fixed by the format: a decoder must update them exactly as the encoder in this
// package does. Method 3's layout is described in huffman.go.
//
// Version 4 added the LZP text (0.7% smaller on the first 100 MiB of the Linux sources in one
// block, whose text is 28% shorter than the block) and let a block's payload be shorter than its
// sampled rows of n bytes would be; a version-4 reader reads versions 2 and 3, whose payloads have
// no text byte, and version 3's readers refuse version 4 at the stream header. Version 3 added
// method 4, which this package writes in place of method 1 (3.6% smaller on the Linux sources'
// transform, 0.5% on a binary file's); the framing, the payload's layout and methods 0 to 3 are
// version 2's, and a version-3 reader reads version-2 streams and payloads (a version-2 payload may
// not hold method 4). A writer chooses the direct method for a segment when it codes samples of it
// smaller than method 4 (version 2's writer asked for 2% smaller than method 1). Version 2 changed
// only the models of methods 1 and 2 from version 1's (fewer inputs to each mix, a tree for the
// rank buckets, other learning rates), for 1.6 to 2 times the coding speed on text and over twice
// on DNA, and slightly smaller output (runs.go and direct.go say what changed); readers of version
// 2 or 3 refuse version 1, and version 2's readers refuse version 3, at the stream header.
//
// # Format, version 5: read sets
//
// A version-5 stream is a version-4 stream whose blocks may also be read sets: its header says 5,
// and a block whose payload starts with the byte 5 is a read set (its header's primary index is
// 1), any other block a transform as in version 4. This package writes version 5 only for inputs
// that start as FASTQ or FASTA reads; everything else is written as version 4, byte for byte as
// before. Readers of version 4 refuse version-5 streams at the stream header ("format version
// 5"). A read set's block holds whole records, and its payload is at least 1/4096 of the block
// (ReadsMinRatio: a decoder refuses shorter ones before allocating anything):
//
//	version     1        5
//	kind        1        0: FASTQ (records of four lines: '@' name, sequence, '+' line,
//	                     qualities as long as the sequence), 1: FASTA ('>' name, then the
//	                     sequence on lines that do not start with '>')
//	flags       1        bit 0: every line ends in "\r\n" (else in "\n"); bit 1: so does the
//	                     block's last line (else it has no end); others 0
//	records     uvarint  R, at least 1
//	bases       uvarint  B, the sequences' bytes (line ends taken out)
//	names       uvarint  the names' bytes (the header lines after '@' or '>')
//	consensus   uvarint  C <= B, the contigs' bases
//	chunks      uvarint  K, 1..R
//	chunk ends  K-1 uvarints, increasing read numbers under R: chunk k is the reads from the end
//	                     of chunk k-1 (0) to its own end (R for the last)
//	alphabet    FASTQ: 1 byte A, then the A quality bytes, commonest first
//	lengths     a uvarint for each section: structure, names, the consensus's parts (2^21
//	                     bases each, the last fewer; one when C is 0), then (FASTQ) the K
//	                     chunks' qualities, then the K chunks' reads
//	sections    one after the other, the payload's end the last one's
//
// Each section is coded on its own with a binary arithmetic coder over 32 bits (carry-less, 16-bit
// probabilities, the decoder reading four bytes ahead; reads_coder.go) whose models are fixed by
// the format: a decoder must update them exactly as the encoder of this package does.
//
//	structure  each read's length (the previous one's again, or a number); FASTQ: each '+'
//	           line's kind (the '+' alone, with the record's name again, or with other bytes,
//	           their length and bytes); FASTA: the line width W, and the records whose lines are
//	           not W wide but for the last (0 < last <= W; one line when W is 0; none when the
//	           sequence is empty): their number, and for each the gap to it, its line count and
//	           line lengths; the runs of sequence bytes other than A, C, G and T in either case
//	           (gap, byte, length); the runs of lowercase (their number and lengths, upper case
//	           first, the last left out)
//	names      each name as tokens (reads_names.go): runs of digits and of other bytes, each
//	           coded as the previous name's token in that place again, a step from its number,
//	           a number, or bytes
//	consensus  a part's bases (A, C, G, T as 0..3), two decisions each, mixing contexts of the
//	           2, 4, 6 and 8 bases before (reads_bases.go)
//	qualities  the chunk's quality bytes as ranks in the alphabet, mixing models of the position
//	           in the read, the qualities before it and how much they moved (reads_qual.go)
//	reads      for each read of the chunk with a byte that is A, C, G or T: its place p in the
//	           consensus (at even odds over 0..C-L for a read of L bytes), its strand (the read
//	           is the reverse complement of the consensus at p..p+L-1, or those bases), how many
//	           of its bases (not exceptions) differ from the consensus there (by the errors its
//	           qualities expect), and for its bases up to the last that differs, whether it does
//	           (by its quality, place in the read and the differences left) and if so which of
//	           the other three bases it is (reads_reads.go)
//
// The block is then printed: each FASTQ record as "@", its name, its sequence, "+" and what the
// '+' line holds, and its qualities, each line ended; each FASTA record as ">", its name and its
// sequence on its lines; the bases in their case and the exceptions as they were.
//
// # Damage
//
// Every header carries its own CRC, so a damaged header is found before its fields are trusted, and
// every payload its CRC, so that damage to coded bits the decoder would not notice is found too.
// Lengths are checked against the stream's block size, and a block's length against its payload's
// (which before version 4 must hold the block's sampled rows), before anything is allocated; a payload is read in
// chunks as it arrives. A version-4 payload may be much shorter than its block (an LZP text of
// repeats is), so there the sampled rows bound the transform's length m instead, before the
// transform is allocated, and the block's n bytes are allocated as the LZP text is decoded, at most
// 4 bytes a byte of text and 1 MiB more before they grow, so that a lying n costs memory only for
// bytes the text really holds. A damaged payload is found by the decoder's range checks or by the
// data CRC; since blocks are independent, a reader can report each bad block, and Reader.Resync
// finds the next intact block header after damage that breaks the framing.
package bwz
