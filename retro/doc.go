// Package retro walks chess backwards from known results.
//
// It offers three tools of increasing reach:
//
//   - Engine is a bounded retrograde engine in the manner of the astralbase
//     crate: the caller declares seeds (positions with a Win or Loss value),
//     and Solve propagates them to predecessors a bounded number of
//     expansions at a time. The engine never infers a terminal result on its
//     own; every value it reports is either the caller's assertion (a seed) or
//     a consequence it proved from the seeds.
//   - SolveMaterial enumerates every legal position of a small material,
//     finds the mates by the rules, takes the values of captures and
//     promotions from sub-materials, and runs the propagation to a fixpoint:
//     the result is the exact distance to mate of every position, draws
//     included. Materials of up to five men are indexed (more are refused
//     with ErrUnsupported). With pawns on both sides, the positions in
//     which the side to move may capture en passant are not index entries
//     (nor are they in the chesstb tables); they are solved with the rest
//     as nodes of a small side table, so that a double push that allows an
//     en-passant reply is valued by the position it really reaches, and
//     the table answers them too.
//   - ProveMate decides "the side to move mates in at most n moves" (or "is
//     mated in at most n whatever it plays") by an exhaustive AND/OR search
//     without pruning or evaluation, optionally under the 50-move rule.
//
// Distances are counted in plies. A side to move that is checkmated is
// Loss(0); a parent with a move into a Loss(n) child is Win(n+1); a position
// all of whose moves lead to Win children is Loss(1+max), because the losing
// side delays as long as it can. This is the convention of the chesstb DTM
// tables: a win has an odd distance and a loss an even one.
package retro
