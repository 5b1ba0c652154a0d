package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"idemlab/internal/english"
	"idemlab/internal/gctune"
	"idemlab/lessons"
	"idemlab/playground"
	"idemlab/web"
	"idemlab/workshop"
	"idemlab/workshop/pgstore"
	"idemlab/workshop/sqlitestore"
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
	Ledgers        ledgerFlags // PostgreSQL for playground ledgers (below)
	Limits         limitFlags  // fair share and connection caps (serve_limits.go)
}

// parseServeConfig reads the serve flags, each falling back to its
// environment variable, then to its default. Precedence for the address:
// -addr, then IDEMLAB_ADDR, then PORT (as ":PORT", all interfaces, which is
// what platforms that set PORT expect), then 127.0.0.1:8080.
func parseServeConfig(args []string, getenv func(string) string, stdout io.Writer) (serveConfig, error) {
	var cfg serveConfig
	var frameAncestors, basePath string
	fs := serveFlags(getenv, &cfg, &frameAncestors, &basePath)
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
	if err := cfg.Limits.resolve(cfg.TrustProxy); err != nil {
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

// serveFlags declares serve's flags on a new flag set; parseServeConfig
// reads them and the usage lists them.
func serveFlags(getenv func(string) string, cfg *serveConfig, frameAncestors, basePath *string) *flag.FlagSet {
	fs := newFlagSet("serve")
	fs.StringVar(&cfg.Addr, "addr", "", "listen address `HOST:PORT` (env IDEMLAB_ADDR, else PORT as :PORT; default "+defaultAddr+")")
	fs.StringVar(&cfg.LessonsDir, "lessons", getenv("IDEMLAB_LESSONS"), "serve the lessons of the folder `DIR`, re-rendered on change (env IDEMLAB_LESSONS; default: the built-in course)")
	fs.StringVar(&cfg.PublicURL, "public-url", getenv("IDEMLAB_PUBLIC_URL"), "absolute `URL` the site is reached at, for links behind a proxy (env IDEMLAB_PUBLIC_URL)")
	fs.StringVar(basePath, "base-path", getenv("IDEMLAB_BASE_PATH"), "`PATH` prefix the site lives under behind a reverse proxy, such as /learn: every link, asset and API call carries it (env IDEMLAB_BASE_PATH)")
	fs.StringVar(frameAncestors, "frame-ancestors", envOr(getenv, "IDEMLAB_FRAME_ANCESTORS", "'self'"), "`ORIGINS` allowed to embed pages, space or comma separated (env IDEMLAB_FRAME_ANCESTORS)")
	fs.StringVar(&cfg.LogFormat, "log-format", envOr(getenv, "IDEMLAB_LOG_FORMAT", "text"), "log `FORMAT`: text or json (env IDEMLAB_LOG_FORMAT)")
	fs.BoolVar(&cfg.TrustProxy, "trust-proxy", getenv("IDEMLAB_TRUST_PROXY") == "1", "behind a reverse proxy: a client is the last X-Forwarded-For address, for its share of runs (env IDEMLAB_TRUST_PROXY=1)")
	fs.StringVar(&cfg.DebugAddr, "debug-addr", getenv("IDEMLAB_DEBUG_ADDR"), "serve net/http/pprof on this separate `HOST:PORT`, e.g. 127.0.0.1:6060 (env IDEMLAB_DEBUG_ADDR; default off)")
	addWorkshopFlags(fs, getenv, &cfg.Workshop)
	addLedgerFlags(fs, getenv, &cfg.Ledgers)
	addLimitFlags(fs, getenv, &cfg.Limits)
	return fs
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
		Share:          cfg.Limits.Share,
		Workshop:       workshopCfg,
	}, course)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}

	listener, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	listener = limitConnections(listener, cfg.Limits, logger)
	httpServer := &http.Server{
		Handler:           site.Handler(),
		ReadHeaderTimeout: serveHeaderTimeout,
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
	fmt.Fprintf(stdout, "Instructor link (keep it to yourself): %sworkshop?key=%s\n", openURL, workshopCfg.InstructorKey)
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

// workshopFlags are serve's workshop settings.
type workshopFlags struct {
	InstructorKey string
	DataDir       string
	// DatabaseURL (postgres://…) puts the rooms in PostgreSQL, shared by
	// every replica, instead of the SQLite file in DataDir.
	DatabaseURL string
	Retention   time.Duration
	// RotateKey replaces the kept instructor key at start.
	RotateKey bool
}

const defaultRetention = 30 * 24 * time.Hour

// retentionFlag reads a retention such as 30d, 12h or 90m.
type retentionFlag struct{ d *time.Duration }

func (f retentionFlag) String() string {
	if f.d == nil {
		return ""
	}
	if *f.d%(24*time.Hour) == 0 {
		return strconv.Itoa(int(*f.d/(24*time.Hour))) + "d"
	}
	return f.d.String()
}

func (f retentionFlag) Set(s string) error {
	d, err := parseRetention(s)
	if err == nil {
		*f.d = d
	}
	return err
}

func parseRetention(s string) (time.Duration, error) {
	var d time.Duration
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.Atoi(days)
		if err != nil {
			return 0, fmt.Errorf("%q: want a number of days such as 30d, or a duration such as 12h", s)
		}
		d = time.Duration(n) * 24 * time.Hour
	} else {
		var err error
		if d, err = time.ParseDuration(s); err != nil {
			return 0, fmt.Errorf("%q: want a number of days such as 30d, or a duration such as 12h", s)
		}
	}
	if d < time.Hour {
		return 0, fmt.Errorf("%q: keep rooms at least an hour", s)
	}
	return d, nil
}

