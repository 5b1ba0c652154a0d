package web

import (
	"fmt"
	"idemlab/web/site"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strings"
	"time"
)

// securityPolicy holds the security header values, built once.
type securityPolicy struct {
	csp      []string // for site pages: framed by our own origin only
	cspEmbed []string // for /embed/ pages: framed by the configured ancestors
}

func newSecurityPolicy(embedAncestors string) securityPolicy {
	csp := func(ancestors string) []string {
		return []string{"default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
			"frame-ancestors " + ancestors + "; base-uri 'none'; form-action 'self'"}
	}
	return securityPolicy{csp: csp("'self'"), cspEmbed: csp(embedAncestors)}
}

var (
	noSniff        = []string{"nosniff"}
	referrerPolicy = []string{"strict-origin-when-cross-origin"}
	sameOrigin     = []string{"SAMEORIGIN"}
)

// withSecurityHeaders sets the CSP and friends on every response. Only
// /embed/ pages may be framed by the configured ancestors; the rest of the
// site only by itself.
func (s *Server) withSecurityHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		if strings.HasPrefix(r.URL.Path, "/embed/") {
			h["Content-Security-Policy"] = s.policy.cspEmbed
		} else {
			h["Content-Security-Policy"] = s.policy.csp
			h["X-Frame-Options"] = sameOrigin // for browsers without frame-ancestors
		}
		h["X-Content-Type-Options"] = noSniff
		h["Referrer-Policy"] = referrerPolicy
		next.ServeHTTP(w, r)
	})
}

// statusRecorder remembers the status and size of a response for the log,
// and whether anything was written, for panic recovery.
type statusRecorder struct {
	http.ResponseWriter
	status int
	bytes  int
}

func (r *statusRecorder) WriteHeader(status int) {
	if r.status == 0 {
		r.status = status
	}
	r.ResponseWriter.WriteHeader(status)
}

func (r *statusRecorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	n, err := r.ResponseWriter.Write(b)
	r.bytes += n
	return n, err
}

// Unwrap lets http.ResponseController reach the real writer.
func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// withRequestLog logs one line per request: method, path, status, duration.
func (s *Server) withRequestLog(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &statusRecorder{ResponseWriter: w}
		next.ServeHTTP(rec, r)
		if rec.status == 0 && r.Context().Err() != nil {
			rec.status = site.StatusClientClosedRequest
		}
		if rec.status == 0 {
			rec.status = http.StatusOK
		}
		s.metrics.Request(r.Pattern, rec.status)
		level := slog.LevelInfo
		switch {
		case r.Context().Err() != nil:
			level = slog.LevelInfo // the client went away: not an error of ours
		case rec.status >= 500:
			level = slog.LevelError
		case r.URL.Path == "/healthz" || strings.HasPrefix(r.URL.Path, "/static/"):
			level = slog.LevelDebug // probes and hashed assets would drown the rest
		}
		if !s.logger.Enabled(r.Context(), level) {
			return
		}
		s.logger.LogAttrs(r.Context(), level, "request",
			slog.String("method", r.Method),
			slog.String("path", r.URL.Path),
			slog.Int("status", rec.status),
			slog.Duration("duration", time.Since(start)),
			slog.Int("bytes", rec.bytes),
		)
	})
}

// withRecovery turns a panic in a handler into a logged 500 page, so one bad
// request never takes the server down or leaves the visitor with nothing.
func (s *Server) withRecovery(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			v := recover()
			if v == nil {
				return
			}
			if v == http.ErrAbortHandler { //nolint:errorlint // sentinel compared as the net/http docs do
				panic(v) // the handler asked to abort the connection
			}
			s.logger.ErrorContext(r.Context(), "panic serving request",
				"method", r.Method, "path", r.URL.Path, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
			if rec, ok := w.(*statusRecorder); ok && rec.status != 0 {
				return // too late for an error page: the response has started
			}
			s.serveError(w, r, fmt.Errorf("panic: %v", v))
		}()
		next.ServeHTTP(w, r)
	})
}

// withBasePath serves the site's routes under its base path too: a reverse
// proxy may strip the prefix (/learn/lessons/x arrives as /lessons/x) or
// pass it on, and both reach the same route. Links always carry the prefix
// (siteView.path), so a learner never sees the difference.
func (s *Server) withBasePath(next http.Handler) http.Handler {
	if s.base == "" {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rest, ok := strings.CutPrefix(r.URL.Path, s.base)
		if !ok || rest != "" && rest[0] != '/' {
			next.ServeHTTP(w, r)
			return
		}
		if rest == "" {
			rest = "/"
		}
		r2 := r.Clone(r.Context())
		r2.URL.Path = rest
		r2.URL.RawPath = ""
		next.ServeHTTP(w, r2)
	})
}
