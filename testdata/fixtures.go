// Package testdata carries the committed chesstb fixture tables inside any
// binary that imports it, so tbprobe answers its README example from any
// working directory, with no repository checkout around it.
package testdata

import "embed"

// ChessTB holds testdata/chesstb's table folders (wdl/, dtz/, dtm/) and the
// packs/ folder (a DTC and a DTM50 pack stored at that folder's root), rooted
// at "chesstb". The oracle rows are left out: a binary needs the tables only.
//
//go:embed chesstb/wdl chesstb/dtz chesstb/dtm chesstb/packs
var ChessTB embed.FS
