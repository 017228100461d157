package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/sapipe/sapipe/formats/bwz"
	"github.com/sapipe/sapipe/stages"
)

const compressHelp = `Compresses each FILE to FILE.bwz with the Burrows-Wheeler transform, like bzip2 but with far
larger blocks, better modelling after the transform and all cores (the sorting on the GPU when
there is one). The input file is removed once FILE.bwz is completely written and synced (-k keeps
it). With no FILE, or FILE "-", compresses stdin to stdout. -d decompresses instead (as "sapipe
decompress"), -t tests compressed files.

-1 .. -9 set the block size: 1, 2, 4, 8, 16, 32, 64, 128, 256 MiB (default -8); -b takes any size
up to 1G. Larger blocks compress better and take more memory: about 7 bytes per byte of each
block in flight while compressing (-p blocks at once), 6 while decompressing. --memory bounds
that, by default to half the memory there is (the machine's, or the control group's limit of a
container or a job, if lower): fewer blocks are then in flight, each on more threads. -F codes
with Huffman tables as bzip2 does (huff0): several times faster coding and decoding, and larger:
11% on text (the Linux sources), 10% on a genome.

Read sets: a FASTQ or FASTA file of reads (many short records) is coded as a read set, in blocks
that end where records do: the names as tokens (fields, counters as steps), the bases as the
consensus of the contigs that the reads overlap into (on both strands) plus each read's place,
strand and differences, the qualities with a context model, and line ends, line widths, N and
other bytes, and lowercase apart. It stays lossless and in order: decompress gives the file back
byte for byte. Without -1..-9 or -b a read set's blocks are of up to 1 GiB (the whole set is one
collection), or as much as --memory allows for one block. On 200,000 simulated 150 bp reads of
E. coli (6.5x coverage) FASTQ comes out 8.9x smaller and FASTA 19x, where the bytes' coding
gives 5.6x and 6.3x (-F 4.7x and 5.5x). Other FASTA (a genome: few, long records) and files that
are not records are coded as bytes; so are read sets with -F or --no-reads, as before format
version 5.

--device auto starts the GPU only once a block of 16 MiB or more, or 12 MiB a thread in all, has
been read; the CPU sorts smaller blocks while the GPU starts, and larger ones wait for it. Read
sets are coded on the CPU.

Examples:
   sapipe compress big.tar                  # big.tar.bwz, big.tar removed
   sapipe compress -k reads.fq              # reads.fq.bwz, a read set, reads.fq kept
   sapipe compress -k -9 -p 8 genome.fa     # keep genome.fa, 256 MiB blocks, 8 threads
   tar cf - src | sapipe compress > src.tar.bwz
   sapipe decompress -c src.tar.bwz | tar tf -
   sapipe compress -t *.bwz                 # check, naming any damaged block`

const decompressHelp = `Decompresses each FILE.bwz to FILE, checking every block against its CRC32C and every stream
against its trailer; FILE.bwz is removed once FILE is completely written and synced (-k keeps
it). With no FILE, or FILE "-", decompresses stdin to stdout. Concatenated .bwz streams decode to
the concatenation of their contents. Damaged, truncated or foreign input is an error naming the
block; -t tests instead of writing, and names every damaged block.

The inverse transform runs on the CPU whatever --device says. Memory: about 6 bytes per byte of
each block in flight (-p blocks at once), bounded by --memory (default: half the memory there is,
the machine's or a container's or job's limit).

Examples:
   sapipe decompress big.tar.bwz            # big.tar, big.tar.bwz removed
   sapipe decompress -c reads.fq.bwz | head
   sapipe decompress -t backup.bwz`

// bwzSuffix is the file name suffix of compressed files.
const bwzSuffix = ".bwz"

// compressLevels are the block sizes of -1 .. -9.
var compressLevels = [10]int{0, 1 << 20, 2 << 20, 4 << 20, 8 << 20, 16 << 20, 32 << 20, 64 << 20, 128 << 20, 256 << 20}

const defaultLevel = 8

