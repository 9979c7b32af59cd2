// Package syzygy reads Syzygy endgame tablebases (.rtbw WDL tables and
// .rtbz DTZ tables) through the source seam, giving the values the Fathom
// prober gives: WDL with the cursed band, DTZ50″ in plies, and Fathom's
// root ranking.
//
// A table file is a short header, one or more Huffman-coded sub-tables
// (one per side to move and, for tables with pawns, one per file of the
// leading pawn), the sub-tables' block indexes, and the compressed blocks.
// Headers and indexes are read once when a table is opened; a probe reads
// at most one compressed block per table it touches and keeps the block,
// decoded, in the block cache shared with the other readers
// (format/blockcache).
//
// A table stores the value of positions without en-passant rights and
// without regard for captures the generator left out (the tables are
// "don't care" where a capture decides): the probe resolves captures with a
// small search, as Fathom does, before it trusts a stored value. A DTZ table
// stores one side to move only; the other side's DTZ is found by a one-ply
// search.
//
// The values follow Fathom exactly (its oracle in ../shared/syzygy is swept
// whole by the tests): WDL from -2 (loss) to 2 (win) with ±1 for the cursed
// band, DTZ50″ in plies with |DTZ| > 100 in the cursed band, and Root as
// Fathom's tb_probe_root, moves in Fathom's generation order. The format
// stores some distances in moves rather than plies; DTZWithRounding says
// when a value may be one ply short.
//
// A table answers only after the checksum the generator embeds in it (the
// one tbcheck verifies) has been confirmed, which happens in the background
// from the moment the table is opened: a flipped bit inside a compressed
// block decodes to other plausible values, which nothing else would catch.
// A table with an integrity manifest (manifest.go; "tbprobe verify
// --manifest" writes them, Manifest computes one) needs no whole-file
// check: each read is checked page by page against the manifest before
// anything is decoded, and the manifest itself is trusted only when the
// generator's chunk hashes it carries combine to the checksum stored in
// the file.
package syzygy
