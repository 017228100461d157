package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/klauspost/compress/zstd"
)

func TestCommandLineErrors(t *testing.T) {
	dir := t.TempDir()
	ref := filepath.Join(dir, "ref.fa")
	qry := filepath.Join(dir, "qry.fa")
	os.WriteFile(ref, []byte(">r\nacgtacgtacgtaaaccc\n"), 0o644)
	os.WriteFile(qry, []byte(">q\nacgtacgtaaa\n"), 0o644)
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"-x", ref, qry}, `illegal option "-x"`},
		{[]string{"-l", "0", ref, qry}, "argument 0 for option -l is not a positive integer"},
		{[]string{"-l", "abc", ref, qry}, "argument abc for option -l is not a positive integer"},
		{[]string{"-l", "3", "-l", "4", ref, qry}, `option "-l" already set`},
		{[]string{"-mum", "-mum", ref, qry}, `option "-mum" already set`},
		{[]string{"-mum", "-maxmatch", ref, qry}, "option -mum and option -maxmatch exclude each other"},
		{[]string{"-mumreference", "-mum", ref, qry}, "option -mum and option -mumreference exclude each other"},
		{[]string{"-b", "-r", ref, qry}, "option -b and option -r exclude each other"},
		{[]string{"-c", ref, qry}, "option -c requires either option -b or -r"},
		{[]string{ref}, "missing file arguments"},
		{[]string{}, "missing file arguments"},
		{[]string{ref, filepath.Join(dir, "nosuch.fa")}, "nosuch.fa"},
		{[]string{filepath.Join(dir, "noref.fa"), qry}, "noref.fa"},
	} {
		out, stderr, st := runSapipe(t, nil, append([]string{"mummer"}, c.args...)...)
		if st != 1 || len(out) != 0 {
			t.Errorf("%v: status %d, stdout %q; want 1 and nothing", c.args, st, out)
		}
		if !bytes.HasPrefix(stderr, []byte("sapipe: ")) || !bytes.Contains(stderr, []byte(c.msg)) || bytes.Count(stderr, []byte("\n")) != 1 {
			t.Errorf("%v: stderr %q, want one line with %q", c.args, stderr, c.msg)
		}
	}
	// mummer accepts -mumreference with -mumcand: they are the same mode.
	if _, stderr, st := runSapipe(t, nil, "mummer", "-mumreference", "-mumcand", "-l", "3", ref, qry); st != 0 {
		t.Errorf("-mumreference -mumcand: status %d: %s", st, stderr)
	}
}

