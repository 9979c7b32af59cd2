// Package testdata carries the committed chesstb fixture tables inside any
// binary that imports it, so tbprobe answers its README example, and tbfs
// mounts the same tables, from any working directory, with no repository
// checkout around it.
package testdata

import "embed"

// ChessTB holds testdata/chesstb's table folders (wdl/, dtz/, dtm/) and the
// table files of the packs/ folder (a DTC and a DTM50 pack stored at that
// folder's root), rooted at "chesstb". The oracle rows and the READMEs are
// left out: a binary needs the tables only, and a mount's tables/ folder
// should list nothing else.
//
//go:embed chesstb/wdl chesstb/dtz chesstb/dtm chesstb/packs/*.lzdtm50 chesstb/packs/*.lzdtc
var ChessTB embed.FS

// ChessTBRoots are the folders of ChessTB that are table roots, in search
// order: each one is served as its own source (through fs.Sub), because the
// packs keep their tables at packs/ itself rather than in wdl/, dtz/ or dtm/
// folders. Every program that serves the embedded fixtures reads this list,
// so they all see the same tables.
var ChessTBRoots = []string{"chesstb", "chesstb/packs"}
