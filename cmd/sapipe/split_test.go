package main

import (
	"bytes"
	"debug/elf"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/sapipe/sapipe/formats"
)

// listDir returns the names in dir, sorted.
func listDir(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

// decompressed reads a file through formats.RawReader's decompression: its records' bytes and
// trailer.
func decompressed(t *testing.T, path string) []byte {
	t.Helper()
	r, err := formats.OpenRaw(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var b bytes.Buffer
	for {
		rec, err := r.Next()
		if err != nil {
			b.Write(r.Trailer())
			return b.Bytes()
		}
		b.Write(rec.Raw)
	}
}

// splitMummerMerge splits qry with splitArgs, runs mummer with args on every shard and merges the
// outputs; it returns the merged output and the shard names.
func splitMummerMerge(t *testing.T, dir, ref, qry string, splitArgs, args []string) ([]byte, []string) {
	t.Helper()
	list := filepath.Join(dir, "shards.txt")
	a := append(append([]string{"split"}, splitArgs...), "--list", list, qry)
	if _, stderr, st := runSapipe(t, nil, a...); st != 0 {
		t.Fatalf("%v: status %d: %s", a, st, stderr)
	}
	shards := strings.Fields(string(must(os.ReadFile(list))))
	var parts []string
	for i, s := range shards {
		part := filepath.Join(dir, fmt.Sprintf("part%d.mums", i))
		m := append(append([]string{"mummer"}, args...), "-o", part, ref, s)
		if _, stderr, st := runSapipe(t, nil, m...); st != 0 {
			t.Fatalf("%v: status %d: %s", m, st, stderr)
		}
		parts = append(parts, part)
	}
	merged := filepath.Join(dir, "merged.mums")
	if _, stderr, st := runSapipe(t, nil, append([]string{"merge", "-o", merged}, parts...)...); st != 0 {
		t.Fatalf("merge: status %d: %s", st, stderr)
	}
	return must(os.ReadFile(merged)), shards
}

// TestSplitLambda: the bundled lambda reads, cut every way and in every compression, merge into
// the output of one run, byte for byte; the shards put together are the reads.
func TestSplitLambda(t *testing.T) {
	data, _ := filepath.Abs("../../testdata/mummer/lambda-reads")
	ref, qry := filepath.Join(data, "ref.fa"), filepath.Join(data, "reads.fa")
	args := strings.Fields(string(must(os.ReadFile(filepath.Join(data, "args")))))
	args = args[:len(args)-2] // the file names
	want, stderr, st := runSapipe(t, nil, append(append([]string{"mummer"}, args...), ref, qry)...)
	if st != 0 {
		t.Fatalf("one run: %s", stderr)
	}
	reads := must(os.ReadFile(qry))
	for _, c := range []struct {
		split []string
		count int
	}{
		{[]string{"-n", "4", "-o", "s.%04d.fa.gz"}, 4},
		{[]string{"-n", "1", "-o", "s.%d.fa"}, 1},
		{[]string{"-n", "400", "-o", "s.%03d.fa.zst"}, 400},
		{[]string{"--records", "37", "-t", "1", "-o", "s.%02d.fa.xz"}, 11},
		{[]string{"--bytes", "5k", "-o", "s%%.%d.fa.bz2"}, 14},
		{[]string{"-n", "3", "-o", "s.%d.fa.bwz"}, 3},
	} {
		dir := t.TempDir()
		for i := range c.split {
			if strings.HasPrefix(c.split[i], "s") && strings.Contains(c.split[i], "%") {
				c.split[i] = filepath.Join(dir, c.split[i])
			}
		}
		got, shards := splitMummerMerge(t, dir, ref, qry, c.split, args)
		if len(shards) != c.count {
			t.Errorf("%v: %d shards, want %d", c.split, len(shards), c.count)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%v: merged output differs from one run: %s", c.split, firstDiff(got, want))
		}
		var all []byte
		for _, s := range shards {
			b := must(os.ReadFile(s))
			if kind := formats.CompressionOf(s); kind != "" && bytes.HasPrefix(b, []byte(">")) {
				t.Errorf("%s is not compressed", s)
			}
			all = append(all, decompressed(t, s)...)
		}
		if !bytes.Equal(all, reads) {
			t.Errorf("%v: the shards put together are not the reads", c.split)
		}
		if strings.Contains(c.split[len(c.split)-1], "%%") && !strings.Contains(shards[0], "s%.0.fa") {
			t.Errorf("%%%% gave %s", shards[0])
		}
	}
}

// TestSplitRandom: random read sets (FASTA with empty records and odd layouts, FASTQ, from stdin
// too), cut at random, give the output of one run for random mummer options.
func TestSplitRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	n := 40
	if testing.Short() {
		n = 10
	}
	for i := range n {
		dir := t.TempDir()
		refRecs, _ := randomCase(t, rng, dir, 3000, 10)
		var q []fastaRec
		for j := range 1 + rng.IntN(40) {
			l := rng.IntN(300)
			if rng.IntN(5) == 0 {
				l = 0
			}
			q = append(q, fastaRec{fmt.Sprintf("q%d", j), genQuery(rng, refRecs, l)})
		}
		qry := filepath.Join(dir, "qry.fa")
		if i%3 == 2 {
			var b strings.Builder
			for _, r := range q {
				fmt.Fprintf(&b, "@%s\n%s\n+\n%s\n", r.name, r.seq, strings.Repeat("#", len(r.seq)))
			}
			os.WriteFile(qry, []byte(b.String()), 0o644)
		} else {
			writeFasta(t, qry, q, 1+rng.IntN(70), rng.IntN(4) == 0)
		}
		ref := filepath.Join(dir, "ref.fa")
		args := randomOpts(rng).args()
		want, stderr, st := runSapipe(t, nil, append(append([]string{"mummer"}, args...), ref, qry)...)
		if st != 0 {
			if len(q) == 1 && q[0].seq == "" {
				continue // refused, as by mummer
			}
			t.Fatalf("case %d: one run: %s", i, stderr)
		}
		units := 0 // what -n can cut between: nonempty FASTA records, or FASTQ records
		for _, r := range q {
			if r.seq != "" || i%3 == 2 {
				units++
			}
		}
		var split []string
		switch rng.IntN(3) {
		case 0:
			split = []string{"-n", fmt.Sprint(1 + rng.IntN(max(1, min(units, 5))))}
		case 1:
			split = []string{"--records", fmt.Sprint(1 + rng.IntN(10))}
		default:
			split = []string{"--bytes", fmt.Sprint(1 + rng.IntN(3000))}
		}
		split = append(split, "-o", filepath.Join(dir, "shard.%d"+[]string{".fa", ".gz", ".zst"}[rng.IntN(3)]))
		got, shards := splitMummerMerge(t, dir, ref, qry, split, args)
		if !bytes.Equal(got, want) {
			t.Fatalf("case %d (%v, %d shards, mummer %v): merged output differs: %s", i, split, len(shards), args, firstDiff(got, want))
		}
	}
}

func TestSplitStdinAndList(t *testing.T) {
	dir := t.TempDir()
	in := []byte(">a\nACGT\n>b\nGG\n>c\nTTT\n")
	out, stderr, st := runSapipe(t, in, "split", "--records", "2", "-o", filepath.Join(dir, "x%d.fa"), "--list", "-", "-")
	if st != 0 {
		t.Fatalf("status %d: %s", st, stderr)
	}
	want := filepath.Join(dir, "x0.fa") + "\n" + filepath.Join(dir, "x1.fa") + "\n"
	if string(out) != want {
		t.Errorf("list %q, want %q", out, want)
	}
	if got := string(must(os.ReadFile(filepath.Join(dir, "x1.fa")))); got != ">c\nTTT\n" {
		t.Errorf("second shard %q", got)
	}
	if len(stderr) != 0 {
		t.Errorf("stderr %q", stderr)
	}
}

// TestSplitErrors: one line on stderr, status 1, and no shard (nor temporary file) left behind.
func TestSplitErrors(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.fa")
	os.WriteFile(good, []byte(">a\nAC\n>b\nGT\n>c\nTT\n"), 0o644)
	var bad strings.Builder
	for i := range 3000 {
		fmt.Fprintf(&bad, "@r%d\nACGT\n+\nIIII\n", i)
	}
	bad.WriteString("@last\nACGT\n+\nII\n")
	badPath := filepath.Join(dir, "bad.fq")
	os.WriteFile(badPath, []byte(bad.String()), 0o644)
	out := filepath.Join(dir, "out")
	os.Mkdir(out, 0o755)
	tmpl := filepath.Join(out, "s%d.fa.gz")
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"-n", "2", good}, "missing -o"},
		{[]string{"-o", tmpl, good}, "want one of -n, --records and --bytes"},
		{[]string{"-n", "2", "--records", "3", "-o", tmpl, good}, "want one of"},
		{[]string{"-n", "0", "-o", tmpl, good}, "-n: want a positive"},
		{[]string{"--bytes", "12x", "-o", tmpl, good}, "--bytes 12x"},
		{[]string{"-n", "2", "-o", filepath.Join(out, "s.fa"), good}, "needs a shard number"},
		{[]string{"-n", "2", "-o", filepath.Join(out, "s%d%d.fa"), good}, "more than one number"},
		{[]string{"-n", "2", "-o", filepath.Join(out, "s%s.fa"), good}, "want one %d"},
		{[]string{"-n", "2", "-o", tmpl}, "want one input file"},
		{[]string{"-n", "2", "-o", tmpl, good, good}, "want one input file"},
		{[]string{"-n", "2", "-o", tmpl, filepath.Join(dir, "nosuch.fa")}, "nosuch.fa"},
		{[]string{"-n", "2", "-o", tmpl, "-"}, "stdin: -n needs a file"},
		{[]string{"-n", "4", "-o", tmpl, good}, "too few for 4 shards"},
		{[]string{"-n", "2", "-o", filepath.Join(dir, "nodir", "s%d.fa"), good}, "nodir"},
		{[]string{"--records", "100", "-o", tmpl, badPath}, "bad.fq: record 3001 (line 12004): truncated record: quality length 2 != sequence length 4"},
		{[]string{"-x", "-o", tmpl, good}, `illegal option "-x"`},
	} {
		stdout, stderr, st := runSapipe(t, nil, append([]string{"split"}, c.args...)...)
		if st != 1 || len(stdout) != 0 || !bytes.HasPrefix(stderr, []byte("sapipe: ")) || !bytes.Contains(stderr, []byte(c.msg)) || bytes.Count(stderr, []byte("\n")) != 1 {
			t.Errorf("%v: status %d, stdout %q, stderr %q; want 1 and one line with %q", c.args, st, stdout, stderr, c.msg)
		}
		if names := listDir(t, out); len(names) != 0 {
			t.Errorf("%v: left behind %v", c.args, names)
		}
	}
}

