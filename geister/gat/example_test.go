package gat_test

import (
	"fmt"

	geistertb "github.com/tbfs/tbfs/format/geister"
	"github.com/tbfs/tbfs/geister"
	"github.com/tbfs/tbfs/geister/gat"
)

// Read the board of the standard start as the first player receives it and
// turn it into what the tables need: the player's own pieces by colour and
// the opponent's pieces with their number of reds.
func ExampleParseBoard() {
	b, err := gat.ParseBoard("14R24R34R44R15B25B35B45B41u31u21u11u40u30u20u10u")
	if err != nil {
		fmt.Println(err)
		return
	}
	o, err := b.Observation()
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(geistertb.ObservationMaterial(o), string(gat.Letter(b.At(1, 0))))
	// Output:
	// pb4pr4ob4or4 h
}

// A blue piece on the mover's exit corner leaves the board and wins.
func ExampleGame_Move() {
	g, err := gat.ParseSetup("00B99b99b99b55R99r99r99r" + "30b99b99b99b31r99r99r99r")
	if err != nil {
		fmt.Println(err)
		return
	}
	if _, err := g.Move(0, 0, geister.West); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(g.Over())
	fmt.Println(gat.Message{Kind: gat.Won, Board: g.View(0, true)})
	// Output:
	// true 0 piece A of player 1 escaped
	// WON:88b99b99b99b55R99r99r99r30b99b99b99b31r99r99r99r
}
