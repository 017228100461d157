package cuda

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/sapipe/sapipe/internal/fakecuda"
	"github.com/sapipe/sapipe/kernels"
	"github.com/sapipe/sapipe/kernels/cpu"
)

// GPU tests skip when no GPU is usable, and fail instead when SAPIPE_REQUIRE_GPU=1 (set on the
// GPU machine by ../shared/tools/gpu-pack.sh). The tests of the no-driver path run everywhere.

// shared is what tests share of the GPUs (a backend, a group), opened once.
type shared[T any] struct {
	once sync.Once
	v    T
	err  error
}

// get opens s the first time and returns it; a test skips without it, and fails instead where
// SAPIPE_REQUIRE_GPU asks for need cards or more (1: the GPU machine's setting).
func (s *shared[T]) get(t testing.TB, need int, open func() (T, error)) T {
	t.Helper()
	s.once.Do(func() { s.v, s.err = open() })
	if s.err != nil {
		if n, _ := strconv.Atoi(os.Getenv("SAPIPE_REQUIRE_GPU")); n >= need {
			t.Fatalf("SAPIPE_REQUIRE_GPU=%d, and the %d GPUs needed are not there: %v", n, need, s.err)
		}
		t.Skipf("no GPU (%d needed): %v", need, s.err)
	}
	return s.v
}

var gpu shared[*Backend]

// gpuBackend returns the shared GPU backend of the tests, or skips (or fails) without one.
func gpuBackend(t testing.TB) *Backend {
	return gpu.get(t, 1, func() (*Backend, error) { return Open(0, Options{Threads: 2}) })
}

// gpuStream returns the test GPU's device, bound to the calling goroutine's thread, and a stream
// of it, destroyed when the test ends. Skipped without a GPU.
func gpuStream(t testing.TB) (*device, *stream) {
	d := gpuBackend(t).dev
	if err := d.bindThread(); err != nil {
		t.Fatal(err)
	}
	s, err := newStream(d)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.destroy)
	return d, s
}

func TestNoDriverLibrary(t *testing.T) {
	_, err := loadDriver([]string{"libcuda-sapipe-missing.so.1"})
	if !errors.Is(err, ErrNoDriver) {
		t.Fatalf("loadDriver of a missing library: %v, want ErrNoDriver", err)
	}
	if want := "no CUDA driver: libcuda-sapipe-missing.so.1 not found"; err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
	_, err = loadDriver([]string{"libcuda-sapipe-missing.so.1", "/nonexistent/libcuda.so"})
	if !errors.Is(err, ErrNoDriver) || err.Error() != "no CUDA driver: libcuda-sapipe-missing.so.1 not found" {
		t.Errorf("two missing libraries: %v", err)
	}
}

// TestDriverMessageDeterministic loads missing and broken libraries from many goroutines at
// once: the loader's message is per OS thread, and each must still get its own, the same every
// time, on one line.
func TestDriverMessageDeterministic(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "libcuda.so.1")
	if err := os.WriteFile(bad, []byte("not a shared object\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	for _, name := range []string{"/nonexistent/libcuda.so.1", bad} {
		_, err := loadDriver([]string{name})
		want[name] = err.Error()
	}
	if !strings.HasPrefix(want[bad], "unusable CUDA driver: cannot load "+bad+": ") {
		t.Errorf("a file that is not a library: %q", want[bad])
	}
	// Many threads make the goroutines move between them, as a loaded host does.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(16))
	var wg sync.WaitGroup
	for i := range 2000 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			name := "/nonexistent/libcuda.so.1"
			if i%2 == 1 {
				name = bad
			}
			_, err := loadDriver([]string{name})
			if err == nil || err.Error() != want[name] || strings.ContainsAny(err.Error(), "\r\n") {
				t.Errorf("%s: %v, want %q", name, err, want[name])
			}
		}()
	}
	wg.Wait()
}

// TestNoDriver runs TestNoDriverChild where the driver library does not exist.
func TestNoDriver(t *testing.T) {
	fakecuda.RunChild(t, "TestNoDriverChild", LibraryEnv+"=/nonexistent/libcuda.so.1")
}

