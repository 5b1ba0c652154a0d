package web

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strconv"
	"strings"
	"sync"
)

// payload is a response body computed once, with its header values, as is
// and gzip-compressed, so that serving it is choosing a variant and writing
// bytes. Both variants share Vary: Accept-Encoding and differ in ETag. The
// gzip variant is made on first use, so that starting the server (and
// re-rendering a watched course) does not pay for compressing every page.
type payload struct {
	identity variant
	hash     string
	gzipOnce sync.Once
	gzip     *variant // after gzipOnce: nil when compressing does not pay
}

type variant struct {
	body   []byte
	etag   []string
	length []string
}

// minGzipSize is the size below which compressing costs more than it saves.
const minGzipSize = 512

// newPayload prepares a body. hash, if not empty, is used as the ETag (for
// assets whose name already carries it); otherwise one is computed.
func newPayload(body []byte, hash string) *payload {
	if hash == "" {
		sum := sha256.Sum256(body)
		hash = hex.EncodeToString(sum[:8])
	}
	return &payload{
		identity: variant{body: body, etag: []string{`"` + hash + `"`}, length: []string{strconv.Itoa(len(body))}},
		hash:     hash,
	}
}

// gzipped returns the compressed variant, making it the first time, or nil
// when the body is too small or does not compress.
func (p *payload) gzipped() *variant {
	p.gzipOnce.Do(func() {
		body := p.identity.body
		if len(body) < minGzipSize {
			return
		}
		var buf bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression) // a valid level: no error
		zw.Write(body)
		zw.Close()
		if buf.Len() < len(body)*9/10 {
			p.gzip = &variant{body: buf.Bytes(), etag: []string{`"` + p.hash + `-gz"`}, length: []string{strconv.Itoa(buf.Len())}}
		}
	})
	return p.gzip
}

var (
	varyAcceptEncoding = []string{"Accept-Encoding"}
	gzipEncoding       = []string{"gzip"}
)

// serve writes the payload with the given Content-Type and Cache-Control,
// compressed when the client accepts gzip, 304 when its ETag matches, headers
// only for HEAD.
func (p *payload) serve(w http.ResponseWriter, r *http.Request, contentType, cacheControl []string) {
	h := w.Header()
	h["Content-Type"] = contentType
	h["Cache-Control"] = cacheControl
	v := &p.identity
	if len(v.body) >= minGzipSize {
		h["Vary"] = varyAcceptEncoding
		if acceptsGzip(r.Header.Get("Accept-Encoding")) {
			if gz := p.gzipped(); gz != nil {
				v = gz
				h["Content-Encoding"] = gzipEncoding
			}
		}
	}
	h["Etag"] = v.etag
	if etagMatches(r.Header.Get("If-None-Match"), v.etag[0]) {
		h.Del("Content-Encoding")
		w.WriteHeader(http.StatusNotModified)
		return
	}
	h["Content-Length"] = v.length
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		w.Write(v.body)
	}
}

// acceptsGzip reads an Accept-Encoding header: gzip (or *) listed without q=0.
func acceptsGzip(header string) bool {
	if header == "" {
		return false
	}
	for part := range strings.SplitSeq(header, ",") {
		coding, params, _ := strings.Cut(part, ";")
		coding = strings.ToLower(strings.TrimSpace(coding))
		if coding != "gzip" && coding != "*" {
			continue
		}
		q := strings.ReplaceAll(strings.ToLower(params), " ", "")
		return !strings.HasPrefix(q, "q=0") || strings.HasPrefix(q, "q=0.") && strings.Trim(q[4:], "0") != ""
	}
	return false
}

// etagMatches implements the weak comparison If-None-Match asks for.
func etagMatches(header, etag string) bool {
	if header == "" {
		return false
	}
	for candidate := range strings.SplitSeq(header, ",") {
		candidate = strings.TrimSpace(candidate)
		if candidate == "*" || strings.TrimPrefix(candidate, "W/") == etag {
			return true
		}
	}
	return false
}
