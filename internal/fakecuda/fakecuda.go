// Package fakecuda builds stand-in CUDA driver libraries for tests of the hosts sapipe meets: a
// driver that is installed but finds no device, or that is too old, without a GPU or NVIDIA's
// software. The library defines every entry point sapipe binds; cuInit returns the result asked
// for, and every other call fails. Tests point SAPIPE_LIBCUDA at it in a child process (the
// driver is loaded once a process).
package fakecuda

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// CUresults a stand-in driver's cuInit can return, with the names and descriptions NVIDIA's
// driver gives them.
const (
	NoDevice           = 100 // CUDA_ERROR_NO_DEVICE
	InsufficientDriver = 35  // CUDA_ERROR_INSUFFICIENT_DRIVER
)

var names = map[int]string{
	NoDevice:           "CUDA_ERROR_NO_DEVICE",
	InsufficientDriver: "CUDA_ERROR_INSUFFICIENT_DRIVER",
}

var descs = map[int]string{
	NoDevice:           "no CUDA-capable device is detected",
	InsufficientDriver: "CUDA driver version is insufficient for CUDA runtime version",
}

// ErrNoCompiler reports a host without a C compiler, where no stand-in can be built; tests skip.
var ErrNoCompiler = errors.New("no C compiler (cc or gcc) to build a stand-in CUDA driver")

// Build writes a stand-in libcuda.so.1 into dir that defines entryPoints (cuda.EntryPoints()) and
// whose cuInit returns initResult, and returns its path.
func Build(dir string, initResult int, entryPoints []string) (string, error) {
	cc := ""
	for _, c := range []string{"cc", "gcc"} {
		if p, err := exec.LookPath(c); err == nil {
			cc = p
			break
		}
	}
	if cc == "" {
		return "", ErrNoCompiler
	}
	var src strings.Builder
	fmt.Fprintf(&src, "int cuInit(unsigned int flags) { (void)flags; return %d; }\n", initResult)
	fmt.Fprintf(&src, "int cuGetErrorName(int res, const char **s) { *s = res == %d ? %q : \"CUDA_ERROR_UNKNOWN\"; return 0; }\n",
		initResult, names[initResult])
	fmt.Fprintf(&src, "int cuGetErrorString(int res, const char **s) { *s = res == %d ? %q : \"unknown error\"; return 0; }\n",
		initResult, descs[initResult])
	for _, name := range entryPoints {
		switch name {
		case "cuInit", "cuGetErrorName", "cuGetErrorString":
			continue
		}
		fmt.Fprintf(&src, "int %s(void) { return 999; }\n", name)
	}
	c := filepath.Join(dir, "fakecuda.c")
	if err := os.WriteFile(c, []byte(src.String()), 0o644); err != nil {
		return "", err
	}
	lib := filepath.Join(dir, "libcuda.so.1")
	if out, err := exec.Command(cc, "-shared", "-fPIC", "-o", lib, c).CombinedOutput(); err != nil {
		return "", fmt.Errorf("building a stand-in CUDA driver: %v: %s", err, out)
	}
	return lib, nil
}

// ChildEnv names the variable that tells a test binary it runs as the child of another test: the
// CUDA driver is loaded once a process, so only a fresh process sees another kind of host.
const ChildEnv = "SAPIPE_TEST_CHILD"

// RunChild runs the test name in a fresh process of this test binary, with env added and
// ChildEnv set to name, and fails t unless that test passes there. In a child it skips t.
func RunChild(t testing.TB, name string, env ...string) {
	t.Helper()
	if os.Getenv(ChildEnv) != "" {
		t.Skip("in a child")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^"+name+"$", "-test.v")
	cmd.Env = append(os.Environ(), append(env, ChildEnv+"="+name, "SAPIPE_REQUIRE_GPU=")...)
	out, err := cmd.CombinedOutput()
	if err != nil || !bytes.Contains(out, []byte("--- PASS: "+name)) {
		t.Fatalf("child: %v\n%s", err, out)
	}
}

// InChild skips t unless this process is the child that RunChild started for the test name.
func InChild(t testing.TB, name string) {
	if os.Getenv(ChildEnv) != name {
		t.Skip("run as a child by another test")
	}
}
