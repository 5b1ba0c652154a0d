package main

import (
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"time"
)

// startDebugServer serves net/http/pprof on its own listener (-debug-addr),
// apart from the site, so that profiles are never on the public address.
func startDebugServer(addr string, logger *slog.Logger) (*http.Server, net.Addr, error) {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /debug/pprof/", pprof.Index)
	mux.HandleFunc("GET /debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("GET /debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("GET /debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("GET /debug/pprof/trace", pprof.Trace)
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, nil, err
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	logger.Info("serving profiles", "addr", ln.Addr().String(), "path", "/debug/pprof/")
	return srv, ln.Addr(), nil
}
