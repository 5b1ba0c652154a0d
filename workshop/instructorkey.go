package workshop

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// The instructor key is the secret of the instructor link. A server makes
// one the first time it starts and keeps it (KeySource): in the data folder
// for SQLite, in the store for PostgreSQL replicas, so that a link opened
// before a restart still works after it, on every replica.

// MinInstructorKeyHex is how many hexadecimal digits a chosen instructor key
// needs at least: 32 digits are 128 bits when each is random.
const MinInstructorKeyHex = 32

// A random key of 32 hexadecimal digits uses fewer than 8 distinct digits
// with probability below 4·10⁻⁸ (C(16,7)·(7/16)³² bounds it), and repeats
// one digit 8 times in a row with probability below 10⁻⁷ (25·16⁻⁷): a key
// that does either was typed, not drawn.
const (
	minKeyDistinctDigits = 8
	maxKeyDigitRun       = 8
)

// NewInstructorKey draws a key of 128 random bits, as 32 hexadecimal digits.
func NewInstructorKey() string {
	var b [16]byte
	rand.Read(b[:]) // never fails (crypto/rand's documented contract)
	return hex.EncodeToString(b[:])
}

// CheckInstructorKey refuses a chosen key that cannot hold 128 bits of
// randomness. One string's randomness cannot be measured, so the rule is
// its capacity: at least 32 hexadecimal digits (what `openssl rand -hex 16`
// prints), and, to catch a key typed by a person, at least 8 distinct
// digits and no digit repeated 8 times in a row.
func CheckInstructorKey(key string) error {
	if len(key) < MinInstructorKeyHex {
		return inputErrorf("instructor-key", "at least %d hexadecimal digits (128 bits), such as `openssl rand -hex 16` prints; this one has %d characters", MinInstructorKeyHex, len(key))
	}
	distinct := make(map[rune]bool)
	run, last := 0, rune(-1)
	for i, r := range strings.ToLower(key) {
		if !(r >= '0' && r <= '9' || r >= 'a' && r <= 'f') {
			return inputErrorf("instructor-key", "character %d, %q: use hexadecimal digits only (0-9, a-f), such as `openssl rand -hex 16` prints", i+1, r)
		}
		distinct[r] = true
		if r == last {
			run++
		} else {
			run, last = 1, r
		}
		if run >= maxKeyDigitRun {
			return inputErrorf("instructor-key", "a digit repeated 8 times in a row: this key was typed, not drawn; use `openssl rand -hex 16`")
		}
	}
	if len(distinct) < minKeyDistinctDigits {
		return inputErrorf("instructor-key", "only %d distinct digits: this key was typed, not drawn; use `openssl rand -hex 16`", len(distinct))
	}
	return nil
}

// KeySource keeps the instructor key of a server, or of every replica of a
// workshop. Both methods are safe to call from several processes at once.
type KeySource interface {
	// InstructorKey returns the stored key. With create, a source that has
	// none stores fresh and returns it (of two processes creating at once,
	// both return the one key stored); without, it returns ErrNotFound.
	InstructorKey(ctx context.Context, fresh string, create bool) (string, error)
	// SetInstructorKey replaces the stored key (a rotation).
	SetInstructorKey(ctx context.Context, key string) error
}

// KeyFileName is the instructor key's file in the data folder.
const KeyFileName = "instructor.key"

// KeyFile keeps the key in a file readable by its owner only (0600).
type KeyFile string

var _ KeySource = KeyFile("")

// InstructorKey implements KeySource: the file appears whole, by a link
// that fails when it exists, so two servers starting on one folder agree
// on one key.
func (f KeyFile) InstructorKey(_ context.Context, fresh string, create bool) (string, error) {
	for range 2 {
		data, err := os.ReadFile(string(f))
		if err == nil {
			key := strings.TrimSpace(string(data))
			if key == "" {
				return "", fmt.Errorf("workshop: %s is empty; delete it to make a new instructor key", f)
			}
			return key, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("workshop: instructor key: %w", err)
		}
		if !create {
			return "", ErrNotFound
		}
		if err := os.MkdirAll(filepath.Dir(string(f)), 0o700); err != nil {
			return "", fmt.Errorf("workshop: instructor key: %w", err)
		}
		// The key is written whole to a file of its own, then linked to
		// its name, which fails if the name exists: a reader never sees a
		// half-written key, and of two starts only one key wins.
		tmp, err := os.CreateTemp(filepath.Dir(string(f)), ".instructor.key.*")
		if err != nil {
			return "", fmt.Errorf("workshop: instructor key: %w", err)
		}
		_, err = tmp.WriteString(fresh + "\n")
		if err2 := tmp.Sync(); err == nil {
			err = err2
		}
		if err2 := tmp.Close(); err == nil {
			err = err2
		}
		if err == nil {
			err = os.Link(tmp.Name(), string(f))
		}
		os.Remove(tmp.Name())
		if errors.Is(err, fs.ErrExist) {
			continue // another process made it first: read theirs
		}
		if err != nil {
			return "", fmt.Errorf("workshop: instructor key: %w", err)
		}
		return fresh, nil
	}
	return "", fmt.Errorf("workshop: %s appeared and vanished while being read", f)
}

