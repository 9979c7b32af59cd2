package main

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/tbfs/tbfs/internal/testkit/testenv"
)

// scrapeMetrics fetches /metrics and parses it with the Prometheus text
// parser (client_golang's own format, read by its reference parser); it
// returns the families and the raw text.
func scrapeMetrics(t *testing.T, base string) (map[string]*dto.MetricFamily, string) {
	t.Helper()
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("/metrics: %d, %v", resp.StatusCode, err)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(string(b)))
	if err != nil {
		t.Fatalf("/metrics does not parse: %v\n%s", err, b)
	}
	return fams, string(b)
}

// metricValue is the value of the series of family name with exactly the
// given labels: a counter's or gauge's value, a histogram's count.
func metricValue(fams map[string]*dto.MetricFamily, name string, labels map[string]string) (float64, bool) {
	f := fams[name]
	if f == nil {
		return 0, false
	}
	for _, m := range f.GetMetric() {
		if len(m.GetLabel()) != len(labels) {
			continue
		}
		match := true
		for _, l := range m.GetLabel() {
			if labels[l.GetName()] != l.GetValue() {
				match = false
			}
		}
		if !match {
			continue
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue(), true
		case m.Gauge != nil:
			return m.Gauge.GetValue(), true
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount()), true
		}
	}
	return 0, false
}

// The exposition carries client_golang's Go runtime, process and build-info
// series, and passes promtool check metrics (the Prometheus project's
// linter) where promtool is installed; CI installs it.
func TestMetricsExposition(t *testing.T) {
	base := startServe(t)
	getJSON(t, "GET", standardURL(base, "8/8/8/5k2/8/8/1Q6/K7 w - - 0 1"), "", "")
	fams, text := scrapeMetrics(t, base)
	for _, name := range []string{"go_goroutines", "go_memstats_alloc_bytes", "process_cpu_seconds_total", "process_resident_memory_bytes", "go_build_info"} {
		if fams[name] == nil {
			t.Errorf("no %s series", name)
		}
	}
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		if testenv.InCI() {
			t.Fatal("promtool not installed under CI (.ci/run installs it)")
		}
		t.Log("promtool not installed; skipping promtool check metrics")
		return
	}
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = strings.NewReader(text)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("promtool check metrics: %v\n%s", err, out)
	}
}

// A position whose material has no table is an answer ("outside"), not a
// transport failure: probing one many times leaves the transport error
// count at 0 (issue 20: it rose by 2 per position and fired alerts).
func TestMissingTableIsNoTransportError(t *testing.T) {
	base := startServe(t)
	for range 5 {
		getJSON(t, "GET", standardURL(base, "8/8/8/3k4/8/8/8/KQQ5 w - - 0 1"), "", "")
	}
	fams, _ := scrapeMetrics(t, base)
	if got, ok := metricValue(fams, "tbprobe_probes_total", map[string]string{"result": "outside"}); !ok || got != 5 {
		t.Errorf("outside probes = %v (%v), want 5", got, ok)
	}
	if got, ok := metricValue(fams, "tbprobe_transport_errors_total", nil); !ok || got != 0 {
		t.Errorf("tbprobe_transport_errors_total = %v (%v), want 0", got, ok)
	}
}

// Each request gets one access log line on standard error with its method,
// path, status and duration, and nothing of the query string or the
// credentials a client put in the request.
func TestServeAccessLog(t *testing.T) {
	cmd := exec.Command(tbprobeBin, "serve", "--listen", "127.0.0.1:0")
	log := serveOnce(t, cmd, func(line string) {
		base, _ := strings.CutPrefix(strings.TrimSpace(line), "listening on ")
		client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
		req, _ := http.NewRequest("GET", base+"/standard?fen=8/8/8/5k2/8/8/1Q6/K7_w_-_-_0_1&token=s3cret", nil)
		req.Header.Set("Authorization", "Bearer hunter2")
		if resp, err := client.Do(req); err == nil {
			resp.Body.Close()
		}
		if resp, err := client.Get(base + "/nope"); err == nil {
			resp.Body.Close()
		}
	})
	for _, want := range []string{
		"msg=request method=GET path=/standard status=200 duration=",
		"msg=request method=GET path=/nope status=404 duration=",
	} {
		if !strings.Contains(log, want) {
			t.Errorf("access log lacks %q:\n%s", want, log)
		}
	}
	for _, secret := range []string{"s3cret", "hunter2", "token="} {
		if strings.Contains(log, secret) {
			t.Errorf("access log holds %q:\n%s", secret, log)
		}
	}
}

// Under systemd socket activation (LISTEN_PID, LISTEN_FDS and the socket
// as file descriptor 3, as sd_listen_fds(3) specifies) serve answers on the
// socket it was given, not on --listen, and still exits 0 on SIGTERM.
func TestServeSocketActivation(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	f, err := l.(*net.TCPListener).File()
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	// sh's $$ is the pid the exec'd tbprobe keeps, which LISTEN_PID names.
	cmd := exec.Command("/bin/sh", "-c", `LISTEN_PID=$$ LISTEN_FDS=1 exec "$0" serve --listen 127.0.0.1:1`, tbprobeBin)
	cmd.ExtraFiles = []*os.File{f}
	var line string
	var status int
	log := serveOnce(t, cmd, func(first string) {
		line = first
		client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
		if resp, err := client.Get("http://" + l.Addr().String() + "/healthz"); err == nil {
			status = resp.StatusCode
			resp.Body.Close()
		}
	})
	if want := "listening on http://" + l.Addr().String() + "\n"; line != want || status != 200 {
		t.Errorf("first line %q, healthz %d; want %q and 200\n%s", line, status, want, log)
	}
	if !strings.Contains(log, "socket_activated=true") {
		t.Errorf("log does not say the socket was passed:\n%s", log)
	}
}

// serveOnce starts a serve command, calls during with its first line of
// output (the "listening on" line), stops it with SIGTERM and returns what
// it logged. The process must exit 0.
func serveOnce(t *testing.T, cmd *exec.Cmd, during func(line string)) string {
	t.Helper()
	cmd.Dir = t.TempDir()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, rerr := bufio.NewReader(stdout).ReadString('\n')
	if rerr == nil {
		during(line)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	werr := cmd.Wait()
	if rerr != nil || werr != nil {
		t.Fatalf("serve: %v, %v; stderr:\n%s", rerr, werr, stderr.String())
	}
	return stderr.String()
}
