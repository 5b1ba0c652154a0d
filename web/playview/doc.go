// Package playview is the live playground feature: the figure a learner
// clicks through (the view model, View, built from the engine's trace;
// controls, broker and worker panels, the sequence diagram, ledgers and
// charts, goals and the prediction question, a PostgreSQL block's recorded
// run), the pages /playground and /embed/playground with the scenario
// picker, and GET /api/v1/run, each run going through the one admission
// path (package admit).
//
// Most of the figure is templ; the parts drawn on every click with dozens
// of numeric attributes (the diagram, the step list, the charts, the
// timeline and the controls) are written by hand into a buffer (markup.go),
// which was measured to matter (BenchmarkPlaygroundFragment): it escapes
// every text and attribute by construction of its few methods.
//
// Pages is built with what it needs of the server and lists its routes
// (Routes); a lesson page (package web) draws its blocks with
// LivePlayground and runs a changed block through Pages.ServeRun.
package playview
