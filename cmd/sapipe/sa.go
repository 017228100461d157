package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/sapipe/sapipe/stages"
)

const saHelp = `Writes the suffix array of the input: the start positions (from 0) of its suffixes in
lexicographic byte order, a suffix before the longer ones it prefixes. The input is taken as raw
bytes, exactly as they are in the file: FASTA or FASTQ is not parsed and compressed files are not
decompressed (newlines and headers are bytes like any other). FILE "-" or no FILE is stdin.
The input is held in memory (5 bytes per input byte with the suffix array); at most 2^31-1 bytes.

Formats: u32 (default) and u64 write each position as a 4- or 8-byte little-endian unsigned
integer; text writes one decimal position per line.

Examples:
   sapipe sa -o genome.sa genome.seq
   printf banana | sapipe sa --format text`

// inputFile opens the input path of a raw-bytes command ("-" or "" is stdin) and returns it
// with the name messages use.
func inputFile(e *env, path string) (r io.Reader, name string, closeFn func(), err error) {
	if path == "" || path == "-" {
		return e.stdin, "stdin", func() {}, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, "", nil, fmt.Errorf("input %w", unwrapPathError(err))
	}
	return f, path, func() { f.Close() }, nil
}

// oneInput returns the single optional file argument of c.
func oneInput(c *cli.Context) (string, error) {
	switch c.NArg() {
	case 0:
		return "-", nil
	case 1:
		return c.Args().First(), nil
	}
	return "", usageError{fmt.Sprintf("one input file at most, got %d: %q", c.NArg(), c.Args().Slice())}
}

// runFlags are the options every raw-bytes command shares.
func runFlags(threadsUsage string) []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "o", Aliases: []string{"output"}, Usage: "write to `FILE` (complete or not at all) instead of stdout"},
		deviceFlag(),
		threadsFlag(threadsUsage),
		&cli.BoolFlag{Name: "q", Aliases: []string{"quiet"}, Usage: "nothing on stderr but errors"},
		&cli.BoolFlag{Name: "v", Aliases: []string{"verbose"}, Usage: "print timings per stage on stderr"},
	}
}

// logger returns the -v logger of a command.
func logger(c *cli.Context, e *env, cmd string) func(string, ...any) {
	if !c.Bool("v") {
		return func(string, ...any) {}
	}
	return func(format string, args ...any) { fmt.Fprintf(e.stderr, "sapipe "+cmd+": "+format+"\n", args...) }
}

func saCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:        "sa",
		Usage:       "suffix array of the input bytes",
		UsageText:   "sapipe sa [-o FILE] [--format u32|u64|text] [--device D] [FILE|-]",
		Description: saHelp,
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "format", Value: "u32", Usage: "output format: u32, u64 (little-endian binary) or text (one position per line)"},
		}, runFlags("host threads of the backend")...),
		OnUsageError: func(_ *cli.Context, err error, _ bool) error { return usageError{err.Error()} },
		Action: func(c *cli.Context) error {
			f, err := stages.ParseSAFormat(c.String("format"))
			if err != nil {
				return usageError{err.Error()}
			}
			path, err := oneInput(c)
			if err != nil {
				return err
			}
			return runSA(c.Context, e, c, path, f)
		},
	}
}

func runSA(ctx context.Context, e *env, c *cli.Context, path string, f stages.SAFormat) error {
	logf := logger(c, e, "sa")
	in, name, closeIn, err := inputFile(e, path)
	if err != nil {
		return err
	}
	defer closeIn()
	b, err := openBackend(e, autoDevice(c.String("device"), smallSAInput, path), c.Int("t"), talkOf(c))
	if err != nil {
		return err
	}
	defer b.Close()
	t0 := time.Now()
	text, err := stages.ReadText(name, in, stages.MaxSAText)
	if err != nil {
		return fmt.Errorf("%w (sapipe sa indexes with 32 bits)", err)
	}
	logf("read %s: %d bytes in %v", name, len(text), time.Since(t0).Round(time.Millisecond))
	if err := ctx.Err(); err != nil {
		return err
	}
	t1 := time.Now()
	sa, err := stages.BuildSuffixArray(b, text)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	logf("suffix array on %s in %v", b.Name(), time.Since(t1).Round(time.Millisecond))
	out, commit, abort, err := openOutput(c.String("o"), e.stdout)
	if err != nil {
		return err
	}
	t2 := time.Now()
	if err := stages.WriteSuffixArray(out, sa, f); err != nil {
		abort()
		return err
	}
	if err := commit(); err != nil {
		return err
	}
	logf("wrote %d positions in %v", len(sa), time.Since(t2).Round(time.Millisecond))
	return nil
}
