package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"idemlab/web"
	"idemlab/workshop"
	"idemlab/workshop/pgstore"
	"idemlab/workshop/sqlitestore"
)

// workshopFlags are serve's workshop settings.
type workshopFlags struct {
	InstructorKey string
	DataDir       string
	// DatabaseURL (postgres://…) puts the rooms in PostgreSQL, shared by
	// every replica, instead of the SQLite file in DataDir.
	DatabaseURL string
	Retention   time.Duration
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
	fs.StringVar(&f.InstructorKey, "instructor-key", getenv("IDEMLAB_INSTRUCTOR_KEY"), "secret of the instructor link, at least 16 characters (env IDEMLAB_INSTRUCTOR_KEY; default: a random key, printed at start)")
	fs.StringVar(&f.DataDir, "data", getenv("IDEMLAB_DATA"), "folder of the workshop database, created with the first room (env IDEMLAB_DATA; default: the user's state folder)")
	fs.StringVar(&f.DatabaseURL, "database", getenv("IDEMLAB_DATABASE"), "keep workshops in this PostgreSQL database, postgres://…, shared by every replica (env IDEMLAB_DATABASE; default: SQLite in the -data folder)")
	fs.Var(retentionFlag{&f.Retention}, "retention", "delete rooms and their data this long after they were created, e.g. 30d or 12h (env IDEMLAB_RETENTION; default 30d)")
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
	if f.InstructorKey == "" {
		var b [16]byte
		rand.Read(b[:])
		f.InstructorKey = hex.EncodeToString(b[:])
	} else if len(f.InstructorKey) < 16 || strings.ContainsAny(f.InstructorKey, " ;,\"\\") {
		return usagef("serve: -instructor-key: at least 16 characters, without spaces, quotes, commas, semicolons or backslashes")
	}
	return nil
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
	svc := workshop.NewService(store, nil)
	if pg != nil {
		go pg.Listen(ctx, svc.Hub(), logger)
	}
	go sweepExpiredRooms(ctx, svc, f.Retention, logger)
	return &web.WorkshopConfig{Service: svc, InstructorKey: f.InstructorKey}, store.Close, nil
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

// backupCommand is `idemlab backup [-data DIR | -database URL] FILE`: a
// consistent copy of the workshop store, safe while servers run on it —
// the SQLite file (VACUUM INTO), or with -database the PostgreSQL store as
// a psql script (one REPEATABLE READ snapshot, pgstore.BackupFile).
func backupCommand(ctx context.Context, args []string, stdout io.Writer) error {
	fs := newFlagSet("backup")
	dataDir := fs.String("data", os.Getenv("IDEMLAB_DATA"), "folder of the workshop database (env IDEMLAB_DATA; default: the user's state folder)")
	database := fs.String("database", os.Getenv("IDEMLAB_DATABASE"), "copy this PostgreSQL workshop store instead, postgres://… (env IDEMLAB_DATABASE), to a file psql restores")
	if err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usagef("backup: want one argument, the FILE to write the copy to")
	}
	if *database != "" {
		if !strings.HasPrefix(*database, "postgres://") && !strings.HasPrefix(*database, "postgresql://") {
			return usagef("backup: -database: want a PostgreSQL URL such as postgres://user:password@host:5432/idemlab")
		}
		if err := pgstore.BackupFile(ctx, *database, fs.Arg(0)); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "Copied %s to %s; restore it into an empty database with\n  psql -v ON_ERROR_STOP=1 --single-transaction -f %s postgres://…\n", pgstore.Describe(*database), fs.Arg(0), fs.Arg(0))
		return nil
	}
	dir := *dataDir
	if dir == "" {
		var err error
		if dir, err = defaultDataDir(os.Getenv); err != nil {
			return usagef("backup: %v", err)
		}
	}
	src := filepath.Join(dir, sqlitestore.FileName)
	if err := sqlitestore.BackupFile(ctx, src, fs.Arg(0)); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "Copied %s to %s\n", src, fs.Arg(0))
	return nil
}
