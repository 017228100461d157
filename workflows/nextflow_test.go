package workflows

import (
	"bytes"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
)

// sapipeBin is the sapipe built for these tests (see TestMain).
var sapipeBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "sapipe-workflows")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	sapipeBin = filepath.Join(dir, "sapipe")
	if _, err := exec.LookPath("go"); err != nil {
		// The GPU machine has the packed test binaries and no Go toolchain; these tests
		// check workflow files, not the device.
		fmt.Println("workflows: no go toolchain to build sapipe with; skipping these tests")
		os.RemoveAll(dir)
		os.Exit(0)
	}
	build := exec.Command("go", "build", "-o", sapipeBin, "../cmd/sapipe")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building sapipe: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

const modulesDir = "nextflow/modules/sapipe"

var lambdaDir, _ = filepath.Abs("../testdata/mummer/lambda-reads")

// module is what the tests read of a module's main.nf.
type module struct {
	path    string
	src     string
	process string
	inputs  []string // names declared in the input section: val(x), path(x), and bare `val x`
	outputs []string // output globs: path("...") and path "..."
	emits   []string
	defs    []string // names defined with def in the script section
	script  string   // the script section's triple-quoted string, as written
}

var (
	reProcess = regexp.MustCompile(`(?m)^process (\w+) \{$`)
	reSection = regexp.MustCompile(`(?m)^    (input|output|when|script|stub):$`)
	reInput   = regexp.MustCompile(`\b(?:val|path)\(\s*(\w+)|^\s*val (\w+)\s*$`)
	reOutPath = regexp.MustCompile(`path\(?\s*"([^"]+)"`)
	reEmit    = regexp.MustCompile(`emit:\s*(\w+)`)
	reDef     = regexp.MustCompile(`^\s*def (\w+) = (.+)$`)
)

func readModule(t *testing.T, dir string) *module {
	t.Helper()
	path := filepath.Join(dir, "main.nf")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m := &module{path: path, src: string(b)}
	if err := checkGroovyNesting(m.src); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	ps := reProcess.FindAllStringSubmatch(m.src, -1)
	if len(ps) != 1 {
		t.Fatalf("%s: want one process, found %d", path, len(ps))
	}
	m.process = ps[0][1]
	// The sections, in nf-core's order.
	locs := reSection.FindAllStringSubmatchIndex(m.src, -1)
	var names []string
	body := map[string]string{}
	for i, l := range locs {
		name := m.src[l[2]:l[3]]
		end := strings.LastIndex(m.src, "\n}")
		if i+1 < len(locs) {
			end = locs[i+1][0]
		}
		names = append(names, name)
		body[name] = m.src[l[1]:end]
	}
	if want := []string{"input", "output", "when", "script", "stub"}; !slices.Equal(names, want) {
		t.Fatalf("%s: sections %v, want %v", path, names, want)
	}
	for _, line := range strings.Split(body["input"], "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "//") {
			continue
		}
		for _, s := range reInput.FindAllStringSubmatch(line, -1) {
			m.inputs = append(m.inputs, s[1]+s[2])
		}
	}
	for _, s := range reOutPath.FindAllStringSubmatch(body["output"], -1) {
		m.outputs = append(m.outputs, s[1])
	}
	for _, s := range reEmit.FindAllStringSubmatch(body["output"], -1) {
		m.emits = append(m.emits, s[1])
	}
	script := body["script"]
	i := strings.Index(script, `"""`)
	j := strings.LastIndex(script, `"""`)
	if i < 0 || j <= i {
		t.Fatalf("%s: the script section has no triple-quoted string", path)
	}
	for _, line := range strings.Split(script[:i], "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "//") {
			continue
		}
		d := reDef.FindStringSubmatch(line)
		if d == nil {
			t.Fatalf("%s: in the script section, want only def lines before the script, found %q", path, line)
		}
		m.defs = append(m.defs, d[1])
	}
	m.script = script[i+3 : j]
	return m
}

