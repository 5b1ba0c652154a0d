package main

import (
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
)

func TestDebugServer_ServesProfilesOnItsOwnListener(t *testing.T) {
	srv, addr, err := startDebugServer("127.0.0.1:0", slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	resp, err := http.Get("http://" + addr.String() + "/debug/pprof/")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "goroutine") {
		t.Errorf("/debug/pprof/: status %d", resp.StatusCode)
	}
}

func TestParseServeConfig_DebugAddrAndTrustProxy(t *testing.T) {
	env := map[string]string{"IDEMLAB_TRUST_PROXY": "1"}
	cfg, err := parseServeConfig([]string{"-debug-addr", "127.0.0.1:6060"}, func(k string) string { return env[k] }, io.Discard)
	if err != nil || cfg.DebugAddr != "127.0.0.1:6060" || !cfg.TrustProxy {
		t.Errorf("cfg %+v, err %v", cfg, err)
	}
	if _, err := parseServeConfig([]string{"-debug-addr", "6060"}, func(string) string { return "" }, io.Discard); err == nil || !strings.Contains(err.Error(), "HOST:PORT") {
		t.Errorf("a bad -debug-addr: err %v", err)
	}
	if cfg, _ := parseServeConfig(nil, func(string) string { return "" }, io.Discard); cfg.DebugAddr != "" || cfg.TrustProxy {
		t.Errorf("defaults: %+v; want no debug listener and no trusted proxy", cfg)
	}
}
