package main

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sapipe/sapipe/internal/fakecuda"
	"github.com/sapipe/sapipe/kernels/cuda"
	"github.com/sapipe/sapipe/kernels/device"
	"github.com/sapipe/sapipe/stages"
)

// TestMain runs the tests of this package on the CPU unless SAPIPE_DEVICE says otherwise: on a
// host without a GPU, --device auto adds a line on stderr that tests of one-line errors would
// count. On the device machine, SAPIPE_DEVICE=gpu runs them all on the GPU.
func TestMain(m *testing.M) {
	if _, ok := os.LookupEnv(deviceEnv); !ok {
		os.Setenv(deviceEnv, "cpu")
	}
	os.Exit(m.Run())
}

// gpuUsable reports whether a GPU backend opens here.
func gpuUsable() bool { return noGPU() == nil }

// noGPU says why no GPU backend opens here, or nil when one does.
func noGPU() error {
	b, _, err := device.Open("gpu", device.Options{Threads: 1})
	if err != nil {
		return err
	}
	b.Close()
	return nil
}

// commandArgs returns a working command line of each command that takes --device, with the
// option inserted before the files.
func commandArgs(t *testing.T, opts ...string) map[string][]string {
	return commandArgsIn(t, t.TempDir(), opts...)
}

func commandArgsIn(t *testing.T, dir string, opts ...string) map[string][]string {
	ref := filepath.Join(dir, "ref.fa")
	os.WriteFile(ref, []byte(">r\nacgtacgtacgtaaaccc\n"), 0o644)
	bwt := filepath.Join(dir, "in.bwt")
	if _, stderr, st := runSapipe(t, nil, "bwt", "--device", "cpu", "-o", bwt, ref); st != 0 {
		t.Fatalf("bwt: %s", stderr)
	}
	return map[string][]string{
		"mummer": append(append([]string{"mummer", "-l", "3"}, opts...), ref, ref),
		"sa":     append(append([]string{"sa"}, opts...), ref),
		"bwt":    append(append([]string{"bwt"}, opts...), ref),
		"unbwt":  append(append([]string{"unbwt"}, opts...), bwt),
	}
}

