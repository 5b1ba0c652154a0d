package main

import (
	"fmt"
	"io"
	"text/tabwriter"

	"idemlab/playground"
)

// listHandlers prints the built-in handlers, whether each is idempotent, and
// why.
func listHandlers(args []string, stdout io.Writer) error {
	fs := newFlagSet("handlers")
	if err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("handlers: unexpected argument %q", fs.Arg(0))
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "HANDLER\tIDEMPOTENT\tDESCRIPTION")
	for _, h := range playground.Handlers() {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", h.Name, h.IdempotentText(), h.Description)
	}
	return tw.Flush()
}