// TestBadRecord: a malformed query record gives one line naming the file and the record, and -o
// leaves no file behind.
func TestBadRecord(t *testing.T) {
	dir := t.TempDir()
	ref := filepath.Join(dir, "ref.fa")
	qry := filepath.Join(dir, "bad.fq")
	out := filepath.Join(dir, "out.mums")
	os.WriteFile(ref, []byte(">r\nacgtacgtacgtaaaccc\n"), 0o644)
	os.WriteFile(qry, []byte("@q1\nacgtacgt\n+\nIIIIIIII\n@q2\nacgtacgtaa\n+\nIII\n"), 0o644)
	_, stderr, st := runSapipe(t, nil, "mummer", "-l", "3", "-o", out, ref, qry)
	if st != 1 || !bytes.Contains(stderr, []byte("bad.fq")) || !bytes.Contains(stderr, []byte("2")) || bytes.Count(stderr, []byte("\n")) != 1 {
		t.Errorf("status %d, stderr %q", st, stderr)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 2 {
		t.Errorf("output left behind: %v", ents)
	}
	// The same run with a good query writes the file.
	os.WriteFile(qry, []byte("@q1\nacgtacgt\n+\nIIIIIIII\n"), 0o644)
	if _, stderr, st := runSapipe(t, nil, "mummer", "-l", "3", "-o", out, ref, qry); st != 0 {
		t.Fatalf("status %d: %s", st, stderr)
	}
	if b, _ := os.ReadFile(out); !bytes.HasPrefix(b, []byte("> q1\n")) {
		t.Errorf("output file holds %q", b)
	}
	// Run again over it: the file is replaced, and the old one (moved aside, removed on another
	// goroutine) is gone when the run returns.
	os.WriteFile(qry, []byte("@q2\nacgtacgt\n+\nIIIIIIII\n"), 0o644)
	if _, stderr, st := runSapipe(t, nil, "mummer", "-l", "3", "-o", out, ref, qry); st != 0 {
		t.Fatalf("status %d: %s", st, stderr)
	}
	if b, _ := os.ReadFile(out); !bytes.HasPrefix(b, []byte("> q2\n")) {
		t.Errorf("output file holds %q after a second run", b)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 3 {
		t.Errorf("files left beside the output: %v", ents)
	}
}

type epipeWriter struct{}

func (epipeWriter) Write([]byte) (int, error) { return 0, syscall.EPIPE }

// TestBrokenPipe: a reader that goes away (`| head`) ends the run quietly.
func TestBrokenPipe(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(5, 6))
	randomCase(t, rng, dir, 3000, 3000)
	var e bytes.Buffer
	st := run(context.Background(), []string{"sapipe", "mummer", "-maxmatch", "-l", "3", filepath.Join(dir, "ref.fa"), filepath.Join(dir, "qry.fa")}, nil, epipeWriter{}, &e)
	if st != 141 || e.Len() != 0 {
		t.Errorf("status %d, stderr %q; want 141 and nothing", st, e.String())
	}
}

// TestInputForms: FASTQ, compressed files and stdin give the output of the plain FASTA file.
func TestInputForms(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(7, 8))
	_, qry := randomCase(t, rng, dir, 5000, 400)
	ref, fa := filepath.Join(dir, "ref.fa"), filepath.Join(dir, "qry.fa")
	want, stderr, st := runSapipe(t, nil, "mummer", "-maxmatch", "-b", "-l", "10", ref, fa)
	if st != 0 || len(want) == 0 {
		t.Fatalf("status %d: %s", st, stderr)
	}
	var fq bytes.Buffer
	for _, r := range qry {
		fmt.Fprintf(&fq, "@%s desc\n%s\n+\n%s\n", r.name, r.seq, strings.Repeat("I", len(r.seq)))
	}
	plain, _ := os.ReadFile(fa)
	var gz, zs bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(fq.Bytes())
	zw.Close()
	ze, _ := zstd.NewWriter(&zs)
	ze.Write(plain)
	ze.Close()
	bw, stderr, st := runSapipe(t, fq.Bytes(), "compress", "-q", "-1")
	if st != 0 {
		t.Fatalf("compress: status %d: %s", st, stderr)
	}
	files := map[string][]byte{"q.fq": fq.Bytes(), "q.fq.gz": gz.Bytes(), "q.fa.zst": zs.Bytes(), "q.noext": gz.Bytes(), "q.fq.bwz": bw}
	for name, data := range files {
		p := filepath.Join(dir, name)
		os.WriteFile(p, data, 0o644)
		got, stderr, st := runSapipe(t, nil, "mummer", "-maxmatch", "-b", "-l", "10", ref, p)
		if st != 0 || !bytes.Equal(got, want) {
			t.Errorf("%s: status %d (%s), output differs: %s", name, st, stderr, firstDiff(got, want))
		}
	}
	for _, in := range [][]byte{gz.Bytes(), bw} {
		got, stderr, st := runSapipe(t, in, "mummer", "-maxmatch", "-b", "-l", "10", ref, "-")
		if st != 0 || !bytes.Equal(got, want) {
			t.Errorf("stdin: status %d (%s), output differs: %s", st, stderr, firstDiff(got, want))
		}
	}
}

// TestInvariance: output is the same for every page size, batch size and thread count.
func TestInvariance(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for round := range 4 {
		dir := t.TempDir()
		randomCase(t, rng, dir, 20000, 3000)
		for _, mode := range []string{"-maxmatch", "-mum", "-mumreference"} {
			base := []string{"mummer", mode, "-b", "-l", fmt.Sprint(10 + round*3), filepath.Join(dir, "ref.fa"), filepath.Join(dir, "qry.fa")}
			want, stderr, st := runSapipe(t, nil, base...)
			if st != 0 {
				t.Fatalf("status %d: %s", st, stderr)
			}
			for _, v := range [][]string{
				{"--page-size", "200"}, {"--page-size", "333", "-t", "3"}, {"--page-size", "5000"},
				{"--batch-size", "1"}, {"--batch-size", "97", "-t", "4"}, {"-t", "1"}, {"-t", "8", "--batch-size", "1000", "--page-size", "1999"},
				{"--gpu-memory", "1M", "--page-size", "4000"},
			} {
				args := append(append([]string{"mummer"}, v...), base[1:]...)
				got, stderr, st := runSapipe(t, nil, args...)
				if st != 0 || !bytes.Equal(got, want) {
					t.Fatalf("%v: status %d (%s): %s", args, st, stderr, firstDiff(got, want))
				}
			}
		}
	}
}

