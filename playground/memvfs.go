package playground

import (
	"os"
	"sync"
	"unsafe"

	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"
)

// A ledger's bytes live in the process's memory, not in its files. The
// ledger VFS (memVFSName) is SQLite's own unix-excl VFS (walfile.go) with
// six methods of a database or WAL file replaced: read, write, truncate,
// sync, size and close work on a byte slice shared by every connection to
// the file. Everything else is unix-excl's: opening the file, its locks
// (the database file's and the WAL index's, held in the process), the WAL
// index in heap memory, deleting. So SQLite's locking is still SQLite's,
// and TestLocking_DifferentialAgainstWALFiles still compares it with the
// plain unix VFS on real files; what goes is a system call per page read
// and two per WAL frame written (pread and pwrite were a third of a run's
// CPU time: a WAL commit writes each frame's header and page separately,
// and every connection re-reads its pages after another one commits).
//
// The files themselves still exist (unix-excl opens and locks them) but
// keep the content they were created with: a file's bytes are read from it
// when it is first opened and then live in memFiles until SQLite deletes
// the file (a WAL after the last connection's checkpoint) or
// removeLedgerFile removes it.

const memVFSName = "idemlab-mem"

// memFile is one file's content, shared by the connections that have it open.
type memFile struct {
	mu   sync.RWMutex
	data []byte
}

var (
	memFilesMu sync.Mutex
	memFiles   = map[string]*memFile{} // path → content
	memOpenMu  sync.RWMutex
	memOpen    = map[uintptr]*memOpenFile{} // an open sqlite3_file → its content
)

// memOpenFile is one open file: its content and unix-excl's methods, which
// its close still runs.
type memOpenFile struct {
	f    *memFile
	unix uintptr // *sqlite3_io_methods of unix-excl
}

var (
	memVFS      sqlite3.Tsqlite3_vfs
	unixExclVFS uintptr
)

// registerMemVFS registers the ledger VFS: a copy of unix-excl with its own
// open and delete, whose files get memIO.
func registerMemVFS() error {
	tls := libc.NewTLS()
	defer tls.Close()
	name, err := libc.CString("unix-excl")
	if err != nil {
		return err
	}
	defer libc.Xfree(tls, name)
	unixExclVFS = sqlite3.Xsqlite3_vfs_find(tls, name)
	if unixExclVFS == 0 {
		return errNoUnixExcl
	}
	memVFS = *(*sqlite3.Tsqlite3_vfs)(cPointer(unixExclVFS))
	memVFS.FpNext = 0
	if memVFS.FzName, err = libc.CString(memVFSName); err != nil { // kept for the life of the process
		return err
	}
	*(*func(*libc.TLS, uintptr, uintptr, uintptr, int32, uintptr) int32)(unsafe.Pointer(&memVFS.FxOpen)) = memOpenFn
	*(*func(*libc.TLS, uintptr, uintptr, int32) int32)(unsafe.Pointer(&memVFS.FxDelete)) = memDeleteFn
	if rc := sqlite3.Xsqlite3_vfs_register(tls, uintptr(unsafe.Pointer(&memVFS)), 0); rc != sqlite3.SQLITE_OK {
		return errNoUnixExcl
	}
	return nil
}

type memVFSError string

func (e memVFSError) Error() string { return string(e) }

const errNoUnixExcl = memVFSError("ledger VFS: SQLite's unix-excl VFS is missing")

// memContent returns path's content, reading the file on first use.
func memContent(path string) (*memFile, error) {
	memFilesMu.Lock()
	defer memFilesMu.Unlock()
	f := memFiles[path]
	if f == nil {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		f = &memFile{data: data}
		memFiles[path] = f
	}
	return f, nil
}

// dropMemContent forgets path's content (the file is being removed).
func dropMemContent(path string) {
	memFilesMu.Lock()
	delete(memFiles, path)
	memFilesMu.Unlock()
}

func memOpenFn(tls *libc.TLS, _ uintptr, zName uintptr, pFile uintptr, flags int32, pOutFlags uintptr) int32 {
	rc := callUnixOpen(tls, zName, pFile, flags, pOutFlags)
	if rc != sqlite3.SQLITE_OK || zName == 0 || flags&(sqlite3.SQLITE_OPEN_MAIN_DB|sqlite3.SQLITE_OPEN_WAL) == 0 {
		return rc // temporary files and journals stay unix-excl's
	}
	file := (*sqlite3.Tsqlite3_file)(cPointer(pFile))
	methods := memMethods(file.FpMethods)
	if methods == file.FpMethods {
		return rc
	}
	content, err := memContent(libc.GoString(zName))
	if err != nil {
		callClose(tls, pFile, file.FpMethods)
		return sqlite3.SQLITE_CANTOPEN
	}
	of := &memOpenFile{f: content, unix: file.FpMethods}
	memOpenMu.Lock()
	memOpen[pFile] = of
	memOpenMu.Unlock()
	file.FpMethods = methods
	return rc
}

var (
	memIOMu sync.Mutex
	// memIOs are the methods of the ledger VFS's files, one table per
	// table of unix-excl's they were made from (a database file's, and a
	// WAL file's, which takes no locks of its own). An array: SQLite keeps
	// pointers into it.
	memIOs    [4]sqlite3.Tsqlite3_io_methods
	memIOFrom [len(memIOs)]uintptr
)

