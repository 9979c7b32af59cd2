// Package chesstb reads chesstb endgame tables (github.com/noobpwnftw/chesstb)
// through the source seam and answers what the reference prober answers:
// WDL, DTZ and DTM for any position of a material whose tables are present.
//
//	tb, err := chesstb.Open(chesstb.Options{}, src)
//	res, err := tb.Probe(ctx, &pos)   // every metric at once
//	w, err := tb.WDL(ctx, &pos)       // -2..+2
//
// # Design note (for readers adding table kinds)
//
// How a probe flows (api.go, probe.go, distance.go, changepoint_probe.go):
//
//  1. Tablebase.root validates the position (no castling rights) and answers
//     what the board settles without a table: checkmate, stalemate, bare
//     kings.
//  2. canonicalNode flips colours when the stronger side is Black, so every
//     node is in its stored orientation with its canonical material.
//  3. Probe runs prober.probeNode (every metric, packs preferred in the
//     reference's order); DTZ and DTM alone run prober.probeImpl, which reads
//     only dtz/ or dtm/; WDL alone runs prober.wdlImpl. Each reads the class
//     first (wdlInternal), then the distances (prober.distance), then applies
//     the en-passant overlay: every legal ep capture is probed as a fresh
//     position and kept when it is better, metric by metric.
//  4. Every table read goes through frameFor, which decides the frame kind:
//     the side to move's own frame, the other frame through the colour flip
//     for a symmetric material (KRKR), or a rebuild (deriveWDL, deriveDTZ,
//     deriveDTM: one-ply minimax, children canonicalised with canonicalNode,
//     captures and promotions reaching sub-tables). Loss-only and relaxed
//     frames are decided right after it (distance, raiseByBound), and
//     unsupportedFrame refuses the combinations the format does not define.
//  5. cellIndex maps the position to its cell (index.go: symmetry, king and
//     pawn slices, binomial ranking, the header's per-colour permutation),
//     and tableFile.readWDL / readRank fetch the cell through the block
//     cache. Distance and pack blocks are decoded lazily (format/chesstb/internal/lzma,
//     lzmaBlock): only as far as the cell asked for, resumed by later
//     probes, in a buffer that grows with what is decoded and is charged to
//     the budget as it grows (with Options.DecodedBlocks, decoded.go, a
//     block is first looked for in that store on disk, and one that is not
//     there is decoded whole and stored; a block found there is read
//     sparsely, only the store's chunks holding what a lookup reads:
//     lzmaBlock.span, changepoint.Partial.LookupIndexed); pack lookups go
//     through a changepoint.Partial, whose index grows with them
//     (changepoint_file.go). A probe keeps its last WDL blocks (blockMemo)
//     and its rebuilds' child nodes (prober.nodes, one per depth) to itself.
//
// How a table file is opened (tablebase.go, header.go): Tablebase.table
// opens a (Kind, material) pair once, searching each source's kind folder
// and root; parseHeader reads the container for all five kinds, the
// layered DTC/DTM50 headers (block positions, rank table, usize vector)
// included, and locates each frame's compressed data.
//
// How a reader is added: give it a Kind (kindInfo has the magic, folder and
// extension), read cells with tableFile.block(ctx, frame, block, decode),
// whose decode function fills a buffer of the block's decoded size from the
// compressed block (format/blockcache keeps one LRU of decoded blocks
// under Options.BlockCacheBytes for every open table, and decodes a block
// once however many probes want it; the buffers come from the Tablebase's
// pool, pool.go, and the block handed back is held until its release).
// Return errors wrapped by tableFile.fileErr so they name file and block,
// and wrap ErrCorrupt for bad data.
//
// How damage is kept from becoming a value: parseHeader validates every
// frame header completely (flags, value maps, block counts, offsets, the
// file size the layout implies); every answer is checked against the
// invariants of the reference's table checker (invariants.go); where a
// table has an integrity manifest (manifest.go, one hash per compressed
// block, written by "tbprobe verify --manifest"), its header is checked on
// open and every block as it is read, before it is decoded; and a table
// without one gives no answer until its stored whole-file XXH64 is
// confirmed (checksum.go: the check starts in the background when the table
// opens, and prober.table waits for it; a confirmed table costs an atomic
// load). Flips that decode to valid-looking values (a value-map entry, an
// LZ4 literal) pass the first two and are caught only by the last two.
//
// Errors: ErrNoTable for a missing table, ErrCorrupt for malformed data,
// ErrUnsupported for forms not decoded, ErrUnresolved when a rebuild lacks a
// child's value, ErrBadPosition for positions outside the tables' domain;
// transport errors from the sources pass through (source.ErrTransient, ...).
package chesstb
