package battery

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Quotas are the pass rates each group's Q rows must reach, by version.
// A version only ever raises a quota: the file keeps every version, and
// ParseQuotas refuses one that lowers a group's rate or drops a group.
type Quotas struct {
	// Version is the newest version in the file.
	Version int
	// Rate is each group's quota in the newest version, 0..1.
	Rate map[string]float64
	// Calibration says, per version, which reference build at which
	// budget the quotas were measured on.
	Calibration map[int]string
}

// ParseQuotas reads a quota file: lines of "version group rate
// calibration" (tab-separated), versions in ascending order starting at 1,
// each version listing every group again.
func ParseQuotas(r io.Reader, name string) (*Quotas, error) {
	q := &Quotas{Rate: map[string]float64{}, Calibration: map[int]string{}}
	var prev, cur map[string]float64
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		where := fmt.Sprintf("%s:%d", name, n)
		f := strings.Split(line, "\t")
		if len(f) != 4 {
			return nil, fmt.Errorf("%s: %d fields, want 4 (version group rate calibration)", where, len(f))
		}
		v, err1 := strconv.Atoi(f[0])
		rate, err2 := strconv.ParseFloat(f[2], 64)
		if err1 != nil || err2 != nil || rate < 0 || rate > 1 || f[1] == "" {
			return nil, fmt.Errorf("%s: bad version, group or rate in %q", where, line)
		}
		switch {
		case v == q.Version+1:
			if cur != nil {
				if prev != nil {
					if err := raisesOnly(prev, cur, q.Version-1); err != nil {
						return nil, fmt.Errorf("%s: %w", where, err)
					}
				}
				prev = cur
			}
			cur = map[string]float64{}
			q.Version = v
			q.Calibration[v] = f[3]
		case v != q.Version:
			return nil, fmt.Errorf("%s: version %d after version %d", where, v, q.Version)
		}
		if _, dup := cur[f[1]]; dup {
			return nil, fmt.Errorf("%s: group %s twice in version %d", where, f[1], v)
		}
		cur[f[1]] = rate
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if cur == nil {
		return nil, fmt.Errorf("%s: no quotas", name)
	}
	if prev != nil {
		if err := raisesOnly(prev, cur, q.Version-1); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	q.Rate = cur
	return q, nil
}

// raisesOnly checks that next keeps every group of prev at a rate at least
// as high.
func raisesOnly(prev, next map[string]float64, version int) error {
	for g, r := range prev {
		n, ok := next[g]
		if !ok {
			return fmt.Errorf("version %d drops group %s", version+1, g)
		}
		if n < r {
			return fmt.Errorf("version %d lowers group %s from %.2f to %.2f; a quota is only ever raised", version+1, g, r, n)
		}
	}
	return nil
}

// Groups returns the set of groups the quotas name.
func (q *Quotas) Groups() map[string]bool {
	g := map[string]bool{}
	for k := range q.Rate {
		g[k] = true
	}
	return g
}