func TestDeviceOption(t *testing.T) {
	for _, spec := range []string{"bogus", "gpu:x", "gpu:-1", "GPU"} {
		for cmd, args := range commandArgs(t, "--device", spec) {
			out, stderr, st := runSapipe(t, nil, args...)
			if st != 1 || len(out) != 0 || !bytes.HasPrefix(stderr, []byte("sapipe: --device "+spec+": ")) || bytes.Count(stderr, []byte("\n")) != 1 {
				t.Errorf("%s --device %s: status %d, stderr %q", cmd, spec, st, stderr)
			}
		}
	}
	for cmd, args := range commandArgs(t, "--device", "cpu") {
		if out, stderr, st := runSapipe(t, nil, args...); st != 0 || len(stderr) != 0 || len(out) == 0 {
			t.Errorf("%s --device cpu: status %d, stderr %q", cmd, st, stderr)
		}
	}
	if gpuUsable() {
		t.Log("a GPU is usable here: the no-GPU paths are not tested")
		return
	}
	for cmd, args := range commandArgs(t, "--device", "gpu:0") {
		out, stderr, st := runSapipe(t, nil, args...)
		if cmd == "unbwt" { // runs on the CPU whatever the device
			if st != 0 || len(stderr) != 0 || len(out) == 0 {
				t.Errorf("unbwt --device gpu:0: status %d, stderr %q", st, stderr)
			}
			continue
		}
		if st != 1 || len(out) != 0 || !strings.HasPrefix(string(stderr), "sapipe: --device gpu:0: no usable GPU") || bytes.Count(stderr, []byte("\n")) != 1 {
			t.Errorf("%s --device gpu:0 without a GPU: status %d, stderr %q", cmd, st, stderr)
		}
	}
	// auto without a GPU: the CPU; for these small inputs without trying the GPU, so without a
	// note; for a larger one, one line saying why, unless -q, or unless no driver is installed at
	// all (a CPU node), where only -v says it.
	noDriver := errors.Is(noGPU(), cuda.ErrNoDriver)
	big := filepath.Join(t.TempDir(), "big.txt")
	if err := os.WriteFile(big, bytes.Repeat([]byte("acgtt"), smallSAInput/5+1), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, flag := range []string{"", "-q", "-v"} {
		args := []string{"sa", "--device", "auto", "-o", filepath.Join(t.TempDir(), "big.sa")}
		if flag != "" {
			args = append(args, flag)
		}
		args = append(args, big)
		_, stderr, st := runSapipe(t, nil, args...)
		note := "sapipe: using the CPU: no usable GPU"
		switch {
		case st != 0:
			t.Errorf("%v: status %d, stderr %q", args, st, stderr)
		case flag == "-q" || flag == "" && noDriver:
			if len(stderr) != 0 {
				t.Errorf("%v: stderr %q, want nothing", args, stderr)
			}
		case flag == "-v":
			if !bytes.Contains(stderr, []byte(note)) {
				t.Errorf("%v: stderr %q, want a line saying why the CPU is used", args, stderr)
			}
		default:
			if !strings.HasPrefix(string(stderr), note) || bytes.Count(stderr, []byte("\n")) != 1 {
				t.Errorf("%v: stderr %q, want one line saying why the CPU is used", args, stderr)
			}
		}
	}
	for _, quiet := range []bool{false, true} {
		opts := []string{"--device", "auto"}
		if quiet {
			opts = append(opts, "-q")
		}
		dir := t.TempDir()
		cpuArgs := commandArgsIn(t, dir, "--device", "cpu")
		for cmd, args := range commandArgsIn(t, dir, opts...) {
			want, _, _ := runSapipe(t, nil, cpuArgs[cmd]...)
			out, stderr, st := runSapipe(t, nil, args...)
			ok := st == 0 && bytes.Equal(out, want)
			ok = ok && len(stderr) == 0
			if !ok {
				t.Errorf("%v: status %d, stderr %q", args, st, stderr)
			}
		}
	}
	// The environment sets the device when the option does not.
	t.Setenv(deviceEnv, "auto")
	if _, stderr, st := runSapipe(t, []byte("abc"), "sa", "-v"); st != 0 || !strings.Contains(string(stderr), "sapipe: using the CPU: ") {
		t.Errorf("SAPIPE_DEVICE=auto: status %d, stderr %q", st, stderr)
	}
	t.Setenv(deviceEnv, "nonsense")
	if _, stderr, st := runSapipe(t, []byte("abc"), "sa"); st != 1 || !strings.Contains(string(stderr), "--device nonsense") {
		t.Errorf("SAPIPE_DEVICE=nonsense: status %d, stderr %q", st, stderr)
	}
	if _, stderr, st := runSapipe(t, []byte("abc"), "sa", "--device", "cpu"); st != 0 || len(stderr) != 0 {
		t.Errorf("--device cpu over SAPIPE_DEVICE: status %d, stderr %q", st, stderr)
	}
}

func TestThreadsOption(t *testing.T) {
	for cmd, args := range commandArgs(t, "-t", "0") {
		out, stderr, st := runSapipe(t, nil, args...)
		if st != 1 || len(out) != 0 || !bytes.HasPrefix(stderr, []byte("sapipe: ")) || bytes.Count(stderr, []byte("\n")) != 1 {
			t.Errorf("%s -t 0: status %d, stderr %q", cmd, st, stderr)
		}
	}
}

// TestAutoDevice: auto means the CPU for files under smallInput bytes in all, and stays auto
// for more, for stdin and for what is not a readable regular file; other values stay as they are.
func TestAutoDevice(t *testing.T) {
	dir := t.TempDir()
	small, half := filepath.Join(dir, "small"), filepath.Join(dir, "half")
	os.WriteFile(small, []byte(">r\nacgt\n"), 0o644)
	os.WriteFile(half, make([]byte, smallInput/2), 0o644)
	for _, c := range []struct {
		spec  string
		paths []string
		want  string
	}{
		{"auto", []string{small}, "cpu"},
		{"", []string{small, half}, "cpu"},
		{"auto", []string{half, half}, "auto"}, // smallInput bytes in all
		{"auto", []string{small, "-"}, "auto"},
		{"auto", nil, "auto"},
		{"auto", []string{filepath.Join(dir, "missing")}, "auto"},
		{"auto", []string{dir}, "auto"},
		{"gpu", []string{small}, "gpu"},
		{"gpu:1", []string{small}, "gpu:1"},
		{"cpu", []string{half, half}, "cpu"},
	} {
		if got := autoDevice(c.spec, smallInput, c.paths...); got != c.want {
			t.Errorf("autoDevice(%q, %q) = %q, want %q", c.spec, c.paths, got, c.want)
		}
	}
}

// TestSearchDevice: count and locate under auto use the CPU for a small FASTA reference and for a
// small index file; against a large index file count keeps auto, and locate only where the
// pattern files are large too (stdin counting as small); a large FASTA reference keeps auto.
func TestSearchDevice(t *testing.T) {
	dir := t.TempDir()
	fasta := filepath.Join(dir, "ref.fa")
	os.WriteFile(fasta, []byte(">r\nacgtacgtacgtaaaccc\n"), 0o644)
	index := filepath.Join(dir, "ref.sai")
	if _, stderr, st := runSapipe(t, nil, "index", "--device", "cpu", "-o", index, fasta); st != 0 {
		t.Fatalf("index: %s", stderr)
	}
	// sparse files of the sizes that count: a large FASTA, and a large index (its magic first)
	bigFasta, bigIndex := filepath.Join(dir, "big.fa"), filepath.Join(dir, "big.sai")
	os.WriteFile(bigFasta, []byte(">r\n"), 0o644)
	os.Truncate(bigFasta, smallSAInput)
	head, _ := os.ReadFile(index)
	os.WriteFile(bigIndex, head[:64], 0o644)
	os.Truncate(bigIndex, gpuSearchIndex)
	midIndex := filepath.Join(dir, "mid.sai")
	os.WriteFile(midIndex, head[:64], 0o644)
	os.Truncate(midIndex, gpuSearchIndex-1)
	for _, c := range []struct {
		spec, ref string
		want      string
	}{
		{"auto", index, "cpu"},
		{"auto", fasta, "cpu"},
		{"auto", bigIndex, "auto"},
		{"", bigIndex, "auto"},
		{"auto", midIndex, "cpu"},
		{"auto", bigFasta, "auto"},
		{"auto", "-", "auto"}, // a FASTA reference on stdin, of unknown size
		{"gpu", index, "gpu"},
		{"cpu", bigIndex, "cpu"},
	} {
		if got := searchDevice(c.spec, c.ref, stages.IsIndexFile(c.ref)); got != c.want {
			t.Errorf("searchDevice(%q, %s) = %q, want %q", c.spec, filepath.Base(c.ref), got, c.want)
		}
	}
}

// childEnv names the variable that tells the test binary it runs as the child of a test.
const childEnv = "SAPIPE_TEST_CHILD"

// TestHostKinds runs the CLI on the three kinds of host without a usable GPU, each in a fresh
// process (the driver is loaded once a process): no CUDA driver at all (a CPU node: nothing on
// stderr), a driver that finds no device and a driver library that cannot be loaded (one line
// each). The host the tests run on does not decide what is tested.
func TestHostKinds(t *testing.T) {
	if os.Getenv(childEnv) != "" {
		t.Skip("in a child")
	}
	dir := t.TempDir()
	broken := filepath.Join(dir, "libcuda.so.1")
	if err := os.WriteFile(broken, []byte("not a library\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	hosts := map[string]string{"nodriver": "/nonexistent/libcuda.so.1", "broken": broken}
	lib, err := fakecuda.Build(t.TempDir(), fakecuda.NoDevice, cuda.EntryPoints())
	switch {
	case errors.Is(err, fakecuda.ErrNoCompiler):
		t.Log(err)
	case err != nil:
		t.Fatal(err)
	default:
		hosts["nodevice"] = lib
	}
	for host, libPath := range hosts {
		t.Run(host, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestHostKindChild$", "-test.v")
			cmd.Env = append(os.Environ(), childEnv+"="+host, cuda.LibraryEnv+"="+libPath, "SAPIPE_REQUIRE_GPU=", deviceEnv+"=auto")
			out, err := cmd.CombinedOutput()
			if err != nil || !bytes.Contains(out, []byte("--- PASS: TestHostKindChild")) {
				t.Fatalf("child: %v\n%s", err, out)
			}
		})
	}
}

func TestHostKindChild(t *testing.T) {
	host := os.Getenv(childEnv)
	if host == "" {
		t.Skip("run by TestHostKinds")
	}
	// Inputs over smallInput, so that auto tries the GPU.
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(7, 19))
	seq := make([]byte, 700_000)
	for i := range seq {
		seq[i] = "acgt"[rng.IntN(4)]
	}
	ref, reads := filepath.Join(dir, "ref.fa"), filepath.Join(dir, "reads.fa")
	var rb bytes.Buffer
	for i := 0; i+150 <= len(seq); i += 151 {
		fmt.Fprintf(&rb, ">r%d\n%s\n", i, seq[i:i+150])
	}
	if os.WriteFile(ref, append([]byte(">ref\n"), append(seq, '\n')...), 0o644) != nil || os.WriteFile(reads, rb.Bytes(), 0o644) != nil {
		t.Fatal("writing the inputs")
	}
	want, _, _ := runSapipe(t, nil, "mummer", "--device", "cpu", "-maxmatch", "-l", "30", ref, reads)
	wantNote := map[string]string{
		"nodriver": "",
		"nodevice": "sapipe: using the CPU: no usable GPU: cuInit: CUDA_ERROR_NO_DEVICE (no CUDA-capable device is detected)\n",
		"broken":   "sapipe: using the CPU: no usable GPU: unusable CUDA driver: cannot load ",
	}[host]
	out, stderr, st := runSapipe(t, nil, "mummer", "-maxmatch", "-l", "30", ref, reads)
	if st != 0 || !bytes.Equal(out, want) || len(out) == 0 {
		t.Errorf("mummer: status %d, %d bytes out (want %d), stderr %q", st, len(out), len(want), stderr)
	}
	if wantNote == "" && len(stderr) != 0 || !strings.HasPrefix(string(stderr), wantNote) || bytes.Count(stderr, []byte("\n")) > 1 {
		t.Errorf("mummer: stderr %q, want %q", stderr, wantNote)
	}
	// -v says why the CPU is used, on every kind of host.
	if _, stderr, st := runSapipe(t, nil, "mummer", "-v", "-maxmatch", "-l", "30", ref, reads); st != 0 || !bytes.Contains(stderr, []byte("sapipe: using the CPU: no usable GPU: ")) {
		t.Errorf("mummer -v: status %d, stderr %q", st, stderr)
	}
	if _, stderr, st := runSapipe(t, nil, "mummer", "-q", "-maxmatch", "-l", "30", ref, reads); st != 0 || len(stderr) != 0 {
		t.Errorf("mummer -q: status %d, stderr %q", st, stderr)
	}
	// --device gpu is an error, in one line.
	if out, stderr, st := runSapipe(t, nil, "mummer", "--device", "gpu", ref, reads); st != 1 || len(out) != 0 ||
		!strings.HasPrefix(string(stderr), "sapipe: --device gpu: no usable GPU: ") || bytes.Count(stderr, []byte("\n")) != 1 {
		t.Errorf("--device gpu: status %d, stderr %q", st, stderr)
	}
	out, stderr, st = runSapipe(t, nil, "--version")
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	gpuLine := lines[len(lines)-1]
	switch {
	case st != 0 || len(stderr) != 0:
		t.Errorf("--version: status %d, stderr %q", st, stderr)
	case host == "nodriver" && gpuLine != "gpu: none":
		t.Errorf("--version: %q, want %q", gpuLine, "gpu: none")
	case host != "nodriver" && !strings.HasPrefix(gpuLine, "gpu: none (no usable GPU: "):
		t.Errorf("--version: %q, want gpu: none and why", gpuLine)
	}
}

// TestIndexOnGPU: an index file built on the GPU (every page's arrays and k-mer table made there)
// is the CPU's, byte for byte, for references of one and several pages, with runs of n; -v says
// where the pages were built. Skipped without a GPU (failed with SAPIPE_REQUIRE_GPU=1).
func TestIndexOnGPU(t *testing.T) {
	if err := noGPU(); err != nil {
		if os.Getenv("SAPIPE_REQUIRE_GPU") >= "1" {
			t.Fatalf("SAPIPE_REQUIRE_GPU=1 but no GPU: %v", err)
		}
		t.Skipf("no GPU: %v", err)
	}
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(7, 8))
	var fa bytes.Buffer
	var all []byte
	for r := range 5 {
		fmt.Fprintf(&fa, ">rec%d\n", r)
		s := make([]byte, 20000+rng.IntN(30000))
		for i := range s {
			s[i] = "acgt"[rng.IntN(4)]
		}
		if len(all) > 5000 { // a repeat of an earlier stretch, and a run of n
			k := rng.IntN(len(all) - 4000)
			copy(s[100:], all[k:k+4000])
			copy(s[9000:], bytes.Repeat([]byte("n"), 500))
		}
		all = append(all, s...)
		fa.Write(s)
		fa.WriteByte('\n')
	}
	ref := filepath.Join(dir, "ref.fa")
	writeFile(t, ref, fa.Bytes())
	for _, ps := range []string{"0", "30000"} {
		var files [2][]byte
		for i, dev := range []string{"cpu", "gpu"} {
			out := filepath.Join(dir, dev+ps+".sai")
			_, stderr, st := runSapipe(t, nil, "index", "-v", "--device", dev, "--page-size", ps, "-o", out, ref)
			if st != 0 {
				t.Fatalf("index --device %s --page-size %s: status %d: %s", dev, ps, st, stderr)
			}
			if dev == "gpu" && !strings.Contains(string(stderr), "suffix array, rank structure, LCP and") {
				t.Errorf("--page-size %s: -v does not say the pages were built on the GPU: %s", ps, stderr)
			}
			files[i], _ = os.ReadFile(out)
		}
		if len(files[0]) == 0 || !bytes.Equal(files[0], files[1]) {
			t.Errorf("--page-size %s: the GPU's index file (%d bytes) differs from the CPU's (%d bytes)", ps, len(files[1]), len(files[0]))
		}
	}
}