func TestNoDriverChild(t *testing.T) {
	fakecuda.InChild(t, "TestNoDriverChild")
	for i := 0; i < 2; i++ { // the second time from the remembered result
		if _, err := Open(0, Options{}); !errors.Is(err, ErrNoDriver) || err.Error() != "no CUDA driver: /nonexistent/libcuda.so.1 not found" {
			t.Errorf("Open: %v, want ErrNoDriver naming the library", err)
		}
		if infos, err := Devices(); !errors.Is(err, ErrNoDriver) || infos != nil {
			t.Errorf("Devices: %v, %v; want ErrNoDriver", infos, err)
		}
		if _, err := DriverVersion(); !errors.Is(err, ErrNoDriver) {
			t.Errorf("DriverVersion: %v, want ErrNoDriver", err)
		}
	}
}

// TestNoDevice runs TestNoDeviceChild with a stand-in driver that is installed but finds no
// device, as on a node with NVIDIA's driver and no card.
func TestNoDevice(t *testing.T) {
	lib, err := fakecuda.Build(t.TempDir(), fakecuda.NoDevice, EntryPoints())
	if errors.Is(err, fakecuda.ErrNoCompiler) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	fakecuda.RunChild(t, "TestNoDeviceChild", LibraryEnv+"="+lib)
}

func TestNoDeviceChild(t *testing.T) {
	fakecuda.InChild(t, "TestNoDeviceChild")
	want := "cuInit: CUDA_ERROR_NO_DEVICE (no CUDA-capable device is detected)"
	_, err := Open(0, Options{})
	var ce *Error
	if !errors.As(err, &ce) || ce.Result != resultNoDevice || errors.Is(err, ErrNoDriver) || err.Error() != want {
		t.Errorf("Open: %v, want %q", err, want)
	}
	if _, err := Devices(); err == nil || err.Error() != want {
		t.Errorf("Devices: %v, want %q", err, want)
	}
}

// TestOpenWithoutGPU: where no GPU is usable, Open and Devices fail with an error (no panic,
// no exit, nothing printed); where one is, they agree with each other.
func TestOpenWithoutGPU(t *testing.T) {
	infos, derr := Devices()
	b, err := Open(0, Options{})
	if err != nil {
		if os.Getenv("SAPIPE_REQUIRE_GPU") >= "1" /* 1, or the cards needed */ {
			t.Fatalf("SAPIPE_REQUIRE_GPU=1 but Open: %v", err)
		}
		if derr == nil && len(infos) > 0 && infos[0].Major >= 8 {
			t.Errorf("Devices lists %v but Open fails: %v", infos, err)
		}
		if err.Error() == "" || strings.Contains(err.Error(), "\n") {
			t.Errorf("Open error %q is not one line", err)
		}
		t.Logf("no GPU (as expected here): %v", err)
		if _, err := Open(-1, Options{}); err == nil {
			t.Error("Open(-1) succeeded")
		}
		return
	}
	defer b.Close()
	if derr != nil || len(infos) == 0 {
		t.Fatalf("Open works but Devices: %v, %v", infos, derr)
	}
	if _, err := Open(len(infos), Options{}); err == nil {
		t.Errorf("Open(%d) with %d GPUs succeeded", len(infos), len(infos))
	}
}

func TestGPUProbe(t *testing.T) {
	b := gpuBackend(t)
	t.Logf("%s: %d SMs, %.1f GiB, compute %d.%d", b.Name(), b.Info().SMs, float64(b.Info().TotalMem)/(1<<30), b.Info().Major, b.Info().Minor)
	if v, err := DriverVersion(); err == nil {
		t.Logf("driver supports CUDA %d.%d", v/1000, v%1000/10)
	}
	var out []uint32
	err := b.dev.run(func() error {
		var err error
		out, err = b.dev.probe(1000, 7)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range out {
		if v != uint32(7+i) {
			t.Fatalf("probe[%d] = %d, want %d", i, v, 7+i)
		}
	}
	// A failing call names itself.
	err = b.dev.run(func() error { return b.dev.launch("no_such_kernel", 1, 1, 0) })
	var ce *Error
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "cuModuleGetFunction(no_such_kernel)") {
		t.Errorf("launching a missing kernel: %v", err)
	}
}

// Texts for the property tests.

func randomBytes(rng *rand.Rand, n, sigma int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.IntN(sigma))
	}
	return b
}

