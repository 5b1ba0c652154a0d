package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

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
