package main

import (
	"bufio"
	"os"
	"path"
	"strconv"
	"strings"
	"sync"
)

// memoryLimit returns the memory this process may use: the machine's, or less where a control
// group limits it (containers, Slurm and workflow engines' jobs); 0 when neither is known. The
// control group's limit is the lowest of its own and its ancestors', read from /sys/fs/cgroup
// (version 2, or version 1's memory controller), once: main and compress's --memory both ask.
var memoryLimit = sync.OnceValue(func() int64 {
	limit := physicalMemory()
	for _, l := range cgroupLimits("/proc/self/cgroup", "/sys/fs/cgroup") {
		if l > 0 && (limit == 0 || l < limit) {
			limit = l
		}
	}
	return limit
})

// softMemoryLimit is the memory the Go runtime is asked to keep to, given the process's limit and
// $GOMEMLIMIT, or 0 to leave the runtime as it is. The runtime collects garbage when its heap has
// doubled since the last collection, whatever the machine has: near the memory of the machine, or
// of a container or job, that can be more than there is, and the job is killed. Asked to keep to
// 90% of the limit, it collects more often as it gets close instead. A GOMEMLIMIT of the user's
// is left to the runtime, which reads it itself.
func softMemoryLimit(limit int64, env string) int64 {
	if env != "" || limit <= 0 {
		return 0
	}
	return limit - limit/10
}

// cgroupLimits returns the memory limits of the control groups that the file self (the format
// of /proc/self/cgroup) names, and of their ancestors, under root; none for unlimited ones.
func cgroupLimits(self, root string) []int64 {
	f, err := os.Open(self)
	if err != nil {
		return nil
	}
	defer f.Close()
	var limits []int64
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// hierarchy-ID:controllers:path
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 {
			continue
		}
		var dir, file string
		switch {
		case parts[0] == "0" && parts[1] == "":
			dir, file = root, "memory.max"
		case hasController(parts[1], "memory"):
			dir, file = path.Join(root, "memory"), "memory.limit_in_bytes"
		default:
			continue
		}
		for p := path.Clean("/" + parts[2]); ; p = path.Dir(p) {
			if l, ok := readLimit(path.Join(dir, p, file)); ok {
				limits = append(limits, l)
			}
			if p == "/" {
				break
			}
		}
	}
	return limits
}

func hasController(list, name string) bool {
	for _, c := range strings.Split(list, ",") {
		if c == name {
			return true
		}
	}
	return false
}

// readLimit reads a limit file: a number of bytes, "max" (version 2) or a number of 2^62 or more
// (version 1) for none.
func readLimit(file string) (int64, bool) {
	b, err := os.ReadFile(file)
	if err != nil {
		return 0, false
	}
	v, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil || v <= 0 || v >= 1<<62 {
		return 0, false
	}
	return v, true
}
