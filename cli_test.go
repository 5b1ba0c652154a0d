package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

func TestRun_UsageErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		env  map[string]string
		want string
	}{
		{"UnknownFlag", []string{"-no-such-flag"}, nil, "flag provided but not defined: -no-such-flag"},
		{"UnknownServeFlag", []string{"serve", "-bogus"}, nil, "serve: flag provided but not defined: -bogus"},
		{"UnknownCommand", []string{"frobnicate"}, nil, `unknown command "frobnicate"`},
		{"StrayArgument", []string{"serve", "extra"}, nil, `unexpected argument "extra"`},
		{"BadLogFormat", []string{"-log-format", "xml"}, nil, `-log-format "xml"`},
		{"BadAddr", []string{"-addr", "8080"}, nil, `-addr "8080"`},
		{"BadPublicURL", []string{"-public-url", "example.com"}, nil, "-public-url"},
		{"BadBasePath", []string{"-base-path", "learn"}, nil, "-base-path: base path \"learn\" must start with /"},
		{"BasePathWithDots", nil, map[string]string{"IDEMLAB_BASE_PATH": "/a/../learn"}, "-base-path"},
		{"BasePathDisagrees", []string{"-base-path", "/learn", "-public-url", "https://x.example/docs"}, nil, "disagree"},
		{"BadFrameAncestors", []string{"-frame-ancestors", "https://ok.example; script-src *"}, nil, "-frame-ancestors"},
		{"BadPort", nil, map[string]string{"PORT": "http"}, `PORT="http"`},
		{"BadHealthURL", []string{"health", "-url", "::"}, nil, "health: -url"},
		{"VersionArgument", []string{"version", "x"}, nil, `unexpected argument "x"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			var stdout, stderr bytes.Buffer
			err := run(context.Background(), tt.args, &stdout, &stderr)
			if err == nil {
				t.Fatal("run succeeded, want a usage error")
			}
			if got := exitStatus(err); got != 2 {
				t.Errorf("exit status %d, want 2 (%v)", got, err)
			}
			first, _, _ := strings.Cut(stderr.String(), "\n")
			if !strings.HasPrefix(first, "idemlab: ") || !strings.Contains(first, tt.want) {
				t.Errorf("first stderr line = %q, want idemlab: …%s…", first, tt.want)
			}
			if !strings.Contains(stderr.String(), "Usage:") {
				t.Error("stderr lacks the usage")
			}
			if stdout.Len() > 0 {
				t.Errorf("a usage error wrote to stdout: %q", stdout.String())
			}
		})
	}
}

func TestRun_HelpGoesToStdout(t *testing.T) {
	for _, args := range [][]string{{"help"}, {"-h"}, {"serve", "-h"}, {"lint", "-help"}} {
		var stdout, stderr bytes.Buffer
		if err := run(context.Background(), args, &stdout, &stderr); err != nil {
			t.Errorf("run %q = %v, want nil", args, err)
		}
		if !strings.Contains(stdout.String(), "Usage") || stderr.Len() > 0 {
			t.Errorf("run %q: stdout %q, stderr %q; want the usage on stdout only", args, stdout.String(), stderr.String())
		}
	}
}
