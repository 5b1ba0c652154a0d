package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"idemlab/internal/gctune"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"idemlab/internal/english"
	"idemlab/lessons"
	"idemlab/web"
)

const (
	defaultAddr = "127.0.0.1:8080"
	// shutdownTimeout leaves in-flight requests time to finish on SIGTERM;
	// pages are small, and container runtimes kill after about ten seconds.
	shutdownTimeout = 5 * time.Second
	// watchInterval is how often a -lessons folder is checked for changes:
	// short enough that an instructor's save shows on the next reload.
	watchInterval = 500 * time.Millisecond
)

// serveConfig is everything serve reads from flags and the environment.
type serveConfig struct {
	Addr           string
	LessonsDir     string
	PublicURL      string
	FrameAncestors []string
	LogFormat      string
	TrustProxy     bool
	DebugAddr      string
	Workshop       workshopFlags
	Ledgers        ledgerFlags // PostgreSQL for playground ledgers (cmd_run_postgres.go)
}

// parseServeConfig reads the serve flags, each falling back to its
// environment variable, then to its default. Precedence for the address:
// -addr, then IDEMLAB_ADDR, then PORT (as ":PORT", all interfaces, which is
// what platforms that set PORT expect), then 127.0.0.1:8080.
func parseServeConfig(args []string, getenv func(string) string, stdout io.Writer) (serveConfig, error) {
	var cfg serveConfig
	var frameAncestors, basePath string
	fs := newFlagSet("serve")
	fs.StringVar(&cfg.Addr, "addr", "", "listen address HOST:PORT (env IDEMLAB_ADDR, else PORT as :PORT; default "+defaultAddr+")")
	fs.StringVar(&cfg.LessonsDir, "lessons", getenv("IDEMLAB_LESSONS"), "serve the lessons of this folder, re-rendered on change (env IDEMLAB_LESSONS; default: the built-in course)")
	fs.StringVar(&cfg.PublicURL, "public-url", getenv("IDEMLAB_PUBLIC_URL"), "absolute URL the site is reached at, for links behind a proxy (env IDEMLAB_PUBLIC_URL)")
	fs.StringVar(&basePath, "base-path", getenv("IDEMLAB_BASE_PATH"), "path prefix the site lives under behind a reverse proxy, such as /learn: every link, asset and API call carries it (env IDEMLAB_BASE_PATH)")
	fs.StringVar(&frameAncestors, "frame-ancestors", envOr(getenv, "IDEMLAB_FRAME_ANCESTORS", "'self'"), "origins allowed to embed pages, space or comma separated (env IDEMLAB_FRAME_ANCESTORS)")
	fs.StringVar(&cfg.LogFormat, "log-format", envOr(getenv, "IDEMLAB_LOG_FORMAT", "text"), "log format: text or json (env IDEMLAB_LOG_FORMAT)")
	fs.BoolVar(&cfg.TrustProxy, "trust-proxy", getenv("IDEMLAB_TRUST_PROXY") == "1", "behind a reverse proxy: a client is the last X-Forwarded-For address, for its share of runs (env IDEMLAB_TRUST_PROXY=1)")
	fs.StringVar(&cfg.DebugAddr, "debug-addr", getenv("IDEMLAB_DEBUG_ADDR"), "serve net/http/pprof on this separate HOST:PORT, e.g. 127.0.0.1:6060 (env IDEMLAB_DEBUG_ADDR; default off)")
	addWorkshopFlags(fs, getenv, &cfg.Workshop)
	addLedgerFlags(fs, getenv, &cfg.Ledgers)
	if err := parseFlags(fs, args, stdout); err != nil {
		return cfg, err
	}
	if fs.NArg() > 0 {
		return cfg, usagef("serve: unexpected argument %q", fs.Arg(0))
	}
	retentionSet := false
	fs.Visit(func(f *flag.Flag) { retentionSet = retentionSet || f.Name == "retention" })
	if err := cfg.Workshop.resolve(getenv, retentionSet); err != nil {
		return cfg, err
	}
	if err := cfg.Ledgers.resolve(cfg.Workshop.DatabaseURL); err != nil {
		return cfg, err
	}

	if cfg.Addr == "" {
		addr, err := addrFromEnv(getenv)
		if err != nil {
			return cfg, usagef("serve: %v", err)
		}
		cfg.Addr = addr
	}
	if _, _, err := net.SplitHostPort(cfg.Addr); err != nil {
		return cfg, usagef("serve: -addr %q: want HOST:PORT, such as 127.0.0.1:8080 or :8080", cfg.Addr)
	}
	if cfg.DebugAddr != "" {
		if _, _, err := net.SplitHostPort(cfg.DebugAddr); err != nil {
			return cfg, usagef("serve: -debug-addr %q: want HOST:PORT, such as 127.0.0.1:6060", cfg.DebugAddr)
		}
	}
	if cfg.LogFormat != "text" && cfg.LogFormat != "json" {
		return cfg, usagef("serve: -log-format %q: want text or json", cfg.LogFormat)
	}
	if err := web.CheckPublicURL(cfg.PublicURL); err != nil {
		return cfg, usagef("serve: -public-url: %v", err)
	}
	// The base path is the public URL's path: one mechanism, one rule.
	joined, err := web.JoinBasePath(cfg.PublicURL, basePath)
	if err != nil {
		return cfg, usagef("serve: -base-path: %v", err)
	}
	cfg.PublicURL = joined
	origins, err := web.ParseFrameAncestors(frameAncestors)
	if err != nil {
		return cfg, usagef("serve: -frame-ancestors: %v", err)
	}
	cfg.FrameAncestors = origins
	return cfg, nil
}

