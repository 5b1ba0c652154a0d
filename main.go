// Command idemlab serves the Idemlab course on idempotent message consumers,
// and checks lessons, handlers and workshop stores from the terminal.
//
//	idemlab [serve] [flags]
//	idemlab lint [-ledger-database URL] [DIR]
//	idemlab run SCENARIO [-handlers a,b] [-script TEXT] [-seed N] [-json]
//	        [-ledger L -ledger-database URL]
//	idemlab check [-lessons DIR] [-json] [-ledger L -ledger-database URL] EXERCISE FILE
//	idemlab scenarios
//	idemlab handlers
//	idemlab backup [-data DIR | -database URL] FILE
//	idemlab load [-target URL] [-learners N] [-duration D] [-think-min D] [-think-max D]
//	        [-expensive N] [-closed-loop D] [-idle D] [-cycles N]
//	        [-room -instructor-key KEY [-one-address IP]]
//	idemlab health [-url URL]
//	idemlab version
//	idemlab help
//
// The flags of serve, each with an IDEMLAB_* environment variable:
//
//	-addr HOST:PORT  -lessons DIR  -public-url URL  -base-path PATH
//	-frame-ancestors ORIGINS  -log-format text|json  -trust-proxy
//	-debug-addr HOST:PORT  -instructor-key KEY  -rotate-instructor-key  -data DIR
//	-database URL  -retention AGE  -ledger-database URL  -ledgers-in-workshop-database
//	-ledger-prefix PREFIX  -ledger-pool N  -share-rate N  -share-burst N
//	-share-seats N  -conns-per-address N
//
// One file holds each command (serve.go, lint.go, run.go, check.go, …);
// cli.go holds the command table the usage is generated from. main stays
// thin: it turns signals into a context and the error of run into an exit
// status. Everything else is reachable from tests through run.
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
