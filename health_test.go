package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestRun_Health(t *testing.T) {
	healthy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/healthz" {
			http.NotFound(w, r)
			return
		}
		io.WriteString(w, "ok")
	}))
	defer healthy.Close()
	sick := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "starting", http.StatusServiceUnavailable)
	}))
	defer sick.Close()
	closed := httptest.NewServer(http.NotFoundHandler())
	closedURL := closed.URL
	closed.Close()

	tests := []struct {
		name       string
		url        string
		wantStatus int
		wantOutput string
	}{
		{"Healthy", healthy.URL, 0, "200 OK"},
		{"HealthyTrailingSlash", healthy.URL + "/", 0, "200 OK"},
		{"Unavailable", sick.URL, 1, "503 Service Unavailable"},
		{"Unreachable", closedURL, 1, "connection refused"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := run(context.Background(), []string{"health", "-url", tt.url}, &stdout, &stderr)
			status := 0
			if err != nil {
				status = exitStatus(err)
			}
			if status != tt.wantStatus {
				t.Errorf("exit status %d (%v), want %d", status, err, tt.wantStatus)
			}
			if out := stdout.String() + stderr.String(); !strings.Contains(out, tt.wantOutput) {
				t.Errorf("output lacks %q: %s", tt.wantOutput, out)
			}
		})
	}
}

func TestRun_HealthAgainstRealServer(t *testing.T) {
	server := startServe(t)
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), []string{"health", "-url", server.URL}, &stdout, &stderr); err != nil {
		t.Errorf("health = %v; stderr: %s", err, stderr.String())
	}
}
