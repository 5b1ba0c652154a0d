// Command idemlab serves the Idemlab course on idempotent message consumers,
// and checks lesson folders before a workshop.
//
//	idemlab [serve] [-addr HOST:PORT] [-lessons DIR] [-public-url URL]
//	        [-frame-ancestors ORIGINS] [-log-format text|json]
//	idemlab lint [-ledger-database URL] [DIR]
//	idemlab run SCENARIO [-handlers a,b] [-script TEXT] [-seed N] [-json]
//	        [-ledger L -ledger-database URL]
//	idemlab check [-json] [-lessons DIR] [-ledger L -ledger-database URL] EXERCISE FILE
//	idemlab scenarios | handlers
//	idemlab health [-url URL]
//	idemlab version
//
// main stays thin: it turns signals into a context and the error of run into
// an exit status. Everything else is reachable from tests through run.
package main

import (
	"context"
	"errors"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil {
		// run has already printed the one-line message.
		os.Exit(exitStatus(err))
	}
}

// exitStatus is 2 for a command line that could not be understood or input
// the engine refused, 1 for anything else that went wrong.
func exitStatus(err error) int {
	var usage *usageError
	var input *inputError
	if errors.As(err, &usage) || errors.As(err, &input) {
		return 2
	}
	return 1
}