// SetInstructorKey implements KeySource: written to a temporary file and
// renamed over the old one, so a reader sees the old key or the new.
func (f KeyFile) SetInstructorKey(_ context.Context, key string) error {
	dir := filepath.Dir(string(f))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("workshop: instructor key: %w", err)
	}
	tmp, err := os.CreateTemp(dir, "."+KeyFileName+".*") // 0600
	if err != nil {
		return fmt.Errorf("workshop: instructor key: %w", err)
	}
	_, err = tmp.WriteString(key + "\n")
	if err == nil {
		err = tmp.Sync()
	}
	if err2 := tmp.Close(); err == nil {
		err = err2
	}
	if err == nil {
		err = os.Rename(tmp.Name(), string(f))
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("workshop: instructor key: %w", err)
	}
	return nil
}

// Instructor-key attempts: a client (an address) may get the key wrong
// KeyAttemptsBurst times at once, then once every KeyAttemptEvery.
const (
	KeyAttemptsBurst = 10
	KeyAttemptEvery  = 6 * time.Second
	// keyRefresh is how old the gate's copy of a stored key may get: a
	// rotation reaches every replica within it.
	keyRefresh = 10 * time.Second
	// maxKeyClients bounds the failure buckets kept.
	maxKeyClients = 50_000
)

// InstructorGate checks instructor keys: in constant time, with failures
// limited per client, against a key a KeySource may rotate (re-read at
// most every 10 s). It is safe for concurrent use.
type InstructorGate struct {
	mu       sync.Mutex
	key      []byte
	source   KeySource // nil: the key never changes
	loadedAt time.Time
	failures map[string]*keyBucket
	now      func() time.Time
}

type keyBucket struct {
	tokens float64
	at     time.Time
}

// NewInstructorGate checks against key; with a source, against the key it
// stores from then on (key is what it stored at start).
func NewInstructorGate(key string, source KeySource, now func() time.Time) *InstructorGate {
	if now == nil {
		now = time.Now
	}
	return &InstructorGate{key: []byte(key), source: source, loadedAt: now(), failures: make(map[string]*keyBucket), now: now}
}

// Check tells whether key is the instructor key, for a request from
// client (its address). A client that got it wrong too often is refused
// without a comparison: ok false and how long to wait (retryAfter > 0).
func (g *InstructorGate) Check(ctx context.Context, client, key string) (ok bool, retryAfter time.Duration) {
	g.mu.Lock()
	now := g.now()
	b := g.failures[client]
	if b != nil {
		b.tokens = math.Min(KeyAttemptsBurst, b.tokens+now.Sub(b.at).Seconds()/KeyAttemptEvery.Seconds())
		b.at = now
		if b.tokens < 1 {
			g.mu.Unlock()
			return false, time.Duration((1 - b.tokens) * float64(KeyAttemptEvery))
		}
	}
	stale := g.source != nil && now.Sub(g.loadedAt) >= keyRefresh
	if stale {
		g.loadedAt = now // one request reloads; the others use the key they have
	}
	want := g.key
	g.mu.Unlock()
	if stale {
		want = g.reload(ctx)
	}
	if subtle.ConstantTimeCompare([]byte(key), want) == 1 {
		return true, 0
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	b = g.failures[client]
	if b == nil {
		if len(g.failures) >= maxKeyClients {
			g.forgetFull(now)
		}
		b = &keyBucket{tokens: KeyAttemptsBurst, at: now}
		g.failures[client] = b
	}
	b.tokens--
	return false, 0
}

// reload reads the stored key; on failure (the store restarting) the last
// one read stays.
func (g *InstructorGate) reload(ctx context.Context) []byte {
	key, err := g.source.InstructorKey(ctx, "", false)
	g.mu.Lock()
	defer g.mu.Unlock()
	if err == nil && key != "" {
		g.key = []byte(key)
	}
	return g.key
}

// Key is the key the gate checks against now (for the start-up line).
func (g *InstructorGate) Key() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return string(g.key)
}

func (g *InstructorGate) forgetFull(now time.Time) {
	for k, b := range g.failures {
		if b.tokens+now.Sub(b.at).Seconds()/KeyAttemptEvery.Seconds() >= KeyAttemptsBurst {
			delete(g.failures, k)
		}
	}
	if len(g.failures) >= maxKeyClients { // all busy: drop the oldest half's worth arbitrarily
		n := 0
		for k := range g.failures {
			delete(g.failures, k)
			if n++; n >= maxKeyClients/2 {
				break
			}
		}
	}
}
