// An HTTP endpoint made safe to retry with an Idempotency-Key header. Keys
// belong to the caller that sent them: the first request with a key does the
// work and stores the response; a retry gets the stored response; the same key
// with a different body is refused; a retry that arrives while the first is
// still running is told to wait; and the first request may store its response
// only while it still holds the lock it took.
package main

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	_ "modernc.org/sqlite"
)

const schema = `
CREATE TABLE idempotency_keys (
	caller        TEXT NOT NULL,    -- the authenticated account that chose the key
	key           TEXT NOT NULL,
	request_hash  TEXT NOT NULL,    -- what the first request asked for
	locked_at     INTEGER,          -- set while a request is working on it
	response_code INTEGER,          -- set when it has finished
	response_body TEXT,
	created_at    INTEGER NOT NULL, -- for expiry: prune after, say, 24 hours
	PRIMARY KEY (caller, key)       -- two callers may pick the same key
);
CREATE TABLE payments (id INTEGER PRIMARY KEY, caller TEXT NOT NULL, body TEXT NOT NULL);`

const lockTimeout = 90 * time.Second // a lock older than this was abandoned

type server struct {
	db     *sql.DB
	now    func() time.Time
	tokens map[string]string // bearer token -> account
	// beforeWork lets the demo pause a request mid-flight; nil in production.
	beforeWork func(key string)
}

func (s *server) createPayment(w http.ResponseWriter, r *http.Request) {
	caller, ok := s.tokens[strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")]
	if !ok {
		http.Error(w, "unknown caller", http.StatusUnauthorized)
		return
	}
	key := r.Header.Get("Idempotency-Key")
	if key == "" || len(key) > 255 {
		http.Error(w, "an Idempotency-Key header of 1 to 255 characters is required", http.StatusBadRequest)
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, "cannot read body", http.StatusBadRequest)
		return
	}
	sum := sha256.Sum256([]byte(r.Method + " " + r.URL.Path + "\n" + string(body)))
	hash := hex.EncodeToString(sum[:])
	ctx := r.Context()
	now := s.now().Unix()

	// Phase 1: claim the key. The primary key (caller, key) decides who is first.
	res, err := s.db.ExecContext(ctx, `
		INSERT INTO idempotency_keys (caller, key, request_hash, locked_at, created_at)
		VALUES (?, ?, ?, ?, ?) ON CONFLICT (caller, key) DO NOTHING`, caller, key, hash, now, now)
	if err != nil {
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	if n, _ := res.RowsAffected(); n == 0 {
		s.answerRetry(ctx, w, caller, key, hash, now)
		return
	}

	// Phase 2: the work, here a payment row. A real handler would also send
	// the key on to any provider it calls.
	if s.beforeWork != nil {
		s.beforeWork(key)
	}
	if err := s.finish(ctx, w, caller, key, now, string(body)); err != nil {
		// Nothing committed, so there is nothing to replay: give the key back
		// (only if this request still holds it) and let the client retry.
		s.db.ExecContext(ctx, `DELETE FROM idempotency_keys
			 WHERE caller = ? AND key = ? AND locked_at = ?`, caller, key, now)
		http.Error(w, "internal error; retry with the same key", http.StatusInternalServerError)
	}
}

// errLockLost means another request took the key over while this one worked.
var errLockLost = errors.New("lock on the key was taken over")

// finish does the work and stores the response in one transaction, so a
// stored response always means the work committed. The UPDATE is fenced on
// the lock this request took (locked_at = lockedAt): if a later request has
// taken a stale lock over, it matches no row, and the work rolls back rather
// than being done twice.
func (s *server) finish(ctx context.Context, w http.ResponseWriter, caller, key string, lockedAt int64, body string) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	res, err := tx.ExecContext(ctx, `INSERT INTO payments (caller, body) VALUES (?, ?)`, caller, body)
	if err != nil {
		return err
	}
	id, _ := res.LastInsertId()
	response := fmt.Sprintf(`{"payment":"pay_%d"}`, id)
	res, err = tx.ExecContext(ctx, `
		UPDATE idempotency_keys SET locked_at = NULL, response_code = 201, response_body = ?
		 WHERE caller = ? AND key = ? AND locked_at = ?`, response, caller, key, lockedAt)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return errors.Join(errLockLost, err)
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	w.WriteHeader(http.StatusCreated)
	io.WriteString(w, response)
	return nil
}

