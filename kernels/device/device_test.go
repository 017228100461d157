package device

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sapipe/sapipe/internal/fakecuda"
	"github.com/sapipe/sapipe/kernels/cuda"
)

// gpuUsable says whether the CUDA backend opens here.
func gpuUsable() (bool, error) {
	b, err := cuda.Open(0, cuda.Options{})
	if err != nil {
		return false, err
	}
	b.Close()
	return true, nil
}

// TestOpen covers whatever host it runs on: without any CUDA driver auto gives the CPU in silence
// (a note only with Verbose); with a driver but no usable GPU, the CPU and a one-line note saying
// why; with a GPU, the GPU. gpu fails with ErrNoGPU unless there is one. The other kinds of host
// are made in child processes below.
func TestOpen(t *testing.T) {
	usable, why := gpuUsable()
	if !usable && os.Getenv("SAPIPE_REQUIRE_GPU") >= "1" /* 1, or the cards needed */ {
		t.Fatalf("SAPIPE_REQUIRE_GPU=1 but no GPU: %v", why)
	}
	for _, verbose := range []bool{false, true} {
		b, note, err := Open("auto", Options{Threads: 2, Verbose: verbose})
		if err != nil {
			t.Fatalf("auto: %v", err)
		}
		switch {
		case usable:
			if !strings.HasPrefix(b.Name(), "gpu:0") || note != "" {
				t.Errorf("auto with a GPU: backend %q, note %q", b.Name(), note)
			}
		case errors.Is(why, cuda.ErrNoDriver) && !verbose:
			if b.Name() != "cpu" || note != "" {
				t.Errorf("auto without a driver: backend %q, note %q; want the CPU in silence", b.Name(), note)
			}
		default:
			if b.Name() != "cpu" || !strings.HasPrefix(note, "using the CPU: no usable GPU: ") || strings.ContainsAny(note, "\r\n") {
				t.Errorf("auto without a usable GPU (verbose %v): backend %q, note %q", verbose, b.Name(), note)
			}
			t.Logf("note: %s", note)
		}
		b.Close()
	}

	b, _, err := Open("gpu", Options{})
	if usable {
		if err != nil {
			t.Errorf("gpu: %v", err)
		} else {
			b.Close()
		}
	} else if !errors.Is(err, ErrNoGPU) {
		t.Errorf("gpu without a GPU: %v, want ErrNoGPU", err)
	}
	if _, _, err := Open("gpu:999", Options{}); !errors.Is(err, ErrNoGPU) {
		t.Errorf("gpu:999: %v, want ErrNoGPU", err)
	}
	for _, spec := range []string{"gpu:0,1", "gpu:all", "gpu:3,0"} {
		b, _, err := Open(spec, Options{})
		if err == nil {
			b.Close()
		} else if !errors.Is(err, ErrNoGPU) {
			t.Errorf("%q: %v, want a backend or ErrNoGPU", spec, err)
		}
	}
	for _, bad := range []string{"gpu:", "gpu:-1", "gpu:x", "tpu", "GPU", "gpu:0,0", "gpu:1,", "gpu:,1", "gpu:0,x", "gpu:ALL"} {
		if _, _, err := Open(bad, Options{}); err == nil || errors.Is(err, ErrNoGPU) {
			t.Errorf("%q: %v, want a usage error", bad, err)
		}
	}
	b, note, err := Open("cpu", Options{})
	if err != nil || b.Name() != "cpu" || note != "" {
		t.Errorf("cpu: %v, %v, %q", b, err, note)
	}
}

// TestOpenNoDriver: a host without any CUDA driver library (a CPU node).
func TestOpenNoDriver(t *testing.T) {
	fakecuda.RunChild(t, "TestOpenNoDriverChild", cuda.LibraryEnv+"=/nonexistent/libcuda.so.1")
}