func randomDNA(rng *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = "ACGT"[rng.IntN(4)]
	}
	return b
}

// englishLike is text from a small vocabulary: long repeated words and phrases, like prose.
func englishLike(rng *rand.Rand, n int) []byte {
	words := strings.Fields("the of and to in a is that for it as was with be by on not he I this are or his from at which but have an they you were her she there one all we their been has when who will more no if out so said what up its about into than them can only other new some could time these two may then do first any my now such like our over man me even most made after also did many before must through back years where much your way well down should because each just those people Mr how too little state good very make world still own see men work long get here between both life being under never day same another know while last might us great old year off come since against go came right used take three")
	var b bytes.Buffer
	for b.Len() < n {
		b.WriteString(words[rng.IntN(len(words))])
		switch rng.IntN(12) {
		case 0:
			b.WriteString(". ")
		case 1:
			b.WriteString(",\n")
		default:
			b.WriteByte(' ')
		}
	}
	return b.Bytes()[:n]
}

func periodic(rng *rand.Rand, n, period int) []byte {
	unit := randomDNA(rng, period)
	b := make([]byte, n)
	for i := range b {
		b[i] = unit[i%period]
	}
	return b
}

func repeated(c byte, n int) []byte { return bytes.Repeat([]byte{c}, n) }

// withRepeats copies long random stretches of a random text onto other places, like genome repeats.
func withRepeats(rng *rand.Rand, n int) []byte {
	b := randomDNA(rng, n)
	for k := 0; k < 20 && n > 10; k++ {
		l := rng.IntN(n/4 + 1)
		src, dst := rng.IntN(n-l+1), rng.IntN(n-l+1)
		copy(b[dst:dst+l], b[src:src+l])
	}
	return b
}

// cpuSA is the oracle: the CPU backend's suffix array on one goroutine (its own tests hold it to
// a naive sort, and its result does not depend on the goroutines).
func cpuSA(text []byte) []int32 {
	sa := make([]int32, len(text))
	cpu.SuffixArrayThreads(text, sa, 1)
	return sa
}

type textCase struct {
	name string
	text []byte
}

func saCases(rng *rand.Rand, short bool) []textCase {
	var cs []textCase
	add := func(name string, t []byte) { cs = append(cs, textCase{fmt.Sprintf("%s/%d", name, len(t)), t}) }
	for n := range 40 {
		add("bytes", randomBytes(rng, n, 256))
		add("dna", randomDNA(rng, n))
		add("binary", randomBytes(rng, n, 2))
		add("A", repeated('A', n))
	}
	sizes := []int{100, 1000, 4095, 4096, 4097, 10000, 65537, 300000}
	if !short {
		sizes = append(sizes, 1<<20+3, 3000000)
	}
	for _, n := range sizes {
		add("bytes", randomBytes(rng, n, 256))
		add("zeros-and-ones", randomBytes(rng, n, 2))
		add("dna", randomDNA(rng, n))
		add("dna5", randomBytes(rng, n, 5))
		add("english", englishLike(rng, n))
		add("A", repeated('A', n))
		add("zero", repeated(0, n))
		add("period3", periodic(rng, n, 3))
		add("period17", periodic(rng, n, 17))
		add("period1000", periodic(rng, n, 1000))
		add("repeats", withRepeats(rng, n))
	}
	return cs
}

func checkSA(t *testing.T, b *Backend, name string, text []byte) {
	t.Helper()
	want := cpuSA(text)
	got := make([]int32, len(text))
	for i := range got {
		got[i] = -7 // poison: every entry must be written
	}
	var st saStats
	var err error
	if len(text) < 2 {
		err = b.SuffixArray(text, got)
	} else {
		st, err = b.suffixArrayStats(text, got)
	}
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("%s: SA[%d] = %d, want %d (stats %+v)", name, i, got[i], want[i], st)
		}
	}
}

func TestGPUSuffixArray(t *testing.T) {
	b := gpuBackend(t)
	rng := rand.New(rand.NewPCG(1, 2))
	for _, c := range saCases(rng, testing.Short()) {
		checkSA(t, b, c.name, c.text)
	}
}

