package main

import (
	"bufio"
	"bytes"
	"fmt"
	"image/png"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// rearrangedLambda returns the lambda genome with an inversion of [inv0, inv1) (0-based), then
// rotated left by rot, with a few substitutions; and a function that maps a 1-based reference
// position to the 1-based query position it went to.
func rearrangedLambda(t *testing.T, ref string) (qry string, where func(x int) int) {
	const inv0, inv1, rot = 15000, 25000, 30000
	n := len(ref)
	q := ref[:inv0] + revComp(ref[inv0:inv1]) + ref[inv1:]
	q = q[rot:] + q[:rot]
	b := []byte(q)
	rng := rand.New(rand.NewPCG(48502, 1))
	for range 200 {
		i := rng.IntN(n)
		b[i] = "acgt"[(strings.IndexByte("acgt", b[i])+1+rng.IntN(3))%4]
	}
	where = func(x int) int {
		i := x - 1
		if i >= inv0 && i < inv1 {
			i = inv0 + inv1 - 1 - i
		}
		return (i-rot+n)%n + 1
	}
	return string(b), where
}

// readPlotData reads a gnuplot data file of mummerplot: segments of two points, "x y" per line,
// blank lines between segments.
func readPlotData(t *testing.T, path string) [][4]int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var segs [][4]int
	var pts [][2]int
	flush := func() {
		if len(pts) == 2 {
			segs = append(segs, [4]int{pts[0][0], pts[0][1], pts[1][0], pts[1][1]})
		} else if len(pts) != 0 {
			t.Fatalf("%s: a segment of %d points", path, len(pts))
		}
		pts = pts[:0]
	}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "#") {
			continue
		}
		if line == "" {
			flush()
			continue
		}
		var x, y int
		if _, err := fmt.Sscan(line, &x, &y); err != nil {
			t.Fatalf("%s: %q: %v", path, line, err)
		}
		pts = append(pts, [2]int{x, y})
	}
	flush()
	// mummerplot pads each file with a dummy segment at the origin.
	var real [][4]int
	for _, s := range segs {
		if s != [4]int{} {
			real = append(real, s)
		}
	}
	return real
}

// TestMummerplot: MUMmer's own plotting script, a real client of the output format, draws sapipe's
// matches of a rearranged lambda genome against the original: every plotted segment lies where
// the rearrangement put it, forward matches as forward segments and the inversion as reverse
// ones, and the PNG holds a real plot. With mummer installed, the plot data equal those drawn
// from mummer's own output.
func TestMummerplot(t *testing.T) {
	for _, tool := range []string{"mummerplot", "gnuplot"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed (Debian: apt-get install mummer gnuplot-nox)", tool)
		}
	}
	dir := t.TempDir()
	refPath, _ := filepath.Abs("../../testdata/mummer/lambda-reads/ref.fa")
	ref := strings.ToLower(sequenceOf(must(os.ReadFile(refPath))))
	qry, where := rearrangedLambda(t, ref)
	qryPath := filepath.Join(dir, "qry.fa")
	writeFasta(t, qryPath, []fastaRec{{"lambda_rearranged", qry}}, 60, false)
	mums := filepath.Join(dir, "sapipe.mums")
	if _, stderr, st := runSapipe(t, nil, "mummer", "-mum", "-b", "-c", "-o", mums, refPath, qryPath); st != 0 {
		t.Fatalf("sapipe mummer: %s", stderr)
	}
	plot := func(prefix, mums string) (fwd, rev [][4]int) {
		cmd := exec.Command("mummerplot", "--png", "-p", prefix, mums)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("mummerplot: %v\n%s", err, out)
		}
		return readPlotData(t, filepath.Join(dir, prefix+".fplot")), readPlotData(t, filepath.Join(dir, prefix+".rplot"))
	}
	fwd, rev := plot("sapipe", mums)
	if len(fwd) < 20 || len(rev) < 5 {
		t.Fatalf("%d forward and %d reverse segments plotted", len(fwd), len(rev))
	}
	// Every plotted point is where the rearrangement put that base, but for a few bases at the
	// inversion's edges, where a match may go on by chance.
	check := func(s [4]int, dir int) (bases int) {
		if s[2] <= s[0] || s[3]-s[1] != dir*(s[2]-s[0]) {
			t.Errorf("segment %v: not a line of slope %d", s, dir)
			return 0
		}
		off, inInversion := 0, 0
		for x := s[0]; x <= s[2]; x++ {
			if where(x) != s[1]+dir*(x-s[0]) {
				off++
			}
			if x > 15000 && x <= 25000 {
				inInversion++
			}
		}
		n := s[2] - s[0] + 1
		if off > 4 || dir < 0 && inInversion < n-4 || dir > 0 && inInversion > 4 {
			t.Errorf("segment %v (slope %d): %d of %d bases off, %d in the inversion", s, dir, off, n, inInversion)
		}
		return n
	}
	var fwdBases, revBases int
	for _, s := range fwd {
		fwdBases += check(s, 1)
	}
	for _, s := range rev {
		revBases += check(s, -1)
	}
	// 200 substitutions cut the genome into pieces; most of it is still matched.
	if fwdBases < 30000 || revBases < 7000 {
		t.Errorf("the plot covers %d forward and %d reverse bases of 38502 and 10000", fwdBases, revBases)
	}

	pngPath := filepath.Join(dir, "sapipe.png")
	f, err := os.Open(pngPath)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(f)
	f.Close()
	if err != nil {
		t.Fatalf("%s: %v", pngPath, err)
	}
	colored := map[[3]uint32]int{} // pixels of saturated colors: the plotted matches
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			hi, lo := max(r, g, bl), min(r, g, bl)
			if hi-lo > 0x4000 {
				colored[[3]uint32{r >> 8, g >> 8, bl >> 8}]++
			}
		}
	}
	var counts []int
	for _, n := range colored {
		if n > 500 {
			counts = append(counts, n)
		}
	}
	if b.Dx() < 400 || b.Dy() < 400 || len(counts) < 2 {
		t.Errorf("%s: %dx%d pixels, colors of more than 500 pixels: %d (want forward and reverse)", pngPath, b.Dx(), b.Dy(), len(counts))
	}
	if dst := os.Getenv("SAPIPE_KEEP_PLOT"); dst != "" {
		os.WriteFile(dst, must(os.ReadFile(pngPath)), 0o644)
	}

	if _, err := exec.LookPath("mummer"); err != nil {
		return
	}
	var out bytes.Buffer
	cmd := exec.Command("mummer", "-mum", "-b", "-c", refPath, qryPath)
	cmd.Stdout = &out
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "mummer.mums"), out.Bytes(), 0o644)
	mf, mr := plot("mummer", filepath.Join(dir, "mummer.mums"))
	if fmt.Sprint(mf, mr) != fmt.Sprint(fwd, rev) {
		t.Errorf("the plot of sapipe's output differs from the plot of mummer's")
	}
}
