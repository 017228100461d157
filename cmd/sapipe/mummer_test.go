package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// runSapipe runs the CLI in-process and returns stdout, stderr and the exit status.
func runSapipe(t testing.TB, stdin []byte, args ...string) (stdout, stderr []byte, status int) {
	t.Helper()
	var o, e bytes.Buffer
	status = run(context.Background(), append([]string{"sapipe"}, args...), bytes.NewReader(stdin), &o, &e)
	return o.Bytes(), e.Bytes(), status
}

// TestGolden runs every case made with MUMmer 3.23 (testdata/mummer/*/args) and compares stdout
// byte for byte, up to the order of lines tied on one query position, and the exit status.
func TestGolden(t *testing.T) {
	dirs, err := filepath.Glob("../../testdata/mummer/*/args")
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no golden cases found: %v", err)
	}
	for _, a := range dirs {
		dir, _ := filepath.Abs(filepath.Dir(a))
		t.Run(filepath.Base(dir), func(t *testing.T) {
			args := strings.Fields(string(must(os.ReadFile(filepath.Join(dir, "args")))))
			want := must(os.ReadFile(filepath.Join(dir, "expected.out")))
			wantStatus, _ := strconv.Atoi(strings.TrimSpace(string(must(os.ReadFile(filepath.Join(dir, "exit_status"))))))
			t.Chdir(dir)
			got, stderr, status := runSapipe(t, nil, append([]string{"mummer"}, args...)...)
			if status != wantStatus {
				t.Fatalf("exit status %d, want %d; stderr: %s", status, wantStatus, stderr)
			}
			if status != 0 && len(bytes.TrimSpace(stderr)) == 0 {
				t.Errorf("failed without a word on stderr")
			}
			if bytes.Count(stderr, []byte("\n")) > 1 {
				t.Errorf("stderr is more than one line: %q", stderr)
			}
			s := slices.Contains(args, "-s")
			if g, w := canonical(got, s), canonical(want, s); !bytes.Equal(g, w) {
				t.Fatalf("output differs from mummer's: %s", firstDiff(g, w))
			}
		})
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
