package main

import (
	"context"
	"fmt"
	"idemlab/internal/gctune"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"idemlab/internal/loadtest"
	"idemlab/web"
)

// load is `idemlab load`: the load harness (internal/loadtest) against a
// server on this machine, either -target (another idemlab serve
// -trust-proxy on the loopback interface, so that its memory and CPU are
// its own) or one started in this process.
func load(ctx context.Context, args []string, stdout io.Writer) error {
	fs := newFlagSet("load")
	target := fs.String("target", "", "base URL of an idemlab serve -trust-proxy on 127.0.0.1 (default: a server in this process)")
	learners := fs.Int("learners", 500, "virtual learners")
	duration := fs.Duration("duration", 30*time.Second, "how long the learners click (at most 10m)")
	thinkMin := fs.Duration("think-min", 2*time.Second, "shortest think time between clicks")
	thinkMax := fs.Duration("think-max", 5*time.Second, "longest think time between clicks")
	expensive := fs.Int("expensive", 0, "clients sending the most expensive requests they can, back to back")
	closed := fs.Duration("closed-loop", 0, "then measure closed-loop clicks/s, and an http.FileServer of a lesson's bytes, for this long each")
	idle := fs.Duration("idle", 5*time.Second, "pause before reading the idle memory after the run")
	cycles := fs.Int("cycles", 1, "run the learners this many times, reading the idle memory after each (a leak climbs)")
	room := fs.Bool("room", false, "play a workshop room: an instructor follows the class view while the learners join, click and raise hands (needs -target, comma-separated for replicas, and -instructor-key)")
	instructorKey := fs.String("instructor-key", "", "with -room: the servers' instructor key")
	oneAddress := fs.String("one-address", "", "with -room: every learner comes from this one address (a class behind one NAT)")
	if err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	if *duration <= 0 || *duration > 10*time.Minute || *learners < 0 || *expensive < 0 || *thinkMax < *thinkMin || *cycles < 1 || *cycles > 10 {
		return usagef("load: want 0 < -duration <= 10m, -think-min <= -think-max, 1 <= -cycles <= 10 and no negative counts")
	}
	course, err := loadCourse("")
	if err != nil {
		return err
	}
	var slugs []string
	for _, l := range course.Lessons {
		if len(l.Playgrounds) > 0 {
			slugs = append(slugs, l.Slug)
		}
	}
	if *room {
		return loadRoom(ctx, stdout, *target, *instructorKey, *oneAddress, slugs, *learners, *thinkMin, *thinkMax, *duration)
	}
	base := *target
	if base == "" {
		gc, restore := gctune.Apply() // as serve runs
		defer restore()
		idleCtx, stopIdle := context.WithCancel(ctx)
		defer stopIdle()
		go gctune.FreeWhenIdle(idleCtx)
		fmt.Fprintf(stdout, "server in this process: GOGC=%d, memory limit %d MiB\n", gc.Percent, gc.MemoryLimit>>20)
		site, err := web.NewServer(web.Config{TrustProxy: true, Logger: slog.New(slog.DiscardHandler)}, course)
		if err != nil {
			return err
		}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return err
		}
		srv := &http.Server{Handler: site.Handler(), ReadHeaderTimeout: 10 * time.Second}
		go srv.Serve(ln)
		defer srv.Close()
		base = "http://" + ln.Addr().String()
	}
	if err := loadtest.CheckLoopback(base); err != nil {
		return usagef("load: %v", err)
	}
	client := &http.Client{Timeout: 10 * time.Second}
	idleBefore, err := loadtest.ScrapeMetrics(ctx, client, base)
	if err != nil {
		return fmt.Errorf("load: %w", err)
	}
	fmt.Fprintf(stdout, "target %s: idle RSS before %.1f MB\n", base, idleBefore["process_resident_memory_bytes"]/1e6)
	var idleAfter map[string]float64
	firstIdle := 0.0
	for cycle := 1; cycle <= *cycles; cycle++ {
		if *cycles > 1 {
			fmt.Fprintf(stdout, "cycle %d of %d:\n", cycle, *cycles)
		}
		res, err := loadtest.Run(ctx, loadtest.Config{Target: base, Learners: *learners, ThinkMin: *thinkMin, ThinkMax: *thinkMax,
			Duration: *duration, Expensive: *expensive, Lessons: slugs})
		if err != nil {
			return fmt.Errorf("load: %w", err)
		}
		fmt.Fprintf(stdout, "%d learners (think %v-%v) + %d expensive clients for %v:\n", *learners, *thinkMin, *thinkMax, *expensive, res.Elapsed.Round(time.Millisecond))
		fmt.Fprintf(stdout, "  learners: %.1f req/s, %s, errors %d %v\n", res.RPS, res.Clicks, res.Errors, res.StatusCounts)
		if res.ErrorSample != "" {
			fmt.Fprintf(stdout, "  first error: %s\n", res.ErrorSample)
		}
		if *expensive > 0 {
			fmt.Fprintf(stdout, "  expensive requests answered (not 429): %s; answers by status %v\n", res.Expensive, res.Refusals)
		}
		m := res.ServerMetrics
		fmt.Fprintf(stdout, "  server: peak RSS %.1f MB, CPU %.1f s; cache hit %.0f shared %.0f miss %.0f; refusals busy %.0f budget %.0f rate %.0f\n",
			res.PeakRSS/1e6, res.CPUSeconds,
			m[`idemlab_run_cache_requests_total{result="hit"}`], m[`idemlab_run_cache_requests_total{result="shared"}`], m[`idemlab_run_cache_requests_total{result="miss"}`],
			m[`idemlab_refusals_total{reason="busy"}`], m[`idemlab_refusals_total{reason="budget"}`], m[`idemlab_refusals_total{reason="rate"}`])
		if *closed > 0 && cycle == *cycles {
			if err := closedLoop(ctx, stdout, client, base, slugs[0], *closed); err != nil {
				return err
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(*idle):
		}
		idleAfter, err = loadtest.ScrapeMetrics(ctx, client, base)
		if err != nil {
			return fmt.Errorf("load: %w", err)
		}
		rss := idleAfter["process_resident_memory_bytes"]
		if cycle == 1 {
			firstIdle = rss
		}
		if *cycles > 1 {
			// Where the memory is: the Go heap in use, what the Go runtime
			// holds from the OS without having released it, and the rest
			// (SQLite's allocator, which maps its own pages, and the binary).
			held := idleAfter["go_memstats_sys_bytes"] - idleAfter["go_memstats_heap_released_bytes"]
			fmt.Fprintf(stdout, "  idle RSS after cycle %d: %.1f MB (%.2f × the first cycle's); Go heap in use %.1f MB, Go runtime holds %.1f MB, the rest %.1f MB\n",
				cycle, rss/1e6, rss/firstIdle, idleAfter["go_memstats_heap_inuse_bytes"]/1e6, held/1e6, (rss-held)/1e6)
		}
	}
	fmt.Fprintf(stdout, "idle RSS after %v: %.1f MB (before %.1f MB); goroutines %.0f\n", *idle, idleAfter["process_resident_memory_bytes"]/1e6,
		idleBefore["process_resident_memory_bytes"]/1e6, idleAfter["go_goroutines"])
	return nil
}

