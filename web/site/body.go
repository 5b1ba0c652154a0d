package site

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/a-h/templ"
	"github.com/klauspost/compress/gzip"
)

// Every response body this package sends goes through writeBody: pages,
// fragments, static files, JSON, error pages. It negotiates gzip, and lets
// http.ServeContent answer HEAD, If-None-Match and Range for bodies that
// carry an ETag.

// caching is how long a browser may keep a body, and whether it carries an
// ETag to revalidate it with.
type caching int

const (
	// noStore: never stored, no ETag (answers to POSTs, errors, the health
	// check, pages whose status is not 200).
	NoStore caching = iota
	// revalidate: stored, revalidated by ETag on every use (pages change
	// when the lessons folder does; revalidating is cheap).
	Revalidate
	// immutable: kept for a year (the URL names a hash of the content).
	Immutable
)

var CacheControl = [...][]string{
	NoStore:    {"no-store"},
	Revalidate: {"no-cache"},
	Immutable:  {"public, max-age=31536000, immutable"},
}

var (
	TextContentType    = []string{"text/plain; charset=utf-8"}
	HTMLContentType    = []string{"text/html; charset=utf-8"}
	JsonContentType    = []string{"application/json; charset=utf-8"}
	varyAcceptEncoding = []string{"Accept-Encoding"}
	gzipEncoding       = []string{"gzip"}
)

// Payload is a response body with its ETag, as is and gzip-compressed. It
// holds one variant when made and the other on demand:
//   - a body rendered once (newPayload) or made for one request and not
//     kept (requestPayload) is held as is; its gzip variant is made on
//     first use, so that a body nobody asks compressed never pays for it;
//   - an answer made for a request that takes gzip (answerPayload), which
//     the run cache may keep, is held compressed only: a client that does
//     not take gzip (rare: browsers all do) gets it inflated per request.
//
// A payload never changes once made, so pre-rendered ones are shared by
// every request.
type Payload struct {
	Identity variant // body nil when the payload is held compressed only
	size     int     // of the identity body
	hash     string
	zipper   *gzipper
	gzipOnce sync.Once
	Gzip     *variant // after gzipOnce: nil when compressing does not pay
}

type variant struct {
	Body []byte
	Etag []string
}

// minGzipSize is the size below which compressing costs more than it saves.
const minGzipSize = 512

// NewPayload prepares a body rendered once and served many times: its gzip
// variant is as small as gzip can make it. hash, if not empty, is the ETag
// (for assets whose name already carries it); otherwise one is computed.
func NewPayload(body []byte, hash string) *Payload {
	return makePayload(body, hash, smallestGzip)
}

// RequestPayload prepares a body made for one request: its gzip variant is
// made at requestGzip's level. etag, if not empty, is its entity tag (an
// answer's, from the state its URL names: stateETag); otherwise one is
// computed from the body.
func RequestPayload(body []byte, etag string) *Payload {
	return makePayload(body, etag, requestGzip)
}

// AnswerPayload prepares an answer made for one request from body, which
// the caller reuses afterwards (a render buffer): when the request takes
// gzip and compressing pays, only the compressed bytes are kept, else a
// copy of body. etag is as requestPayload's.
func AnswerPayload(body []byte, etag string, gzip bool) *Payload {
	p := makePayload(body, etag, requestGzip)
	if gzip && p.size >= minGzipSize {
		z := requestGzip.Compress(body)
		p.gzipOnce.Do(func() {
			if worthCompressing(z, body) {
				p.Gzip = p.gzipVariant(z)
			}
		})
	}
	if p.Gzip != nil {
		p.Identity.Body = nil
	} else {
		p.Identity.Body = bytes.Clone(body)
	}
	return p
}

func makePayload(body []byte, hash string, zipper *gzipper) *Payload {
	if hash == "" {
		sum := sha256.Sum256(body)
		hash = hex.EncodeToString(sum[:8])
	}
	return &Payload{Identity: variant{Body: body, Etag: []string{`"` + hash + `"`}}, size: len(body), hash: hash, zipper: zipper}
}

// worthCompressing: z, body compressed, saves at least a tenth.
func worthCompressing(z, body []byte) bool { return len(z) < len(body)*9/10 }

func (p *Payload) gzipVariant(z []byte) *variant {
	return &variant{Body: z, Etag: []string{`"` + p.hash + `-gz"`}}
}