// checkGroovyNesting checks that brackets nest outside comments and strings (single, double and
// triple quoted), as a first, quick check of a Groovy file; test.sh parses them with Groovy.
func checkGroovyNesting(src string) error {
	var stack []byte
	line := 1
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch {
		case c == '\n':
			line++
		case strings.HasPrefix(src[i:], "//"):
			for i < len(src) && src[i] != '\n' {
				i++
			}
			i--
		case strings.HasPrefix(src[i:], "/*"):
			k := strings.Index(src[i+2:], "*/")
			if k < 0 {
				return fmt.Errorf("line %d: unterminated comment", line)
			}
			line += strings.Count(src[i:i+2+k], "\n")
			i += k + 3
		case strings.HasPrefix(src[i:], `"""`) || strings.HasPrefix(src[i:], `'''`):
			q := src[i : i+3]
			k := i + 3
			for k < len(src) && !strings.HasPrefix(src[k:], q) {
				if src[k] == '\\' {
					k++
				}
				k++
			}
			if k >= len(src) {
				return fmt.Errorf("line %d: unterminated %s string", line, q)
			}
			line += strings.Count(src[i:k], "\n")
			i = k + 2
		case c == '"' || c == '\'':
			k := i + 1
			for k < len(src) && src[k] != c && src[k] != '\n' {
				if src[k] == '\\' {
					k++
				}
				k++
			}
			if k >= len(src) || src[k] != c {
				return fmt.Errorf("line %d: unterminated string", line)
			}
			i = k
		case c == '(' || c == '[' || c == '{':
			stack = append(stack, c)
		case c == ')' || c == ']' || c == '}':
			open := map[byte]byte{')': '(', ']': '[', '}': '{'}[c]
			if len(stack) == 0 || stack[len(stack)-1] != open {
				return fmt.Errorf("line %d: unbalanced %c", line, c)
			}
			stack = stack[:len(stack)-1]
		}
	}
	if len(stack) > 0 {
		return fmt.Errorf("%d unclosed brackets at the end", len(stack))
	}
	return nil
}

// render evaluates a Groovy triple-quoted GString the way Nextflow evaluates a script block:
// ${expr} and $name.name are replaced by vars[expr] (every one must be given), \$ and \\ are
// unescaped, a bare $ is a parse error, and the common indentation is stripped.
func render(s string, vars map[string]string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\' && i+1 < len(s):
			i++
			switch s[i] {
			case '$', '\\', '"':
				b.WriteByte(s[i])
			case 'n':
				b.WriteByte('\n')
			default:
				return "", fmt.Errorf("escape \\%c", s[i])
			}
		case c == '$' && i+1 < len(s) && s[i+1] == '{':
			k := strings.IndexByte(s[i:], '}')
			if k < 0 {
				return "", fmt.Errorf("unterminated ${")
			}
			expr := strings.TrimSpace(s[i+2 : i+k])
			v, ok := vars[expr]
			if !ok {
				return "", fmt.Errorf("no value for ${%s}", expr)
			}
			b.WriteString(v)
			i += k
		case c == '$':
			k := i + 1
			for k < len(s) && (isIdent(s[k]) || s[k] == '.' && k+1 < len(s) && isIdentStart(s[k+1])) {
				k++
			}
			if k == i+1 || !isIdentStart(s[i+1]) {
				return "", fmt.Errorf("a bare $ (Groovy wants \\$): %q", s[i:min(i+10, len(s))])
			}
			v, ok := vars[s[i+1:k]]
			if !ok {
				return "", fmt.Errorf("no value for $%s", s[i+1:k])
			}
			b.WriteString(v)
			i = k - 1
		default:
			b.WriteByte(c)
		}
	}
	return stripIndent(b.String()), nil
}

func isIdentStart(c byte) bool { return c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
func isIdent(c byte) bool      { return isIdentStart(c) || '0' <= c && c <= '9' }

func stripIndent(s string) string {
	lines := strings.Split(s, "\n")
	indent := -1
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		n := len(l) - len(strings.TrimLeft(l, " \t"))
		if indent < 0 || n < indent {
			indent = n
		}
	}
	for i, l := range lines {
		if len(l) >= indent && indent > 0 {
			lines[i] = l[indent:]
		} else {
			lines[i] = strings.TrimLeft(l, " \t")
		}
	}
	return strings.TrimLeft(strings.Join(lines, "\n"), "\n")
}