// TestGPUMemoryOption: --gpu-memory takes a size, and anything else is one line's usage error.
func TestGPUMemoryOption(t *testing.T) {
	dir := t.TempDir()
	ref := filepath.Join(dir, "ref.fa")
	os.WriteFile(ref, []byte(">r\nacgtacgtacgtaaacccgggtttacgatcgatcga\n"), 0o644)
	for _, v := range []string{"0", "-1", "12x", "1T", "G", "99999999999G"} {
		out, stderr, st := runSapipe(t, nil, "mummer", "--gpu-memory", v, ref, ref)
		if st != 1 || len(out) != 0 || !strings.HasPrefix(string(stderr), "sapipe: --gpu-memory "+v+": ") || bytes.Count(stderr, []byte("\n")) != 1 {
			t.Errorf("--gpu-memory %s: status %d, stderr %q", v, st, stderr)
		}
	}
	want, _, _ := runSapipe(t, nil, "mummer", "-maxmatch", "-l", "5", ref, ref)
	for _, v := range []string{"64M", "16G", "1048576"} {
		got, stderr, st := runSapipe(t, nil, "mummer", "-maxmatch", "-l", "5", "--gpu-memory", v, ref, ref)
		if st != 0 || len(stderr) != 0 || len(want) == 0 || !bytes.Equal(got, want) {
			t.Errorf("--gpu-memory %s: status %d, stderr %q, output differs: %v", v, st, stderr, !bytes.Equal(got, want))
		}
	}
	// index: the same refusals, and the same file whatever the limit.
	for _, v := range []string{"0", "-1", "12x", "1T", "G"} {
		out, stderr, st := runSapipe(t, nil, "index", "--gpu-memory", v, "-o", filepath.Join(dir, "x.sai"), ref)
		if st != 1 || len(out) != 0 || !strings.HasPrefix(string(stderr), "sapipe: --gpu-memory "+v+": ") || bytes.Count(stderr, []byte("\n")) != 1 {
			t.Errorf("index --gpu-memory %s: status %d, stderr %q", v, st, stderr)
		}
	}
	plain := filepath.Join(dir, "plain.sai")
	if _, stderr, st := runSapipe(t, nil, "index", "-o", plain, ref); st != 0 {
		t.Fatalf("index: status %d, %q", st, stderr)
	}
	wantIx, _ := os.ReadFile(plain)
	for _, v := range []string{"64M", "16G"} {
		out := filepath.Join(dir, "limited.sai")
		_, stderr, st := runSapipe(t, nil, "index", "--gpu-memory", v, "-o", out, ref)
		got, _ := os.ReadFile(out)
		if st != 0 || len(stderr) != 0 || len(wantIx) == 0 || !bytes.Equal(got, wantIx) {
			t.Errorf("index --gpu-memory %s: status %d, stderr %q, file differs: %v", v, st, stderr, !bytes.Equal(got, wantIx))
		}
	}
}

// FuzzArgs: no command line makes the parser panic, and every failure is one line on stderr.
func FuzzArgs(f *testing.F) {
	for _, s := range []string{"-mum -b -l 20", "-maxmatch -l 0", "-l", "-x -y", "-c", "--page-size -1", "-l 3 -l 4", "-h", "-t 0 -b -r", "--gpu-memory 12x"} {
		f.Add(s)
	}
	dir := f.TempDir()
	ref := filepath.Join(dir, "ref.fa")
	os.WriteFile(ref, []byte(">r\nacgtacgtacgtaaaccc\n"), 0o644)
	f.Fuzz(func(t *testing.T, s string) {
		args := append([]string{"mummer"}, strings.Fields(s)...)
		args = append(args, ref, ref)
		for _, a := range args {
			if strings.HasPrefix(a, "-o") || a == "--output" {
				return // would write files
			}
		}
		out, stderr, st := runSapipe(t, nil, args...)
		switch st {
		case 0:
			if len(stderr) != 0 && !bytes.Contains(s2b(s), []byte("-v")) {
				t.Errorf("%q: success with stderr %q", s, stderr)
			}
		case 1:
			if len(out) != 0 || bytes.Count(stderr, []byte("\n")) != 1 || !bytes.HasPrefix(stderr, []byte("sapipe: ")) {
				t.Errorf("%q: failure with stdout %q, stderr %q", s, out, stderr)
			}
		default:
			t.Errorf("%q: status %d", s, st)
		}
	})
}

func s2b(s string) []byte { return []byte(s) }

// TestFilesNamedHelp: a first argument named like cli's help command (h, help) is a file.
func TestFilesNamedHelp(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"h", "help"} {
		ref := filepath.Join(dir, name)
		if err := os.WriteFile(ref, []byte(">r\nacgtacgtacgtaaaccc\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Chdir(dir)
		want, _, _ := runSapipe(t, nil, "mummer", "-l", "5", ref, ref)
		for _, args := range [][]string{{"mummer", "-l", "5", name, name}, {"count", "-i", name, name}, {"sa", name}} {
			out, stderr, st := runSapipe(t, nil, args...)
			if st != 0 || len(stderr) != 0 || len(out) == 0 || args[0] == "mummer" && !bytes.Equal(out, want) {
				t.Errorf("%q: status %d, stderr %q, %d bytes out", args, st, stderr, len(out))
			}
		}
	}
}
