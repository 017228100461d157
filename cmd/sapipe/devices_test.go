package main

import (
	"bytes"
	"os"
	"regexp"
	"testing"

	"github.com/sapipe/sapipe/kernels/cuda"
)

// TestDevices: `sapipe devices` lists GPUs one per line, or says in one line why there is none,
// and exits 0 either way. On the GPU machine (SAPIPE_REQUIRE_GPU=1) it must list one.
func TestDevices(t *testing.T) {
	out, stderr, st := runSapipe(t, nil, "devices")
	if st != 0 || len(stderr) != 0 {
		t.Fatalf("status %d, stderr %q", st, stderr)
	}
	t.Logf("%s", out)
	infos, err := cuda.Devices()
	if err != nil || len(infos) == 0 {
		if os.Getenv("SAPIPE_REQUIRE_GPU") >= "1" /* 1, or the cards needed */ {
			t.Fatalf("SAPIPE_REQUIRE_GPU=1 but no GPU listed: %s", out)
		}
		if !bytes.HasPrefix(out, []byte("no usable GPU: ")) || bytes.Count(out, []byte("\n")) != 1 {
			t.Errorf("without a GPU: %q, want one line saying why", out)
		}
		return
	}
	line := regexp.MustCompile(`^gpu:\d+  .+  \d+\.\d GiB  compute \d+\.\d  \d+ SMs`)
	lines := bytes.Split(bytes.TrimSuffix(out, []byte("\n")), []byte("\n"))
	if len(lines) != len(infos) {
		t.Fatalf("%d lines for %d GPUs: %q", len(lines), len(infos), out)
	}
	for _, l := range lines {
		if !line.Match(l) {
			t.Errorf("line %q does not match %v", l, line)
		}
	}
}

func TestDevicesUsage(t *testing.T) {
	out, stderr, st := runSapipe(t, nil, "devices", "extra")
	if st != 1 || len(out) != 0 || !bytes.Contains(stderr, []byte("devices takes no arguments")) {
		t.Errorf("status %d, stdout %q, stderr %q", st, out, stderr)
	}
}
