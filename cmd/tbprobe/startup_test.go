package main

import (
	"os/exec"
	"testing"
)

// BenchmarkStartup runs "tbprobe version", the start-up cost with no work:
// every linked package's initialisation, the runtime's and the command
// tree's. It reports the whole process's CPU (user+system), to compare
// with the reference prober's --help; pin it to one core (taskset -c 1)
// when comparing, as the reference is measured. Peak resident memory
// is not reported: a child started by a Go program inherits the parent's
// high-water mark through exec, so /usr/bin/time -f %M measures it instead.
func BenchmarkStartup(b *testing.B) {
	var cpu float64
	for b.Loop() {
		cmd := exec.Command(tbprobeBin, "version")
		if err := cmd.Run(); err != nil {
			b.Fatal(err)
		}
		cpu += (cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()).Seconds()
	}
	b.ReportMetric(cpu*1e3/float64(b.N), "cpu-ms/op")
}