// memMethods returns the methods for a file unix-excl opened with the
// methods unix: its locks and shared memory, with I/O in memory.
func memMethods(unix uintptr) uintptr {
	memIOMu.Lock()
	defer memIOMu.Unlock()
	i := 0
	for ; i < len(memIOs) && memIOFrom[i] != 0; i++ {
		if memIOFrom[i] == unix {
			return uintptr(unsafe.Pointer(&memIOs[i]))
		}
	}
	if i == len(memIOs) {
		return unix // more kinds of file than unix-excl has: leave it alone
	}
	io := *(*sqlite3.Tsqlite3_io_methods)(cPointer(unix))
	io.FiVersion = min(io.FiVersion, 2) // no xFetch: pages are copied from memory, never mapped
	io.FxFetch, io.FxUnfetch = 0, 0
	*(*func(*libc.TLS, uintptr) int32)(unsafe.Pointer(&io.FxClose)) = memClose
	*(*func(*libc.TLS, uintptr, uintptr, int32, int64) int32)(unsafe.Pointer(&io.FxRead)) = memRead
	*(*func(*libc.TLS, uintptr, uintptr, int32, int64) int32)(unsafe.Pointer(&io.FxWrite)) = memWrite
	*(*func(*libc.TLS, uintptr, int64) int32)(unsafe.Pointer(&io.FxTruncate)) = memTruncate
	*(*func(*libc.TLS, uintptr, int32) int32)(unsafe.Pointer(&io.FxSync)) = memSync
	*(*func(*libc.TLS, uintptr, uintptr) int32)(unsafe.Pointer(&io.FxFileSize)) = memFileSize
	memIOs[i], memIOFrom[i] = io, unix
	return uintptr(unsafe.Pointer(&memIOs[i]))
}

func callUnixOpen(tls *libc.TLS, zName, pFile uintptr, flags int32, pOutFlags uintptr) int32 {
	fn := (*sqlite3.Tsqlite3_vfs)(cPointer(unixExclVFS)).FxOpen
	return (*(*func(*libc.TLS, uintptr, uintptr, uintptr, int32, uintptr) int32)(unsafe.Pointer(&fn)))(tls, unixExclVFS, zName, pFile, flags, pOutFlags)
}

func memDeleteFn(tls *libc.TLS, _ uintptr, zName uintptr, syncDir int32) int32 {
	dropMemContent(libc.GoString(zName))
	fn := (*sqlite3.Tsqlite3_vfs)(cPointer(unixExclVFS)).FxDelete
	return (*(*func(*libc.TLS, uintptr, uintptr, int32) int32)(unsafe.Pointer(&fn)))(tls, unixExclVFS, zName, syncDir)
}

func memOpened(pFile uintptr) *memOpenFile {
	memOpenMu.RLock()
	of := memOpen[pFile]
	memOpenMu.RUnlock()
	return of
}

func memClose(tls *libc.TLS, pFile uintptr) int32 {
	memOpenMu.Lock()
	of := memOpen[pFile]
	delete(memOpen, pFile)
	memOpenMu.Unlock()
	(*sqlite3.Tsqlite3_file)(cPointer(pFile)).FpMethods = of.unix
	return callClose(tls, pFile, of.unix)
}

// callClose closes a file with unix-excl's methods unix.
func callClose(tls *libc.TLS, pFile, unix uintptr) int32 {
	fn := (*sqlite3.Tsqlite3_io_methods)(cPointer(unix)).FxClose
	return (*(*func(*libc.TLS, uintptr) int32)(unsafe.Pointer(&fn)))(tls, pFile)
}

func memRead(_ *libc.TLS, pFile, zBuf uintptr, iAmt int32, iOfst int64) int32 {
	f := memOpened(pFile).f
	buf := unsafe.Slice((*byte)(cPointer(zBuf)), iAmt)
	f.mu.RLock()
	n := 0
	if iOfst < int64(len(f.data)) {
		n = copy(buf, f.data[iOfst:])
	}
	f.mu.RUnlock()
	if n < len(buf) {
		clear(buf[n:]) // SQLite expects the rest zeroed
		return sqlite3.SQLITE_IOERR_SHORT_READ
	}
	return sqlite3.SQLITE_OK
}

func memWrite(_ *libc.TLS, pFile, zBuf uintptr, iAmt int32, iOfst int64) int32 {
	f := memOpened(pFile).f
	src := unsafe.Slice((*byte)(cPointer(zBuf)), iAmt)
	f.mu.Lock()
	if end := iOfst + int64(iAmt); end > int64(len(f.data)) {
		if end > int64(cap(f.data)) {
			grown := make([]byte, end, max(end, 2*int64(cap(f.data))))
			copy(grown, f.data)
			f.data = grown
		} else {
			old := len(f.data)
			f.data = f.data[:end]
			clear(f.data[old:])
		}
	}
	copy(f.data[iOfst:], src)
	f.mu.Unlock()
	return sqlite3.SQLITE_OK
}

func memTruncate(_ *libc.TLS, pFile uintptr, size int64) int32 {
	f := memOpened(pFile).f
	f.mu.Lock()
	if size <= int64(len(f.data)) {
		f.data = f.data[:size]
	} else {
		f.data = append(f.data, make([]byte, size-int64(len(f.data)))...)
	}
	f.mu.Unlock()
	return sqlite3.SQLITE_OK
}

// memSync: the bytes are memory already (and the ledgers run with
// synchronous=off, which changes durability, not locking).
func memSync(*libc.TLS, uintptr, int32) int32 { return sqlite3.SQLITE_OK }

func memFileSize(_ *libc.TLS, pFile, pSize uintptr) int32 {
	f := memOpened(pFile).f
	f.mu.RLock()
	*(*int64)(cPointer(pSize)) = int64(len(f.data))
	f.mu.RUnlock()
	return sqlite3.SQLITE_OK
}

// cPointer is the address of C memory (SQLite's, from modernc.org/libc's
// allocator, outside the Go heap) that SQLite hands over as a uintptr.
func cPointer(p uintptr) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&p)) }
