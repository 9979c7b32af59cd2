package geister

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// allocWords returns n zeroed words outside the garbage-collected heap,
// with the function that returns them to the system. The solver's working
// state is gigabytes at seven pieces and more: on the heap it would stay
// resident until a collection notices it is garbage, doubling the peak
// when the next pair allocates its own.
func allocWords(n uint64) ([]uint32, func(), error) {
	if n == 0 {
		return nil, func() {}, nil
	}
	b, err := unix.Mmap(-1, 0, int(n*4), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return nil, nil, fmt.Errorf("geister: allocating %d bytes of solver state: %w", n*4, err)
	}
	words := unsafe.Slice((*uint32)(unsafe.Pointer(unsafe.SliceData(b))), n)
	return words, func() { unix.Munmap(b) }, nil
}
