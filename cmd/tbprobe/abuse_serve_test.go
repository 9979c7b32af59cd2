package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tbfs/tbfs/internal/testkit/chesstboracle"
	"github.com/tbfs/tbfs/internal/testkit/testenv"
)

// abuseReport is what one abuse run of serve measured.
type abuseReport struct {
	ok, refused, other int   // batch answers: 200, 503 with Retry-After, anything else
	batchPeakKiB       int64 // peak resident set (VmHWM) after the batches
	peakKiB            int64 // peak resident set after the clients that never read too
	stuckKiB           int64 // resident set while those clients' answers are due
	elapsed            time.Duration
}

// peakRSS reads a process's peak resident set size in KiB.
func peakRSS(pid int) (int64, error) { return procStatus(pid, "VmHWM:") }

// procStatus reads one kB field of /proc/PID/status.
func procStatus(pid int, field string) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field); ok {
			return strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
		}
	}
	return 0, fmt.Errorf("no %s for pid %d", field, pid)
}

// serveAbuse runs bin's serve over the embedded fixture tables, sends
// batches concurrent batches of MaxBatchFENs oracle FENs and, alongside,
// nonReaders clients that post such a batch and never read the answer;
// then (measureStuck: once their answers are due, polling /metrics)
// it checks the server is still up and answers an oracle row right,
// and reports the batches' outcomes and the server's peak memory.
func serveAbuse(tb testing.TB, bin string, batches, nonReaders int, measureStuck bool) abuseReport {
	tb.Helper()
	rows := chesstboracle.Read(tb, testenv.Testdata(tb, "chesstb", "oracle", "probe.tsv"))
	var body strings.Builder
	for i := range 1000 {
		body.WriteString(rows[i%len(rows)].FEN + "\n")
	}
	srv := spawnServe(tb, bin, nil)
	if srv.base == "" {
		tb.Fatalf("serve did not start: %s", srv.stderr.String())
	}
	defer srv.stop()
	cmd, base, stderr := srv.cmd, srv.base, srv.stderr
	var err error
	addr := strings.TrimPrefix(base, "http://")
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: batches}, Timeout: 5 * time.Minute}
	defer client.CloseIdleConnections()

	start := time.Now()
	var rep abuseReport
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range batches {
		wg.Go(func() {
			resp, err := client.Post(base+"/standard/batch", "text/plain", strings.NewReader(body.String()))
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				rep.other++
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			switch {
			case resp.StatusCode == 200:
				rep.ok++
			case resp.StatusCode == 503 && resp.Header.Get("Retry-After") != "":
				rep.refused++
			default:
				rep.other++
			}
		})
	}
	wg.Wait()
	rep.elapsed = time.Since(start)
	if rep.batchPeakKiB, err = peakRSS(cmd.Process.Pid); err != nil {
		tb.Fatal(err)
	}
	// Clients that never read: a raw connection with a small receive
	// buffer, a whole batch posted, nothing read back until the end.
	probedBefore := probesDone(tb, client, base)
	var idle []net.Conn
	for range nonReaders {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			tb.Fatal(err)
		}
		c.(*net.TCPConn).SetReadBuffer(4096)
		fmt.Fprintf(c, "POST /standard/batch HTTP/1.1\r\nHost: %s\r\nContent-Type: text/plain\r\nContent-Length: %d\r\n\r\n%s", addr, body.Len(), body.String())
		idle = append(idle, c)
	}
	// The benchmark waits until every such batch was probed or refused,
	// so their answers are what the server holds when it measures.
	if measureStuck && nonReaders > 0 {
		deadline := time.Now().Add(2 * time.Minute)
		for time.Now().Before(deadline) {
			if probesDone(tb, client, base)-probedBefore+1000*refusals(tb, client, base) >= int64(1000*nonReaders) {
				break
			}
			time.Sleep(50 * time.Millisecond) // polling a counter of another process
		}
		if rep.stuckKiB, err = procStatus(cmd.Process.Pid, "VmRSS:"); err != nil {
			tb.Fatal(err)
		}
	}
	// Still up, and right: one oracle row through /standard.
	r := rows[len(rows)/2]
	resp, err := client.Get(base + "/standard?fen=" + strings.ReplaceAll(r.FEN, " ", "_"))
	if err != nil {
		tb.Fatalf("server down after the abuse: %v; stderr %s", err, stderr.String())
	}
	var a map[string]any
	json.NewDecoder(resp.Body).Decode(&a)
	resp.Body.Close()
	if resp.StatusCode != 200 || a["category"] != r.WantCategory(tb) {
		tb.Errorf("after the abuse: %s: status %d, category %v, want %s", r.FEN, resp.StatusCode, a["category"], r.WantCategory(tb))
	}
	if rep.peakKiB, err = peakRSS(cmd.Process.Pid); err != nil {
		tb.Fatal(err)
	}
	for _, c := range idle {
		c.Close()
	}
	return rep
}

