package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// secret is the credential every URL of TestNoSecretsInOutput carries.
const secret = "PASSWORD"

// TestNoSecretsInOutput runs every chess subcommand against table URLs that
// carry a credential in each form a URL can carry one (FTP userinfo, a
// presigned HTTP query, an S3 endpoint with userinfo and a credential
// parameter, a URL that does not parse) and asserts the secret appears in
// none of their output: errors, listings, serve's answers and /metrics. The
// arbiter is the property itself: the secret's text is absent.
func TestNoSecretsInOutput(t *testing.T) {
	fail := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "boom", http.StatusInternalServerError)
	}))
	t.Cleanup(fail.Close)
	host := strings.TrimPrefix(fail.URL, "http://")
	urls := []string{
		"ftp://tbfs:" + secret + "@127.0.0.1:1/",
		"http://tbfs:" + secret + "@" + host + "/t/?X-Amz-Signature=" + secret + "&X-Amz-Credential=" + secret + "&sig=" + secret + "&token=" + secret,
		"http://" + host + "/t/?access_key=" + secret,
		"s3://bkt/p?endpoint=http://k:" + secret + "@127.0.0.1:1&X-Amz-Credential=" + secret,
		"s3://bkt/p?endpoint=" + url.QueryEscape("http://k:"+secret+"@"+host) + "&path_style=true",
		"http://u:" + secret + "@[::1/x",
	}
	env := []string{"AWS_ACCESS_KEY_ID=tbfs", "AWS_SECRET_ACCESS_KEY=tbfs", "AWS_EC2_METADATA_DISABLED=true", "AWS_REGION=us-east-1"}
	const fen = "k7/8/8/8/8/8/1Q6/K7 w - - 0 1" // KQK: needs a table
	positions := filepath.Join(t.TempDir(), "pos.txt")
	if err := os.WriteFile(positions, []byte(fen+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, u := range urls {
		for _, c := range []struct {
			sub  []string // the subcommand, none for a probe
			rest []string
		}{
			{nil, []string{fen}},
			{nil, []string{"--json", fen}},
			{[]string{"ls"}, nil},
			{[]string{"info"}, []string{"KQK"}},
			{[]string{"verify"}, nil},
			{[]string{"bench"}, []string{"--positions", positions}},
		} {
			full := append(append(append([]string{}, c.sub...), "--tables", u), c.rest...)
			res := runBin(t, "", env, full...)
			if strings.Contains(res.stdout+res.stderr, secret) {
				t.Errorf("tbprobe %q leaks the secret:\nstdout: %s\nstderr: %s", full, res.stdout, res.stderr)
			}
			if res.code == 0 && len(c.sub) == 0 {
				t.Errorf("tbprobe %q: exit 0 against a failing source", full)
			}
		}
		checkServeNoSecret(t, u, env, fen)
	}
}

// checkServeNoSecret runs serve over u; when it starts, a probe, a batch and
// /metrics must not show the secret, nor may anything serve prints.
func checkServeNoSecret(t *testing.T, u string, env []string, fen string) {
	t.Helper()
	srv := spawnServe(t, tbprobeBin, env, "--tables", u)
	var seen strings.Builder
	if srv.base != "" {
		for _, req := range []struct{ method, path, body string }{
			{"GET", "/standard?fen=" + url.QueryEscape(fen), ""},
			{"POST", "/standard/batch", fen + "\n"},
			{"GET", "/metrics", ""},
		} {
			r, err := http.NewRequest(req.method, srv.base+req.path, strings.NewReader(req.body))
			if err != nil {
				t.Fatal(err)
			}
			if req.body != "" {
				r.Header.Set("Content-Type", "text/plain")
			}
			resp, err := http.DefaultClient.Do(r)
			if err != nil {
				t.Errorf("serve %s %s: %v", req.method, req.path, err)
				continue
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			seen.Write(body)
		}
		http.DefaultClient.CloseIdleConnections()
		srv.stop()
	}
	rest, _ := io.ReadAll(srv.stdout)
	seen.Write(rest)
	stderr := srv.stderr
	if all := seen.String() + stderr.String(); strings.Contains(all, secret) {
		t.Errorf("serve --tables %q leaks the secret:\n%s", u, all)
	}
}
