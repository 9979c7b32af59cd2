package battery

// A game is a famous game's opening moves in SAN, played from the start
// position to reach a row's position, so the position is derived from the
// record rather than typed.
type game struct {
	name  string
	moves string
}

// The games; each row names one and how many half-moves of it to play.
var games = map[string]game{
	"opera": {"Morphy vs Duke of Brunswick and Count Isouard, Paris 1858",
		"e4 e5 Nf3 d6 d4 Bg4 dxe5 Bxf3 Qxf3 dxe5 Bc4 Nf6 Qb3 Qe7 Nc3 c6 Bg5 b5 Nxb5 cxb5 Bxb5+ Nbd7 O-O-O Rd8 Rxd7 Rxd7 Rd1 Qe6 Bxd7+ Nxd7 Qb8+ Nxb8 Rd8#"},
	"immortal": {"Anderssen vs Kieseritzky, London 1851",
		"e4 e5 f4 exf4 Bc4 Qh4+ Kf1 b5 Bxb5 Nf6 Nf3 Qh6 d3 Nh5 Nh4 Qg5 Nf5 c6 g4 Nf6 Rg1 cxb5 h4 Qg6 h5 Qg5 Qf3 Ng8 Bxf4 Qf6 Nc3 Bc5 Nd5 Qxb2 Bd6 Bxg1 e5 Qxa1+ Ke2 Na6 Nxg7+ Kd8 Qf6+ Nxf6 Be7#"},
	"evergreen": {"Anderssen vs Dufresne, Berlin 1852",
		"e4 e5 Nf3 Nc6 Bc4 Bc5 b4 Bxb4 c3 Ba5 d4 exd4 O-O d3 Qb3 Qf6 e5 Qg6 Re1 Nge7 Ba3 b5 Qxb5 Rb8 Qa4 Bb6 Nbd2 Bb7 Ne4 Qf5 Bxd3 Qh5 Nf6+ gxf6 exf6 Rg8 Rad1 Qxf3 Rxe7+ Nxe7 Qxd7+ Kxd7 Bf5+ Ke8 Bd7+ Kf8 Bxe7#"},
	"lasker-thomas": {"Edward Lasker vs Thomas, London 1912",
		"d4 e6 Nf3 f5 Nc3 Nf6 Bg5 Be7 Bxf6 Bxf6 e4 fxe4 Nxe4 b6 Ne5 O-O Bd3 Bb7 Qh5 Qe7 Qxh7+ Kxh7 Nxf6+ Kh6 Neg4+ Kg5 h4+ Kf4 g3+ Kf3 Be2+ Kg2 Rh2+ Kg1 Kd2#"},
	"reti-tartakower": {"Reti vs Tartakower, Vienna 1910",
		"e4 c6 d4 d5 Nc3 dxe4 Nxe4 Nf6 Qd3 e5 dxe5 Qa5+ Bd2 Qxe5 O-O-O Nxe4 Qd8+ Kxd8 Bg5+ Kc7 Bd8#"},
	"legal": {"Legall de Kermeur vs Saint Brie, Paris 1750",
		"e4 e5 Bc4 d6 Nf3 Bg4 Nc3 g6 Nxe5 Bxd1 Bxf7+ Ke7 Nd5#"},
	"blackburne-shilling": {"the Blackburne Shilling trap (Italian Game), smothered mate by Black",
		"e4 e5 Nf3 Nc6 Bc4 Nd4 Nxe5 Qg5 Nxf7 Qxg2 Rf1 Qxe4+ Be2 Nf3#"},
	"caro-smothered": {"the Caro-Kann smothered mate trap",
		"e4 c6 d4 d5 Nc3 dxe4 Nxe4 Nd7 Qe2 Ngf6 Nd6#"},
	"fools":    {"Fool's mate", "f3 e5 g4 Qh4#"},
	"scholars": {"Scholar's mate", "e4 e5 Bc4 Nc6 Qh5 Nf6 Qxf7#"},
}