// closedLoop measures clicks/s back to back (8 at a time) against the
// server, cached (the states a lesson links to) and uncached (each click a
// new seed), and GETs/s of one lesson's bytes from http.FileServer, in the
// same run, and prints the ratios.
func closedLoop(ctx context.Context, stdout io.Writer, client *http.Client, base, slug string, d time.Duration) error {
	resp, err := client.Get(base + "/lessons/" + slug)
	if err != nil {
		return err
	}
	page, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return err
	}
	clicks := loadtest.Links(page)
	if len(clicks) == 0 {
		return fmt.Errorf("load: lesson %s has no playground links", slug)
	}
	dir, err := os.MkdirTemp("", "idemlab-load-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	if err := os.WriteFile(filepath.Join(dir, "lesson.html"), page, 0o644); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	files := &http.Server{Handler: http.FileServer(http.Dir(dir)), ReadHeaderTimeout: 10 * time.Second}
	go files.Serve(ln)
	defer files.Close()
	const workers = 8
	fileRate, fileErrs, err := loadtest.ClosedLoop(ctx, "http://"+ln.Addr().String(), func(int) string { return "/lesson.html" }, workers, d)
	if err != nil {
		return err
	}
	cached, cachedErrs, err := loadtest.ClosedLoop(ctx, base, func(i int) string { return clicks[i%len(clicks)] }, workers, d)
	if err != nil {
		return err
	}
	fresh, freshErrs, err := loadtest.ClosedLoop(ctx, base, func(i int) string { return fmt.Sprintf("%s&seed=%d", clicks[i%len(clicks)], 1_000_000+i) }, workers, d)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "closed loop, %d at a time, %v each: http.FileServer of lesson %s (%d bytes) %.0f/s (errors %d)\n", workers, d, slug, len(page), fileRate, fileErrs)
	fmt.Fprintf(stdout, "  clicks, cached states: %.0f/s (errors %d) = %.2f × FileServer\n", cached, cachedErrs, cached/fileRate)
	fmt.Fprintf(stdout, "  clicks, every one a new run: %.0f/s (errors %d) = %.3f × FileServer\n", fresh, freshErrs, fresh/fileRate)
	return nil
}

// loadRoom is `idemlab load -room`: a workshop room under load on -target
// (one server, or replicas of one store separated by commas).
func loadRoom(ctx context.Context, stdout io.Writer, targets, key, address string, slugs []string, learners int, thinkMin, thinkMax, duration time.Duration) error {
	if targets == "" || key == "" || learners < 1 {
		return usagef("load -room: needs -target (idemlab serve -workshop -trust-proxy; comma-separated for replicas), -instructor-key and -learners > 0")
	}
	cfg := loadtest.RoomConfig{Targets: strings.Split(targets, ","), InstructorKey: key, Learners: learners, Address: address,
		ThinkMin: thinkMin, ThinkMax: thinkMax, Duration: duration, Lessons: slugs[:min(len(slugs), 5)]}
	res, err := loadtest.RunRoom(ctx, cfg)
	if err != nil {
		return fmt.Errorf("load: %w", err)
	}
	from := "each from its own address"
	if address != "" {
		from = "all from " + address
	}
	fmt.Fprintf(stdout, "a room of %d learners (%s, think %v-%v) on %d server(s) for %v:\n", learners, from, thinkMin, thinkMax, len(cfg.Targets), res.Elapsed.Round(time.Millisecond))
	fmt.Fprintf(stdout, "  clicks: %s\n", res.Clicks)
	fmt.Fprintf(stdout, "  events acknowledged: %d, %s\n", res.Acked, res.Events)
	fmt.Fprintf(stdout, "  event to instructor: %s; never shown: %d\n", res.ToInstructor, res.Unseen)
	fmt.Fprintf(stdout, "  refused (429): %d; errors: %d %v\n", res.Refused, res.Errors, res.Statuses)
	if res.ErrorSample != "" {
		fmt.Fprintf(stdout, "  first error: %s\n", res.ErrorSample)
	}
	for i, rss := range res.PeakRSS {
		fmt.Fprintf(stdout, "  server %d: peak RSS %.1f MB\n", i+1, rss/1e6)
	}
	return nil
}
