// Package geister builds the Geister perfect-information distance-to-win
// tables by retrograde analysis, byte for byte in the layout the reference
// builder writes (the obsblk index of format/geister, one byte per entry).
//
// A material and its colour-swapped twin are solved together, because a
// move that captures nothing leads from one to the other; a capture leads to
// a material with one piece fewer, whose finished table must be at hand.
// Solve works on one such pair in memory; Build walks every material up to
// a total piece count in dependency order, writes the raw ".bin" and a
// seekable-zstd ".bin.zst" for each, and skips materials already built and
// verified, so an interrupted build can be resumed. A material is complete
// when its "<name>.sha256" sidecar (sha256sum(1) format, written after both
// files) matches the raw file, whose size must be the material's entry
// count, and the ".zst" file. Each material also gets a frame manifest
// ("<name>.tbsum", format/geister's ManifestOf), so readers check the
// tables chunk by chunk as they read them instead of hashing them whole.
//
// The values follow FORMAT.md §2 of the reference folder: odd v wins in v
// plies, even v loses in v plies, 0 is no result within the 210-ply horizon.
// Solve assigns them layer by layer in increasing distance, so that every
// value is final when it is written; Check tests a finished table against
// the consistency rule over every entry.
package geister
