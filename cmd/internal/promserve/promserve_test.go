package promserve

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

// Requests are counted and timed by path, any path outside the known ones
// as "other"; probes by outcome (the arbiter is the requests and probes the
// test made).
func TestInstrumentAndProbes(t *testing.T) {
	m := New("tbprobe", "/standard", "/metrics")
	h := m.Instrument(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/standard" {
			http.NotFound(w, r)
		}
	}))
	for _, p := range []string{"/standard", "/standard", "/wp-login.php", "/x"} {
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", p, nil))
	}
	m.ObserveProbe(time.Millisecond, false, nil)
	m.ObserveProbe(time.Millisecond, true, nil)
	m.ObserveProbe(time.Millisecond, false, errors.New("transport"))
	for _, c := range []struct {
		got, want float64
		what      string
	}{
		{testutil.ToFloat64(m.requests.WithLabelValues("/standard", "200")), 2, "/standard 200"},
		{testutil.ToFloat64(m.requests.WithLabelValues("other", "404")), 2, "other 404"},
		{testutil.ToFloat64(m.probes.WithLabelValues("ok")), 1, "ok probes"},
		{testutil.ToFloat64(m.probes.WithLabelValues("outside")), 1, "outside probes"},
		{testutil.ToFloat64(m.probes.WithLabelValues("failed")), 1, "failed probes"},
	} {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.what, c.got, c.want)
		}
	}
	if n := testutil.CollectAndCount(m.reqDur); n != 2 {
		t.Errorf("%d request duration series, want 2 (/standard, other)", n)
	}
	// The registry's own linter finds nothing to object to.
	problems, err := testutil.GatherAndLint(m.reg)
	if err != nil || len(problems) > 0 {
		t.Errorf("lint: %v %v", problems, err)
	}
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	for _, want := range []string{"go_goroutines", "process_cpu_seconds_total", "go_build_info", "tbprobe_http_request_duration_seconds_bucket"} {
		if !strings.Contains(rec.Body.String(), want) {
			t.Errorf("exposition lacks %s", want)
		}
	}
}