// addWorkshopFlags declares serve's workshop flags on fs.
func addWorkshopFlags(fs *flag.FlagSet, getenv func(string) string, f *workshopFlags) {
	f.Retention = defaultRetention
	fs.StringVar(&f.InstructorKey, "instructor-key", getenv("IDEMLAB_INSTRUCTOR_KEY"), "`KEY`: the secret of the instructor link, at least 32 hexadecimal digits (128 bits), such as `openssl rand -hex 16` prints (env IDEMLAB_INSTRUCTOR_KEY; default: a random key made once and kept in the -data folder, or in the -database store for replicas, printed at each start)")
	fs.BoolVar(&f.RotateKey, "rotate-instructor-key", getenv("IDEMLAB_ROTATE_INSTRUCTOR_KEY") == "1", "replace the kept instructor key with a new random one at start and print it: the old link stops working (env IDEMLAB_ROTATE_INSTRUCTOR_KEY=1)")
	fs.StringVar(&f.DataDir, "data", getenv("IDEMLAB_DATA"), "`DIR`: the folder of the workshop database, created with the first room (env IDEMLAB_DATA; default: the user's state folder)")
	fs.StringVar(&f.DatabaseURL, "database", getenv("IDEMLAB_DATABASE"), "keep workshops in the PostgreSQL database at `URL`, postgres://…, shared by every replica (env IDEMLAB_DATABASE; default: SQLite in the -data folder)")
	fs.Var(retentionFlag{&f.Retention}, "retention", "delete rooms and their data this long (`AGE`) after they were created, e.g. 30d or 12h (env IDEMLAB_RETENTION; default 30d)")
}

// resolve applies the environment's retention, defaults the data folder and
// key, and checks them.
func (f *workshopFlags) resolve(getenv func(string) string, retentionSet bool) error {
	if v := getenv("IDEMLAB_RETENTION"); v != "" && !retentionSet {
		d, err := parseRetention(v)
		if err != nil {
			return usagef("serve: IDEMLAB_RETENTION=%v", err)
		}
		f.Retention = d
	}
	if f.DatabaseURL != "" && !strings.HasPrefix(f.DatabaseURL, "postgres://") && !strings.HasPrefix(f.DatabaseURL, "postgresql://") {
		return usagef("serve: -database: want a PostgreSQL URL such as postgres://user:password@host:5432/idemlab")
	}
	if f.DataDir == "" {
		dir, err := defaultDataDir(getenv)
		if err != nil {
			return usagef("serve: no -data folder given and %v", err)
		}
		f.DataDir = dir
	}
	if f.InstructorKey != "" {
		if f.RotateKey {
			return usagef("serve: -rotate-instructor-key replaces the kept key, and -instructor-key (or IDEMLAB_INSTRUCTOR_KEY) chooses one instead; give one")
		}
		if err := workshop.CheckInstructorKey(f.InstructorKey); err != nil {
			return usagef("serve: -%v", err)
		}
	}
	return nil
}

// keySource is where the instructor key is kept: the PostgreSQL store,
// which every replica shares, or a file in the data folder.
func (f workshopFlags) keySource(pg *pgstore.Store) (workshop.KeySource, string) {
	if pg != nil {
		return pg, "the workshop store (" + pgstore.Describe(f.DatabaseURL) + ")"
	}
	path := filepath.Join(f.DataDir, workshop.KeyFileName)
	return workshop.KeyFile(path), path
}

// instructorKey returns the key of the instructor link: the chosen one, or
// the kept one (made at the first start, replaced with -rotate-instructor-key).
func (f workshopFlags) instructorKey(ctx context.Context, pg *pgstore.Store) (key, keptIn string, err error) {
	if f.InstructorKey != "" {
		return f.InstructorKey, "", nil
	}
	source, where := f.keySource(pg)
	if f.RotateKey {
		key = workshop.NewInstructorKey()
		if err := source.SetInstructorKey(ctx, key); err != nil {
			return "", "", fmt.Errorf("serve: rotating the instructor key in %s: %w", where, err)
		}
		return key, where, nil
	}
	key, err = source.InstructorKey(ctx, workshop.NewInstructorKey(), true)
	if err != nil {
		return "", "", fmt.Errorf("serve: the instructor key in %s: %w", where, err)
	}
	if err := workshop.CheckInstructorKey(key); err != nil {
		return "", "", fmt.Errorf("serve: the instructor key kept in %s is not a key this server accepts (%v); start once with -rotate-instructor-key to replace it", where, err)
	}
	return key, where, nil
}

