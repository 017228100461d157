package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/sapipe/sapipe/formats"
	"github.com/sapipe/sapipe/stages"
)

const splitHelp = `Cuts a FASTA or FASTQ read set (plain or compressed, from a file or stdin) into shards, in
order and byte for byte, so that each shard can go to its own job. Running sapipe mummer on each
shard and putting the outputs together in shard order (sapipe merge, or cat) gives exactly the
output of one run over the whole input. The shards' decompressed bytes put together are the
input's.

One of:
   -n N           exactly N shards with about equal numbers of bases (the input must be a
                  file: it is read twice)
   --records N    N records per shard, the last shard fewer
   --bytes SIZE   shards of at most SIZE input bytes (after decompression) unless one record is
                  larger; SIZE may end in k, M or G (1024, 1024^2, 1024^3)

An empty FASTA record goes to the shard of the record after it (or before it, at the end), since
mummer refuses a file whose only record is empty; shards may then hold a few more records.

-o names the shards: a template with one printf number (%d, or %04d for four digits with
leading zeros; %% for a percent sign), 0 for the first shard. Its ending picks the compression:
.gz, .zst, .xz, .bz2, or none. Shards appear only when the whole input has been split; on an
error no shard is left behind. --list also writes the shard names, in order, one per line.

Examples:
   sapipe split -n 8 -o shards/reads.%04d.fq.gz reads.fq.gz
   zcat reads.fa.gz | sapipe split --records 100000 -o part-%03d.fa.zst --list parts.txt -`

// shardTemplate is a parsed -o template: prefix, a number of width digits, suffix.
type shardTemplate struct {
	prefix, suffix string
	width          int
	zero           bool
}

// parseShardTemplate parses an -o template of sapipe split.
func parseShardTemplate(s string) (shardTemplate, error) {
	var t shardTemplate
	var b strings.Builder
	verbs := 0
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			b.WriteByte(s[i])
			continue
		}
		j := i + 1
		if j < len(s) && s[j] == '%' {
			b.WriteByte('%')
			i = j
			continue
		}
		zero := j < len(s) && s[j] == '0'
		if zero {
			j++
		}
		k := j
		for k < len(s) && s[k] >= '0' && s[k] <= '9' {
			k++
		}
		if k == len(s) || s[k] != 'd' {
			return t, usageError{fmt.Sprintf("-o %s: want one %%d or %%0Nd for the shard number (and %%%% for a percent sign)", s)}
		}
		if k > j {
			w, err := strconv.Atoi(s[j:k])
			if err != nil || w > 20 {
				return t, usageError{fmt.Sprintf("-o %s: number width %s is too large", s, s[j:k])}
			}
			t.width = w
		}
		verbs++
		if verbs > 1 {
			return t, usageError{fmt.Sprintf("-o %s: more than one number in the template", s)}
		}
		t.zero = zero
		t.prefix = b.String()
		b.Reset()
		i = k
	}
	if verbs == 0 {
		return t, usageError{fmt.Sprintf("-o %s: the template needs a shard number such as %%04d", s)}
	}
	t.suffix = b.String()
	return t, nil
}

// name returns the name of shard i.
func (t shardTemplate) name(i int) string {
	n := strconv.Itoa(i)
	if pad := t.width - len(n); pad > 0 {
		fill := " "
		if t.zero {
			fill = "0"
		}
		n = strings.Repeat(fill, pad) + n
	}
	return t.prefix + n + t.suffix
}

// parseShardSize parses a --bytes value: a positive integer with an optional k, M or G (powers of 1024).
func parseShardSize(s string) (int64, error) {
	v, ok := parseSuffixedSize(s, 1<<62)
	if !ok {
		return 0, usageError{fmt.Sprintf("--bytes %s: want a positive size such as 500M", s)}
	}
	return v, nil
}

func splitCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:        "split",
		Usage:       "cut a read set into shards that merge back to one run's output",
		UsageText:   "sapipe split (-n N | --records N | --bytes SIZE) -o TEMPLATE [--list FILE] <input>",
		Description: splitHelp,
		Flags: []cli.Flag{
			&cli.IntFlag{Name: "n", Aliases: []string{"shards"}, Usage: "exactly `N` shards, about equal in bases"},
			&cli.IntFlag{Name: "records", Usage: "`N` records per shard"},
			&cli.StringFlag{Name: "bytes", Usage: "at most `SIZE` input bytes per shard"},
			&cli.StringFlag{Name: "o", Aliases: []string{"output"}, Usage: "shard names: a `TEMPLATE` with %04d for the shard number"},
			&cli.StringFlag{Name: "list", Usage: "write the shard names in order to `FILE` (- for stdout)"},
			threadsFlag("shards compressed at once"),
		},
		OnUsageError: func(_ *cli.Context, err error, _ bool) error { return usageError{flagMessage(err)} },
		Action: func(c *cli.Context) error {
			var opts stages.SplitOptions
			modes := 0
			if c.IsSet("n") {
				opts.Shards, modes = c.Int("n"), modes+1
				if opts.Shards < 1 {
					return usageError{"-n: want a positive number of shards"}
				}
			}
			if c.IsSet("records") {
				opts.Records, modes = c.Int("records"), modes+1
				if opts.Records < 1 {
					return usageError{"--records: want a positive number of records"}
				}
			}
			if c.IsSet("bytes") {
				v, err := parseShardSize(c.String("bytes"))
				if err != nil {
					return err
				}
				opts.Bytes, modes = v, modes+1
			}
			if modes != 1 {
				return usageError{"want one of -n, --records and --bytes"}
			}
			if opts.Writers = c.Int("t"); opts.Writers < 1 {
				return usageError{"-t: want a positive number"}
			}
			if !c.IsSet("o") {
				return usageError{"missing -o TEMPLATE (the shard names, such as shards/reads.%04d.fq.gz)"}
			}
			tmpl, err := parseShardTemplate(c.String("o"))
			if err != nil {
				return err
			}
			if c.NArg() != 1 {
				return usageError{"want one input file (- for stdin)"}
			}
			return runSplit(c.Context, e, c.Args().First(), opts, tmpl, c.String("list"))
		},
	}
}

// pendingShard is a shard written under a temporary name, renamed when the split is complete.
type pendingShard struct {
	tmp, final string
}

func runSplit(ctx context.Context, e *env, input string, opts stages.SplitOptions, tmpl shardTemplate, list string) error {
	if input != "-" {
		if _, err := os.Stat(input); err != nil {
			return fmt.Errorf("input %w", unwrapPathError(err))
		}
	}
	kind := formats.CompressionOf(tmpl.suffix)
	var shards []pendingShard
	removeAll := func() {
		for _, s := range shards {
			os.Remove(s.tmp)
		}
	}
	create := func(i int) (io.WriteCloser, error) {
		final := tmpl.name(i)
		f, err := createShardTemp(final)
		if err != nil {
			return nil, err
		}
		shards = append(shards, pendingShard{tmp: f.Name(), final: final})
		bw := bufio.NewWriterSize(f, 256<<10)
		zw, err := formats.NewCompressor(bw, kind)
		if err != nil {
			f.Close()
			return nil, err
		}
		return &shardFile{name: final, f: f, bw: bw, zw: zw}, nil
	}
	n, err := stages.Split(ctx, input, e.stdin, opts, create)
	if err != nil {
		removeAll()
		return err
	}
	var lw io.Writer = io.Discard
	commitList, abortList := func() error { return nil }, func() {}
	if list != "" {
		if lw, commitList, abortList, err = openOutput(list, e.stdout); err != nil {
			removeAll()
			return err
		}
	}
	for i := range n {
		if _, err := fmt.Fprintln(lw, shards[i].final); err != nil {
			abortList()
			removeAll()
			return fmt.Errorf("writing %s: %w", list, err)
		}
	}
	for i, s := range shards {
		if err := os.Rename(s.tmp, s.final); err != nil {
			for _, done := range shards[:i] {
				os.Remove(done.final)
			}
			removeAll()
			abortList()
			return fmt.Errorf("output %w", unwrapPathError(err))
		}
	}
	if err := commitList(); err != nil {
		for _, s := range shards {
			os.Remove(s.final)
		}
		return err
	}
	return nil
}

// createShardTemp creates a file beside path, under a hidden temporary name, for renaming to path.
func createShardTemp(path string) (*os.File, error) {
	dir, base := ".", path
	if i := strings.LastIndexByte(path, '/'); i >= 0 {
		dir, base = path[:i+1], path[i+1:]
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp*")
	if err != nil {
		return nil, fmt.Errorf("output %w", unwrapPathError(err))
	}
	if err := f.Chmod(0o644); err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, err
	}
	return f, nil
}

// shardFile is one shard's temporary file with its compressor. Errors name the shard's final
// name, not the temporary one.
type shardFile struct {
	name string
	f    *os.File
	bw   *bufio.Writer
	zw   io.WriteCloser
}

func (s *shardFile) Write(p []byte) (int, error) {
	n, err := s.zw.Write(p)
	if err != nil {
		return n, s.fail(err)
	}
	return n, nil
}

func (s *shardFile) fail(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		err = pe.Err
	}
	return fmt.Errorf("writing %s: %w", s.name, err)
}

func (s *shardFile) Close() error {
	err := s.zw.Close()
	if err == nil {
		err = s.bw.Flush()
	}
	if err == nil {
		err = s.f.Sync()
	}
	if e := s.f.Close(); err == nil {
		err = e
	}
	if err != nil {
		return s.fail(err)
	}
	return nil
}
