package site

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"mime"
	"path"
	"sort"
	"strings"
)

// asset is one static file held in memory under its content-hashed name.
type asset struct {
	*Payload
	hashedName  string   // "app.3f2a1c9d0b.css"
	ContentType []string // header value, shared by every response
}

// Assets maps logical names ("app.css") to hashed URLs and serves the
// files by hashed name. It is built once at startup: a changed file gets a
// new URL, so every response can be cached forever.
type Assets struct {
	base     string            // path prefix of the site ("" at the root)
	byHashed map[string]*asset // "app.3f2a1c9d0b.css" → asset
	urls     map[string]string // "app.css" → "/static/app.3f2a1c9d0b.css"
}

// hashLength is the number of hex digits of SHA-256 kept in a file name:
// enough that two versions of one file never collide in practice.
const hashLength = 10

// NewAssets reads every regular file at the root of files, plus the extra
// in-memory files (such as the generated highlight stylesheet), and names
// each one after a hash of its content.
func NewAssets(base string, files fs.FS, extra map[string][]byte) (*Assets, error) {
	set := &Assets{base: base, byHashed: map[string]*asset{}, urls: map[string]string{}}
	entries, err := fs.ReadDir(files, ".")
	if err != nil {
		return nil, fmt.Errorf("web: reading static files: %w", err)
	}
	contents := map[string][]byte{}
	for _, entry := range entries {
		name := entry.Name()
		if entry.IsDir() || strings.HasSuffix(name, ".go") {
			continue
		}
		body, err := fs.ReadFile(files, name)
		if err != nil {
			return nil, fmt.Errorf("web: reading static file %s: %w", name, err)
		}
		contents[name] = body
	}
	for name, body := range extra {
		if _, dup := contents[name]; dup {
			return nil, fmt.Errorf("web: static file %s is defined twice", name)
		}
		contents[name] = body
	}
	names := make([]string, 0, len(contents))
	for name := range contents {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if err := set.add(name, contents[name]); err != nil {
			return nil, err
		}
	}
	return set, nil
}

func (s *Assets) add(name string, body []byte) error {
	ext := path.Ext(name)
	contentType := mime.TypeByExtension(ext)
	switch ext {
	// Pinned rather than taken from the machine's mime tables, which vary.
	case ".css":
		contentType = "text/css; charset=utf-8"
	case ".js":
		contentType = "text/javascript; charset=utf-8"
	case ".svg":
		contentType = "image/svg+xml"
	}
	if contentType == "" {
		return fmt.Errorf("web: static file %s: unknown content type for %q", name, ext)
	}
	sum := sha256.Sum256(body)
	hash := hex.EncodeToString(sum[:])[:hashLength]
	hashed := strings.TrimSuffix(name, ext) + "." + hash + ext
	s.byHashed[hashed] = &asset{
		Payload:     NewPayload(body, hash),
		hashedName:  hashed,
		ContentType: []string{contentType},
	}
	s.urls[name] = s.base + "/static/" + hashed
	return nil
}

// URL is the hashed URL of a logical file name. An unknown name is a bug in
// a template, so it yields a URL that will 404 visibly rather than a panic.
func (s *Assets) URL(name string) string {
	if u, ok := s.urls[name]; ok {
		return u
	}
	return s.base + "/static/missing-" + name
}

// Lookup finds an asset by the hashed name in a request path.
func (s *Assets) Lookup(hashedName string) (*asset, bool) {
	a, ok := s.byHashed[hashedName]
	return a, ok
}
