package accesslog

import (
	"bufio"
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// One line per request, with the request's method and path and the status
// and byte count the handler wrote (the arbiter is what the handler was
// made to write); nothing of the query, headers or URL credentials.
func TestHandlerLogsOneLinePerRequest(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&buf, nil))
	h := Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/teapot":
			w.WriteHeader(http.StatusTeapot)
		case "/body":
			w.Write([]byte("hello"))
		}
	}), log)
	for _, target := range []string{
		"/teapot",
		"/body?fen=x&token=s3cret",
		"http://alice:pa55word@example.org/empty", // a proxy-form request line
	} {
		req := httptest.NewRequest("GET", target, nil)
		req.Header.Set("Authorization", "Bearer hunter2")
		h.ServeHTTP(httptest.NewRecorder(), req)
	}
	want := []struct {
		path   string
		status int
		bytes  int
	}{{"/teapot", 418, 0}, {"/body", 200, 5}, {"/empty", 200, 0}}
	sc := bufio.NewScanner(&buf)
	for i := 0; sc.Scan(); i++ {
		var line map[string]any
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatal(err)
		}
		if i >= len(want) {
			t.Fatalf("extra line %s", sc.Text())
		}
		w := want[i]
		if line["msg"] != "request" || line["method"] != "GET" || line["path"] != w.path ||
			line["status"] != float64(w.status) || line["bytes"] != float64(w.bytes) || line["duration"] == nil {
			t.Errorf("line %d = %v, want path %s status %d bytes %d", i, line, w.path, w.status, w.bytes)
		}
		for _, secret := range []string{"s3cret", "token", "hunter2", "alice", "pa55word"} {
			if strings.Contains(sc.Text(), secret) {
				t.Errorf("line %d holds %q: %s", i, secret, sc.Text())
			}
		}
	}
}
