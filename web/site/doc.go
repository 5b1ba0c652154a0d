// Package site is what every page of Idemlab shares, whatever feature
// draws it: the site's view (View: base path, origin, hashed assets, the
// course), the layout (Page, EmbedPage) and the error page, the one error
// type a handler returns (Error, with NotFoundf, Invalidf and CannotRun;
// Classify turns any error into a status), the writing of bodies
// (WriteBody, WriteHTML, WriteJSON: an ETag per encoding, gzip, and
// http.ServeContent for HEAD, ranges and If-None-Match), the reused render
// buffers, the hashed static assets and the Prometheus metrics.
//
// Feature packages (playground, exercises, workshops) import site; site
// imports none of them.
package site
