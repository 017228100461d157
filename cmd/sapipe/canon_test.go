package main

import (
	"bytes"
	"slices"
	"strconv"
	"strings"
)

// canonical puts the lines of MUMmer output that are tied on one query position into a fixed
// order, the only freedom the compatibility contract leaves. Everything else is kept byte for
// byte. With -s every match line owns the substring line after it.
func canonical(out []byte, showString bool) []byte {
	lines := strings.SplitAfter(string(out), "\n")
	var b bytes.Buffer
	var run []string // units tied on one query position
	runPos := ""
	flush := func() {
		slices.Sort(run)
		for _, u := range run {
			b.WriteString(u)
		}
		run, runPos = run[:0], ""
	}
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if strings.HasPrefix(l, ">") || l == "" {
			flush()
			b.WriteString(l)
			continue
		}
		unit := l
		if showString && i+1 < len(lines) {
			i++
			unit += lines[i]
		}
		f := strings.Fields(l)
		pos := ""
		if len(f) >= 3 {
			pos = f[len(f)-2]
		}
		if pos != runPos {
			flush()
			runPos = pos
		}
		run = append(run, unit)
	}
	flush()
	return b.Bytes()
}

// firstDiff describes where two outputs part, for test failures.
func firstDiff(got, want []byte) string {
	g, w := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	for i := 0; i < len(g) && i < len(w); i++ {
		if g[i] != w[i] {
			return "line " + itoa(i+1) + ":\n got: " + strings.TrimSpace(g[i]) + "\nwant: " + strings.TrimSpace(w[i])
		}
	}
	return "got " + itoa(len(g)) + " lines, want " + itoa(len(w))
}

func itoa(i int) string { return strconv.Itoa(i) }