func envOr(getenv func(string) string, name, fallback string) string {
	if v := getenv(name); v != "" {
		return v
	}
	return fallback
}

func addrFromEnv(getenv func(string) string) (string, error) {
	if addr := getenv("IDEMLAB_ADDR"); addr != "" {
		return addr, nil
	}
	if port := getenv("PORT"); port != "" {
		if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
			return "", fmt.Errorf("PORT=%q: want a port number", port)
		}
		return ":" + port, nil
	}
	return defaultAddr, nil
}

func newLogger(format string, w io.Writer) *slog.Logger {
	if format == "json" {
		return slog.New(slog.NewJSONHandler(w, nil))
	}
	return slog.New(slog.NewTextHandler(w, nil))
}

// serve loads the course, starts the HTTP server and blocks until ctx is
// done, then shuts down gracefully.
func serve(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg, err := parseServeConfig(args, os.Getenv, stdout)
	if err != nil {
		return err
	}
	logger := newLogger(cfg.LogFormat, stderr)
	gc, _ := gctune.Apply()
	go gctune.FreeWhenIdle(ctx)
	logger.Info("garbage collector", "GOGC", gc.Percent, "memory_limit_mib", gc.MemoryLimit>>20, "from_environment", gc.FromEnv)

	// The watcher notes the folder before the course loads, so that an edit
	// made while it loads is reloaded rather than missed.
	var watcher *lessons.Watcher
	if cfg.LessonsDir != "" {
		watcher = lessons.NewWatcher(cfg.LessonsDir)
	}
	// The ledgers first: a lesson's PostgreSQL blocks are proved on them.
	ledgers, err := openServeLedgers(ctx, cfg.Ledgers)
	if err != nil {
		return err
	}
	if ledgers != nil {
		defer ledgers.Close()
		logger.Info("PostgreSQL ledgers", "from", cfg.Ledgers.source(), "ledgers", ledgers.Size(), "prefix", cfg.Ledgers.Prefix)
	}
	// A broken lesson at start stops the start, with what lint would print.
	course, err := loadCourseOn(cfg.LessonsDir, ledgers)
	if err != nil {
		var loadErr *lessons.LoadError
		if errors.As(err, &loadErr) {
			fmt.Fprintln(stderr, loadErr.Error())
			return fmt.Errorf("cannot serve %s: %s, listed above", courseSource(cfg.LessonsDir), english.Plural(len(loadErr.Problems), "problem", "problems"))
		}
		return err
	}

	workshopCfg, closeStore, err := openWorkshop(ctx, cfg.Workshop, logger)
	if err != nil {
		return err
	}
	defer closeStore()
	site, err := web.NewServer(web.Config{
		Ledgers:        ledgers,
		PublicURL:      cfg.PublicURL,
		FrameAncestors: cfg.FrameAncestors,
		Logger:         logger,
		Version:        buildVersion(),
		TrustProxy:     cfg.TrustProxy,
		Workshop:       workshopCfg,
	}, course)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}

	listener, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	httpServer := &http.Server{
		Handler:           site.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}

	watchCtx, stopWatching := context.WithCancel(ctx)
	defer stopWatching()
	if watcher != nil {
		// The watcher reads the folder itself; only the options are needed here.
		_, opts, err := courseFS(cfg.LessonsDir)
		if err != nil {
			return err
		}
		opts.Ledgers = ledgers
		go watcher.Run(watchCtx, opts, watchInterval,
			func(c *lessons.Course) {
				site.SetCourse(c)
				logger.Info("lessons reloaded", "dir", cfg.LessonsDir, "lessons", len(c.Lessons))
			},
			func(err error) {
				logger.Error("lessons folder has problems; still serving the last good version",
					"dir", cfg.LessonsDir, "problems", err.Error())
			})
	}

	served := make(chan error, 1)
	go func() { served <- httpServer.Serve(listener) }()
	if cfg.DebugAddr != "" {
		debug, _, err := startDebugServer(cfg.DebugAddr, logger)
		if err != nil {
			return fmt.Errorf("serve: -debug-addr: %w", err)
		}
		defer debug.Close()
	}

	openURL := browseURL(cfg.PublicURL, listener.Addr())
	logger.Info("serving", "addr", listener.Addr().String(), "url", openURL,
		"lessons", len(course.Lessons), "source", courseSource(cfg.LessonsDir), "version", buildVersion())
	fmt.Fprintf(stdout, "Idemlab is serving the course at %s\n", openURL)
	fmt.Fprintf(stdout, "Instructor link (keep it to yourself): %sworkshop?key=%s\n", openURL, cfg.Workshop.InstructorKey)
	fmt.Fprintf(stdout, "Workshop data: %s\n", cfg.Workshop.storeName())

	select {
	case err := <-served:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	logger.Info("shutting down", "timeout", shutdownTimeout.String())
	shutdownCtx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	if err := httpServer.Shutdown(shutdownCtx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve: %w", err)
	}
	logger.Info("stopped")
	return nil
}

// browseURL is the address a person should open: the public URL when one is
// set, else the bound address, with an unspecified host (":8080",
// "0.0.0.0:8080") shown as localhost.
func browseURL(publicURL string, addr net.Addr) string {
	if strings.HasPrefix(publicURL, "http") {
		return strings.TrimRight(publicURL, "/") + "/"
	}
	base := strings.TrimRight(publicURL, "/") // a base path alone: the server answers under it too
	host, port, err := net.SplitHostPort(addr.String())
	if err != nil {
		return "http://" + addr.String() + base + "/"
	}
	if ip := net.ParseIP(host); ip == nil || ip.IsUnspecified() {
		host = "localhost"
	}
	return "http://" + net.JoinHostPort(host, port) + base + "/"
}
