package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"time"

	"idemlab/internal/english"
	"idemlab/lessons"
)

// version is set at build time with -ldflags "-X main.version=v1.2.3"; when
// it is not, buildVersion falls back to what the Go toolchain recorded.
var version = ""

const usageText = `Idemlab: an interactive course on idempotent message consumers.

Usage:
  idemlab [serve] [flags]   serve the course (the default command)
  idemlab lint [DIR]        check every lesson of DIR (default: the built-in course)
  idemlab health [-url URL] exit 0 when URL/healthz answers 200 (container health check)
  idemlab run SCENARIO [-handlers a,b] [-script TEXT] [-seed N] [-json]
                            play a scenario in the terminal and print the verdicts
  idemlab check [-lessons DIR] [-json] EXERCISE FILE
                            check a handler script (FILE, or - for stdin) against an exercise
  idemlab scenarios         list the built-in scenarios
  idemlab handlers          list the built-in handlers
  idemlab version           print the version

Flags of serve (each has an environment variable; a flag given on the command line wins):
  -addr HOST:PORT           listen address (IDEMLAB_ADDR, else PORT as :PORT; default 127.0.0.1:8080)
  -lessons DIR              serve lessons from DIR, re-rendered when a file changes (IDEMLAB_LESSONS)
  -public-url URL           absolute URL the site is reached at, behind a proxy (IDEMLAB_PUBLIC_URL)
  -frame-ancestors ORIGINS  origins allowed to embed pages, space or comma separated (IDEMLAB_FRAME_ANCESTORS; default 'self')
  -log-format text|json     log format on stderr (IDEMLAB_LOG_FORMAT; default text)

Run 'idemlab COMMAND -h' for the flags of one command.
`

// usageError is a command line that could not be understood: exit status 2.
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error {
	return &usageError{fmt.Errorf(format, args...)}
}

// reportedError is an error whose details run has already printed (lint
// problems); only its summary goes on the last line.
type reportedError struct{ summary string }

func (e *reportedError) Error() string { return e.summary }

// run is the whole program minus signal handling and os.Exit. It prints a
// failure as one line "idemlab: message" on stderr (plus the usage for a
// command line it could not understand) and returns the error, so that main
// can choose the exit status and tests can inspect it.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	err := dispatch(ctx, args, stdout, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if err != nil {
		fmt.Fprintf(stderr, "idemlab: %v\n", err)
		var usage *usageError
		if errors.As(err, &usage) {
			fmt.Fprintf(stderr, "\n%s", usageText)
		}
	}
	return err
}

func dispatch(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	command := "serve"
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		command, args = args[0], args[1:]
	}
	switch command {
	case "serve":
		return serve(ctx, args, stdout, stderr)
	case "lint":
		return lint(args, stdout)
	case "health":
		return health(ctx, args, stdout)
	case "version":
		return printVersion(args, stdout)
	case "check":
		return checkExercise(ctx, args, stdout)
	case "run":
		return simulate(ctx, args, stdout)
	case "scenarios":
		return listScenarios(args, stdout)
	case "handlers":
		return listHandlers(args, stdout)
	case "help":
		fmt.Fprint(stdout, usageText)
		return nil
	default:
		return usagef("unknown command %q", command)
	}
}

// newFlagSet returns a flag set that reports problems through the returned
// error instead of printing them, so that run prints one message only.
func newFlagSet(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {} // parseFlags prints the usage for -h; run for errors
	return fs
}

// parseFlags parses args into fs, prints the command's flags on stdout for
// -h, and turns a parse failure into a usage error.
func parseFlags(fs *flag.FlagSet, args []string, stdout io.Writer) error {
	err := fs.Parse(args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		fmt.Fprintf(stdout, "Usage of idemlab %s:\n", fs.Name())
		fs.SetOutput(stdout)
		fs.PrintDefaults()
		return err
	case err != nil:
		return usagef("%s: %v", fs.Name(), err)
	}
	return nil
}

// lint loads a lessons folder (the built-in course without one) exactly as
// serve would, prints every problem as "file:line: msg" on stdout and fails
// when there is any.
func lint(args []string, stdout io.Writer) error {
	fs := newFlagSet("lint")
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
func loadCourse(dir string) (*lessons.Course, error) {
	fsys, opts, err := courseFS(dir)
	if err != nil {
		return nil, err
	}
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
	return os.DirFS(dir), lessons.Options{DisplayRoot: dir}, nil
}

func courseSource(dir string) string {
	if dir == "" {
		return "the built-in course"
	}
	return dir
}

// healthTimeout bounds the health check: a container runtime kills a check
// that hangs, and a hung check should say why instead.
const healthTimeout = 5 * time.Second

// health asks a running server for /healthz; the container image has no
// shell or curl, so its HEALTHCHECK runs the binary itself.
func health(ctx context.Context, args []string, stdout io.Writer) error {
	fs := newFlagSet("health")
	base := fs.String("url", "http://127.0.0.1:8080", "base URL of the server to check")
	if err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("health: unexpected argument %q", fs.Arg(0))
	}
	target := strings.TrimRight(*base, "/") + "/healthz"
	ctx, cancel := context.WithTimeout(ctx, healthTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return usagef("health: -url %q: %v", *base, err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("health: %w", err)
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("health: GET %s answered %s", target, resp.Status)
	}
	fmt.Fprintf(stdout, "ok: GET %s answered %s\n", target, resp.Status)
	return nil
}

func printVersion(args []string, stdout io.Writer) error {
	fs := newFlagSet("version")
	if err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("version: unexpected argument %q", fs.Arg(0))
	}
	fmt.Fprintf(stdout, "idemlab %s (%s)\n", buildVersion(), runtime.Version())
	return nil
}

// buildVersion is the -X main.version value, else the module version or VCS
// revision the toolchain stamped into the binary, else "dev".
func buildVersion() string {
	if version != "" {
		return version
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "dev"
	}
	if v := info.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var revision, modified string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			revision = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				modified = "-dirty"
			}
		}
	}
	if len(revision) > 12 {
		revision = revision[:12]
	}
	if revision == "" {
		return "dev"
	}
	return revision + modified
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
