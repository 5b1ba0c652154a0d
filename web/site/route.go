package site

import "net/http"

// HandlerFunc is a handler that reports failure by returning an error,
// having written nothing; the server turns the error into the answer
// (its serveError), so that a feature never writes an error page itself.
type HandlerFunc func(w http.ResponseWriter, r *http.Request) error

// Route is one URL pattern a feature answers (Go 1.22 mux syntax: "GET
// /exercises/{id}") and its handler. Each feature package lists its
// routes; package web assembles them into the site's one route list.
type Route struct {
	Pattern string
	Serve   HandlerFunc
}