// answerRetry handles a key that this caller has already used.
func (s *server) answerRetry(ctx context.Context, w http.ResponseWriter, caller, key, hash string, now int64) {
	var storedHash string
	var lockedAt, code sql.NullInt64
	var body sql.NullString
	err := s.db.QueryRowContext(ctx, `
		SELECT request_hash, locked_at, response_code, response_body
		  FROM idempotency_keys WHERE caller = ? AND key = ?`, caller, key).Scan(&storedHash, &lockedAt, &code, &body)
	if err != nil {
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	switch {
	case storedHash != hash:
		http.Error(w, "this key was used for a different request", http.StatusUnprocessableEntity)
	case code.Valid:
		w.Header().Set("Idempotent-Replayed", "true")
		w.WriteHeader(int(code.Int64))
		io.WriteString(w, body.String)
	case now-lockedAt.Int64 < int64(lockTimeout/time.Second):
		w.Header().Set("Retry-After", "1")
		http.Error(w, "a request with this key is in progress", http.StatusConflict)
	default:
		// The first request died holding the lock. A real service would take
		// the lock over with UPDATE … SET locked_at = :now WHERE locked_at = :old
		// and resume; finish's fence then stops the old request if it wakes.
		http.Error(w, "stale lock; recovery not shown here", http.StatusServiceUnavailable)
	}
}

func main() {
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	if _, err := db.Exec(schema); err != nil {
		log.Fatal(err)
	}
	entered, release := make(chan struct{}), make(chan struct{})
	s := &server{db: db, now: func() time.Time { return time.Unix(1767225600, 0) },
		tokens: map[string]string{"tok-shop": "acct_shop", "tok-cafe": "acct_cafe"}}
	s.beforeWork = func(key string) {
		if key == "k-slow" {
			close(entered) // tell the demo we are mid-flight
			<-release
		}
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /payments", s.createPayment)
	srv := httptest.NewServer(mux)
	defer srv.Close()

	post := func(token, key, body string) string {
		req, err := http.NewRequest("POST", srv.URL+"/payments", strings.NewReader(body))
		if err != nil {
			log.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+token)
		if key != "" {
			req.Header.Set("Idempotency-Key", key)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			log.Fatal(err)
		}
		defer resp.Body.Close()
		out, _ := io.ReadAll(resp.Body)
		replayed := ""
		if resp.Header.Get("Idempotent-Replayed") != "" {
			replayed = " (replayed)"
		}
		return fmt.Sprintf("%d %s%s", resp.StatusCode, strings.TrimSpace(string(out)), replayed)
	}

	fmt.Println("shop, first request: ", post("tok-shop", "k-1", `{"amount":100}`))
	fmt.Println("shop, retry:         ", post("tok-shop", "k-1", `{"amount":100}`))
	fmt.Println("shop, k-1, new body: ", post("tok-shop", "k-1", `{"amount":200}`))
	fmt.Println("cafe, also k-1:      ", post("tok-cafe", "k-1", `{"amount":7}`))
	fmt.Println("shop, no key:        ", post("tok-shop", "", `{"amount":100}`))

	slow := make(chan string)
	go func() { slow <- post("tok-shop", "k-slow", `{"amount":5}`) }()
	<-entered
	fmt.Println("retry while running: ", post("tok-shop", "k-slow", `{"amount":5}`))
	close(release)
	fmt.Println("slow first request:  ", <-slow)

	var payments int
	if err := db.QueryRow(`SELECT count(*) FROM payments`).Scan(&payments); err != nil {
		log.Fatal(err)
	}
	fmt.Println("payments created:    ", payments)
}

// Output:
// shop, first request:  201 {"payment":"pay_1"}
// shop, retry:          201 {"payment":"pay_1"} (replayed)
// shop, k-1, new body:  422 this key was used for a different request
// cafe, also k-1:       201 {"payment":"pay_2"}
// shop, no key:         400 an Idempotency-Key header of 1 to 255 characters is required
// retry while running:  409 a request with this key is in progress
// slow first request:   201 {"payment":"pay_3"}
// payments created:     3
