//go:build ignore

// gen_tables writes attacks_tables.go, the attack tables as data (go generate).
package main

import (
	"bytes"
	"log"
	"os"

	"github.com/tbfs/tbfs/chess/internal/attacktables"
)

func main() {
	var b bytes.Buffer
	if err := attacktables.Build().WriteGo(&b, "chess"); err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile("attacks_tables.go", b.Bytes(), 0o644); err != nil {
		log.Fatal(err)
	}
}
