package main

import (
	"context"
	"fmt"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/sapipe/sapipe/formats"
	"github.com/sapipe/sapipe/stages"
)

const bwtHelp = `Writes the Burrows-Wheeler transform of the input, cut into blocks of SIZE bytes, as a framed
BWT stream that "sapipe unbwt" turns back into the input byte for byte. Each block holds its
transform, its primary index and the CRC32C of its original bytes; the format is described in
docs/sa-bwt.md of the source. The input is taken as raw bytes (nothing is parsed or
decompressed). FILE "-" or no FILE is stdin.

The input streams through: memory holds a few groups of blocks (several blocks go to the device
at once), about 6 bytes per byte of a group on the CPU. SIZE takes k, M and G (powers of 1024)
and may be as large as the input (at most 2G-1); larger blocks compress better and take longer.

Examples:
   sapipe bwt -b 8M -o genome.bwt genome.fa
   tar cf - src | sapipe bwt | sapipe unbwt | tar tf -`

// defaultBlockSize is the default -b of sapipe bwt.
const defaultBlockSize = "8M"

// parseSize reads a size with an optional k, M or G suffix (powers of 1024).
func parseSize(s string) (int, error) {
	v, ok := parseSuffixedSize(s, formats.MaxBWTBlock)
	if !ok {
		return 0, fmt.Errorf("-b %s: want a block size such as 900k, 8M or 1G, from 1 byte to %d bytes (2G-1)", s, formats.MaxBWTBlock)
	}
	return int(v), nil
}

func bwtCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:        "bwt",
		Usage:       "Burrows-Wheeler transform of the input, in blocks",
		UsageText:   "sapipe bwt [-b SIZE] [-o FILE] [--device D] [FILE|-]",
		Description: bwtHelp,
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "b", Aliases: []string{"block-size"}, Value: defaultBlockSize, Usage: "block `SIZE` in bytes (k, M, G suffixes)"},
		}, runFlags("host threads of the backend (blocks transformed at once on the CPU)")...),
		OnUsageError: func(_ *cli.Context, err error, _ bool) error { return usageError{err.Error()} },
		Action: func(c *cli.Context) error {
			bs, err := parseSize(c.String("b"))
			if err != nil {
				return usageError{err.Error()}
			}
			path, err := oneInput(c)
			if err != nil {
				return err
			}
			return runBWT(c.Context, e, c, path, bs)
		},
	}
}

func runBWT(ctx context.Context, e *env, c *cli.Context, path string, blockSize int) error {
	logf := logger(c, e, "bwt")
	in, name, closeIn, err := inputFile(e, path)
	if err != nil {
		return err
	}
	defer closeIn()
	threads := c.Int("t")
	b, err := openBackend(e, autoDevice(c.String("device"), smallSAInput, path), threads, talkOf(c))
	if err != nil {
		return err
	}
	defer b.Close()
	opts := stages.BWTOptions{BlockSize: blockSize, Threads: threads}
	if !c.Bool("q") && e.stderrTerminal {
		opts.Progress = &stages.ByteProgress{W: e.stderr, Label: "sapipe bwt"}
	}
	out, commit, abort, err := openOutput(c.String("o"), e.stdout)
	if err != nil {
		return err
	}
	t0 := time.Now()
	if err := stages.BWT(ctx, b, opts, name, in, out); err != nil {
		abort()
		return err
	}
	if err := commit(); err != nil {
		return err
	}
	logf("transformed %s in blocks of %d bytes on %s in %v", name, blockSize, b.Name(), time.Since(t0).Round(time.Millisecond))
	return nil
}
