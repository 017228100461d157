package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int{"3.1G": 3_100_000_000, "150M": 150_000_000, "10k": 10_000, "5000": 5000, "1.5Gbp": 1_500_000_000, "16G": 16_000_000_000, "250Mb": 250_000_000, "0": 0} {
		if got, err := parseSize(in); err != nil || got != want {
			t.Errorf("%q: %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "G", "-1M", "1.2.3", "x", "1Q", "NaN"} {
		if _, err := parseSize(in); err == nil {
			t.Errorf("%q: no error", in)
		}
	}
}

// TestCommands runs the three commands as the CLI does, into files: each appears only when
// complete, and a second run with other thread counts writes the same bytes.
func TestCommands(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	run := func(threads string) [][]byte {
		steps := [][]string{
			{"genome", "--size", "600k", "--record-size", "250k", "--line", "80", "--seed", "7", "-t", threads, "-o", p("g.fa")},
			{"diverge", "-i", p("g.fa"), "--length", "300k", "--rate", "0.02", "-t", threads, "-o", p("d.fa"), "--ref-out", p("r.fa")},
			{"reads", "-i", p("g.fa"), "--n", "2k", "--len", "100", "-t", threads, "-o", p("reads.fq")},
		}
		for _, s := range steps {
			var err error
			switch s[0] {
			case "genome":
				err = genomeCmd(s[1:])
			case "diverge":
				err = divergeCmd(s[1:])
			case "reads":
				err = readsCmd(s[1:])
			}
			if err != nil {
				t.Fatalf("%v: %v", s, err)
			}
		}
		var outs [][]byte
		for _, f := range []string{"g.fa", "d.fa", "r.fa", "reads.fq"} {
			b, err := os.ReadFile(p(f))
			if err != nil {
				t.Fatal(err)
			}
			outs = append(outs, b)
		}
		return outs
	}
	first := run("1")
	if second := run("3"); !bytes.Equal(bytes.Join(first, nil), bytes.Join(second, nil)) {
		t.Fatal("-t 3 wrote other bytes than -t 1")
	}
	g, err := readFasta(p("g.fa"), 0)
	if err != nil || len(g.names) != 3 || len(g.seq) != 600_000 {
		t.Fatalf("genome: %v records, %d bases, %v", g.names, len(g.seq), err)
	}
	r, err := readFasta(p("r.fa"), 0)
	if err != nil || len(r.names) != 2 || !bytes.Equal(r.seq, g.seq[:300_000]) {
		t.Fatalf("--ref-out: not the genome's first 300 kbp (%v)", err)
	}
	if n := bytes.Count(first[3], []byte("\n")); n != 4*2000 {
		t.Errorf("reads: %d lines", n)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 4 {
		t.Errorf("%d files in the output folder, want 4 (no temporary files left)", len(entries))
	}
	// Usage errors and bad input.
	var ue usageError
	if err := genomeCmd([]string{"--size", "x"}); !errors.As(err, &ue) {
		t.Errorf("bad --size: %v", err)
	}
	if err := readsCmd([]string{"-i", p("missing.fa"), "-o", p("x.fq")}); err == nil {
		t.Error("missing input: no error")
	}
	if _, err := os.Stat(p("x.fq")); err == nil {
		t.Error("a failed run left its output")
	}
}
