package stack_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/tbfs/tbfs/source"
	"github.com/tbfs/tbfs/source/stack"
)

// A front end opens its tables by URL — a directory here; an s3:// or
// http(s):// URL works the same — and reads byte ranges with a hint.
func ExampleOpen() {
	dir, _ := os.MkdirTemp("", "tables")
	defer os.RemoveAll(dir)
	os.WriteFile(filepath.Join(dir, "KQvK.tbw"), []byte("header and blocks"), 0o644)

	ctx := context.Background()
	src, err := stack.Open(ctx, dir, stack.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer src.Close()
	obj, err := src.Open(ctx, "KQvK.tbw")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer obj.Close()
	head := make([]byte, 6)
	n, err := obj.ReadAt(ctx, head, 0, source.HintHeader)
	fmt.Println(obj.Size(), string(head[:n]), err)

	_, err = src.Open(ctx, "../etc/passwd")
	fmt.Println(errors.Is(err, source.ErrInvalid))
	// Output:
	// 17 header <nil>
	// true
}