// compressConfig is a parsed compress or decompress command line.
type compressConfig struct {
	decompress, test    bool
	stdout, keep, force bool
	fast                bool
	reads               bool // code read sets as read sets
	readsBlockSize      int  // their block size
	quiet, verbose      bool
	blockSize, threads  int
	memory              int64 // bytes for the blocks in flight, 0 for no bound but threads
	device              string
	files               []string
	backends            stages.BlockBackends    // for compression, shared by the files
	starting            *stages.StartingBackend // the GPU opening beside the CPU, if any
	name                string                  // the command, for messages
}

func compressFlags(decompress bool) []cli.Flag {
	flags := []cli.Flag{
		&cli.BoolFlag{Name: "c", Aliases: []string{"stdout"}, Usage: "write to stdout, keep the input files"},
		&cli.BoolFlag{Name: "k", Aliases: []string{"keep"}, Usage: "keep the input files"},
		&cli.BoolFlag{Name: "f", Aliases: []string{"force"}, Usage: "overwrite existing output files; write compressed data to a terminal"},
		&cli.BoolFlag{Name: "t", Aliases: []string{"test"}, Usage: "test the integrity of compressed files, name each damaged block"},
		&cli.IntFlag{Name: "p", Aliases: []string{"threads"}, Value: runtime.GOMAXPROCS(0), Usage: "threads (`N`)"},
		&cli.StringFlag{Name: "memory", Usage: "the most memory that blocks in flight may take (`SIZE`, k, M, G suffixes; default: half the memory there is)"},
		deviceFlag(),
		&cli.BoolFlag{Name: "q", Aliases: []string{"quiet"}, Usage: "nothing on stderr but errors"},
		&cli.BoolFlag{Name: "v", Aliases: []string{"verbose"}, Usage: "sizes and timings per file on stderr"},
	}
	if decompress {
		return flags
	}
	flags = append(flags,
		&cli.BoolFlag{Name: "d", Aliases: []string{"decompress"}, Usage: "decompress"},
		&cli.StringFlag{Name: "b", Aliases: []string{"block-size"}, Usage: "block `SIZE` in bytes (k, M, G suffixes), instead of -1..-9"},
		&cli.BoolFlag{Name: "F", Aliases: []string{"fast"}, Usage: "Huffman tables after the transform, as bzip2: much faster both ways, about 10% larger (read sets coded as bytes)"},
		&cli.BoolFlag{Name: "no-reads", Usage: "code FASTQ and FASTA read sets as bytes, as other data"},
	)
	for l := 1; l <= 9; l++ {
		flags = append(flags, &cli.BoolFlag{Name: fmt.Sprint(l), Usage: fmt.Sprintf("blocks of %d MiB", compressLevels[l]>>20), Hidden: l != 1 && l != 9})
	}
	return flags
}

func compressCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:                   "compress",
		Usage:                  "compress files with the BWT (bzip2-like, .bwz)",
		UsageText:              "sapipe compress [-c] [-d] [-k] [-f] [-t] [-1..-9 | -b SIZE] [-p N] [FILE...]",
		Description:            compressHelp,
		Flags:                  compressFlags(false),
		UseShortOptionHandling: true,
		OnUsageError:           func(_ *cli.Context, err error, _ bool) error { return usageError{err.Error()} },
		Action: func(c *cli.Context) error {
			cfg, err := parseCompressConfig(c, false)
			if err != nil {
				return err
			}
			return runCompress(c.Context, e, cfg)
		},
	}
}

func decompressCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:                   "decompress",
		Usage:                  "decompress .bwz files",
		UsageText:              "sapipe decompress [-c] [-k] [-f] [-t] [-p N] [FILE...]",
		Description:            decompressHelp,
		Flags:                  compressFlags(true),
		UseShortOptionHandling: true,
		OnUsageError:           func(_ *cli.Context, err error, _ bool) error { return usageError{err.Error()} },
		Action: func(c *cli.Context) error {
			cfg, err := parseCompressConfig(c, true)
			if err != nil {
				return err
			}
			return runCompress(c.Context, e, cfg)
		},
	}
}