// task is one emulated Nextflow task: a module, its inputs staged under their names, and the
// values of the script's variables.
type task struct {
	mod    *module
	stage  map[string]string // staged name (may hold a folder) -> file
	vars   map[string]string
	outDir string
}

// run renders the module's script, runs it with bash in a fresh work folder (inputs linked in,
// as Nextflow stages them), checks that every output glob matches and that versions.yml names
// the process and sapipe's version, and returns the work folder and the sapipe command line.
func (tk *task) run(t *testing.T) (work, cmdline string) {
	t.Helper()
	vars := map[string]string{"task.process": tk.mod.process}
	for k, v := range tk.vars {
		vars[k] = v
	}
	for _, d := range tk.mod.defs {
		if _, ok := tk.vars[d]; !ok {
			t.Fatalf("%s: the test gives no value for def %s", tk.mod.path, d)
		}
	}
	script, err := render(tk.mod.script, vars)
	if err != nil {
		t.Fatalf("%s: %v", tk.mod.path, err)
	}
	work = t.TempDir()
	for name, file := range tk.stage {
		dst := filepath.Join(work, name)
		os.MkdirAll(filepath.Dir(dst), 0o755)
		if err := os.Symlink(file, dst); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("bash", "-euo", "pipefail", "-c", script)
	cmd.Dir = work
	cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(sapipeBin)+":"+os.Getenv("PATH"), "SAPIPE_DEVICE=")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: %v\nscript:\n%s\nstderr: %s", tk.mod.process, err, script, stderr.String())
	}
	for _, glob := range tk.mod.outputs {
		matches, _ := filepath.Glob(filepath.Join(work, glob))
		n := 0
		for _, m := range matches {
			if fi, err := os.Lstat(m); err == nil && fi.Mode().IsRegular() { // inputs are links
				n++
			}
		}
		if n == 0 {
			t.Errorf("%s: output %q matches no file", tk.mod.process, glob)
		}
	}
	v, err := os.ReadFile(filepath.Join(work, "versions.yml"))
	want := fmt.Sprintf("%q:\n    sapipe: %s\n", tk.mod.process, sapipeVersion(t))
	if err != nil || string(v) != want {
		t.Errorf("%s: versions.yml is %q (%v); want %q", tk.mod.process, v, err, want)
	}
	for _, l := range strings.Split(script, "\n") {
		if strings.HasPrefix(l, "sapipe ") {
			cmdline = l
		}
	}
	return work, cmdline
}

func sapipeVersion(t *testing.T) string {
	out, err := exec.Command(sapipeBin, "--version").Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimPrefix(strings.SplitN(string(out), "\n", 2)[0], "sapipe ")
}

// hasCommand reports whether the sapipe under test has a subcommand.
func hasCommand(name string) bool {
	return exec.Command(sapipeBin, name, "--help").Run() == nil
}

