// Command genscale writes large inputs for sapipe's tests and benchmarks, deterministically: the
// output is a function of the arguments and the seed only, the same bytes with any number of
// threads (-t) and on any machine, so that a human-sized genome need not be carried to a
// benchmark machine but is made there, in about a minute.
//
//	genscale genome  --size 3.1G --seed 1 -o hs.fa
//	genscale diverge -i hs.fa --length 150M --rate 0.01 --seed 2 -o hs150_div.fa --ref-out hs150.fa
//	genscale reads   -i hs.fa --n 10M --len 150 --seed 3 -o reads.fq
//
// # The genome
//
// Records of --record-size bases (default 250 Mbp, the last one shorter; any size, 5 Gbp
// records included), named chr1, chr2, ..., 60 (--line) bases a line. The whole genome is made
// in memory (1 byte a base) and then written, in three passes:
//
//  1. Chunks of 4 Mi bases, each from its own generator (seed, chunk index), in parallel: random
//     background, with GC varying by isochore (each 256 kbp takes --gc 0.41 give or take
//     --gc-spread 0.05), interrupted by repeat copies and tandem arrays placed so that they take
//     --repeats (0.44) and --tandem (0.03) of the bases. A feature running past its chunk's end is
//     cut there.
//     Interspersed repeats: --families (300) consensus elements in four classes, each family
//     derived from one of a few masters of its class (subfamilies, as AluY/AluS/AluJ):
//     SINE-like (28% of the repeat bases; 270-320 bp plus a poly-A tail; 80% of copies whole),
//     LINE-like (46%; 5-6.5 kbp plus poly-A; 95% of copies 5'-truncated, keeping u^3 of the
//     element: 1.66 kbp a copy on average), LTR-like (18%; 0.3-2 kbp) and DNA-transposon-like
//     (8%; 0.2-2.5 kbp). Each family is 2-20% diverged from its consensus (DNA 8-20%, LTR
//     4-20%), older families having more copies; each copy draws its divergence at 0.6-1.4 times
//     its family's (substitutions, and a tenth as many indels of 1-4 bases), and its orientation
//     50/50. In 3.1 Gbp that is about 1.35 M SINE copies (60 families: 22,000 a family on
//     average, fewer in the young ones) and 380,000 LINE copies (90 families).
//     Tandem repeats: microsatellites (60% of arrays; units of 1-6 bases, arrays of 50 bp-5 kbp)
//     and satellites (units of 20-200 bases, arrays of 1-300 kbp; most of the tandem bases),
//     lengths log-uniform, each unit copy diverged by 0.5-5%.
//     Each repeat copy and array is soft-masked (lowercase) with probability --softmask (1), as
//     RepeatMasker marks them in real assemblies; --softmask 0 gives an uppercase genome.
//  2. Segmental duplications, --segdup (0.05) of the genome: regions of 1-400 kbp (log-uniform)
//     copied elsewhere, 90-99.9% identity (log-uniform, mostly recent), 85% of the changes
//     substitutions and 15% indels of 1-8 bases, either orientation. Sources and destinations
//     never share a kilobase block, so the copies are made in parallel from unchanged sources.
//  3. Runs of N, --n-frac (0.015) of each record: 10 kbp at both ends and gaps of 10 kbp-1 Mbp
//     inside (smaller in small records).
//
// So about 47% of the bases are in repeat copies as placed, 45% once features are cut at chunk
// ends and N runs written over them, and about 48% counting the unique sequence that the
// duplications turn into two copies. Measured on 20 Mbp: N 1.5%, lowercase (the repeat copies)
// 45.2%, GC 43% of the ACGT. Real assemblies (hg38: repeats ~50%, N ~5%, GC 41%) have far more structure
// (centromeric satellite arrays of Mbp, gene families, CpG depletion): this genome is meant to
// give exact-match tools human-like repeat multiplicities, not to pass for biology.
//
// # The diverged copy
//
// diverge copies the genome (or its first --length bases, the last record cut short) with
// --rate substitutions a base, --indel (0.1) small indels (1-10 bases) per substitution, and
// inversions of 1-100 kbp, one per 1/--inversions bases (5 Mbp) on average, under the same
// record names. Case is kept; where the genome has N the copy has random bases, as another
// assembly has its gaps elsewhere (runs of N in both would match each other at every offset,
// millions of matches a run for -maxmatch). --ref-out also writes the copied bases unchanged, so
// that "150 Mbp against its 1% copy" is two files of one run.
//
// # Reads
//
// reads samples --n reads of --len bases (or MIN:MAX, uniform) uniformly from the positions of
// the genome where a read fits in its record, both strands 50/50, and adds sequencing errors:
// substitutions at --error (0.005) a base on average, rising along the read from 0.4 to 1.6 times
// that, and Ns at --n-rate (0.0005). Reads are uppercase; where the genome has N (or
// another code) a read has random bases, the sequence the assembly lacks: reads over runs of N
// are kept, but none is made of Ns (which -maxmatch would match at every position of every
// run: 150,000 lines a read in 5 Mbp). The name is rINDEX_RECORD_POSITION_STRAND: the
// position of the read's leftmost base on the record's forward strand, 1-based, the strand + or
// - (the read is then the reverse complement). FASTQ qualities (Phred+33) come from a pool of
// Illumina-like profiles (Q35-40 falling to about Q26 at the end, with dips); an error base gets
// Q5-20 and an N Q2 ('#'). --format fasta writes FASTA, --format lines one sequence a line
// (patterns for sapipe count and locate).
//
// # Memory and speed
//
// genome holds the genome (1 byte a base) and a few buffers of 4 MiB a thread; diverge and
// reads read the FASTA back into memory (1 byte a base, one thread). Everything else runs on
// every core in pieces of fixed size (chunks of 4 Mi bases, 1 Mi bases of the copy, 16,384
// reads), each with its own generator. On the 2-core development machine, shared (load 5-6):
// a 200 Mbp genome in 2.6-3.9 s (1.5-1.7 s user, 0.6-0.8 s system CPU; 247 MB peak RSS),
// diverge of its first 150 Mbp (with --ref-out) in 2.7 s, 10 M reads of 150 bases from it in
// 23.6 s (11 s user, 4 s system; 3.3 GB of FASTQ). tools/bench-scale.sh makes its inputs with
// it on the GPU machine.
package main
