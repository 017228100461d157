package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"
)

// MUMmer rejects an option given twice ("option "-l" already set"); Go's flag package would let
// the last one win. These values refuse a second Set so sapipe fails the way mummer does.

type onceBool struct {
	name string
	set  bool
}

func (b *onceBool) Set(s string) error {
	if b.set {
		return fmt.Errorf("option \"-%s\" already set", b.name)
	}
	v, err := strconv.ParseBool(s)
	if err != nil {
		return fmt.Errorf("option -%s takes no argument", b.name)
	}
	b.set = v
	return nil
}
func (b *onceBool) String() string   { return "" }
func (b *onceBool) IsBoolFlag() bool { return true }

// positiveInt is a once-only option whose argument must be a positive integer.
type positiveInt struct {
	name  string
	value int
	set   bool
}

func (p *positiveInt) Set(s string) error {
	if p.set {
		return fmt.Errorf("option \"-%s\" already set", p.name)
	}
	v, err := strconv.Atoi(s)
	if err != nil || v < 1 {
		return fmt.Errorf("argument %s for option -%s is not a positive integer", s, p.name)
	}
	p.value, p.set = v, true
	return nil
}
func (p *positiveInt) String() string {
	if p == nil {
		return ""
	}
	return strconv.Itoa(p.value)
}

// gpuMemoryFlag returns the --gpu-memory option of c in bytes (0 when not given), or its usage
// error.
func gpuMemoryFlag(c *cli.Context) (int64, error) {
	s := c.String("gpu-memory")
	if s == "" {
		return 0, nil
	}
	v, ok := parseSuffixedSize(s, 1<<50)
	if !ok {
		return 0, usageError{fmt.Sprintf("--gpu-memory %s: want a size such as 16G", s)}
	}
	return v, nil
}

// parseSuffixedSize reads a positive integer with an optional k, M or G suffix (powers of 1024)
// that is at most limit; ok is false for anything else.
func parseSuffixedSize(s string, limit int64) (v int64, ok bool) {
	mult := int64(1)
	num := s
	if n := len(s); n > 0 {
		switch s[n-1] {
		case 'k', 'K':
			mult, num = 1<<10, s[:n-1]
		case 'm', 'M':
			mult, num = 1<<20, s[:n-1]
		case 'g', 'G':
			mult, num = 1<<30, s[:n-1]
		}
	}
	v, err := strconv.ParseInt(num, 10, 64)
	if err != nil || v < 1 || strings.HasPrefix(num, "+") || v > limit/mult {
		return 0, false
	}
	return v * mult, true
}