func parseCompressConfig(c *cli.Context, decompress bool) (*compressConfig, error) {
	cfg := &compressConfig{
		decompress: decompress || c.Bool("d"),
		test:       c.Bool("t"),
		stdout:     c.Bool("c"),
		keep:       c.Bool("k"),
		force:      c.Bool("f"),
		quiet:      c.Bool("q"),
		verbose:    c.Bool("v"),
		threads:    c.Int("p"),
		fast:       !decompress && c.Bool("F"),
		reads:      !decompress && !c.Bool("no-reads"),
		device:     c.String("device"),
		files:      c.Args().Slice(),
		blockSize:  compressLevels[defaultLevel],
		name:       "compress",
	}
	if cfg.decompress {
		cfg.name = "decompress"
	}
	if cfg.threads < 1 {
		return nil, usageError{fmt.Sprintf("-p %d: want a positive number of threads", cfg.threads)}
	}
	if err := checkDeviceSpec(cfg.device); err != nil {
		return nil, err
	}
	if s := c.String("memory"); s != "" {
		v, ok := parseSuffixedSize(s, 1<<50)
		if !ok {
			return nil, usageError{fmt.Sprintf("--memory %s: want a size such as 512M or 16G", s)}
		}
		cfg.memory = v
	} else {
		cfg.memory = memoryLimit() / 2
	}
	if !decompress {
		level := 0
		for l := 1; l <= 9; l++ {
			if c.Bool(fmt.Sprint(l)) {
				if level != 0 {
					return nil, usageError{fmt.Sprintf("-%d and -%d: give one block size", level, l)}
				}
				level = l
			}
		}
		if level != 0 {
			cfg.blockSize = compressLevels[level]
		}
		if s := c.String("b"); s != "" {
			if level != 0 {
				return nil, usageError{fmt.Sprintf("-b and -%d: give one block size", level)}
			}
			bs, err := parseSize(s)
			if err != nil || bs > bwz.MaxBlockSize {
				return nil, usageError{fmt.Sprintf("-b %s: want a block size such as 900k, 64M or 1G, from 1 byte to 1G", s)}
			}
			cfg.blockSize = bs
		}
		// a read set is one collection, in one block if it can be
		cfg.readsBlockSize = cfg.blockSize
		if level == 0 && c.String("b") == "" {
			cfg.readsBlockSize = readsBlockSize(cfg.memory, cfg.blockSize)
		}
	}
	if len(cfg.files) == 0 {
		cfg.files = []string{"-"}
	}
	return cfg, nil
}

// memoryNote is -v's word on --memory, when it held blocks back: how many were in flight at most,
// blocks of a read set's size where the input was read sets.
func memoryNote(cfg *compressConfig, st stages.CompressStats) string {
	bs := cfg.blockSize
	if st.ReadSets > 0 {
		bs = cfg.readsBlockSize
	}
	per := stages.CompressBytesPerByte * int64(bs)
	if cfg.memory <= 0 || cfg.memory/per >= int64(cfg.threads+1) || st.Blocks < 2 {
		return ""
	}
	return fmt.Sprintf("; --memory %dM: at most %d in flight", cfg.memory>>20, max(cfg.memory/per, 1))
}

// maxReadsBlock is the default block of a read set: the largest there is.
const maxReadsBlock = bwz.MaxBlockSize

// readsBlockSize is the block size of read sets without -1..-9 or -b: one block of up to 1 GiB if
// memory (0: no bound) allows one block's compression, else what it allows, down to blockSize.
func readsBlockSize(memory int64, blockSize int) int {
	bs := int64(maxReadsBlock)
	if memory > 0 {
		bs = min(bs, memory/stages.CompressBytesPerByte>>20<<20)
	}
	return int(max(bs, int64(blockSize)))
}

