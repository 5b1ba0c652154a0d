package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"idemlab/lessons"
	"idemlab/playground"
)

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
