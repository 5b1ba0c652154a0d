// Package pgtest gives tests an empty PostgreSQL database of their own.
//
// The tests read the cluster from IDEMLAB_TEST_DATABASE (a postgres:// URL)
// (.ci/postgres start prints it). Without it a test is skipped with a message that
// says how to start one, unless IDEMLAB_REQUIRE_POSTGRES=1 (as in CI), in
// which case it fails: a CI run must never pass by skipping them.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// Environment variables the tests read.
const (
	EnvDatabase        = "IDEMLAB_TEST_DATABASE"
	EnvRequirePostgres = "IDEMLAB_REQUIRE_POSTGRES"
)

const howTo = `eval "$(.ci/postgres start "$(mktemp -d)")" in the repository, then run the tests from that shell`

func skipOrFail(t testing.TB, why string) {
	t.Helper()
	if os.Getenv(EnvRequirePostgres) == "1" {
		t.Fatalf("%s, and %s=1: PostgreSQL tests must run", why, EnvRequirePostgres)
	}
	t.Skipf("%s: skipping the PostgreSQL test. To run it: %s", why, howTo)
}

// Database creates a fresh schema in the test cluster and returns the URL
// of the database with that schema as its search_path: every store opened
// on it sees only this test's tables. The schema is dropped after the test.
func Database(t testing.TB) string {
	t.Helper()
	base := os.Getenv(EnvDatabase)
	if base == "" {
		skipOrFail(t, EnvDatabase+" is not set")
	}
	var b [6]byte
	rand.Read(b[:])
	schema := "test_" + hex.EncodeToString(b[:])
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatalf("%s=%s: %v", EnvDatabase, base, err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if conn, err := pgx.Connect(ctx, base); err == nil {
			conn.Exec(ctx, "DROP SCHEMA "+schema+" CASCADE")
			conn.Close(ctx)
		}
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

// Cluster is a PostgreSQL cluster of one test's own, for tests that
// restart it (the shared one is used by tests running in parallel).
type Cluster struct {
	URL string // its database, postgres://…
	dir string
}

func script() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", ".ci", "postgres")
}

// NewCluster starts a cluster with .ci/postgres in a temporary folder; it
// is stopped when the test ends. It needs what .ci/postgres needs: the
// PostgreSQL 15 binaries and, as root, the postgres user.
func NewCluster(t testing.TB) *Cluster {
	t.Helper()
	if os.Getenv(EnvDatabase) == "" {
		skipOrFail(t, EnvDatabase+" is not set")
	}
	dir, err := os.MkdirTemp("", "idemlab-pg-")
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(script(), "start", dir).Output()
	if err != nil {
		t.Fatalf("starting a PostgreSQL cluster: %v", err)
	}
	c := &Cluster{dir: dir}
	t.Cleanup(func() {
		exec.Command(script(), "stop", dir).Run()
		os.RemoveAll(dir)
	})
	for line := range strings.SplitSeq(string(out), "\n") {
		if v, ok := strings.CutPrefix(line, "export "+EnvDatabase+"="); ok {
			c.URL = strings.Trim(v, "'")
		}
	}
	if c.URL == "" {
		t.Fatalf(".ci/postgres start printed no %s:\n%s", EnvDatabase, out)
	}
	return c
}

// Stop stops the cluster (a fast shutdown: connections are cut); Restart
// starts it again.
func (c *Cluster) Stop(t testing.TB) {
	t.Helper()
	if out, err := exec.Command(script(), "stop", c.dir).CombinedOutput(); err != nil {
		t.Fatalf("stopping PostgreSQL: %v\n%s", err, out)
	}
}

// Restart restarts the cluster (a fast shutdown: connections are cut), as
// an operator restarting PostgreSQL under running servers would.
func (c *Cluster) Restart(t testing.TB) {
	t.Helper()
	if out, err := exec.Command(script(), "restart", c.dir).CombinedOutput(); err != nil {
		t.Fatalf("restarting PostgreSQL: %v\n%s", err, out)
	}
}

// LedgerDatabase returns the URL of the test cluster's database for
// PostgreSQL ledgers, idemlab_test_ledgers, created on first use: a pool
// of ledgers revokes PUBLIC's defaults in its database (TEMP, large
// objects, set_config, pg_notify…), so ledgers never share the database
// that the workshop store's tests use. Each pool has a prefix of its own,
// and drops its schemas and roles when closed.
func LedgerDatabase(t testing.TB) string {
	t.Helper()
	base := os.Getenv(EnvDatabase)
	if base == "" {
		skipOrFail(t, EnvDatabase+" is not set")
	}
	const name = "idemlab_test_ledgers"
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatalf("%s=%s: %v", EnvDatabase, base, err)
	}
	defer conn.Close(ctx)
	var exists bool
	if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT FROM pg_database WHERE datname = $1)", name).Scan(&exists); err != nil {
		t.Fatal(err)
	}
	if !exists {
		// Two test binaries may create it at once: the loser's error says
		// it exists (42P04), or breaks pg_database's unique index (23505).
		if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil && !strings.Contains(err.Error(), "42P04") && !strings.Contains(err.Error(), "23505") {
			t.Fatal(err)
		}
	}
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + name
	return u.String()
}
