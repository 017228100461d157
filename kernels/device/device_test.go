package device

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"

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

// TestOpen covers both kinds of host: without a usable GPU (no driver, or no device) auto gives
// the CPU and a one-line note saying why, and gpu fails with ErrNoGPU; with one, both give it.
func TestOpen(t *testing.T) {
	usable, why := gpuUsable()
	if !usable && os.Getenv("SAPIPE_REQUIRE_GPU") == "1" {
		t.Fatalf("SAPIPE_REQUIRE_GPU=1 but no GPU: %v", why)
	}
	b, note, err := Open("auto", Options{Threads: 2})
	if err != nil {
		t.Fatalf("auto: %v", err)
	}
	if usable {
		if !strings.HasPrefix(b.Name(), "gpu:0") || note != "" {
			t.Errorf("auto with a GPU: backend %q, note %q", b.Name(), note)
		}
	} else {
		if b.Name() != "cpu" || !strings.HasPrefix(note, "using the CPU: ") || strings.Contains(note, "\n") {
			t.Errorf("auto without a GPU: backend %q, note %q", b.Name(), note)
		}
		t.Logf("note: %s", note)
	}
	b.Close()

	b, _, err = Open("gpu", Options{})
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
	for _, bad := range []string{"gpu:", "gpu:-1", "gpu:x", "tpu", "GPU"} {
		if _, _, err := Open(bad, Options{}); err == nil || errors.Is(err, ErrNoGPU) {
			t.Errorf("%q: %v, want a usage error", bad, err)
		}
	}
	b, note, err = Open("cpu", Options{})
	if err != nil || b.Name() != "cpu" || note != "" {
		t.Errorf("cpu: %v, %v, %q", b, err, note)
	}
}

// TestOpenNoDriver runs TestOpenNoDriverChild in a child process without a CUDA driver library.
func TestOpenNoDriver(t *testing.T) {
	if os.Getenv(cuda.LibraryEnv) != "" {
		t.Skip("in the child")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestOpenNoDriverChild$", "-test.v")
	cmd.Env = append(os.Environ(), cuda.LibraryEnv+"=/nonexistent/libcuda.so.1", "SAPIPE_REQUIRE_GPU=")
	out, err := cmd.CombinedOutput()
	if err != nil || !bytes.Contains(out, []byte("--- PASS: TestOpenNoDriverChild")) {
		t.Fatalf("child: %v\n%s", err, out)
	}
}

func TestOpenNoDriverChild(t *testing.T) {
	if os.Getenv(cuda.LibraryEnv) != "/nonexistent/libcuda.so.1" {
		t.Skip("run by TestOpenNoDriver")
	}
	b, note, err := Open("auto", Options{Threads: 1})
	if err != nil || b.Name() != "cpu" || !strings.HasPrefix(note, "using the CPU: no usable GPU: no CUDA driver") {
		t.Errorf("auto: %v, %q, %v", b, note, err)
	}
	if _, _, err := Open("gpu", Options{}); !errors.Is(err, ErrNoGPU) || !errors.Is(err, cuda.ErrNoDriver) && !strings.Contains(err.Error(), "no CUDA driver") {
		t.Errorf("gpu: %v, want ErrNoGPU saying there is no driver", err)
	}
	if _, _, err := Open("gpu:1", Options{}); !errors.Is(err, ErrNoGPU) {
		t.Errorf("gpu:1: %v, want ErrNoGPU", err)
	}
}
