package battery

// The seeds of the shipped rows. Positions of the tables rows were picked
// from the reference prober's oracle positions (../shared/chesstb/oracle),
// so the oracle's own child values can confirm the expected sets; game
// positions are reached by playing the game's record; the rest are typed
// and judged by the rules or the prover alone.
var seeds = []seed{
	// Escapes from check where the rules leave one legal move. In the
	// first two only the en-passant capture removes the pawn that gives
	// check; the capture square b6 is not on any check line.
	{id: "rules-ep-evasion-1", tier: Mandatory, group: "rules", arb: "rules", fen: "8/8/k7/1pP5/K7/2q5/8/8 w - b6 0 2"},
	{id: "rules-ep-evasion-2", tier: Mandatory, group: "rules", arb: "rules", fen: "8/8/8/1pP5/Kbk5/8/8/8 w - b6 0 2"},
	{id: "rules-single-lasker", tier: Mandatory, group: "rules", arb: "rules", game: "lasker-thomas", plies: -8},
	{id: "rules-single-reti", tier: Mandatory, group: "rules", arb: "rules", game: "reti-tartakower", plies: -4},
	{id: "rules-single-back-rank", tier: Mandatory, group: "rules", arb: "rules", fen: "R5k1/5pp1/7p/8/8/8/8/6K1 b - - 0 1"},
	// Positions with no legal move, and dead positions.
	{id: "rules-checkmated", tier: Mandatory, group: "rules", arb: "rules", fen: "7k/6Q1/6K1/8/8/8/8/8 b - - 0 1"},
	{id: "rules-checkmated-fools", tier: Mandatory, group: "rules", arb: "rules", game: "fools", plies: 0},
	{id: "rules-stalemate-queen-corner", tier: Mandatory, group: "rules", arb: "rules", fen: "7k/8/6Q1/8/8/8/8/K7 b - - 0 1"},
	{id: "rules-checkmated-smothered", tier: Mandatory, group: "rules", arb: "rules", fen: "6rk/5Npp/8/8/8/8/8/6K1 b - - 0 1"},
	{id: "rules-stalemate", tier: Mandatory, group: "rules", arb: "rules", fen: "7k/5Q2/6K1/8/8/8/8/8 b - - 0 1"},
	{id: "rules-stalemate-pawn", tier: Mandatory, group: "rules", arb: "rules", fen: "k7/P7/K7/8/8/8/8/8 b - - 0 1"},
	{id: "rules-dead-kbk", tier: Mandatory, group: "rules", arb: "rules", fen: "8/8/4k3/8/8/3BK3/8/8 w - - 0 1"},
	{id: "rules-dead-knk", tier: Mandatory, group: "rules", arb: "rules", fen: "8/8/4k3/8/1n6/4K3/8/8 b - - 0 1"},
	{id: "rules-dead-kbkb", tier: Mandatory, group: "rules", arb: "rules", fen: "8/8/2b1k3/8/8/3BK3/8/8 w - - 0 1"},

	// The two cases every battery must hold: mated in 3 (not 4) whatever
	// Black plays; and a rook win the 50-move rule draws, no mate fitting
	// into the twelve plies left.
	{id: "must-mated-in-3", tier: Mandatory, group: "mate-patterns", arb: "prover:4", fen: "8/N5k1/3Q4/7p/3R4/8/2P2K1P/8 b - - 0 38"},
	{id: "must-krk-clock-88", tier: Mandatory, group: "tables-clock", arb: "tables", fen: "2k5/8/3R2K1/8/8/8/8/8 w - - 88 1"},

	// Mate patterns, proved exhaustively.
	{id: "mate-back-rank", tier: Mandatory, group: "mate-patterns", arb: "prover:1", fen: "6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1"},
	{id: "mate-smothered", tier: Mandatory, group: "mate-patterns", arb: "prover:1", fen: "6rk/6pp/8/6N1/8/8/8/6K1 w - - 0 1"},
	{id: "mate-philidor-legacy", tier: Quota, group: "mate-patterns", arb: "prover:4", fen: "r6k/6pp/8/4N3/2Q5/8/8/6K1 w - - 0 1"},
	{id: "mate-arabian", tier: Quota, group: "mate-patterns", arb: "prover:2", fen: "7k/8/5N2/8/8/8/6R1/6K1 w - - 0 1"},
	{id: "mate-kqk-2", tier: Quota, group: "mate-patterns", arb: "prover:3", fen: "k7/8/1K6/8/8/8/8/6Q1 w - - 0 1"},
	{id: "mate-krk-3", tier: Quota, group: "mate-patterns", arb: "prover:3", fen: "k7/8/2K5/8/8/8/8/7R w - - 0 1"},

	// Mates and mated positions from famous games, proved exhaustively;
	// "bN" is N half-moves before the game's final mate.
	{id: "game-opera-b1", tier: Mandatory, group: "mate-games", arb: "prover:1", game: "opera", plies: -1},
	{id: "game-opera-b2", tier: Mandatory, group: "mate-games", arb: "prover:1", game: "opera", plies: -2},
	{id: "game-opera-b3", tier: Quota, group: "mate-games", arb: "prover:2", game: "opera", plies: -3},
	{id: "game-immortal-b1", tier: Mandatory, group: "mate-games", arb: "prover:1", game: "immortal", plies: -1},
	{id: "game-immortal-b2", tier: Mandatory, group: "mate-games", arb: "prover:1", game: "immortal", plies: -2},
	{id: "game-immortal-b3", tier: Quota, group: "mate-games", arb: "prover:2", game: "immortal", plies: -3},
	{id: "game-immortal-b4", tier: Quota, group: "mate-games", arb: "prover:2", game: "immortal", plies: -4},
	{id: "game-immortal-b5", tier: Quota, group: "mate-games", arb: "prover:3", game: "immortal", plies: -5},
	{id: "game-evergreen-b1", tier: Mandatory, group: "mate-games", arb: "prover:1", game: "evergreen", plies: -1},
	{id: "game-evergreen-b2", tier: Mandatory, group: "mate-games", arb: "prover:1", game: "evergreen", plies: -2},
	{id: "game-evergreen-b3", tier: Quota, group: "mate-games", arb: "prover:2", game: "evergreen", plies: -3},
	{id: "game-evergreen-b4", tier: Quota, group: "mate-games", arb: "prover:2", game: "evergreen", plies: -4},
	{id: "game-evergreen-b5", tier: Quota, group: "mate-games", arb: "prover:3", game: "evergreen", plies: -5},
	{id: "game-evergreen-b6", tier: Quota, group: "mate-games", arb: "prover:3", game: "evergreen", plies: -6},
	{id: "game-evergreen-b7", tier: Quota, group: "mate-games", arb: "prover:4", game: "evergreen", plies: -7},
	{id: "game-lasker-thomas-b1", tier: Mandatory, group: "mate-games", arb: "prover:1", game: "lasker-thomas", plies: -1},
	{id: "game-lasker-thomas-b2", tier: Mandatory, group: "mate-games", arb: "prover:1", game: "lasker-thomas", plies: -2},
	{id: "game-lasker-thomas-b3", tier: Quota, group: "mate-games", arb: "prover:2", game: "lasker-thomas", plies: -3},
	{id: "game-lasker-thomas-b4", tier: Quota, group: "mate-games", arb: "prover:2", game: "lasker-thomas", plies: -4},
	{id: "game-lasker-thomas-b5", tier: Quota, group: "mate-games", arb: "prover:3", game: "lasker-thomas", plies: -5},
	{id: "game-lasker-thomas-b6", tier: Quota, group: "mate-games", arb: "prover:3", game: "lasker-thomas", plies: -6},
	{id: "game-lasker-thomas-b7", tier: Quota, group: "mate-games", arb: "prover:4", game: "lasker-thomas", plies: -7},
	{id: "game-reti-tartakower-b1", tier: Mandatory, group: "mate-games", arb: "prover:1", game: "reti-tartakower", plies: -1},
	{id: "game-reti-tartakower-b2", tier: Mandatory, group: "mate-games", arb: "prover:1", game: "reti-tartakower", plies: -2},
	{id: "game-reti-tartakower-b3", tier: Quota, group: "mate-games", arb: "prover:2", game: "reti-tartakower", plies: -3},
	{id: "game-reti-tartakower-b4", tier: Quota, group: "mate-games", arb: "prover:2", game: "reti-tartakower", plies: -4},
	{id: "game-reti-tartakower-b5", tier: Quota, group: "mate-games", arb: "prover:3", game: "reti-tartakower", plies: -5},
	{id: "game-legal-b1", tier: Mandatory, group: "mate-games", arb: "prover:1", game: "legal", plies: -1},
	{id: "game-legal-b2", tier: Mandatory, group: "mate-games", arb: "prover:1", game: "legal", plies: -2},
	{id: "game-legal-b3", tier: Quota, group: "mate-games", arb: "prover:2", game: "legal", plies: -3},
	{id: "game-blackburne-shilling-b1", tier: Mandatory, group: "mate-games", arb: "prover:1", game: "blackburne-shilling", plies: -1},
	{id: "game-caro-smothered-b1", tier: Mandatory, group: "mate-games", arb: "prover:1", game: "caro-smothered", plies: -1},
	{id: "game-fools-b1", tier: Mandatory, group: "mate-games", arb: "prover:1", game: "fools", plies: -1},
	{id: "game-scholars-b1", tier: Mandatory, group: "mate-games", arb: "prover:1", game: "scholars", plies: -1},

	// Endgame knowledge from the tables, at the clock of the row.
	// tables-win 76 14
	{id: "tables-win-01", tier: Quota, group: "tables-win", arb: "tables", fen: "1K6/1P6/1n3k2/8/8/8/8/8 w - - 0 1"},
	{id: "tables-win-02", tier: Quota, group: "tables-win", arb: "tables", fen: "2K5/8/8/1k6/8/6N1/7p/8 b - - 0 1"},
	{id: "tables-win-03", tier: Quota, group: "tables-win", arb: "tables", fen: "3Q4/3K4/8/8/8/3k4/3p4/8 w - - 0 1"},
	{id: "tables-win-04", tier: Quota, group: "tables-win", arb: "tables", fen: "7K/8/Pk6/8/8/8/N7/8 w - - 0 1"},
	{id: "tables-win-05", tier: Quota, group: "tables-win", arb: "tables", fen: "8/2r5/8/8/4k2K/8/8/NN6 b - - 0 1"},
	{id: "tables-win-06", tier: Quota, group: "tables-win", arb: "tables", fen: "8/3k4/8/7R/8/K7/8/1n6 w - - 0 1"},
	{id: "tables-win-07", tier: Quota, group: "tables-win", arb: "tables", fen: "8/7k/2K3R1/8/8/8/8/3n4 w - - 0 1"},
	{id: "tables-win-08", tier: Quota, group: "tables-win", arb: "tables", fen: "8/8/2R5/K1b5/8/8/k7/8 w - - 0 1"},
	{id: "tables-win-09", tier: Quota, group: "tables-win", arb: "tables", fen: "8/8/8/4K3/8/8/4R1p1/k7 w - - 0 1"},
	{id: "tables-win-10", tier: Quota, group: "tables-win", arb: "tables", fen: "8/8/8/8/1k6/4P3/8/4K3 w - - 0 1"},
	{id: "tables-win-11", tier: Quota, group: "tables-win", arb: "tables", fen: "8/8/8/8/8/1r6/6Q1/k1K5 b - - 0 1"},
	{id: "tables-win-12", tier: Quota, group: "tables-win", arb: "tables", fen: "8/8/8/8/8/8/6K1/1kN2B2 w - - 0 1"},
	{id: "tables-win-13", tier: Quota, group: "tables-win", arb: "tables", fen: "8/8/8/8/8/8/n1K5/k1B5 w - - 0 1"},
	{id: "tables-win-14", tier: Quota, group: "tables-win", arb: "tables", fen: "8/8/P7/2k5/8/6b1/1K6/8 w - - 0 1"},
	// captures 102 12
	{id: "captures-01", tier: Quota, group: "captures", arb: "tables", fen: "1k6/8/8/8/8/2q5/2K5/8 w - - 80 1"},
	{id: "captures-02", tier: Quota, group: "captures", arb: "tables", fen: "6k1/4K3/1p2r3/8/8/8/8/8 w - - 80 1"},
	{id: "captures-03", tier: Quota, group: "captures", arb: "tables", fen: "8/7p/8/8/3q4/1k2K3/8/8 w - - 80 1"},
	{id: "captures-04", tier: Quota, group: "captures", arb: "tables", fen: "8/8/8/8/6n1/8/4q1k1/3K4 w - - 0 1"},
	{id: "captures-05", tier: Quota, group: "captures", arb: "tables", fen: "1K6/8/8/8/5Qq1/8/8/k7 b - - 0 1"},
	{id: "captures-06", tier: Quota, group: "captures", arb: "tables", fen: "4Q3/8/2b3K1/8/8/8/8/1k6 w - - 98 1"},
	{id: "captures-07", tier: Quota, group: "captures", arb: "tables", fen: "6n1/8/k7/7r/6K1/8/8/8 w - - 0 1"},
	{id: "captures-08", tier: Quota, group: "captures", arb: "tables", fen: "8/4K3/5q2/8/8/4k3/8/8 w - - 0 1"},
	{id: "captures-09", tier: Quota, group: "captures", arb: "tables", fen: "8/8/2K5/8/2p5/3P2k1/8/8 w - - 0 1"},
	{id: "captures-10", tier: Quota, group: "captures", arb: "tables", fen: "8/8/6b1/8/8/8/2Kn4/k7 w - - 0 1"},
	{id: "captures-11", tier: Quota, group: "captures", arb: "tables", fen: "8/8/8/4k3/5p2/8/6K1/5q2 w - - 0 1"},
	{id: "captures-12", tier: Quota, group: "captures", arb: "tables", fen: "8/8/8/8/8/7B/7k/3KB3 b - - 0 1"},
	// tables-clock 57 12
	{id: "tables-clock-01", tier: Quota, group: "tables-clock", arb: "tables", fen: "1N3K2/8/8/5P2/8/8/6k1/8 w - - 98 1"},
	{id: "tables-clock-02", tier: Quota, group: "tables-clock", arb: "tables", fen: "2K5/1P6/8/8/7k/8/8/8 w - - 98 1"},
	{id: "tables-clock-03", tier: Quota, group: "tables-clock", arb: "tables", fen: "3k4/8/8/2K1P3/4B3/8/8/8 w - - 98 1"},
	{id: "tables-clock-04", tier: Quota, group: "tables-clock", arb: "tables", fen: "5N2/8/8/8/8/8/4kp2/1K6 b - - 98 1"},
	{id: "tables-clock-05", tier: Quota, group: "tables-clock", arb: "tables", fen: "7k/1R6/8/8/4K3/5Q2/8/8 w - - 98 1"},
	{id: "tables-clock-06", tier: Quota, group: "tables-clock", arb: "tables", fen: "8/1p2P3/8/8/8/1k6/4K3/8 w - - 98 1"},
	{id: "tables-clock-07", tier: Quota, group: "tables-clock", arb: "tables", fen: "8/5K2/8/P7/8/2k5/3p4/8 b - - 98 1"},
	{id: "tables-clock-08", tier: Quota, group: "tables-clock", arb: "tables", fen: "8/5k2/Q7/1P5K/8/8/8/8 w - - 98 1"},
	{id: "tables-clock-09", tier: Quota, group: "tables-clock", arb: "tables", fen: "8/6k1/8/R7/4K3/7P/8/8 w - - 98 1"},
	{id: "tables-clock-10", tier: Quota, group: "tables-clock", arb: "tables", fen: "8/8/2K5/4Pp2/8/8/k7/8 w - f6 100 1"},
	{id: "tables-clock-11", tier: Quota, group: "tables-clock", arb: "tables", fen: "8/8/3k2P1/1P6/8/3K4/8/8 w - - 98 1"},
	{id: "tables-clock-12", tier: Quota, group: "tables-clock", arb: "tables", fen: "8/8/7p/8/8/4Q3/5K1k/8 w - - 98 1"},
	// tables-draw 37 10
	{id: "tables-draw-01", tier: Quota, group: "tables-draw", arb: "tables", fen: "2k5/p7/6b1/8/8/8/8/5K2 w - - 0 1"},
	{id: "tables-draw-02", tier: Quota, group: "tables-draw", arb: "tables", fen: "5k2/8/8/8/8/6B1/P7/2K5 b - - 80 1"},
	{id: "tables-draw-03", tier: Quota, group: "tables-draw", arb: "tables", fen: "7k/2P5/8/1K6/8/8/2r5/8 w - - 0 1"},
	{id: "tables-draw-04", tier: Quota, group: "tables-draw", arb: "tables", fen: "8/8/2b4k/2K1n3/8/8/8/8 w - - 0 1"},
	{id: "tables-draw-05", tier: Quota, group: "tables-draw", arb: "tables", fen: "8/K6P/8/3q3k/8/8/8/8 w - - 80 1"},
	{id: "tables-draw-06", tier: Quota, group: "tables-draw", arb: "tables", fen: "Q7/8/8/8/8/1K6/4p3/5k2 b - - 80 1"},
	{id: "tables-draw-07", tier: Quota, group: "tables-draw", arb: "tables", fen: "4Q3/8/8/1r6/3k4/8/8/4K3 b - - 0 1"},
	{id: "tables-draw-08", tier: Quota, group: "tables-draw", arb: "tables", fen: "8/2k5/1n6/8/2Kp4/8/8/8 w - - 0 1"},
	{id: "tables-draw-09", tier: Quota, group: "tables-draw", arb: "tables", fen: "8/6n1/2Q5/3k1n2/8/8/8/4K3 b - - 0 1"},
	{id: "tables-draw-10", tier: Quota, group: "tables-draw", arb: "tables", fen: "8/8/4K1Q1/8/3k4/3n4/8/8 b - - 0 1"},
	// tables-nomate 389 10
	{id: "tables-nomate-01", tier: Quota, group: "tables-clock", arb: "tables", fen: "1K4k1/2N5/4p3/8/2N5/8/8/8 b - - 80 1"},
	{id: "tables-nomate-02", tier: Quota, group: "tables-clock", arb: "tables", fen: "1K3k2/8/8/8/6N1/8/4P3/8 b - - 100 1"},
	{id: "tables-nomate-03", tier: Quota, group: "tables-clock", arb: "tables", fen: "2q5/8/8/8/6K1/8/b7/k7 w - - 100 1"},
	{id: "tables-nomate-04", tier: Quota, group: "tables-clock", arb: "tables", fen: "5Q2/8/8/1k6/8/8/8/1K4Q1 b - - 100 1"},
	{id: "tables-nomate-05", tier: Quota, group: "tables-clock", arb: "tables", fen: "7k/8/4K3/8/3p4/3q4/8/8 w - - 100 1"},
	{id: "tables-nomate-06", tier: Quota, group: "tables-clock", arb: "tables", fen: "8/3R4/2k5/8/8/3K4/7P/8 w - - 100 1"},
	{id: "tables-nomate-07", tier: Quota, group: "tables-clock", arb: "tables", fen: "8/7k/8/7K/8/8/8/5B1r w - - 100 1"},
	{id: "tables-nomate-08", tier: Quota, group: "tables-clock", arb: "tables", fen: "8/8/6B1/8/7k/7N/6K1/8 b - - 100 1"},
	{id: "tables-nomate-09", tier: Quota, group: "tables-clock", arb: "tables", fen: "8/8/8/6k1/K7/6RN/8/8 b - - 100 1"},
	{id: "tables-nomate-10", tier: Quota, group: "tables-clock", arb: "tables", fen: "8/8/K4k2/7B/8/8/2N5/8 w - - 100 1"},
}
