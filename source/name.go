package source

import (
	"strings"
	"unicode/utf8"
)

// CheckName reports whether name is an acceptable object name: non-empty,
// valid UTF-8, relative, slash-separated, with no empty, "." or ".."
// element, no backslash and no control character (NUL included). Such a
// name can never address anything outside a source's root. The error
// matches ErrInvalid.
func CheckName(name string) error {
	if name == "" {
		return Invalid("empty object name")
	}
	if !utf8.ValidString(name) {
		return Invalid("object name %q is not valid UTF-8", name)
	}
	for _, r := range name {
		if r < 0x20 || r == 0x7f {
			return Invalid("object name %q contains a control character", name)
		}
		if r == '\\' {
			return Invalid("object name %q contains a backslash", name)
		}
	}
	if strings.HasPrefix(name, "/") {
		return Invalid("object name %q is absolute", name)
	}
	for elem := range strings.SplitSeq(name, "/") {
		switch elem {
		case "":
			return Invalid("object name %q has an empty element", name)
		case ".", "..":
			return Invalid("object name %q has a %q element", name, elem)
		}
	}
	return nil
}

// CheckPrefix is CheckName for listing prefixes, which may also be empty or
// end in a slash.
func CheckPrefix(prefix string) error {
	p := strings.TrimSuffix(prefix, "/")
	if p == "" {
		if prefix == "/" {
			return Invalid("listing prefix %q is absolute", prefix)
		}
		return nil
	}
	return CheckName(p)
}

// CheckRange validates a read of length n at off against an object of the
// given size. Reads may extend past the end (they return io.EOF), but must
// start inside [0, size].
func CheckRange(off int64, n int, size int64) error {
	if off < 0 || off > size {
		return Invalid("read at offset %d outside object of %d bytes", off, size)
	}
	return nil
}
