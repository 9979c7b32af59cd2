// Package exepages gives back the resident pages of the program's code
// (the executable and its shared libraries) that start-up left mapped.
//
// A Go binary that links the S3, gRPC, Prometheus and TLS stacks runs a few
// hundred package init functions before main, spread over its 13 MiB of
// code, 7 MiB of read-only data and 10 MiB of function tables. The kernel
// maps file pages in 64 KiB windows around each fault (fault-around), so
// those inits leave about 15 MiB of the executable resident, more than the
// code a probe then runs needs. Those pages stay counted in the process's
// resident set until it exits; Release unmaps them from the process (they
// stay in the page cache), and the pages the program goes on using come
// back at their next touch.
package exepages

import (
	"bytes"
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// mapping is one line of /proc/self/smaps with the counters Release reads.
type mapping struct {
	lo, hi    uintptr
	perms     string
	inode     uint64
	rss, anon int64 // bytes
}

// Release drops the resident pages of the process's private read-only file
// mappings (the executable's and its shared libraries' code and constant
// data) and returns how many bytes it dropped. A mapping that is writable
// or shared, or holds a private copy of any page (relocated read-only data,
// a debugger's breakpoints), is left alone: the others hold the file's
// bytes, so a later touch reads the same bytes back. It is safe at any
// time; callers call it where start-up ends.
func Release() (int64, error) {
	data, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		return 0, err
	}
	maps, err := parseSmaps(data)
	if err != nil {
		return 0, err
	}
	var dropped int64
	for _, m := range maps {
		if !m.droppable() {
			continue
		}
		if _, _, e := unix.Syscall(unix.SYS_MADVISE, m.lo, m.hi-m.lo, unix.MADV_DONTNEED); e != 0 {
			return dropped, fmt.Errorf("madvise %x-%x: %w", m.lo, m.hi, e)
		}
		dropped += m.rss
	}
	return dropped, nil
}

// droppable reports whether m maps a file (inode 0: anonymous memory, the
// vDSO) read-only and privately, holds resident pages, and has no page of
// its own (a copy made by a write before the mapping became read-only, or
// by a debugger).
func (m *mapping) droppable() bool {
	return m.inode != 0 && m.perms[1] != 'w' && m.perms[3] == 'p' && m.anon == 0 && m.rss > 0
}

// parseSmaps reads the mappings of an smaps file: a header line
// "lo-hi perms offset device inode [path]" per mapping (lower-case hex
// first), then "Key: value kB" lines (a capital first). Only the counters
// Release reads are parsed; the file has some twenty per mapping.
func parseSmaps(data []byte) ([]mapping, error) {
	var maps []mapping
	for len(data) > 0 {
		line, rest, _ := bytes.Cut(data, []byte{'\n'})
		data = rest
		if len(line) == 0 {
			continue
		}
		if c := line[0]; c >= 'A' && c <= 'Z' {
			if len(maps) == 0 {
				return nil, fmt.Errorf("smaps: %q before the first mapping", line)
			}
			key, val, _ := bytes.Cut(line, []byte{':'})
			var dst *int64
			switch string(key) {
			case "Rss":
				dst = &maps[len(maps)-1].rss
			case "Anonymous":
				dst = &maps[len(maps)-1].anon
			default:
				continue
			}
			f := bytes.Fields(val)
			if len(f) != 2 || string(f[1]) != "kB" {
				return nil, fmt.Errorf("smaps: %q", line)
			}
			kb, err := strconv.ParseInt(string(f[0]), 10, 64)
			if err != nil {
				return nil, fmt.Errorf("smaps: %q: %w", line, err)
			}
			*dst = kb << 10
			continue
		}
		m, err := parseHeader(line)
		if err != nil {
			return nil, err
		}
		maps = append(maps, m)
	}
	return maps, nil
}

// parseHeader parses an smaps header line.
func parseHeader(line []byte) (mapping, error) {
	f := bytes.Fields(line)
	if len(f) < 5 || len(f[1]) != 4 {
		return mapping{}, fmt.Errorf("smaps: mapping line %q", line)
	}
	lo, hi, ok := bytes.Cut(f[0], []byte{'-'})
	l, err1 := strconv.ParseUint(string(lo), 16, 64)
	h, err2 := strconv.ParseUint(string(hi), 16, 64)
	inode, err3 := strconv.ParseUint(string(f[4]), 10, 64)
	if !ok || err1 != nil || err2 != nil || err3 != nil || h < l {
		return mapping{}, fmt.Errorf("smaps: mapping line %q", line)
	}
	return mapping{lo: uintptr(l), hi: uintptr(h), perms: string(f[1]), inode: inode}, nil
}