// TestGPUSuffixArrayLarge: big inputs, up to 10^8 bytes, against the CPU.
func TestGPUSuffixArrayLarge(t *testing.T) {
	if testing.Short() {
		t.Skip("large inputs")
	}
	b := gpuBackend(t)
	rng := rand.New(rand.NewPCG(3, 4))
	for _, c := range []textCase{
		{"dna-1e8", randomDNA(rng, 100_000_000)},
		{"bytes-3e7", randomBytes(rng, 30_000_000, 256)},
		{"english-3e7", englishLike(rng, 30_000_000)},
		{"repeats-3e7", withRepeats(rng, 30_000_000)},
		{"A-2e7", repeated('A', 20_000_000)},
		{"period7-2e7", periodic(rng, 20_000_000, 7)},
	} {
		checkSA(t, b, c.name, c.text)
	}
}

func TestGPUBWT(t *testing.T) {
	b := gpuBackend(t)
	rng := rand.New(rand.NewPCG(5, 6))
	var src [][]byte
	for _, c := range saCases(rng, true) {
		src = append(src, c.text)
	}
	dst, want := make([][]byte, len(src)), make([][]byte, len(src))
	for i, s := range src {
		dst[i], want[i] = bytes.Repeat([]byte{0xee}, len(s)), make([]byte, len(s))
	}
	p, wantP := make([]int, len(src)), make([]int, len(src))
	if err := b.BWT(src, dst, p); err != nil {
		t.Fatal(err)
	}
	for i, s := range src {
		wantP[i] = kernels.BWTFromSA(s, cpuSA(s), want[i])
	}
	for i := range src {
		if !bytes.Equal(dst[i], want[i]) || p[i] != wantP[i] {
			t.Fatalf("block %d (%d bytes): BWT differs from the CPU (primary %d, want %d)", i, len(src[i]), p[i], wantP[i])
		}
	}
}

// TestGPUBWTSampled: the transform and the sampled rows (what the compressor stores) come back
// from the device as kernels/cpu.BWTSampled computes them, for every sampling distance that
// leaves samples in the text, and for texts of 0 and 1 byte.
func TestGPUBWTSampled(t *testing.T) {
	b := gpuBackend(t)
	rng := rand.New(rand.NewPCG(7, 8))
	cases := append(saCases(rng, true), textCase{"empty", nil}, textCase{"one", []byte{'x'}},
		textCase{"dna-3e6", randomDNA(rng, 3_000_000)})
	for _, c := range cases {
		for _, shift := range []uint{1, 3, 7, 16} {
			n := len(c.text)
			dst, want := bytes.Repeat([]byte{0xee}, n), make([]byte, n)
			p, samples, err := b.BWTSampled(c.text, dst, shift, 2)
			if err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			sa := make([]int32, n)
			if n > 0 {
				sa = cpuSA(c.text)
			}
			wantP, wantS := cpu.BWTSampled(c.text, sa, want, shift, 2)
			if !bytes.Equal(dst, want) || p != wantP || !slices.Equal(samples, wantS) {
				t.Fatalf("%s (%d bytes, shift %d): GPU transform or samples differ from the CPU's (primary %d, want %d; %d samples, want %d)",
					c.name, n, shift, p, wantP, len(samples), len(wantS))
			}
		}
	}
}

