package web

import (
	"errors"
	"fmt"
	"idemlab/web/workshopweb"
	"log/slog"
	"net/url"
	"path"
	"regexp"
	"strings"

	"idemlab/playground"
	"idemlab/web/admit"
)

// Config is what the server needs from the command line. NewServer checks
// it with the same rules the command line's parsers (ParseFrameAncestors,
// CheckPublicURL) apply, so a value the flags accept the server accepts.
type Config struct {
	// PublicURL is the site's address as visitors see it, e.g.
	// "https://learn.example.org" or "https://example.org/idemlab" behind a
	// proxy, or only its path ("/learn", see JoinBasePath) when the host is
	// not known. When it has a host, pages carry absolute canonical links;
	// when it has a path, every link, asset, form and fetch is prefixed with
	// it, and requests are served with or without it (a proxy may strip it
	// or pass it on). Empty: the site lives at the root.
	PublicURL string
	// FrameAncestors are the CSP sources allowed to embed /embed/ pages in an
	// iframe, e.g. "'self'", "https://docs.example.org". Empty means 'self'.
	FrameAncestors []string
	// Logger receives the request log and errors. Nil discards them.
	Logger *slog.Logger
	// Version is shown in the footer.
	Version string
	// TrustProxy says the server runs behind a reverse proxy: the client
	// of a request is the last address of X-Forwarded-For, not the remote
	// address (ratelimit.go). Off, the header is ignored.
	TrustProxy bool
	Share      admit.Share // one client's fair share of runs and checks; zero fields: admit.DefaultShare
	// Workshop, if not nil, turns on workshop mode (rooms, class view).
	Workshop *workshopweb.Config
	// Ledgers, if not nil, lets a playground run on PostgreSQL ledgers
	// (ledger=postgres-rc|postgres-rr|postgres-serializable in its URL);
	// nil: SQLite only, and the ledger switch is absent.
	Ledgers *playground.PostgresLedgers
}

// ParseFrameAncestors reads a list of frame ancestors as an operator types
// it (-frame-ancestors, IDEMLAB_FRAME_ANCESTORS): separated by spaces or
// commas, keywords with or without their quotes (a shell eats them). It
// returns the sources as Config.FrameAncestors takes them.
func ParseFrameAncestors(list string) ([]string, error) {
	fields := strings.FieldsFunc(list, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' })
	if len(fields) == 0 {
		return nil, errors.New("empty list: write 'none' to forbid every embedding")
	}
	return checkFrameAncestors(fields)
}

// frameSource matches what may go into the CSP frame-ancestors directive
// besides a keyword: a scheme ("https:"), or a host with an optional scheme,
// "*." wildcard and port. Anything else could smuggle another directive
// into the header.
var frameSource = regexp.MustCompile(`^(?:[a-z][a-z0-9+.-]*:|(?:[a-z][a-z0-9+.-]*://)?(?:\*\.)?[a-zA-Z0-9-]+(?:\.[a-zA-Z0-9-]+)*(?::(?:[0-9]+|\*))?)$`)

// checkFrameAncestors is the one rule for frame ancestors: each is 'self',
// 'none' (alone), * or a source frameSource matches; keywords are quoted on
// the way out. None at all means 'self'.
func checkFrameAncestors(sources []string) ([]string, error) {
	if len(sources) == 0 {
		return []string{"'self'"}, nil
	}
	out := make([]string, 0, len(sources))
	for i, src := range sources {
		switch strings.Trim(src, "'") {
		case "self":
			out = append(out, "'self'")
		case "none":
			out = append(out, "'none'")
		case "*":
			out = append(out, "*")
		default:
			if !frameSource.MatchString(src) {
				return nil, fmt.Errorf("frame ancestor %d, %q: not an origin (want one such as https://docs.example.com, https://*.example.com or 'self')", i+1, src)
			}
			out = append(out, src)
		}
	}
	if len(out) > 1 {
		for _, src := range out {
			if src == "'none'" {
				return nil, fmt.Errorf("frame ancestor 'none' cannot be combined with other sources (%s)", strings.Join(out, " "))
			}
		}
	}
	return out, nil
}

// CheckPublicURL reports what is wrong with a public URL (-public-url,
// IDEMLAB_PUBLIC_URL), or nil when Config.PublicURL may hold it.
func CheckPublicURL(raw string) error {
	_, _, err := parsePublicURL(raw)
	return err
}

// hostPattern is what the host of a public URL may be: a name or IPv4
// address, or a bracketed IPv6 address, with an optional port.
var hostPattern = regexp.MustCompile(`^([A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?|\[[0-9A-Fa-f:.]+\])(:[0-9]{1,5})?$`)

// JoinBasePath folds a base path (-base-path, IDEMLAB_BASE_PATH: the
// prefix the site lives under behind a reverse proxy, such as /learn) into
// a public URL, so that both reach the server as the one PublicURL: the
// path alone when there is no public URL, the public URL itself when its
// path is the same prefix. A base path that disagrees with the public
// URL's path is an error.
func JoinBasePath(publicURL, basePath string) (string, error) {
	if basePath == "" {
		return publicURL, nil
	}
	if !strings.HasPrefix(basePath, "/") {
		return "", fmt.Errorf("base path %q must start with /, such as /learn", basePath)
	}
	_, base, err := parsePublicURL(basePath)
	if err != nil {
		return "", err
	}
	if publicURL == "" {
		return base, nil
	}
	_, publicBase, err := parsePublicURL(publicURL)
	if err != nil {
		return "", err
	}
	if publicBase != base {
		return "", fmt.Errorf("base path %q and public URL %q disagree: give the public URL's path as the base path, or only one of them", basePath, publicURL)
	}
	return publicURL, nil
}

// parsePublicURL is the one rule for a public URL: it splits one into its
// origin and path prefix. Empty is allowed: relative links at the root; so
// is a path alone ("/learn"): a prefix with no known origin.
func parsePublicURL(raw string) (origin, base string, err error) {
	if raw == "" {
		return "", "", nil
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "", "", fmt.Errorf("%q: %w", raw, errors.Unwrap(err))
	}
	if strings.HasPrefix(raw, "/") && !strings.HasPrefix(raw, "//") {
		p := u.EscapedPath()
		if u.RawQuery != "" || u.Fragment != "" || strings.Contains(raw, "?") || strings.Contains(raw, "#") ||
			path.Clean(p) != strings.TrimRight(p, "/") && p != "/" || strings.ContainsAny(p, " \\") {
			return "", "", fmt.Errorf("%q must be a plain path such as /learn: no query, fragment, spaces, // or .. segment", raw)
		}
		return "", strings.TrimRight(p, "/"), nil
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", "", fmt.Errorf("%q must start with http:// or https://, such as https://learn.example.com", raw)
	}
	if u.Host == "" {
		return "", "", fmt.Errorf("%q has no host", raw)
	}
	if !hostPattern.MatchString(u.Host) {
		return "", "", fmt.Errorf("%q: %q is not a host name, IP address or [IPv6] with an optional :port", raw, u.Host)
	}
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return "", "", fmt.Errorf("%q must be scheme://host[/path], without user, query or fragment", raw)
	}
	return u.Scheme + "://" + u.Host, strings.TrimRight(u.EscapedPath(), "/"), nil
}

// WorkshopConfig turns on workshop mode (package workshopweb).
type WorkshopConfig = workshopweb.Config
