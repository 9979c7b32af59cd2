// Package syzygy reads Syzygy endgame tablebases (.rtbw WDL tables and
// .rtbz DTZ tables) through the source seam, giving the values the Fathom
// prober gives: WDL with the cursed band, DTZ50” in plies, and Fathom's
// root ranking.
//
// A table file is a short header, one or more Huffman-coded sub-tables
// (one per side to move and, for tables with pawns, one per file of the
// leading pawn), the sub-tables' block indexes, and the compressed blocks.
// Headers and indexes are read once when a table is opened; a probe reads
// at most one compressed block per table it touches and keeps the block,
// decoded, in the block cache shared with the other readers
// (internal/blockcache).
//
// A table stores the value of positions without en-passant rights and
// without regard for captures the generator left out (the tables are
// "don't care" where a capture decides): the probe resolves captures with a
// small search, as Fathom does, before it trusts a stored value. A DTZ table
// stores one side to move only; the other side's DTZ is found by a one-ply
// search.
package syzygy
