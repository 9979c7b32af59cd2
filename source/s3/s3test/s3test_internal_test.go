package s3test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/tbfs/tbfs/internal/testkit/testenv"
)

// TestPortTaken: when another server holds the port picked for versitygw,
// the start fails (and start tries another port) instead of handing the
// test the other server. Each stranger answers the way a server that is not
// ours could: every path with 200, every path with 404, or as a versitygw
// started by someone else.
func TestPortTaken(t *testing.T) {
	bin := testenv.Tool(t, "versitygw")
	other := Start(t, t.TempDir())
	for _, c := range []struct {
		name string
		addr func(t *testing.T) string
	}{
		{"catch-all 200", func(t *testing.T) string {
			return serve(t, func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("OK")) })
		}},
		{"404", func(t *testing.T) string { return serve(t, http.NotFound) }},
		{"another versitygw", func(t *testing.T) string { return strings.TrimPrefix(other.Endpoint, "http://") }},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv, err := try(t, bin, t.TempDir(), false, c.addr(t))
			if err == nil {
				t.Fatalf("try returned %s, held by another server", srv.Endpoint)
			}
			if !strings.Contains(err.Error(), "exited before serving") {
				t.Fatalf("want versitygw to exit on the taken port, got %v", err)
			}
		})
	}
}

// serve runs handler on a loopback port for the test and returns its address.
func serve(t *testing.T, handler http.HandlerFunc) string {
	s := httptest.NewServer(handler)
	t.Cleanup(s.Close)
	return strings.TrimPrefix(s.URL, "http://")
}