// defaultDataDir is the user's state folder: $XDG_STATE_HOME/idemlab, else
// ~/.local/state/idemlab on Unix, the configuration folder elsewhere.
func defaultDataDir(getenv func(string) string) (string, error) {
	if dir := getenv("XDG_STATE_HOME"); filepath.IsAbs(dir) {
		return filepath.Join(dir, "idemlab"), nil
	}
	if runtime.GOOS != "windows" && runtime.GOOS != "darwin" {
		if home := getenv("HOME"); home != "" {
			return filepath.Join(home, ".local", "state", "idemlab"), nil
		}
	}
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("the state folder is unknown (%v); set -data", err)
	}
	return filepath.Join(dir, "idemlab"), nil
}

// openWorkshop opens the store and starts the retention sweep. SQLite
// creates nothing until the first room; PostgreSQL is migrated now, and
// its notifications wake this replica's followers from then on.
func openWorkshop(ctx context.Context, f workshopFlags, logger *slog.Logger) (*web.WorkshopConfig, func() error, error) {
	var store workshop.Store
	var pg *pgstore.Store
	if f.DatabaseURL != "" {
		var err error
		if pg, err = pgstore.Open(ctx, f.DatabaseURL); err != nil {
			return nil, nil, fmt.Errorf("serve: workshop store: %w", err)
		}
		store = pg
	} else {
		lite, err := sqlitestore.Open(ctx, filepath.Join(f.DataDir, sqlitestore.FileName))
		if err != nil {
			return nil, nil, fmt.Errorf("serve: workshop store: %w", err)
		}
		store = lite
	}
	key, keptIn, err := f.instructorKey(ctx, pg)
	if err != nil {
		store.Close()
		return nil, nil, err
	}
	switch {
	case f.RotateKey:
		logger.Info("instructor key rotated", "kept_in", keptIn)
	case keptIn != "":
		logger.Info("instructor key", "kept_in", keptIn)
	}
	svc := workshop.NewService(store, nil)
	if pg != nil {
		go pg.Listen(ctx, svc.Hub(), logger)
	}
	go sweepExpiredRooms(ctx, svc, f.Retention, logger)
	go func() {
		// The open rooms' class views, built before an instructor asks.
		if err := svc.WarmClasses(ctx); err != nil && ctx.Err() == nil {
			logger.Warn("building the open rooms' class views", "err", err)
		}
	}()
	var source workshop.KeySource // a kept key may be rotated while serving
	if keptIn != "" {
		source, _ = f.keySource(pg)
	}
	gate := workshop.NewInstructorGate(key, source, nil)
	return &web.WorkshopConfig{Service: svc, InstructorKey: key, Gate: gate}, store.Close, nil
}

// storeName says where workshops are kept, for the start-up message.
func (f workshopFlags) storeName() string {
	if f.DatabaseURL != "" {
		return pgstore.Describe(f.DatabaseURL)
	}
	return f.DataDir + " (created with the first room)"
}

// sweepInterval is how often rooms past their retention are deleted.
const sweepInterval = time.Hour

func sweepExpiredRooms(ctx context.Context, svc *workshop.Service, retention time.Duration, logger *slog.Logger) {
	for {
		n, err := svc.DeleteExpired(ctx, retention)
		switch {
		case err != nil && ctx.Err() == nil:
			logger.Error("deleting rooms past their retention", "err", err)
		case n > 0:
			logger.Info("deleted rooms past their retention", "rooms", n, "retention", retention.String())
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(sweepInterval):
		}
	}
}

// serveLedgerPool is how many PostgreSQL ledgers a server keeps by default
// (-ledger-pool): runs on PostgreSQL at once (a run holds one ledger at a
// time, one handler after the other); web queues the others for one
// (web/admitpg.go).
const serveLedgerPool = 4

// ledgerFlags are serve's PostgreSQL ledger settings.
type ledgerFlags struct {
	Database string // -ledger-database: the ledgers' server
	// InWorkshopDatabase puts the ledgers on the workshop store's
	// -database: schemas and roles of their own beside the store's tables,
	// which a ledger's role cannot read.
	InWorkshopDatabase bool
	Prefix             string // names of the server's schemas and roles (playground/pgprefix.go)
	Pool               int    // ledgers in the pool
	poolEnv            string // IDEMLAB_LEDGER_POOL as given
}

