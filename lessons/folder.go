package lessons

import (
	"io/fs"
	"os"
)

// FolderFS is an instructor's lessons folder on disk, read through
// os.OpenRoot: a lesson, or a file it includes (include=PATH), can name only
// files inside the folder. A symlink that leads out of it is refused when
// followed, so a lessons folder cannot show the server's other files. The
// root stays open for the life of the process (the watcher re-reads it).
func FolderFS(dir string) (fs.FS, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	return root.FS(), nil
}

// unreadableFS is a folder that could not be opened: every read says why.
type unreadableFS struct{ err error }

func (u unreadableFS) Open(string) (fs.File, error) { return nil, u.err }
