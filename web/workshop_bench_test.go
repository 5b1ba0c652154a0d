package web

import (
	"fmt"
	"idemlab/web/workshopweb"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// BenchmarkWorkshop_500Learners is the load: 500 learners in one
// room, each posting an event every 5 s (100 events/s) for 30 s, with the
// class view open and every learner's push stream open; then a chaos push
// to all 500 streams. It reports the POSTs' p99, errors, the class view's
// p99 delay to hear an event (from the POST's start), the chaos push's p99 to reach every learner,
// and the process's peak RSS (server and clients share the process here).
// Run it once: go test ./web -run '^$' -bench Workshop_500 -benchtime 1x
func BenchmarkWorkshop_500Learners(b *testing.B) {
	const learners, period, duration = 500, 5 * time.Second, 30 * time.Second
	for range b.N {
		ws := newWorkshopSite(b, nil)
		inst := ws.client(b)
		get(b, inst, ws.srv.URL+"/workshop?key="+testInstructorKey)
		id, code := ws.createRoom(b, inst, "form-key-load-room")
		transport := &http.Transport{MaxIdleConnsPerHost: 2 * learners, MaxConnsPerHost: 0}
		clients := make([]*http.Client, learners)
		for i := range clients {
			clients[i] = ws.client(b)
			clients[i].Transport = transport
			resp, err := clients[i].PostForm(ws.srv.URL+"/join", url.Values{"key": {fmt.Sprintf("join-key-%05d", i)}, "code": {string(code)}, "name": {fmt.Sprint("L", i)}})
			if err != nil || resp.StatusCode != http.StatusSeeOther {
				b.Fatalf("join %d: %v %v", i, resp, err)
			}
			resp.Body.Close()
		}
		// The class view: note when each learner's row arrives after their POST.
		sent := sync.Map{} // learner name → time of the POST's answer
		var heardMu sync.Mutex
		var heard []time.Duration
		class := openStream(b, inst, ws.srv.URL+workshopweb.RoomPath(id)+"/stream", "")
		go func() {
			for {
				e, ok := class.read()
				if !ok {
					return
				}
				if e.event != "row" {
					continue
				}
				i := strings.Index(e.data, `ws-row-name">`)
				if i < 0 {
					continue
				}
				name := e.data[i+len(`ws-row-name">`):]
				name = name[:strings.IndexByte(name, '<')]
				if at, ok := sent.LoadAndDelete(name); ok {
					heardMu.Lock()
					heard = append(heard, time.Since(at.(time.Time)))
					heardMu.Unlock()
				}
			}
		}()
		// Every learner's push stream, for the chaos push at the end.
		pushed := make([]chan time.Time, learners)
		for i := range learners {
			pushed[i] = make(chan time.Time, 1)
			s := openStream(b, clients[i], ws.srv.URL+"/api/v1/room/stream", "")
			go func() {
				if e, ok := s.read(); ok && e.event == "push" {
					pushed[i] <- time.Now()
				}
			}()
		}
		var mu sync.Mutex
		var latencies []time.Duration
		errors := 0
		start := time.Now()
		var wg sync.WaitGroup
		for i := range learners {
			wg.Go(func() {
				time.Sleep(time.Duration(i) * period / learners) // spread the learners over the period
				for n := 0; time.Since(start) < duration; n++ {
					body := fmt.Sprintf(`{"kind":"goal_reached","lesson":"l","goal":"g%d"}`, n)
					req, _ := http.NewRequest("POST", ws.srv.URL+"/api/v1/room/events", strings.NewReader(body))
					req.Header.Set("Content-Type", "application/json")
					req.Header.Set("Idempotency-Key", fmt.Sprintf("load-%05d-%05d", i, n))
					t0 := time.Now()
					sent.Store(fmt.Sprint("L", i), t0) // the row may arrive before the answer
					resp, err := clients[i].Do(req)
					d := time.Since(t0)
					mu.Lock()
					if err != nil || resp.StatusCode != http.StatusCreated {
						errors++
					} else {
						latencies = append(latencies, d)
					}
					mu.Unlock()
					if err == nil {
						resp.Body.Close()
					}
					time.Sleep(period - d)
				}
			})
		}
		wg.Wait()
		chaosAt := time.Now()
		resp := post(b, inst, ws.srv.URL+workshopweb.RoomPath(id)+"/push", url.Values{"key": {"form-key-chaos-load"}, "kind": {"chaos"}, "fault": {"replay"}})
		if resp.StatusCode != http.StatusSeeOther {
			b.Fatalf("chaos: %d", resp.StatusCode)
		}
		var reach []time.Duration
		for i := range learners {
			select {
			case at := <-pushed[i]:
				reach = append(reach, at.Sub(chaosAt))
			case <-time.After(10 * time.Second):
				errors++
			}
		}
		time.Sleep(500 * time.Millisecond)
		heardMu.Lock()
		b.ReportMetric(float64(len(latencies)), "events")
		b.ReportMetric(float64(errors), "errors")
		b.ReportMetric(p99(latencies).Seconds()*1000, "post-p99-ms")
		b.ReportMetric(p99(heard).Seconds()*1000, "classview-p99-ms")
		b.ReportMetric(p99(reach).Seconds()*1000, "chaos-p99-ms")
		b.ReportMetric(peakRSSMiB(), "peak-RSS-MiB")
		heardMu.Unlock()
	}
}

func p99(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	ds = slices.Clone(ds)
	slices.Sort(ds)
	return ds[len(ds)*99/100]
}

// peakRSSMiB reads VmHWM, the process's peak resident set, on Linux.
func peakRSSMiB() float64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 64)
			return kb / 1024
		}
	}
	return 0
}