// addLedgerFlags declares serve's ledger flags on fs.
func addLedgerFlags(fs *flag.FlagSet, getenv func(string) string, f *ledgerFlags) {
	f.Pool = serveLedgerPool
	if v := getenv("IDEMLAB_LEDGER_POOL"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			n = -1 // resolve refuses it
		}
		f.Pool, f.poolEnv = n, v
	}
	fs.IntVar(&f.Pool, "ledger-pool", f.Pool, "`N`: PostgreSQL ledgers the server keeps, 1 to 64: runs on PostgreSQL at once, the others queue for one (env IDEMLAB_LEDGER_POOL)")
	fs.StringVar(&f.Database, "ledger-database", getenv("IDEMLAB_LEDGER_DATABASE"), "a PostgreSQL server for playground ledgers, `URL` postgres://… (env IDEMLAB_LEDGER_DATABASE; default: SQLite only); playgrounds gain a ledger switch")
	fs.BoolVar(&f.InWorkshopDatabase, "ledgers-in-workshop-database", getenv("IDEMLAB_LEDGERS_IN_WORKSHOP_DATABASE") == "1", "keep playground ledgers on the workshop store's PostgreSQL (-database), in schemas and roles of their own that cannot read the store (env IDEMLAB_LEDGERS_IN_WORKSHOP_DATABASE=1); instead of -ledger-database")
	fs.StringVar(&f.Prefix, "ledger-prefix", getenv("IDEMLAB_LEDGER_PREFIX"), "names of this server's ledger schemas and roles, `PREFIX`_1…, so that servers sharing a PostgreSQL keep apart; a restart with the same prefix drops what a crash left (env IDEMLAB_LEDGER_PREFIX; default: idemlab_ and a random id per process)")
}

// resolve picks the ledgers' server (-ledger-database, or the workshop
// store's with -ledgers-in-workshop-database, never both) and the prefix.
func (f *ledgerFlags) resolve(workshopDatabase string) error {
	if f.InWorkshopDatabase {
		switch {
		case f.Database != "":
			return usagef("serve: -ledgers-in-workshop-database and -ledger-database (or IDEMLAB_LEDGER_DATABASE) both say where ledgers live; give one")
		case workshopDatabase == "":
			return usagef("serve: -ledgers-in-workshop-database needs a PostgreSQL workshop store (-database postgres://…); without one the store is SQLite, so give ledgers a server with -ledger-database")
		}
		f.Database = workshopDatabase
	}
	if f.Database == "" {
		if f.Prefix != "" {
			return usagef("serve: -ledger-prefix names PostgreSQL ledgers, and there are none (-ledger-database or -ledgers-in-workshop-database)")
		}
		return nil
	}
	if f.Pool < 1 || f.Pool > 64 {
		if f.Pool == -1 && f.poolEnv != "" {
			return usagef("serve: IDEMLAB_LEDGER_POOL=%q: want a number of ledgers, 1 to 64", f.poolEnv)
		}
		return usagef("serve: -ledger-pool %d: want 1 to 64 ledgers", f.Pool)
	}
	if f.Prefix == "" {
		var b [4]byte
		rand.Read(b[:])
		f.Prefix = "idemlab_" + hex.EncodeToString(b[:])
	}
	if err := playground.CheckLedgerPrefix(f.Prefix); err != nil {
		return usagef("serve: -ledger-prefix: %v", err)
	}
	return nil
}

// openServeLedgers opens the server's PostgreSQL ledgers, or returns nil
// without them. Their schemas and roles are named PREFIX_1…, made at start
// and dropped at shutdown.
func openServeLedgers(ctx context.Context, f ledgerFlags) (*playground.PostgresLedgers, error) {
	if f.Database == "" {
		return nil, nil
	}
	pg, err := playground.OpenPostgresLedgers(ctx, f.Database, f.Pool, f.Prefix)
	if err != nil {
		return nil, fmt.Errorf("serve: %s: %w", f.source(), err)
	}
	return pg, nil
}

// source names the flag the ledgers' server came from, for messages.
func (f ledgerFlags) source() string {
	if f.InWorkshopDatabase {
		return "-ledgers-in-workshop-database"
	}
	return "-ledger-database"
}

// startDebugServer serves net/http/pprof on its own listener (-debug-addr),
// apart from the site, so that profiles are never on the public address.
func startDebugServer(addr string, logger *slog.Logger) (*http.Server, net.Addr, error) {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /debug/pprof/", pprof.Index)
	mux.HandleFunc("GET /debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("GET /debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("GET /debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("GET /debug/pprof/trace", pprof.Trace)
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, nil, err
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	logger.Info("serving profiles", "addr", ln.Addr().String(), "path", "/debug/pprof/")
	return srv, ln.Addr(), nil
}
