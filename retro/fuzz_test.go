package retro

import "testing"

// FuzzParseMaterial: any input either fails with ErrMaterial or gives a
// material whose name parses back to itself.
func FuzzParseMaterial(f *testing.F) {
	for _, s := range []string{"KQK", "KQvK", "KBNK", "KPK", "KRKP", "kvkq", "K", "KKK", "KQvKvK", "", "KXK", "Kv", "vK"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m, err := parseMaterial(s)
		if err != nil {
			return
		}
		again, err := parseMaterial(m.String())
		if err != nil {
			t.Fatalf("%q parsed to %s, which does not parse: %v", s, m, err)
		}
		if !again.equal(m) {
			t.Fatalf("%q parsed to %s, which parses to %s", s, m, again)
		}
		if m.men() < 2 {
			t.Fatalf("%q: %d men", s, m.men())
		}
	})
}
