package main

import (
	"bytes"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/sapipe/sapipe/kernels"
	"github.com/sapipe/sapipe/kernels/cpu"
	"github.com/sapipe/sapipe/kernels/device"
	"github.com/sapipe/sapipe/stages"
)

// fakeGPU is the CPU backend dressed as the CUDA one: it makes a block's transform and samples
// itself, from the CPU's code, so that compress takes the GPU's path.
type fakeGPU struct{ *cpu.Backend }

func (fakeGPU) Name() string { return "gpu:0 (fake)" }

func (g fakeGPU) BWTSampled(text, dst []byte, shift uint, threads int) (int, []uint32, error) {
	sa := make([]int32, len(text))
	if err := g.SuffixArray(text, sa); err != nil {
		return 0, nil, err
	}
	p, samples := cpu.BWTSampled(text, sa, dst, shift, threads)
	return p, samples, nil
}

// fakeOpen replaces the GPU's opening for the test: each open is counted, waits for release
// when it is set (after closing called), and fails with fail when it is set. The thresholds of
// auto are lowered to 64 KiB blocks and 16 KiB read a thread.
type fakeOpen struct {
	calls   atomic.Int32
	called  chan struct{}
	release chan struct{}
	fail    error
}

func useFakeGPU(t *testing.T, release chan struct{}, fail error) *fakeOpen {
	f := &fakeOpen{called: make(chan struct{}, 1), release: release, fail: fail}
	open, large, per := openCompressGPU, compressLargeBlock, compressStartPerThread
	t.Cleanup(func() { openCompressGPU, compressLargeBlock, compressStartPerThread = open, large, per })
	compressLargeBlock, compressStartPerThread = 64<<10, 16<<10
	openCompressGPU = func(spec string, opts device.Options) (kernels.Backend, error) {
		f.calls.Add(1)
		select {
		case f.called <- struct{}{}:
		default:
		}
		if f.release != nil {
			<-f.release
		}
		if f.fail != nil {
			return nil, f.fail
		}
		return fakeGPU{cpu.New(opts.Threads)}, nil
	}
	return f
}

