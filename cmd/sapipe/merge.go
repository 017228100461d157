package main

import (
	"bufio"
	"context"
	"errors"

	"fmt"
	"io"
	"os"
	"strings"

	"github.com/urfave/cli/v2"
)

const mergeHelp = `Puts the outputs of sapipe mummer runs over the shards of sapipe split together, in the order
given, into what one run over all the shards' records prints. The result is the parts' bytes
back to back (cat gives the same bytes); merge adds the checks a workflow wants: every part must
be there and look complete (start with a '>' header line, end with a newline), and -o FILE
appears only when the whole result is written.

--list reads the part names, one per line, from FILE (- for stdin), after any named as arguments.

Examples:
   sapipe merge -o all.mums part.0000.mums part.0001.mums part.0002.mums
   sapipe merge -o all.mums --list parts.txt`

func mergeCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:        "merge",
		Usage:       "put shard outputs of sapipe mummer together, in order",
		UsageText:   "sapipe merge [-o FILE] [--list FILE] <part>...",
		Description: mergeHelp,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "o", Aliases: []string{"output"}, Usage: "write to `FILE` (complete or not at all) instead of stdout"},
			&cli.StringFlag{Name: "list", Usage: "read more part names, one per line, from `FILE`"},
		},
		OnUsageError: func(_ *cli.Context, err error, _ bool) error { return usageError{flagMessage(err)} },
		Action: func(c *cli.Context) error {
			parts := c.Args().Slice()
			if list := c.String("list"); list != "" {
				more, err := readPartList(list, e.stdin)
				if err != nil {
					return err
				}
				parts = append(parts, more...)
			}
			if len(parts) == 0 {
				return usageError{"no parts to merge"}
			}
			return runMerge(c.Context, e, parts, c.String("o"))
		},
	}
}

// readPartList returns the non-blank lines of a list file ("-" is stdin).
func readPartList(path string, stdin io.Reader) ([]string, error) {
	var r io.Reader = stdin
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return nil, fmt.Errorf("list %w", unwrapPathError(err))
		}
		defer f.Close()
		r = f
	} else if r == nil {
		r = os.Stdin
	}
	var names []string
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if s := strings.TrimSpace(sc.Text()); s != "" {
			names = append(names, s)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading list %s: %w", path, err)
	}
	return names, nil
}

func runMerge(ctx context.Context, e *env, parts []string, output string) error {
	for _, p := range parts {
		if _, err := os.Stat(p); err != nil {
			return fmt.Errorf("part %w", unwrapPathError(err))
		}
	}
	out, commit, abort, err := openOutput(output, e.stdout)
	if err != nil {
		return err
	}
	for i, p := range parts {
		if err := ctx.Err(); err != nil {
			abort()
			return err
		}
		if err := copyPart(out, p, i+1); err != nil {
			abort()
			var we errWriting
			if errors.As(err, &we) {
				name := output
				if name == "" || name == "-" {
					name = "stdout"
				}
				err = we.err
				var pe *os.PathError
				if errors.As(err, &pe) {
					err = pe.Err // the temporary file's name would only confuse
				}
				return fmt.Errorf("writing %s: %w", name, err)
			}
			return err
		}
	}
	return commit()
}

// errWriting marks a failure to write the output, as opposed to reading a part.
type errWriting struct{ err error }

func (e errWriting) Error() string { return e.err.Error() }
func (e errWriting) Unwrap() error { return e.err }

// copyPart appends part number n (1-based) to w, checking that it looks like complete mummer
// output.
func copyPart(w io.Writer, path string, n int) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("part %w", unwrapPathError(err))
	}
	defer f.Close()
	buf := make([]byte, 256<<10)
	var first, last byte
	total := 0
	for {
		k, rerr := f.Read(buf)
		if k > 0 {
			if total == 0 {
				first = buf[0]
			}
			last = buf[k-1]
			total += k
			if _, err := w.Write(buf[:k]); err != nil {
				return errWriting{err}
			}
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			return fmt.Errorf("part %d: %w", n, unwrapPathError(rerr))
		}
	}
	switch {
	case total == 0:
		return fmt.Errorf("part %d, %s: empty (mummer prints a header line for every query)", n, path)
	case first != '>':
		return fmt.Errorf("part %d, %s: does not start with a '>' header line: not sapipe mummer output", n, path)
	case last != '\n':
		return fmt.Errorf("part %d, %s: does not end with a newline: incomplete", n, path)
	}
	return nil
}
