package playground

import (
	"database/sql/driver"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"

	"modernc.org/sqlite"
)

// Ledgers are real SQLite database files in WAL mode, the mode production
// SQLite applications run in, so that locking is SQLite's own: readers never
// wait, a read transaction sees its snapshot, one writer at a time, and a
// transaction that read before another's commit cannot write
// (SQLITE_BUSY_SNAPSHOT). The in-memory memdb VFS cannot do WAL: it locks
// like a rollback journal, where a reader waits for a writer's commit.
//
// The files live in a directory private to the process, on tmpfs
// (/dev/shm) where there is one, so they are memory, not the server's disk;
// each ledger's files are removed when the ledger closes. A new ledger is
// the scenario's template image written to a new file (a few KiB), which is
// cheaper than a backup. Past its creation a file's bytes are read and
// written in the process's memory (memvfs.go), not through system calls.

// ledgerDir is the process's private directory for ledger files.
var ledgerDir = sync.OnceValues(func() (string, error) {
	parent := os.TempDir()
	if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() {
		parent = "/dev/shm"
	}
	if err := registerMemVFS(); err != nil {
		return "", err
	}
	dir, err := os.MkdirTemp(parent, "idemlab-ledgers-")
	if err != nil {
		return "", fmt.Errorf("ledger directory: %w", err)
	}
	// SQLite names a file by its path with symbolic links resolved: the
	// ledger VFS (memvfs.go) keeps its content under that name.
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	return dir, nil
})

// walImage turns a serialized database into one that opens in WAL mode:
// bytes 18 and 19 of the header are the read and write format versions, 2
// meaning WAL.
func walImage(image []byte) []byte {
	out := append([]byte(nil), image...)
	if len(out) > 19 {
		out[18], out[19] = 2, 2
	}
	return out
}

// newLedgerFile writes image to a new file in the ledger directory and
// returns its path.
func newLedgerFile(kind string, image []byte) (string, error) {
	dir, err := ledgerDir()
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, kind+"-"+strconv.FormatInt(memdbSeq.Add(1), 10)+".db")
	if err := os.WriteFile(path, image, 0o600); err != nil {
		return "", fmt.Errorf("ledger file: %w", err)
	}
	return path, nil
}

// removeLedgerFile removes a ledger's database, WAL and shared-memory files.
func removeLedgerFile(path string) {
	for _, suffix := range []string{"", "-wal", "-shm", "-journal"} {
		os.Remove(path + suffix)
		dropMemContent(path + suffix)
	}
}

// fileURI is the driver's name for a ledger file, with the VFS and the
// pragmas every connection to it gets. The ledger VFS (memvfs.go) is
// unix-excl with the bytes in memory. The unix-excl VFS is SQLite's own
// unix VFS holding the file locked against other processes (no process but
// this one opens a ledger) and keeping the WAL index in the heap of the
// process instead of a mapped -shm file: the connections of a ledger still
// lock each other exactly as in WAL mode (TestLocking_DifferentialAgainstWALFiles
// compares them with the plain unix VFS), without a fcntl system call per
// lock taken or released. A lock conflict comes back at once as SQLITE_BUSY
// (the scheduler decides what runs next), and no fsync (the file is
// memory and dies with the run; synchronous changes durability, not
// locking). A commit that leaves 32 frames or more in the WAL checkpoints
// it (SQLite's default is 1000): a pooled ledger's WAL, which commits keep
// growing, stays at about 130 KiB of memory instead of 4 MiB, and the run
// is cheaper for it (memory that is reused, not grown); checkpoints change
// no statement's answer (TestLocking_DifferentialAgainstWALFiles compares
// with files at the default).
func fileURI(path string) string {
	return "file:" + path + "?vfs=" + memVFSName + "&_pragma=busy_timeout(0)&_pragma=synchronous(off)&_pragma=wal_autocheckpoint(32)"
}

// copyPages copies every page of the database at uri into c's database
// (restore) or of c's database into the one at uri (!restore), with
// SQLite's backup API.
func copyPages(c driver.Conn, uri string, restore bool) error {
	if u, ok := c.(interface{ Unwrap() driver.Conn }); ok {
		c = u.Unwrap() // a sandboxed connection
	}
	bc, ok := c.(interface {
		NewRestore(string) (*sqlite.Backup, error)
		NewBackup(string) (*sqlite.Backup, error)
	})
	if !ok {
		return fmt.Errorf("the sqlite connection cannot copy pages")
	}
	var b *sqlite.Backup
	var err error
	if restore {
		b, err = bc.NewRestore(uri)
	} else {
		b, err = bc.NewBackup(uri)
	}
	if err != nil {
		return err
	}
	_, err = b.Step(-1)
	if ferr := b.Finish(); err == nil {
		err = ferr
	}
	return err
}
