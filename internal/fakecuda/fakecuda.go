// Package fakecuda builds stand-in CUDA driver libraries for tests of the hosts sapipe meets: a
// driver that is installed but finds no device, or that is too old, without a GPU or NVIDIA's
// software. The library defines every entry point sapipe binds; cuInit returns the result asked
// for, and every other call fails. Tests point SAPIPE_LIBCUDA at it in a child process (the
// driver is loaded once a process).
package fakecuda

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
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