// TestModuleFiles: every module has nf-core's files and shape, and its meta.yml documents what
// main.nf declares.
func TestModuleFiles(t *testing.T) {
	dirs, _ := filepath.Glob(filepath.Join(modulesDir, "*"))
	var names []string
	for _, d := range dirs {
		names = append(names, filepath.Base(d))
	}
	if want := []string{"compress", "index", "merge", "mummer", "split"}; !slices.Equal(names, want) {
		t.Fatalf("modules %v, want %v", names, want)
	}
	for _, dir := range dirs {
		m := readModule(t, dir)
		if want := "SAPIPE_" + strings.ToUpper(filepath.Base(dir)); m.process != want {
			t.Errorf("%s: process %s, want %s", dir, m.process, want)
		}
		for _, s := range []string{`tag "$meta.id"`, "label 'process_", `conda "${moduleDir}/environment.yml"`,
			"task.ext.when == null || task.ext.when", `def args = task.ext.args ?: ''`, `path "versions.yml"`,
			"cat <<-END_VERSIONS > versions.yml", `sapipe: \$(sapipe --version | sed '1!d; s/^sapipe //')`} {
			if !strings.Contains(m.src, s) {
				t.Errorf("%s: no %q", m.path, s)
			}
		}
		if !strings.Contains(m.script, "sapipe "+filepath.Base(dir)+" $args ") {
			t.Errorf("%s: the script does not run sapipe %s $args", m.path, filepath.Base(dir))
		}
		if m.emits[len(m.emits)-1] != "versions" {
			t.Errorf("%s: emits %v, want versions last", m.path, m.emits)
		}
		meta, err := os.ReadFile(filepath.Join(dir, "meta.yml"))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(meta), "name: sapipe_"+filepath.Base(dir)+"\n") {
			t.Errorf("%s/meta.yml: wrong name", dir)
		}
		for _, name := range append(append(slices.Clone(m.inputs), m.emits...), m.outputs...) {
			if !regexp.MustCompile(`(?m)^[ -]+"?` + regexp.QuoteMeta(name) + `"?:`).Match(meta) {
				t.Errorf("%s/meta.yml does not document %q", dir, name)
			}
		}
		env, err := os.ReadFile(filepath.Join(dir, "environment.yml"))
		if err != nil || !strings.Contains(string(env), "bioconda::sapipe") {
			t.Errorf("%s/environment.yml: %v", dir, err)
		}
		test, err := os.ReadFile(filepath.Join(dir, "tests", "main.nf.test"))
		if err != nil {
			t.Fatal(err)
		}
		if err := checkGroovyNesting(string(test)); err != nil {
			t.Errorf("%s/tests/main.nf.test: %v", dir, err)
		}
		for _, s := range []string{`script "../main.nf"`, `process "` + m.process + `"`, "tag \"sapipe/" + filepath.Base(dir) + "\"", `options "-stub"`} {
			if !strings.Contains(string(test), s) && !(s == `options "-stub"` && m.process == "SAPIPE_MERGE") {
				t.Errorf("%s/tests/main.nf.test: no %s", dir, s)
			}
		}
	}
}

// TestModuleTestChecksums: the md5 sums the nf-test files expect are those of the golden outputs
// made with MUMmer 3.23 that they name.
func TestModuleTestChecksums(t *testing.T) {
	sum := func(files ...string) string {
		h := md5.New()
		for _, f := range files {
			b, err := os.ReadFile(filepath.Join(lambdaDir, f))
			if err != nil {
				t.Fatal(err)
			}
			h.Write(b)
		}
		return hex.EncodeToString(h.Sum(nil))
	}
	for file, want := range map[string]string{
		"mummer/tests/main.nf.test": sum("expected.out"),
		"merge/tests/main.nf.test":  sum("../reads-029/expected.out", "expected.out"),
		"../../tests/main.nf.test":  sum("expected.out"),
	} {
		b, err := os.ReadFile(filepath.Join(modulesDir, file))
		if err != nil {
			t.Fatal(err)
		}
		got := regexp.MustCompile(`md5 == '([0-9a-f]{32})'`).FindAllStringSubmatch(string(b), -1)
		if len(got) != 1 || got[0][1] != want {
			t.Errorf("%s expects %v; the golden files give %s", file, got, want)
		}
	}
	// And sapipe gives those bytes for the lambda reads.
	out, err := exec.Command(sapipeBin, "mummer", "-maxmatch", "-l", "20", "-b", "-c", filepath.Join(lambdaDir, "ref.fa"), filepath.Join(lambdaDir, "reads.fa")).Output()
	if err != nil || fmt.Sprintf("%x", md5.Sum(out)) != sum("expected.out") {
		t.Errorf("sapipe's output for the lambda reads differs from the golden file (%v)", err)
	}
}

// pipelineConfig is what the example pipeline's nextflow.config and samplesheet say.
type pipelineConfig struct {
	sample, reads, reference string
	shards                   int
	mummerArgs, cpus         string
}

