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
// Memory: a solve keeps two bytes per entry of the pair (the value, or
// while undecided an auxiliary value, and a state byte with the decided
// flag, the layer's mark and the move counter), as the reference's two
// value arrays do, outside the Go heap so that it is returned when the pair
// ends. Build holds only the tables the pair captures into, read from disk,
// compresses each table from its raw file once the values are dropped, and
// bounds the heap of each phase, so the peak is the largest pair's state
// plus its captured-into tables (EstimateMemory).
//
// A pair with one red a side can also be solved in parts (SolveParts): 630
// parts per material, by the squares of the two reds (the side to move's
// on the left half, which folds the mirror), of which only those a part's
// retrograde pass reaches are needed in memory at a time; the others wait
// in spill files. The parts are then repacked into obsblk order. Build does
// this for such a pair when BuildOptions.MemLimit is below its in-memory
// need. With two or more reds a side the reds can stand symmetrically and
// the blues would have to break the mirror tie, which the part layout does
// not do, so those pairs are built in memory.
//
// The values follow FORMAT.md §2 of the reference folder: odd v wins in v
// plies, even v loses in v plies, 0 is no result within the 210-ply horizon.
// Solve assigns them layer by layer in increasing distance, so that every
// value is final when it is written; Check tests a finished table against
// the consistency rule over every entry.
package geister
