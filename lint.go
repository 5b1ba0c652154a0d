package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"

	"idemlab/internal/english"
	"idemlab/lessons"
	"idemlab/playground"
)

// lint loads a lessons folder (the built-in course without one) exactly as
// serve would, prints every problem as "file:line: msg" on stdout and fails
// when there is any.
func lint(args []string, stdout io.Writer) error {
	fs := newFlagSet("lint")
	database := fs.String("ledger-database", "", "a PostgreSQL server (postgres://…) on which to prove the claims of the blocks that run on PostgreSQL; without it they are checked against their recordings")
	if err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	if fs.NArg() > 1 {
		return usagef("lint: one folder at most, got %d: %s", fs.NArg(), strings.Join(fs.Args(), " "))
	}
	dir := fs.Arg(0)
	fsys, opts, err := courseFS(dir)
	if err != nil {
		return fmt.Errorf("lint: %w", err)
	}
	opts.CheckExercises = true // slow for a server start, right for a lint
	opts.RequireSources = true // a draft may leave them out; a finished course may not
	if *database != "" {
		var b [4]byte
		rand.Read(b[:])
		pg, err := playground.OpenPostgresLedgers(context.Background(), *database, 1, "idemlab_lint_"+hex.EncodeToString(b[:]))
		if err != nil {
			return fmt.Errorf("lint: -ledger-database: %w", err)
		}
		defer pg.Close()
		opts.Ledgers = pg
	}
	course, err := lessons.Load(fsys, opts)
	if err != nil {
		var loadErr *lessons.LoadError
		if errors.As(err, &loadErr) {
			fmt.Fprintln(stdout, loadErr.Error())
			return &reportedError{fmt.Sprintf("lint: %s in %s", english.Plural(len(loadErr.Problems), "problem", "problems"), courseSource(dir))}
		}
		return fmt.Errorf("lint: %w", err)
	}
	fmt.Fprintf(stdout, "%s OK\n", coursePages(course))
	return nil
}

// coursePages counts a course as a person reads it: "12 lessons and 1
// reference page" (a glossary is not a lesson).
func coursePages(c *lessons.Course) string {
	var numbered, reference int
	for _, l := range c.Lessons {
		if l.IsReference() {
			reference++
		} else {
			numbered++
		}
	}
	if reference == 0 {
		return english.Plural(numbered, "lesson", "lessons")
	}
	return english.Plural(numbered, "lesson", "lessons") + " and " + english.Plural(reference, "reference page", "reference pages")
}