func readPipelineConfig(t *testing.T) pipelineConfig {
	t.Helper()
	conf := string(readFile(t, "nextflow/nextflow.config"))
	param := func(name string) string {
		m := regexp.MustCompile(`(?m)^\s+` + name + `\s+= (.+?)\s*(//.*)?$`).FindStringSubmatch(conf)
		if m == nil {
			t.Fatalf("nextflow.config: no params.%s", name)
		}
		return strings.Trim(m[1], `'"`)
	}
	var c pipelineConfig
	fmt.Sscan(param("shards"), &c.shards)
	c.mummerArgs = param("mummer_args")
	c.cpus = param("cpus")
	c.reference = filepath.Join("nextflow", strings.TrimPrefix(param("reference"), "${projectDir}/"))
	sheet := strings.Split(strings.TrimSpace(string(readFile(t, "nextflow/samplesheet.csv"))), "\n")
	if len(sheet) != 2 || sheet[0] != "sample,reads" {
		t.Fatalf("samplesheet.csv: %q", sheet)
	}
	row := strings.Split(sheet[1], ",")
	c.sample, c.reads = row[0], filepath.Join("nextflow", row[1])
	for _, p := range []*string{&c.reference, &c.reads} {
		abs, err := filepath.Abs(*p)
		if err != nil {
			t.Fatal(err)
		}
		*p = abs
		if _, err := os.Stat(*p); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

var reShardEnding = regexp.MustCompile(`\.f[aq](\.(gz|zst|xz|bz2))?$`)

// TestPipeline runs the example pipeline (nextflow/main.nf with nextflow.config and the
// samplesheet) the way Nextflow would: SAPIPE_SPLIT, one SAPIPE_MUMMER per shard (with the
// meta.id main.nf gives it), SAPIPE_MERGE over the parts sorted by name, and SAPIPE_INDEX and
// SAPIPE_COMPRESS when sapipe has those commands. The merged output must be one run's output,
// byte for byte. With SAPIPE_NF_COMMANDS set, the sapipe command lines are written there (for
// test.sh to compare with Snakemake's).
func TestPipeline(t *testing.T) {
	c := readPipelineConfig(t)
	mods := map[string]*module{}
	for _, name := range []string{"split", "mummer", "merge", "index", "compress"} {
		mods[name] = readModule(t, filepath.Join(modulesDir, name))
	}
	src := string(readFile(t, "nextflow/main.nf"))
	if err := checkGroovyNesting(src); err != nil {
		t.Fatalf("main.nf: %v", err)
	}
	for name, m := range mods {
		inc := fmt.Sprintf("include { %-15s } from './modules/sapipe/%s/main'", m.process, name)
		if !strings.Contains(src, inc) || !strings.Contains(src, m.process+"(") {
			t.Errorf("main.nf does not include and call %s", m.process)
		}
	}
	var commands []string
	cpus := c.cpus

	// The reference, indexed once when sapipe can.
	refName, refFile := filepath.Base(c.reference), c.reference
	refArg := refName
	useIndex := hasCommand("index") && mummerHasIndex()
	if useIndex {
		work, cmd := (&task{mod: mods["index"], stage: map[string]string{refName: c.reference},
			vars: map[string]string{"args": indexArgs(c.mummerArgs), "prefix": "reference", "meta.id": "reference", "task.cpus": cpus, "fasta": refName}}).run(t)
		commands = append(commands, cmd)
		refName, refFile = "reference.sai", filepath.Join(work, "reference.sai")
		refArg = "--index " + refName
	} else {
		t.Log("sapipe has no index command (or mummer no --index): the reference is used as it is")
	}

	// Split.
	readsName := filepath.Base(c.reads)
	suffix := "fa.gz"
	if regexp.MustCompile(`\.f(ast)?q(\.(gz|zst|xz|bz2))?$`).MatchString(readsName) {
		suffix = "fq.gz"
	}
	work, cmd := (&task{mod: mods["split"], stage: map[string]string{readsName: c.reads}, vars: map[string]string{
		"args": "", "prefix": c.sample, "suffix": suffix, "meta.id": c.sample, "shards": fmt.Sprint(c.shards),
		"task.cpus": cpus, "reads": readsName}}).run(t)
	commands = append(commands, cmd)
	shards, _ := filepath.Glob(filepath.Join(work, mods["split"].outputs[0]))
	sort.Strings(shards)
	if len(shards) != c.shards {
		t.Fatalf("SAPIPE_SPLIT made %d shards, want %d", len(shards), c.shards)
	}

	// Mummer per shard.
	var parts []string
	for _, shard := range shards {
		id := reShardEnding.ReplaceAllString(filepath.Base(shard), "")
		work, cmd := (&task{mod: mods["mummer"], stage: map[string]string{filepath.Base(shard): shard, refName: refFile}, vars: map[string]string{
			"args": c.mummerArgs, "prefix": id, "meta.id": id, "device": "auto", "task.cpus": cpus,
			"ref": refArg, "reads": filepath.Base(shard)}}).run(t)
		commands = append(commands, cmd)
		parts = append(parts, filepath.Join(work, id+".mums"))
	}

	// Merge, parts sorted by name and staged as part1/..., part2/...
	stage := map[string]string{}
	var staged []string
	for i, p := range parts {
		name := fmt.Sprintf("part%d/%s", i+1, filepath.Base(p))
		stage[name] = p
		staged = append(staged, name)
	}
	work, cmd = (&task{mod: mods["merge"], stage: stage, vars: map[string]string{
		"args": "", "prefix": c.sample, "meta.id": c.sample, "parts": strings.Join(staged, " ")}}).run(t)
	commands = append(commands, cmd)
	merged := readFile(t, filepath.Join(work, c.sample+".mums"))

	args := append(strings.Fields(c.mummerArgs), c.reference, c.reads)
	want, err := exec.Command(sapipeBin, append([]string{"mummer"}, args...)...).Output()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(merged, want) {
		t.Fatalf("the pipeline's merged output differs from one sapipe run (%d and %d bytes)", len(merged), len(want))
	}

	if hasCommand("compress") {
		mergedName := c.sample + ".mums"
		work, cmd := (&task{mod: mods["compress"], stage: map[string]string{mergedName: filepath.Join(work, mergedName)}, vars: map[string]string{
			"args": "", "prefix": mergedName, "meta.id": c.sample, "task.cpus": cpus, "uncompressed": mergedName}}).run(t)
		commands = append(commands, cmd)
		back, err := exec.Command(sapipeBin, "decompress", "-c", filepath.Join(work, mergedName+".bwz")).Output()
		if err != nil || !bytes.Equal(back, want) {
			t.Errorf("sapipe decompress does not give the merged output back (%v)", err)
		}
	} else {
		t.Log("sapipe has no compress command: SAPIPE_COMPRESS not run")
	}

	if out := os.Getenv("SAPIPE_NF_COMMANDS"); out != "" {
		if err := os.WriteFile(out, []byte(strings.Join(commands, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// indexArgs is SAPIPE_INDEX's ext.args in nextflow.config: -n when mummer runs with -n.
func indexArgs(mummerArgs string) string {
	if slices.Contains(strings.Fields(mummerArgs), "-n") {
		return "-n"
	}
	return ""
}

// mummerHasIndex reports whether sapipe mummer takes --index.
func mummerHasIndex() bool {
	out, _ := exec.Command(sapipeBin, "mummer", "--help").Output()
	return strings.Contains(string(out), "--index")
}

// TestRenderRejects: the emulation refuses what Nextflow would refuse or could not render.
func TestRenderRejects(t *testing.T) {
	for _, s := range []string{`echo $(ls)`, `echo ${nosuch}`, `echo $nosuch`, `echo ${x`, `a \q b`} {
		if _, err := render(s, map[string]string{"x": "1"}); err == nil {
			t.Errorf("%q rendered", s)
		}
	}
	got, err := render("\n    a $x.y ${z} \\$(b) \\\\\n      c\n", map[string]string{"x.y": "1", "z": "2"})
	if err != nil || got != "a 1 2 $(b) \\\n  c\n" {
		t.Errorf("rendered %q, %v", got, err)
	}
	for _, s := range []string{"a { b ( c ) }", `x "}" { '{' }`, "a /* } */ {}", "f(\"\"\"\n)\n\"\"\")"} {
		if err := checkGroovyNesting(s); err != nil {
			t.Errorf("%q: %v", s, err)
		}
	}
	for _, s := range []string{"a { b ( c }", "{", `"abc`, "x /* y"} {
		if err := checkGroovyNesting(s); err == nil {
			t.Errorf("%q passed", s)
		}
	}
}