func TestCompressDeviceStart(t *testing.T) {
	dir := t.TempDir()
	tiny, big := filepath.Join(dir, "tiny"), filepath.Join(dir, "big")
	writeFile(t, tiny, compressInput(3, 1000))
	writeFile(t, big, compressInput(4, 256<<10))
	compressed := func(args ...string) ([]byte, string, int) {
		t.Helper()
		out, stderr, st := runSapipe(t, nil, append([]string{"compress", "-c"}, args...)...)
		return out, string(stderr), st
	}
	want := func(args ...string) []byte {
		t.Helper()
		out, stderr, st := compressed(append([]string{"--device", "cpu"}, args...)...)
		if st != 0 || stderr != "" {
			t.Fatalf("--device cpu %v: status %d: %s", args, st, stderr)
		}
		return out
	}
	wantTiny, wantBig := want(tiny), want("-b", "8k", "-p", "2", big)

	t.Run("auto, a small input", func(t *testing.T) {
		f := useFakeGPU(t, nil, nil)
		out, stderr, st := compressed("--device", "auto", "-v", tiny)
		if st != 0 || !bytes.Equal(out, wantTiny) || !strings.Contains(stderr, "1 blocks on cpu") {
			t.Errorf("status %d, output same %v: %s", st, bytes.Equal(out, wantTiny), stderr)
		}
		if n := f.calls.Load(); n != 0 {
			t.Errorf("the GPU opened %d times for 1000 bytes", n)
		}
	})
	t.Run("auto, much data", func(t *testing.T) {
		f := useFakeGPU(t, nil, nil)
		out, stderr, st := compressed("--device", "auto", "-b", "8k", "-p", "2", big, big)
		if st != 0 || stderr != "" || !bytes.Equal(out, append(append([]byte(nil), wantBig...), wantBig...)) {
			t.Errorf("status %d, output same %v: %s", st, bytes.Equal(out, wantBig), stderr)
		}
		if n := f.calls.Load(); n != 1 {
			t.Errorf("the GPU opened %d times, want once", n)
		}
	})
	t.Run("large blocks wait", func(t *testing.T) {
		for _, spec := range []string{"auto", "gpu", "gpu:0"} {
			release := make(chan struct{})
			f := useFakeGPU(t, release, nil)
			go func() {
				<-f.called
				close(release)
			}()
			w := want("-b", "64k", big)
			out, stderr, st := compressed("--device", spec, "-b", "64k", "-v", big)
			if st != 0 || !bytes.Equal(out, w) || !strings.Contains(stderr, "4 blocks on gpu:0 (fake)") || strings.Count(stderr, "\n") != 1 {
				t.Errorf("%s: status %d, output same %v: %s", spec, st, bytes.Equal(out, w), stderr)
			}
		}
	})
	t.Run("gpu without a GPU", func(t *testing.T) {
		for _, spec := range []string{"gpu", "gpu:1"} {
			for _, args := range [][]string{{tiny}, {"-b", "64k", big}} { // on the CPU; waiting
				useFakeGPU(t, nil, fmt.Errorf("%w: fake", device.ErrNoGPU))
				in := filepath.Join(t.TempDir(), "in")
				data, _ := os.ReadFile(args[len(args)-1])
				writeFile(t, in, data)
				args = append(append([]string{"compress", "--device", spec}, args[:len(args)-1]...), in)
				out, stderr, st := runSapipe(t, nil, args...)
				if st != 1 || len(out) != 0 || string(stderr) != "sapipe: --device "+spec+": no usable GPU: fake\n" {
					t.Errorf("%v: status %d, stderr %q", args, st, stderr)
				}
				if entries, _ := os.ReadDir(filepath.Dir(in)); len(entries) != 1 {
					t.Errorf("%v: left %d files beside the input, or removed it", args, len(entries)-1)
				}
			}
		}
	})
	t.Run("auto without a GPU", func(t *testing.T) {
		w := want("-b", "64k", big)
		for _, quiet := range []bool{false, true} {
			useFakeGPU(t, nil, fmt.Errorf("%w: fake", device.ErrNoGPU))
			args := []string{"--device", "auto", "-b", "64k", big}
			if quiet {
				args = append([]string{"-q"}, args...)
			}
			out, stderr, st := compressed(args...)
			wantErr := "sapipe: using the CPU: no usable GPU: fake\n"
			if quiet {
				wantErr = ""
			}
			if st != 0 || !bytes.Equal(out, w) || stderr != wantErr {
				t.Errorf("%v: status %d, output same %v, stderr %q", args, st, bytes.Equal(out, w), stderr)
			}
		}
	})
}

func TestBlocksOn(t *testing.T) {
	for _, c := range []struct {
		st   stages.CompressStats
		want string
	}{
		{stages.CompressStats{}, "0 blocks"},
		{stages.CompressStats{Blocks: 3, On: []stages.BlocksOn{{Backend: "cpu", Blocks: 3}}}, "3 blocks on cpu"},
		{stages.CompressStats{Blocks: 25, On: []stages.BlocksOn{{Backend: "cpu", Blocks: 6}, {Backend: "gpu:0 (NVIDIA H200)", Blocks: 19}}},
			"25 blocks: 19 on gpu:0 (NVIDIA H200), 6 on the CPU while it started"},
	} {
		if got := blocksOn(c.st); got != c.want {
			t.Errorf("%+v: %q, want %q", c.st, got, c.want)
		}
	}
}

// TestCompressVerboseLZP checks that -v says how many blocks were sorted as their LZP text, and
// says nothing of it where none was.
func TestCompressVerboseLZP(t *testing.T) {
	dir := t.TempDir()
	rep, plain := filepath.Join(dir, "rep"), filepath.Join(dir, "plain")
	chunk := make([]byte, 16<<10) // random bytes: a context says where in the chunk it is
	rand.New(rand.NewSource(5)).Read(chunk)
	writeFile(t, rep, bytes.Repeat(chunk, 20))
	writeFile(t, plain, bytes.Repeat(chunk, 1))
	for _, c := range []struct {
		path, want string
	}{
		{rep, "; 1 sorted as their LZP text, "},
		{plain, ""},
	} {
		_, stderr, st := runSapipe(t, nil, "compress", "-c", "-v", "--device", "cpu", c.path)
		if st != 0 || strings.Count(string(stderr), "\n") != 1 || c.want != "" && !strings.Contains(string(stderr), c.want) || c.want == "" && strings.Contains(string(stderr), "LZP text") {
			t.Errorf("%s: status %d: %s", filepath.Base(c.path), st, stderr)
		}
	}
}