// Gzipped returns the compressed variant, making it the first time, or nil
// when the body is too small or does not compress.
func (p *Payload) Gzipped() *variant {
	p.gzipOnce.Do(func() {
		if p.size < minGzipSize {
			return
		}
		if z := p.zipper.Compress(p.Identity.Body); worthCompressing(z, p.Identity.Body) {
			p.Gzip = p.gzipVariant(z)
		}
	})
	return p.Gzip
}

// Plain returns the identity variant: of a payload held compressed only,
// inflated for this request and not kept (the run cache counts the bytes
// it keeps).
func (p *Payload) Plain() *variant {
	if p.Identity.Body != nil || p.size == 0 {
		return &p.Identity
	}
	zr, err := gzip.NewReader(bytes.NewReader(p.Gzip.Body))
	body := make([]byte, p.size)
	if err == nil {
		_, err = io.ReadFull(zr, body)
	}
	if err != nil {
		// The bytes were compressed here, from a body of this size: a
		// failure is our bug, which withRecovery logs and answers as a 500.
		panic(fmt.Sprintf("inflating an answer compressed here: %v", err))
	}
	return &variant{Body: body, Etag: p.Identity.Etag}
}

// BytesHeld is about the memory the payload's bodies take: a body held as
// is may be joined by its gzip variant, about a fifth of it.
func (p *Payload) BytesHeld() int64 {
	if p.Identity.Body == nil {
		return int64(len(p.Gzip.Body))
	}
	return int64(len(p.Identity.Body)) * 6 / 5
}

// gzipper compresses at one level, reusing its writers and their output
// buffers: a few kept in a free list, since a sync.Pool is emptied by every
// garbage collection and a new writer allocates its tables again (about
// 800 KB at level 1, 1.4 MB at level 9).
type gzipper struct {
	level   int
	writers freeList[*gzipWriter]
}

// gzipWriter is a writer with the buffer it compresses into.
type gzipWriter struct {
	zw  *gzip.Writer
	out bytes.Buffer
}

// NewGzipper returns a gzipper that keeps up to kept idle writers.
func NewGzipper(level, kept int) *gzipper {
	return &gzipper{level: level, writers: NewFreeList[*gzipWriter](kept)}
}

var (
	// smallestGzip compresses pages rendered once: one idle writer kept.
	smallestGzip = NewGzipper(gzip.BestCompression, 1)
	// requestGzip compresses answers made for one request (a click's
	// fragment), at the level BenchmarkGzipLevel chose: level 1 costs about
	// half the CPU of level 5 and a third of the default's on a playground
	// fragment, for a body about 10% larger (README, Performance). The
	// compressor is github.com/klauspost/compress's gzip (already in the
	// module graph through the Prometheus client): the same format, and at
	// level 1 about 40% of compress/gzip's CPU for a slightly smaller body
	// (BenchmarkGzipLevel's stdlib-1 against 1). Huffman-only costs about
	// a fifth less CPU than level 1 but sends 3.4 times the bytes (31 KB
	// against 9 KB a click, on a learner's phone); klauspost's stateless
	// mode costs more CPU than level 1 and sends 4% more.
	// It keeps a writer per core: about as many answers as are compressed
	// at once.
	requestGzip = NewGzipper(gzip.BestSpeed, min(runtime.GOMAXPROCS(0), 8))
)

// Compress returns body compressed, in a slice of its own exactly as long
// (a cached answer holds no spare capacity).
func (z *gzipper) Compress(body []byte) []byte {
	w, ok := z.writers.Get()
	if !ok {
		w = &gzipWriter{}
		w.zw, _ = gzip.NewWriterLevel(nil, z.level) // a valid level: no error
	}
	w.out.Reset()
	w.zw.Reset(&w.out)
	w.zw.Write(body) // writes to a bytes.Buffer: no error
	w.zw.Close()
	zipped := bytes.Clone(w.out.Bytes())
	if w.out.Cap() <= MaxKeptBuffer {
		z.writers.Put(w)
	}
	return zipped
}