// TestGPUConcurrent: several goroutines share one backend; their work is serialised on the
// device goroutine and each gets its own answer.
func TestGPUConcurrent(t *testing.T) {
	b := gpuBackend(t)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(g), 9))
			text := englishLike(rng, 50000+g*1000)
			want := cpuSA(text)
			got := make([]int32, len(text))
			if err := b.SuffixArray(text, got); err != nil {
				errs <- err
				return
			}
			for i := range got {
				if got[i] != want[i] {
					errs <- fmt.Errorf("goroutine %d: SA[%d] = %d, want %d", g, i, got[i], want[i])
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

var _ kernels.Backend = (*Backend)(nil)

// sortVariant is one choice of radix sort: the one-pass sort or the split one, and its tile.
type sortVariant struct {
	onesweep bool
	items    int
}

var sortVariants = []sortVariant{{true, 8}, {true, 12}, {false, 8}, {false, 12}, {false, 16}}

func (v sortVariant) set() {
	onesweep = v.onesweep
	if v.onesweep {
		onesweepItems = v.items
	} else {
		radixItems = v.items
	}
}

func (v sortVariant) String() string {
	if v.onesweep {
		return fmt.Sprintf("onesweep/%d", v.items)
	}
	return fmt.Sprintf("split/%d", v.items)
}

func saveTuning() func() {
	a, b, c, d, e := radixItems, shortKeyMaxBits, useStaging, onesweep, onesweepItems
	f, g, h, i, j := smallItems, smallRadixBits, partitionMin, onesweepItems32, short32Max
	return func() {
		radixItems, shortKeyMaxBits, useStaging, onesweep, onesweepItems = a, b, c, d, e
		smallItems, smallRadixBits, partitionMin, onesweepItems32, short32Max = f, g, h, i, j
	}
}

// smallVariant is one choice of shared-memory sort for small groups.
type smallVariant struct{ items, bits int }

var smallVariants = []smallVariant{{8, 6}, {16, 4}, {8, 4}}

func (v smallVariant) set()           { smallItems, smallRadixBits = v.items, v.bits }
func (v smallVariant) String() string { return fmt.Sprintf("small %d/%d", v.items, v.bits) }

// TestGPUSuffixArrayVariants checks the tuning choices that the profile compares.
func TestGPUSuffixArrayVariants(t *testing.T) {
	b := gpuBackend(t)
	defer saveTuning()()
	rng := rand.New(rand.NewPCG(7, 8))
	cases := saCases(rng, true)
	for i, v := range sortVariants {
		for j, short := range []int{0, 3} {
			v.set()
			sv := smallVariants[(i+j)%len(smallVariants)]
			sv.set()
			shortKeyMaxBits, useStaging = short, short == 0
			partitionMin = []int{0, 1 << 22}[j]
			onesweepItems32 = []int{8, 12, 16}[i%3]
			for _, c := range cases[len(cases)-30:] {
				checkSA(t, b, fmt.Sprintf("%s (%v, %v, short keys up to %d bits, partition from %d)", c.name, v, sv, short, partitionMin), c.text)
			}
		}
	}
}

// TestGPUMemoryFallback: a text larger than the GPU memory allowed goes to the CPU, with a note,
// and gives the same result.
func TestGPUMemoryFallback(t *testing.T) {
	g := gpuBackend(t)
	var notes []string
	b := &Backend{dev: g.dev, cpu: g.cpu, opts: Options{Note: func(s string) { notes = append(notes, s) }}}
	defer func() { memLimit = 0 }()
	memLimit = 200 << 20
	rng := rand.New(rand.NewPCG(11, 12))
	text := randomDNA(rng, 5_000_000) // needs about 310 MiB
	small := randomDNA(rng, 100_000)  // fits
	for _, c := range []struct {
		text  []byte
		notes int
	}{{small, 0}, {text, 1}} {
		notes = nil
		want := cpuSA(c.text)
		got := make([]int32, len(c.text))
		if err := b.SuffixArray(c.text, got); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, want) {
			t.Errorf("%d bytes: SA differs", len(c.text))
		}
		if len(notes) != c.notes {
			t.Errorf("%d bytes: notes %q, want %d", len(c.text), notes, c.notes)
		}
	}
	if len(notes) == 1 && !strings.Contains(notes[0], "on the CPU") {
		t.Errorf("note %q", notes[0])
	}
	notes = nil
	dst := [][]byte{make([]byte, len(small)), make([]byte, len(text))}
	p := []int{0, 0}
	if err := b.BWT([][]byte{small, text}, dst, p); err != nil {
		t.Fatal(err)
	}
	want := [][]byte{make([]byte, len(small)), make([]byte, len(text))}
	wp := []int{0, 0}
	for i, s := range [][]byte{small, text} {
		wp[i] = kernels.BWTFromSA(s, cpuSA(s), want[i])
	}
	if !bytes.Equal(dst[0], want[0]) || !bytes.Equal(dst[1], want[1]) || !slices.Equal(p, wp) {
		t.Error("BWT with a block over the limit differs from the CPU")
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "BWT block 1 on the CPU") {
		t.Errorf("BWT notes %q", notes)
	}
	t.Logf("notes: %q", notes)
}