func TestMerge(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(s), 0o644)
		return p
	}
	a := write("a.mums", "> q1\n       1         1        20\n")
	b := write("b.mums", "> q2\n> q2 Reverse\n")
	out := filepath.Join(dir, "out.mums")
	if _, stderr, st := runSapipe(t, nil, "merge", "-o", out, a, b); st != 0 {
		t.Fatalf("status %d: %s", st, stderr)
	}
	want := "> q1\n       1         1        20\n> q2\n> q2 Reverse\n"
	if got := string(must(os.ReadFile(out))); got != want {
		t.Errorf("merged %q", got)
	}
	list := write("list.txt", b+"\n\n"+a+"\n")
	got, stderr, st := runSapipe(t, nil, "merge", "--list", list)
	if st != 0 || string(got) != "> q2\n> q2 Reverse\n"+"> q1\n       1         1        20\n" {
		t.Errorf("--list: status %d, %q, %s", st, got, stderr)
	}
	got, stderr, st = runSapipe(t, []byte(a+"\n"), "merge", "--list", "-", b)
	if st != 0 || string(got) != "> q2\n> q2 Reverse\n"+"> q1\n       1         1        20\n" {
		t.Errorf("--list -: status %d, %q, %s", st, got, stderr)
	}
	os.Remove(out)
	for _, c := range []struct {
		parts []string
		msg   string
	}{
		{[]string{a, filepath.Join(dir, "nosuch.mums")}, "nosuch.mums"},
		{[]string{a, write("empty.mums", "")}, "part 2, " + filepath.Join(dir, "empty.mums") + ": empty"},
		{[]string{a, write("reads.fq", "@r\nACGT\n+\nIIII\n")}, "does not start with a '>'"},
		{[]string{a, write("cut.mums", "> q3\n       1    ")}, "part 2, " + filepath.Join(dir, "cut.mums") + ": does not end with a newline"},
		{nil, "no parts to merge"},
		{[]string{"--list", filepath.Join(dir, "nolist")}, "nolist"},
	} {
		stdout, stderr, st := runSapipe(t, nil, append([]string{"merge", "-o", out}, c.parts...)...)
		if st != 1 || len(stdout) != 0 || !bytes.Contains(stderr, []byte(c.msg)) || bytes.Count(stderr, []byte("\n")) != 1 {
			t.Errorf("%v: status %d, stderr %q; want %q", c.parts, st, stderr, c.msg)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%v: output left behind", c.parts)
		}
		for _, n := range listDir(t, dir) {
			if strings.Contains(n, ".tmp") {
				t.Errorf("%v: temporary file %s left behind", c.parts, n)
			}
		}
	}
	// A closed stdout ends the merge quietly.
	if st := run(t.Context(), []string{"sapipe", "merge", a, b}, nil, epipeWriter{}, &bytes.Buffer{}); st != 141 {
		t.Errorf("broken pipe: status %d", st)
	}
}

