package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"idemlab/workshop/pgstore"
	"idemlab/workshop/sqlitestore"
)

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