// metric sums the samples of one /metrics family whose labels contain
// match.
func metric(tb testing.TB, client *http.Client, base, family, match string) int64 {
	tb.Helper()
	resp, err := client.Get(base + "/metrics")
	if err != nil {
		tb.Fatalf("metrics: %v", err)
	}
	defer resp.Body.Close()
	var sum int64
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, family) || !strings.Contains(line, match) {
			continue
		}
		f := strings.Fields(line)
		n, _ := strconv.ParseInt(f[len(f)-1], 10, 64)
		sum += n
	}
	return sum
}

// probesDone counts the positions the server has probed.
func probesDone(tb testing.TB, client *http.Client, base string) int64 {
	return metric(tb, client, base, "tbprobe_probes_total", "")
}

// refusals counts batches refused with 503.
func refusals(tb testing.TB, client *http.Client, base string) int64 {
	return metric(tb, client, base, "tbprobe_http_requests_total", `path="/standard/batch",code="503"`)
}

// abuseMemoryBound is the stated bound on serve's peak memory under the
// abuse with the default limits: 512 MiB plus the default block cache
// (64 MiB decoded blocks; the embedded tables need no source cache).
const abuseMemoryBound = 512<<10 + 64<<10 // KiB

// TestServeAbuse: under 40 concurrent 1,000-FEN batches, then 10 clients
// that never read, serve stays up, answers an oracle row right after,
// refuses only with 503 and Retry-After, answers some batches, and stays
// within the stated memory bound. Bounded: a few seconds of load.
func TestServeAbuse(t *testing.T) {
	if testing.Short() {
		t.Skip("load test")
	}
	rep := serveAbuse(t, tbprobeBin, 40, 10, false)
	t.Logf("%+v", rep)
	if rep.ok == 0 || rep.other != 0 {
		t.Errorf("batches: %d answered, %d refused with Retry-After, %d otherwise", rep.ok, rep.refused, rep.other)
	}
	if rep.peakKiB > abuseMemoryBound {
		t.Errorf("peak RSS %d KiB, over the stated bound of %d KiB", rep.peakKiB, abuseMemoryBound)
	}
}

// BenchmarkServeAbuse is the abuse in full: 200 concurrent
// 1,000-FEN batches, then 40 clients that never read, once; it reports the
// server's peak memory after the batches (batch-peak-MiB) and after all
// (peak-MiB), its memory while the unread answers are due (stuck-MiB), how
// many batches were answered and refused, and the batches' wall time. TBPROBE_ABUSE_BIN runs another build of
// tbprobe instead (to measure a version before the limits):
//
//	go test ./cmd/tbprobe -run '^$' -bench ServeAbuse -benchtime 1x
func BenchmarkServeAbuse(b *testing.B) {
	bin := tbprobeBin
	if v := os.Getenv("TBPROBE_ABUSE_BIN"); v != "" {
		bin = v
	}
	for range b.N {
		rep := serveAbuse(b, bin, 200, 40, true)
		b.ReportMetric(float64(rep.peakKiB)/1024, "peak-MiB")
		b.ReportMetric(float64(rep.batchPeakKiB)/1024, "batch-peak-MiB")
		b.ReportMetric(float64(rep.stuckKiB)/1024, "stuck-MiB")
		b.ReportMetric(float64(rep.ok), "answered")
		b.ReportMetric(float64(rep.refused), "refused")
		b.ReportMetric(float64(rep.other), "failed")
		b.ReportMetric(rep.elapsed.Seconds(), "wall-s")
	}
}