func TestShardTemplate(t *testing.T) {
	for _, c := range []struct {
		tmpl string
		i    int
		want string
	}{
		{"s%d.fa", 7, "s7.fa"},
		{"dir/r.%04d.fq.gz", 12, "dir/r.0012.fq.gz"},
		{"%03d", 12345, "12345"},
		{"a%%b%2d%%", 3, "a%b 3%"},
		{"%0d-x", 5, "5-x"},
	} {
		tm, err := parseShardTemplate(c.tmpl)
		if err != nil {
			t.Errorf("%s: %v", c.tmpl, err)
			continue
		}
		if got := tm.name(c.i); got != c.want {
			t.Errorf("%s(%d) = %q; want %q", c.tmpl, c.i, got, c.want)
		}
		if got, want := tm.name(c.i), fmt.Sprintf(c.tmpl, c.i); got != want {
			t.Errorf("%s(%d) = %q; printf says %q", c.tmpl, c.i, got, want)
		}
	}
	for _, bad := range []string{"", "x", "%", "%s", "%d%d", "%5", "%x", "%-3d", "%99d", "%%d"} {
		if _, err := parseShardTemplate(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestShardSize(t *testing.T) {
	for s, want := range map[string]int64{"1": 1, "500": 500, "4k": 4096, "3M": 3 << 20, "2G": 2 << 30, "10K": 10240} {
		if got, err := parseShardSize(s); err != nil || got != want {
			t.Errorf("%s: %d, %v; want %d", s, got, err, want)
		}
	}
	for _, bad := range []string{"", "0", "-1", "+4", "k", "1.5M", "9999999999999999999", "5000000000G", "1T"} {
		if _, err := parseShardSize(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// FuzzShardTemplate: parsing never panics, an accepted template names shards as printf does,
// and different shards get different names.
func FuzzShardTemplate(f *testing.F) {
	for _, s := range []string{"s%d.fa", "dir/r.%04d.fq.gz", "a%%b%2d%%", "%", "%0", "%%%d%%"} {
		f.Add(s, 3)
	}
	f.Fuzz(func(t *testing.T, s string, i int) {
		if i < 0 {
			i = -i
		}
		i %= 100000
		tm, err := parseShardTemplate(s)
		if err != nil {
			return
		}
		if got, want := tm.name(i), fmt.Sprintf(s, i); got != want {
			t.Fatalf("%q(%d) = %q; printf says %q", s, i, got, want)
		}
		if tm.name(i) == tm.name(i+1) {
			t.Fatalf("%q: shards %d and %d share a name", s, i, i+1)
		}
		parseShardSize(s)
	})
}

func TestVersion(t *testing.T) {
	out, stderr, st := runSapipe(t, nil, "--version")
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if st != 0 || len(stderr) != 0 || len(lines) != 4 {
		t.Fatalf("status %d, stdout %q, stderr %q", st, out, stderr)
	}
	if lines[0] != "sapipe "+version || !strings.HasPrefix(lines[1], "commit ") || !strings.Contains(lines[2], runtime.GOOS+"/"+runtime.GOARCH) || !strings.HasPrefix(lines[3], "gpu: ") {
		t.Errorf("--version says %q", lines)
	}
}

// TestVersionLinked builds the binary as `make release` does, with the version and commit linked
// in and no cgo, and checks what --version prints and that the binary needs no dynamic loader.
func TestVersionLinked(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go toolchain to build the binary with")
	}
	bin := filepath.Join(t.TempDir(), "sapipe")
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w -X main.version=v9.8.7 -X main.commit=0123456789ab", "-o", bin, ".")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "--version").Output()
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(out), "\n")
	if lines[0] != "sapipe v9.8.7" || lines[1] != "commit 0123456789ab" {
		t.Errorf("--version says %q", out)
	}
	if runtime.GOOS == "linux" {
		// No cgo, so no C library is linked in at build time. The binary still asks for the
		// system's dynamic loader and libc: purego opens the CUDA driver at run time through
		// them. Nothing else may be needed.
		for _, lib := range elfLibraries(t, bin) {
			if !slices.Contains([]string{"libc.so.6", "libdl.so.2", "libpthread.so.0"}, lib) {
				t.Errorf("the binary needs %s", lib)
			}
		}
	}
	// A failing command exits 1 with one line; the binary behaves as run() does.
	cmd = exec.Command(bin, "merge", filepath.Join(t.TempDir(), "nosuch"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err = cmd.Run()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || bytes.Count(stderr.Bytes(), []byte("\n")) != 1 {
		t.Errorf("exit %v, stderr %q", err, stderr.String())
	}
}

// elfLibraries returns the shared libraries an ELF binary needs.
func elfLibraries(t *testing.T, path string) []string {
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	libs, err := f.ImportedLibraries()
	if err != nil {
		t.Fatal(err)
	}
	return libs
}
