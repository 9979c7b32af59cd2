// Package testdata carries the committed chesstb, Syzygy and Geister
// fixture tables inside any binary that imports it, so tbprobe answers its
// README examples, and tbfs mounts the same tables, from any working
// directory, with no repository checkout around it.
package testdata

import (
	"embed"
	"io/fs"
	"path"
	"slices"
	"strings"
)

// ChessTB holds testdata/chesstb's table folders (wdl/, dtz/, dtm/) and the
// table files of the packs/ folder (a DTC and a DTM50 pack stored at that
// folder's root), rooted at "chesstb". The oracle rows and the READMEs are
// left out: a binary needs the tables only, and a mount's tables/ folder
// should list nothing else.
//
//go:embed chesstb/wdl chesstb/dtz chesstb/dtm chesstb/packs/*.lzdtm50 chesstb/packs/*.lzdtc
var ChessTB embed.FS

// Syzygy holds testdata/syzygy's table files, WDL (.rtbw) and DTZ (.rtbz),
// rooted at "syzygy". Its Fathom oracle rows and README stay out, as
// ChessTB's do.
//
//go:embed syzygy/*.rtbw syzygy/*.rtbz
var Syzygy embed.FS

// SyzygyName is how the embedded Syzygy tables are named in listings,
// logs and errors.
const SyzygyName = "embedded:testdata/syzygy"

// SyzygyRoot returns the embedded Syzygy tables as a file system whose
// root holds the table files, as a Syzygy directory does (the files are
// found at a location's root).
func SyzygyRoot() (fs.FS, error) { return fs.Sub(Syzygy, "syzygy") }

// Geister holds testdata/geister's fixture table, the total-4 material in
// its seekable-zstd form (the form a reader prefers, a fifth of the raw
// file's size), with the SHA256SUMS a reader checks it against, rooted at
// "geister". The raw .bin and the oracle rows stay out of binaries.
//
//go:embed geister/*.bin.zst geister/SHA256SUMS
var Geister embed.FS

// GeisterName is how the embedded Geister tables are named in listings,
// logs and errors.
const GeisterName = "embedded:testdata/geister"

// GeisterRoot returns the embedded Geister tables as a file system whose
// root holds the table files, as a table directory does.
func GeisterRoot() (fs.FS, error) { return fs.Sub(Geister, "geister") }

// ChessTBRoots are the folders of ChessTB that are table roots, in search
// order: each one is served as its own source (through fs.Sub), because the
// packs keep their tables at packs/ itself rather than in wdl/, dtz/ or dtm/
// folders. Every program that serves the embedded fixtures reads this list,
// so they all see the same tables.
var ChessTBRoots = []string{"chesstb", "chesstb/packs"}

// ChessTBRoot returns dir, one of ChessTBRoots, as a file system of its own
// in which every other root below it is left out: "chesstb" holds
// "chesstb/packs", and a listing of both roots should show each table once,
// not the packs a second time as packs/X.
func ChessTBRoot(dir string) (fs.FS, error) {
	sub, err := fs.Sub(ChessTB, dir)
	if err != nil {
		return nil, err
	}
	var hidden []string
	for _, other := range ChessTBRoots {
		if rel, ok := strings.CutPrefix(other, dir+"/"); ok {
			hidden = append(hidden, rel)
		}
	}
	return withoutDirs{sub, hidden}, nil
}

// withoutDirs is a file system with some directories, and everything in
// them, absent.
type withoutDirs struct {
	fsys   fs.FS
	hidden []string // slash-separated paths relative to fsys's root
}

// isHidden reports whether name is a hidden directory or lies in one.
func (w withoutDirs) isHidden(name string) bool {
	for _, h := range w.hidden {
		if name == h || strings.HasPrefix(name, h+"/") {
			return true
		}
	}
	return false
}

// Open opens name unless it is hidden.
func (w withoutDirs) Open(name string) (fs.File, error) {
	if w.isHidden(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	return w.fsys.Open(name)
}

// ReadDir lists the directory name without its hidden entries.
func (w withoutDirs) ReadDir(name string) ([]fs.DirEntry, error) {
	if w.isHidden(name) {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: fs.ErrNotExist}
	}
	ents, err := fs.ReadDir(w.fsys, name)
	return slices.DeleteFunc(ents, func(e fs.DirEntry) bool {
		return w.isHidden(path.Join(name, e.Name()))
	}), err
}