// WriteBody is the one way a body is written. It sets Content-Type and
// Cache-Control, sends the gzip variant when the client accepts it and the
// body is worth compressing (with Vary: Accept-Encoding, and an ETag of its
// own), then:
//   - a 200 that may be stored gets an ETag and http.ServeContent, which
//     answers HEAD, If-None-Match (304) and Range;
//   - anything else (another status, or no-store) is written as is, with
//     Content-Length, headers only for HEAD.
func WriteBody(w http.ResponseWriter, r *http.Request, status int, contentType []string, cache caching, p *Payload) {
	h := w.Header()
	h["Content-Type"] = contentType
	h["Cache-Control"] = CacheControl[cache]
	var v *variant
	if p.size >= minGzipSize {
		h["Vary"] = varyAcceptEncoding
		if AcceptsGzip(r.Header.Get("Accept-Encoding")) {
			if v = p.Gzipped(); v != nil {
				h["Content-Encoding"] = gzipEncoding
			}
		}
	}
	if v == nil {
		v = p.Plain()
	}
	// ServeContent leaves Content-Length to the caller when the body is
	// encoded; it replaces it for a range and removes it for a 304.
	h["Content-Length"] = []string{strconv.Itoa(len(v.Body))}
	if status == http.StatusOK && cache != NoStore {
		h["Etag"] = v.Etag
		content := &bodyReader{body: v.Body}
		content.Reset(v.Body)
		http.ServeContent(directWriter{w}, r, "", time.Time{}, content)
		return
	}
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		w.Write(v.Body)
	}
}

// bodyReader is a body for http.ServeContent that directWriter can hand to
// the response whole.
type bodyReader struct {
	bytes.Reader
	body []byte
}

// directWriter gives ServeContent's copy of a bodyReader to the response
// as one Write of the bytes it already holds, where io.CopyN would read
// them through a new 32 KB buffer on every request.
type directWriter struct{ http.ResponseWriter }

func (w directWriter) ReadFrom(src io.Reader) (int64, error) {
	if limited, ok := src.(*io.LimitedReader); ok {
		if content, ok := limited.R.(*bodyReader); ok {
			rest := content.body[len(content.body)-content.Len():]
			rest = rest[:min(int64(len(rest)), limited.N)]
			n, err := w.ResponseWriter.Write(rest)
			limited.N -= int64(n)
			content.Seek(int64(n), io.SeekCurrent) // within the body: no error
			return int64(n), err
		}
	}
	return io.Copy(w.ResponseWriter, src) // several ranges come through a pipe
}

// Unwrap lets http.ResponseController reach the real writer.
func (w directWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// WriteHTML renders content, inside layout unless it is nil (a fragment),
// into a buffer and writes it. Nothing is written if rendering fails.
func WriteHTML(w http.ResponseWriter, r *http.Request, status int, cache caching, layout, content templ.Component) error {
	buf := RenderBuffers.Take(math.MaxInt)
	defer RenderBuffers.Release(buf)
	if layout != nil {
		content = InLayout(layout, content)
	}
	if err := RenderInto(r.Context(), content, buf); err != nil {
		return err
	}
	writeAnswer(w, r, status, HTMLContentType, cache, buf.Bytes())
	return nil
}

// WriteJSON writes v as JSON, followed by a newline. Nothing is written if
// v cannot be encoded.
func WriteJSON(w http.ResponseWriter, r *http.Request, status int, cache caching, v any) error {
	buf := RenderBuffers.Take(math.MaxInt)
	defer RenderBuffers.Release(buf)
	if err := json.NewEncoder(buf).Encode(v); err != nil { // as json.Marshal, and a newline
		return err
	}
	writeAnswer(w, r, status, JsonContentType, cache, buf.Bytes())
	return nil
}

// writeAnswer writes body, made for this request in a buffer the caller
// reuses, compressed only if the request takes gzip.
func writeAnswer(w http.ResponseWriter, r *http.Request, status int, contentType []string, cache caching, body []byte) {
	WriteBody(w, r, status, contentType, cache, AnswerPayload(body, "", AcceptsGzip(r.Header.Get("Accept-Encoding"))))
}

// AcceptsGzip reads an Accept-Encoding header: gzip (or *) listed without q=0.
func AcceptsGzip(header string) bool {
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

// RenderInto renders c into buf, emptied first (a render buffer,
// renderBuffers.take: it refuses to grow past its cap).
func RenderInto(ctx context.Context, c templ.Component, buf *CappedBuffer) error {
	buf.Reset()
	return c.Render(ctx, buf)
}

// InLayout is content drawn inside a layout (page, embedPage).
func InLayout(layout, content templ.Component) templ.Component {
	return templ.ComponentFunc(func(ctx context.Context, w io.Writer) error {
		return layout.Render(templ.WithChildren(ctx, content), w)
	})
}
