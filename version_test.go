package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

func TestRun_Version(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), []string{"version"}, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(stdout.String(), "idemlab ") || !strings.Contains(stdout.String(), "go1.") {
		t.Errorf("version printed %q", stdout.String())
	}
}
