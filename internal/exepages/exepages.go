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
	"bufio"
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
// "lo-hi perms offset device inode [path]" per mapping, then
// "Key: value kB" lines.
func parseSmaps(data []byte) ([]mapping, error) {
	var maps []mapping
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		f := bytes.Fields(sc.Bytes())
		if len(f) == 0 {
			continue
		}
		if key := f[0]; key[len(key)-1] == ':' {
			if len(maps) == 0 || len(f) < 2 {
				continue
			}
			m := &maps[len(maps)-1]
			switch string(key) {
			case "Rss:", "Anonymous:":
				kb, err := strconv.ParseInt(string(f[1]), 10, 64)
				if err != nil {
					return nil, fmt.Errorf("smaps %s %q: %w", key, f[1], err)
				}
				if key[0] == 'R' {
					m.rss = kb << 10
				} else {
					m.anon = kb << 10
				}
			}
			continue
		}
		if len(f) < 5 {
			return nil, fmt.Errorf("smaps: short mapping line %q", sc.Bytes())
		}
		var m mapping
		if _, err := fmt.Sscanf(string(f[0]), "%x-%x", &m.lo, &m.hi); err != nil {
			return nil, fmt.Errorf("smaps: address range %q: %w", f[0], err)
		}
		inode, err := strconv.ParseUint(string(f[4]), 10, 64)
		if err != nil || len(f[1]) < 4 {
			return nil, fmt.Errorf("smaps: mapping line %q", sc.Bytes())
		}
		m.perms, m.inode = string(f[1]), inode
		maps = append(maps, m)
	}
	return maps, sc.Err()
}
