//go:build ignore

// gen_tables writes chunk_tables.go, the index's chunk tables as data (go generate).
package main

import (
	"bytes"
	"log"
	"os"

	"github.com/tbfs/tbfs/format/geister/internal/chunktables"
)

func main() {
	var b bytes.Buffer
	if err := chunktables.Build().WriteGo(&b, "geister"); err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile("chunk_tables.go", b.Bytes(), 0o644); err != nil {
		log.Fatal(err)
	}
}
