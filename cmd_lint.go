package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
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

// loadCourse loads, validates and renders the lessons of dir, or the embedded
// course when dir is empty. A dir that is missing or not a folder is an error
// that names it.
func loadCourse(dir string) (*lessons.Course, error) { return loadCourseOn(dir, nil) }

// loadCourseOn is loadCourse proving the PostgreSQL blocks' claims on pg
// (nil: against their recordings).
func loadCourseOn(dir string, pg *playground.PostgresLedgers) (*lessons.Course, error) {
	fsys, opts, err := courseFS(dir)
	if err != nil {
		return nil, err
	}
	opts.Ledgers = pg
	return lessons.Load(fsys, opts)
}

// courseFS returns the file system and options to load the lessons of dir
// (the embedded course when dir is empty). Problems are reported with dir in
// front of each file name, so that they open in an editor from the terminal.
func courseFS(dir string) (fs.FS, lessons.Options, error) {
	if dir == "" {
		return lessons.Embedded(), lessons.Options{DisplayRoot: "lessons"}, nil
	}
	info, err := os.Stat(dir)
	if err != nil {
		return nil, lessons.Options{}, fmt.Errorf("lessons folder %s: %w", dir, errors.Unwrap(err))
	}
	if !info.IsDir() {
		return nil, lessons.Options{}, fmt.Errorf("lessons folder %s: not a folder", dir)
	}
	fsys, err := lessons.FolderFS(dir)
	if err != nil {
		return nil, lessons.Options{}, fmt.Errorf("lessons folder %s: %w", dir, err)
	}
	return fsys, lessons.Options{DisplayRoot: dir}, nil
}

func courseSource(dir string) string {
	if dir == "" {
		return "the built-in course"
	}
	return dir
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
