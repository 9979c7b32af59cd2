//go:build unix

package retro

import (
	"syscall"
	"time"
)

// cpuTime returns the CPU time (user plus system) the process has used,
// which, unlike wall time, does not grow when other work shares the cores.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
