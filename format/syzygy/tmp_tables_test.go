package syzygy

import (
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

func fathomArray(t *testing.T, name string) []int {
	b, _ := os.ReadFile("/tmp/fathom/src/tbprobe.c")
	s := string(b)
	i := strings.Index(s, name)
	j := strings.Index(s[i:], "};")
	body := s[i:][strings.Index(s[i:], "=")+1 : j]
	var out []int
	for _, m := range regexp.MustCompile(`-?\d+`).FindAllString(body, -1) {
		v, _ := strconv.Atoi(m)
		out = append(out, v)
	}
	return out
}

func TestTmpTables(t *testing.T) {
	chk := func(name string, got []int) {
		want := fathomArray(t, name)
		if len(want) != len(got) {
			t.Fatalf("%s len %d %d", name, len(want), len(got))
		}
		for i := range want {
			if want[i] != got[i] {
				t.Errorf("%s[%d] = %d want %d", name, i, got[i], want[i])
			}
		}
	}
	conv := func(a []uint8) []int {
		r := make([]int, len(a))
		for i, v := range a {
			r[i] = int(v)
		}
		return r
	}
	chk("Triangle[] =", conv(triangle[:]))
	chk("Lower[] =", conv(lower[:]))
	chk("uint8_t Diag[] =", conv(diagIdx[:]))
	chk("FlipDiag[] =", conv(flipDiag[:]))
	var od []int
	for _, v := range offDiag {
		od = append(od, int(v))
	}
	chk("OffDiag[] =", od)
	var fl []int
	for sq := range 64 {
		fl = append(fl, int(flap[sq]))
	}
	w := fathomArray(t, "Flap[2][64] =")
	for i := range 64 {
		if fl[i] != w[i] {
			t.Errorf("flap %d", i)
		}
	}
	var pt []int
	for sq := range 64 {
		pt = append(pt, int(pawnTwist[sq]))
	}
	w = fathomArray(t, "PawnTwist[2][64] =")
	for i := range 64 {
		if pt[i] != w[i] {
			t.Errorf("twist %d %d %d", i, pt[i], w[i])
		}
	}
	w = fathomArray(t, "KKIdx[10][64] =")
	for i := range 640 {
		if int(kkIdx[i/64][i%64]) != w[i] {
			t.Errorf("kk %d", i)
		}
	}
}