// runCompress compresses, decompresses or tests every file of cfg. A failure on one file is
// reported on stderr and the others go on; the last failure is the command's error.
func runCompress(ctx context.Context, e *env, cfg *compressConfig) error {
	if !cfg.decompress && !cfg.test {
		bb, s, err := compressBackends(e, cfg)
		if err != nil {
			return err
		}
		cfg.backends, cfg.starting = bb, s
		if s != nil {
			defer s.Close() // an open that auto started and no block needed is not waited for
		} else {
			defer bb.(stages.OneBackend).Close()
		}
	}
	var last error
	for i, f := range cfg.files {
		if i == len(cfg.files)-1 && cfg.starting != nil {
			cfg.starting.SetLastInput() // its GPU is closed once its blocks are sorted
		}
		err := processFile(ctx, e, cfg, f)
		if err == nil {
			continue
		}
		var de deviceError
		if errors.As(err, &de) {
			return de.err // the other files would fail alike
		}
		if errors.Is(err, context.Canceled) || errors.Is(err, syscall.EPIPE) {
			return err
		}
		if last != nil {
			fmt.Fprintf(e.stderr, "sapipe: %s\n", oneLine(last.Error()))
		}
		last = err
	}
	if s := cfg.starting; s != nil && s.Required {
		// --device gpu fails without a GPU even where the CPU sorted every block (or no file
		// got that far)
		if err := s.Finish(ctx); err != nil {
			if last != nil {
				fmt.Fprintf(e.stderr, "sapipe: %s\n", oneLine(last.Error()))
			}
			var de deviceError
			if errors.As(err, &de) {
				return de.err
			}
			return err
		}
	}
	return last
}

// processFile does the command's work on one file ("-" is stdin).
func processFile(ctx context.Context, e *env, cfg *compressConfig, path string) error {
	logf := func(string, ...any) {}
	if cfg.verbose {
		logf = func(format string, args ...any) {
			noteMu.Lock() // the GPU's notes come from its goroutine
			fmt.Fprintf(e.stderr, "sapipe "+cfg.name+": "+format+"\n", args...)
			noteMu.Unlock()
		}
	}
	var progress *stages.ByteProgress
	if !cfg.quiet && e.stderrTerminal {
		progress = &stages.ByteProgress{W: e.stderr, Label: "sapipe " + cfg.name}
	}
	stdin := path == "-"
	name := path
	if stdin {
		name = "stdin"
	}
	// the input
	var in io.Reader = e.stdin
	var info os.FileInfo
	if !stdin {
		f, err := os.Open(path)
		if err != nil {
			return fmt.Errorf("input %w", unwrapPathError(err))
		}
		defer f.Close()
		if info, err = f.Stat(); err != nil {
			return fmt.Errorf("input %s: %w", path, err)
		}
		if !info.Mode().IsRegular() {
			return fmt.Errorf("input %s: not a regular file", path)
		}
		in = f
	} else if !cfg.force && (cfg.decompress || cfg.test) && isTerminal(e.stdin) {
		return usageError{"compressed data is not read from a terminal (use -f to force)"}
	}
	if cfg.test {
		return testFile(ctx, e, cfg, name, in, logf)
	}
	// the output
	toStdout := stdin || cfg.stdout
	outPath := ""
	if !toStdout {
		var warn string
		outPath, warn = outputName(path, cfg.decompress, cfg.force)
		if outPath == "" {
			return errors.New(warn)
		}
		if warn != "" && !cfg.quiet {
			fmt.Fprintf(e.stderr, "sapipe: %s\n", warn)
		}
		if _, err := os.Lstat(outPath); err == nil && !cfg.force {
			return fmt.Errorf("output %s exists (use -f to overwrite it)", outPath)
		}
	} else if !cfg.decompress && !cfg.force && isTerminal(e.stdout) {
		return usageError{"compressed data is not written to a terminal (use -f to force)"}
	}
	var out io.Writer = e.stdout
	var tmp *os.File
	if outPath != "" {
		var err error
		tmp, err = os.CreateTemp(filepath.Dir(outPath), "."+filepath.Base(outPath)+".tmp*")
		if err != nil {
			return fmt.Errorf("output %w", unwrapPathError(err))
		}
		defer func() {
			if tmp != nil {
				tmp.Close()
				os.Remove(tmp.Name())
			}
		}()
		out = tmp
	}
	t0 := time.Now()
	if cfg.decompress {
		n, err := stages.Decompress(ctx, stages.DecompressOptions{Threads: cfg.threads, Memory: cfg.memory, Progress: progress}, in, out)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		logf("%s: %d bytes in %v", name, n, time.Since(t0).Round(time.Millisecond))
	} else {
		if s := cfg.starting; s != nil && info != nil {
			s.Expect(info.Size(), cfg.blockSize)
		}
		st, err := stages.CompressWith(ctx, cfg.backends, stages.CompressOptions{BlockSize: cfg.blockSize, Threads: cfg.threads, Fast: cfg.fast, Memory: cfg.memory, Progress: progress, Reads: cfg.reads, ReadsBlockSize: cfg.readsBlockSize}, in, out)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		lzp := ""
		if st.LZPBlocks > 0 {
			lzp = fmt.Sprintf("; %d sorted as their LZP text, %.1f%% of the input left to sort", st.LZPBlocks, 100*float64(st.Sorted)/float64(max(st.In, 1)))
		}
		if st.ReadSets > 0 {
			lzp += fmt.Sprintf("; %d coded as read sets: %s", st.ReadSets, readParts(st.ReadParts))
		}
		lzp += memoryNote(cfg, st)
		logf("%s: %d -> %d bytes (%.2f%%, %.3f bits/byte) in %v, %s (sorting %v, coding %v summed over blocks)%s",
			name, st.In, st.Out, 100*float64(st.Out)/float64(max(st.In, 1)), 8*float64(st.Out)/float64(max(st.In, 1)),
			time.Since(t0).Round(time.Millisecond), blocksOn(st), st.SA.Round(time.Millisecond), st.Coding.Round(time.Millisecond), lzp)
	}
	if tmp == nil {
		return nil
	}
	// the output is complete: sync it, give it the input's mode and times, put it in place, and
	// only then remove the input
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("writing %s: %w", outPath, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", outPath, err)
	}
	os.Chmod(tmp.Name(), info.Mode().Perm())
	os.Chtimes(tmp.Name(), time.Now(), info.ModTime())
	if err := os.Rename(tmp.Name(), outPath); err != nil {
		return fmt.Errorf("output %w", unwrapPathError(err))
	}
	tmp = nil
	syncDir(filepath.Dir(outPath))
	if !cfg.keep {
		if err := os.Remove(path); err != nil {
			return fmt.Errorf("removing input %w", unwrapPathError(err))
		}
	}
	return nil
}

