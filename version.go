package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
)

// version is set at build time with -ldflags "-X main.version=v1.2.3"; when
// it is not, buildVersion falls back to what the Go toolchain recorded.
var version = ""

// printVersion is `idemlab version`: the build and the Go release.
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