func TestOpenNoDriverChild(t *testing.T) {
	fakecuda.InChild(t, "TestOpenNoDriverChild")
	b, note, err := Open("auto", Options{Threads: 1})
	if err != nil || b.Name() != "cpu" || note != "" {
		t.Errorf("auto: %v, %q, %v; want the CPU and no note", b, note, err)
	}
	want := "using the CPU: no usable GPU: no CUDA driver: /nonexistent/libcuda.so.1 not found"
	if b, note, err := Open("auto", Options{Threads: 1, Verbose: true}); err != nil || b.Name() != "cpu" || note != want {
		t.Errorf("auto, verbose: %v, %q, %v; want the note %q", b, note, err, want)
	}
	if _, _, err := Open("gpu", Options{}); !errors.Is(err, ErrNoGPU) || !errors.Is(err, cuda.ErrNoDriver) {
		t.Errorf("gpu: %v, want ErrNoGPU wrapping cuda.ErrNoDriver", err)
	}
	if _, _, err := Open("gpu:1", Options{}); !errors.Is(err, ErrNoGPU) {
		t.Errorf("gpu:1: %v, want ErrNoGPU", err)
	}
}

// TestOpenNoDevice: a driver is installed but finds no GPU; auto says so in one line.
func TestOpenNoDevice(t *testing.T) {
	lib, err := fakecuda.Build(t.TempDir(), fakecuda.NoDevice, cuda.EntryPoints())
	if errors.Is(err, fakecuda.ErrNoCompiler) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	fakecuda.RunChild(t, "TestOpenNoDeviceChild", cuda.LibraryEnv+"="+lib)
}

func TestOpenNoDeviceChild(t *testing.T) {
	fakecuda.InChild(t, "TestOpenNoDeviceChild")
	want := "using the CPU: no usable GPU: cuInit: CUDA_ERROR_NO_DEVICE (no CUDA-capable device is detected)"
	for _, verbose := range []bool{false, true} {
		if b, note, err := Open("auto", Options{Threads: 1, Verbose: verbose}); err != nil || b.Name() != "cpu" || note != want {
			t.Errorf("auto: %v, %q, %v; want the note %q", b, note, err, want)
		}
	}
	if _, _, err := Open("gpu", Options{}); !errors.Is(err, ErrNoGPU) || errors.Is(err, cuda.ErrNoDriver) {
		t.Errorf("gpu: %v, want ErrNoGPU, not ErrNoDriver", err)
	}
}

// TestOpenBrokenDriver: the library is there but is not one (a damaged install); one line.
func TestOpenBrokenDriver(t *testing.T) {
	lib := filepath.Join(t.TempDir(), "libcuda.so.1")
	if err := os.WriteFile(lib, []byte("not a library\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fakecuda.RunChild(t, "TestOpenBrokenDriverChild", cuda.LibraryEnv+"="+lib)
}

func TestOpenBrokenDriverChild(t *testing.T) {
	fakecuda.InChild(t, "TestOpenBrokenDriverChild")
	b, note, err := Open("auto", Options{Threads: 1})
	if err != nil || b.Name() != "cpu" || !strings.HasPrefix(note, "using the CPU: no usable GPU: unusable CUDA driver: cannot load ") ||
		strings.ContainsAny(note, "\r\n") {
		t.Errorf("auto: %v, %q, %v; want one line saying the driver cannot be loaded", b, note, err)
	}
}

func TestOrdinals(t *testing.T) {
	for _, c := range []struct {
		spec string
		want []int
	}{
		{"gpu:0", []int{0}}, {"gpu:2", []int{2}}, {"gpu:0,2", []int{0, 2}}, {"gpu:3,1,0", []int{3, 1, 0}},
		{"gpu:0,0", nil}, {"gpu:all", nil}, {"gpu", nil}, {"gpu:", nil}, {"gpu:-1", nil}, {"gpu:1,,2", nil}, {"cpu", nil},
	} {
		got, ok := Ordinals(c.spec)
		if ok != (c.want != nil) || !slices.Equal(got, c.want) {
			t.Errorf("%q: %v, %v; want %v", c.spec, got, ok, c.want)
		}
	}
}
