package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"idemlab/internal/pgtest"
	"idemlab/workshop"
	"idemlab/workshop/pgstore"
	"idemlab/workshop/sqlitestore"
)

func TestBackup_SQLiteStore(t *testing.T) {
	dir := t.TempDir()
	s, err := sqlitestore.Open(t.Context(), filepath.Join(dir, sqlitestore.FileName))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.CreateRoom(t.Context(), "room-key-0001", workshop.RoomSpec{Name: "Tuesday"}, "AAA-AAA", time.Now()); err != nil {
		t.Fatal(err)
	}
	dest := filepath.Join(t.TempDir(), "copy.db")
	var out, errOut bytes.Buffer
	if err := run(t.Context(), []string{"backup", "-data", dir, dest}, &out, &errOut); err != nil {
		t.Fatalf("backup: %v\n%s", err, errOut.String())
	}
	c, err := sqlitestore.Open(t.Context(), dest)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if room, err := c.RoomByCode(t.Context(), "AAA-AAA"); err != nil || room.Name != "Tuesday" {
		t.Errorf("the copy's room: %+v, %v", room, err)
	}
	err = run(t.Context(), []string{"backup", "-database", "mysql://x", filepath.Join(t.TempDir(), "x.sql")}, &out, &errOut)
	var usage *usageError
	if !errors.As(err, &usage) || !strings.Contains(err.Error(), "-database") {
		t.Errorf("a URL that is not PostgreSQL's: %v, want a usage error naming -database", err)
	}
}

func TestBackup_PostgresStore(t *testing.T) {
	db := pgtest.Database(t)
	s, err := pgstore.Open(t.Context(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.CreateRoom(t.Context(), "room-key-0001", workshop.RoomSpec{Name: "Tuesday"}, "AAA-AAA", time.Now()); err != nil {
		t.Fatal(err)
	}
	dest := filepath.Join(t.TempDir(), "workshop.sql")
	var out, errOut bytes.Buffer
	if err := run(t.Context(), []string{"backup", "-database", db, dest}, &out, &errOut); err != nil {
		t.Fatalf("backup: %v\n%s", err, errOut.String())
	}
	data, err := os.ReadFile(dest)
	if err != nil || !strings.Contains(string(data), "COPY \"rooms\"") || !strings.Contains(string(data), "Tuesday") || !strings.Contains(out.String(), "psql") {
		t.Errorf("the copy (%d bytes, %v) lacks the room, or the message how to restore it: %s", len(data), err, out.String())
	}
}
