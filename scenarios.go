package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"idemlab/playground"
)

// listScenarios prints the built-in scenarios with their default handlers
// and script, so that a workshop can pick one from the terminal.
func listScenarios(args []string, stdout io.Writer) error {
	fs := newFlagSet("scenarios")
	if err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("scenarios: unexpected argument %q", fs.Arg(0))
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SCENARIO\tTITLE\tHANDLERS\tDEFAULT SCRIPT")
	for _, sc := range playground.Scenarios() {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", sc.Name, sc.Title, strings.Join(sc.Handlers, ","), sc.DefaultScript)
	}
	return tw.Flush()
}
