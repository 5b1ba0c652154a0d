package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// The command line: the one table of commands, the usage generated from
// it, run and the dispatch to one function per command (each in NAME.go),
// and the flag handling they share. manual_test.go checks that the package
// comment (main.go), the README and the usage name every command of the
// table and every flag each one parses.

// command is one subcommand of idemlab.
type command struct {
	name    string
	args    string // the synopsis after the name: every flag, then the arguments
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

// commands is the command table, in the order the usage lists them; serve
// is the default. help is answered by dispatch (it prints this table).
var commands = []command{
	{"serve", "[flags]", "serve the course (the default command; its flags are below)",
		serve},
	{"lint", "[-ledger-database URL] [DIR]", "check every lesson of DIR (default: the built-in course); with a PostgreSQL, prove the PostgreSQL blocks' claims on it",
		func(_ context.Context, args []string, stdout, _ io.Writer) error { return lint(args, stdout) }},
	{"run", "SCENARIO [-handlers a,b] [-script TEXT] [-seed N] [-json] [-ledger sqlite|postgres-rc|postgres-rr|postgres-serializable -ledger-database URL]", "play a scenario in the terminal and print the verdict table, or the whole trace as JSON",
		func(ctx context.Context, args []string, stdout, _ io.Writer) error {
			return runScenario(ctx, args, stdout)
		}},
	{"check", "[-lessons DIR] [-json] [-ledger L -ledger-database URL] EXERCISE FILE", "check a handler script (FILE, or - for stdin) against an exercise, on SQLite or on PostgreSQL",
		func(ctx context.Context, args []string, stdout, _ io.Writer) error {
			return checkExercise(ctx, args, stdout)
		}},
	{"scenarios", "", "list the built-in scenarios with their handlers and default script",
		func(_ context.Context, args []string, stdout, _ io.Writer) error { return listScenarios(args, stdout) }},
	{"handlers", "", "list the built-in handlers, and whether each is idempotent",
		func(_ context.Context, args []string, stdout, _ io.Writer) error { return listHandlers(args, stdout) }},
	{"backup", "[-data DIR | -database URL] FILE", "copy the workshop store to FILE, safely while servers run on it",
		func(ctx context.Context, args []string, stdout, _ io.Writer) error {
			return backupCommand(ctx, args, stdout)
		}},
	{"load", "[-target URL] [-learners N] [-duration D] [-think-min D] [-think-max D] [-expensive N] [-closed-loop D] [-idle D] [-cycles N] [-room -instructor-key KEY [-one-address IP]]", "play virtual learners against a server on this machine and measure it",
		func(ctx context.Context, args []string, stdout, _ io.Writer) error { return load(ctx, args, stdout) }},
	{"health", "[-url URL]", "exit 0 when URL/healthz answers 200 (the container's health check)",
		func(ctx context.Context, args []string, stdout, _ io.Writer) error { return health(ctx, args, stdout) }},
	{"version", "", "print the version",
		func(_ context.Context, args []string, stdout, _ io.Writer) error { return printVersion(args, stdout) }},
	{"help", "", "print this usage", nil},
}

// usageWidth is where the usage wraps its lines.
const usageWidth = 80

// usageText is the usage, generated from the command table and serve's own
// flag set, so that it cannot name a flag that does not exist or miss one.
func usageText() string {
	var b strings.Builder
	b.WriteString("Idemlab: an interactive course on idempotent message consumers.\n\nUsage:\n")
	for _, c := range commands {
		synopsis := "idemlab " + c.name
		if c.name == "serve" {
			synopsis = "idemlab [serve]"
		}
		if c.args != "" {
			synopsis += " " + c.args
		}
		writeWrapped(&b, synopsis, "  ", "          ")
		writeWrapped(&b, c.summary, "        ", "        ")
	}
	b.WriteString("\nFlags of serve (each has an environment variable; a flag given on the command line wins):\n")
	var cfg serveConfig
	var frameAncestors, basePath string
	fs := serveFlags(func(string) string { return "" }, &cfg, &frameAncestors, &basePath)
	fs.VisitAll(func(f *flag.Flag) {
		arg, usage := flag.UnquoteUsage(f)
		line := "-" + f.Name
		if arg != "" {
			line += " " + arg
		}
		writeWrapped(&b, line, "  ", "  ")
		writeWrapped(&b, usage, "        ", "        ")
	})
	b.WriteString("\nRun 'idemlab COMMAND -h' for the flags of one command.\n")
	return b.String()
}

// writeWrapped writes text as lines of at most usageWidth columns, the
// first indented by first and the others by rest.
func writeWrapped(b *strings.Builder, text, first, rest string) {
	line := first
	for i, word := range strings.Fields(text) {
		if i > 0 && len(line)+1+len(word) > usageWidth {
			b.WriteString(line + "\n")
			line = rest + word
			continue
		}
		if i > 0 {
			line += " "
		}
		line += word
	}
	b.WriteString(line + "\n")
}

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
			fmt.Fprintf(stderr, "\n%s", usageText())
		}
	}
	return err
}

func dispatch(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	name := "serve"
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		name, args = args[0], args[1:]
	}
	if name == "help" {
		fmt.Fprint(stdout, usageText())
		return nil
	}
	for _, c := range commands {
		if c.name == name {
			return c.run(ctx, args, stdout, stderr)
		}
	}
	return usagef("unknown command %q", name)
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

// inputError is input the engine refused (an unknown scenario, a script that
// does not parse, a limit exceeded): exit status 2 like a usage error, but
// without the usage text, since the command line itself was understood.
type inputError struct{ err error }

func (e *inputError) Error() string { return e.err.Error() }
func (e *inputError) Unwrap() error { return e.err }
