package lessons

import (
	"context"
	"io/fs"
	"maps"
	"time"
)

// Watch reloads the lessons in dir whenever a file in it changes, for
// instructors who edit a lesson and reload the page. It polls file sizes and
// modification times every interval (stdlib only, works on every file system)
// and returns when ctx is done.
//
// After a change, a course that loads calls onLoad; one that does not calls
// onError with the *LoadError, and the caller keeps serving the course it
// has. Watch does not load at start: the caller loads first, so that a broken
// folder stops the server from starting. Problems name files under dir
// unless opts.DisplayRoot says otherwise.
//
// Watch compares against the folder as it is when Watch starts; a caller
// that loads first and then starts Watch in a goroutine would miss an edit
// made in between, so such a caller uses NewWatcher before loading.
func Watch(ctx context.Context, dir string, opts Options, interval time.Duration, onLoad func(*Course), onError func(error)) {
	NewWatcher(dir).Run(ctx, opts, interval, onLoad, onError)
}

// Watcher remembers the state of a lessons folder to notice changes.
type Watcher struct {
	dir  string
	fsys fs.FS
	last map[string]fileStamp
}

// NewWatcher notes the folder's state now: call it before loading the
// course, so that an edit made while the course loads is seen as a change.
func NewWatcher(dir string) *Watcher {
	fsys, err := FolderFS(dir)
	if err != nil {
		fsys = unreadableFS{err} // every poll reports why
	}
	last, _ := snapshot(fsys)
	return &Watcher{dir: dir, fsys: fsys, last: last}
}

// Run polls the folder until ctx is done, as Watch describes.
func (w *Watcher) Run(ctx context.Context, opts Options, interval time.Duration, onLoad func(*Course), onError func(error)) {
	if opts.DisplayRoot == "" {
		opts.DisplayRoot = w.dir
	}
	last := w.last
	readFailed := false // report an unreadable folder once, not on every poll
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
		current, err := snapshot(w.fsys)
		if err != nil {
			if !readFailed {
				onError(&LoadError{Problems: []Problem{{File: w.dir, Msg: "cannot read the lessons folder: " + err.Error()}}})
			}
			readFailed, last = true, nil
			continue
		}
		readFailed = false
		if maps.Equal(current, last) {
			continue
		}
		last = current
		course, err := Load(w.fsys, opts)
		if err != nil {
			onError(err)
			continue
		}
		onLoad(course)
	}
}

// fileStamp is what Watch compares to notice a change.
type fileStamp struct {
	size    int64
	modTime time.Time
}

// snapshot stamps every file under the folder (not only lessons: a directive
// may include other files).
func snapshot(fsys fs.FS) (map[string]fileStamp, error) {
	stamps := map[string]fileStamp{}
	err := fs.WalkDir(fsys, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != "." && (d.Name() == "testdata" || d.Name()[0] == '.') {
				return fs.SkipDir
			}
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return nil // removed while walking: the next poll sees it gone
		}
		stamps[path] = fileStamp{info.Size(), info.ModTime()}
		return nil
	})
	return stamps, err
}