// readParts says what the parts of the read sets' payloads came to.
func readParts(sizes []int) string {
	var parts []string
	for i, s := range sizes {
		if i < len(bwz.ReadsPartNames) && s > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", bwz.ReadsPartNames[i], s))
		}
	}
	return strings.Join(parts, ", ")
}

// outputName returns the output file of path, and a warning to show; an empty name means the
// file is skipped, and the warning says why.
func outputName(path string, decompress, force bool) (string, string) {
	if decompress {
		if base, ok := strings.CutSuffix(path, bwzSuffix); ok && filepath.Base(base) != "" && !strings.HasSuffix(base, "/") {
			return base, ""
		}
		return path + ".out", fmt.Sprintf("%s: no %s suffix, decompressing to %s.out", path, bwzSuffix, path)
	}
	if strings.HasSuffix(path, bwzSuffix) && !force {
		return "", fmt.Sprintf("%s already has the %s suffix (use -f to compress it again)", path, bwzSuffix)
	}
	return path + bwzSuffix, ""
}

// syncDir makes a rename in dir durable, where the system allows it.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}

// testFile decodes a file without writing anything and reports each damaged block.
func testFile(ctx context.Context, e *env, cfg *compressConfig, name string, in io.Reader, logf func(string, ...any)) error {
	t0 := time.Now()
	rep, err := stages.TestStreams(ctx, stages.DecompressOptions{Threads: cfg.threads, Memory: cfg.memory}, in)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if len(rep.Bad) == 0 {
		logf("%s: ok, %d streams, %d blocks, %d bytes, in %v", name, rep.Streams, rep.Blocks, rep.Bytes, time.Since(t0).Round(time.Millisecond))
		return nil
	}
	for _, b := range rep.Bad {
		fmt.Fprintf(e.stderr, "sapipe: %s: %s\n", name, oneLine(b.Error()))
	}
	return fmt.Errorf("%s: damaged (%d good blocks, %d bad blocks or stretches above)", name, rep.Blocks, len(rep.Bad))
}
