package gitstore

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
)

// CatFile reads objects through one `git cat-file --batch` process. A git
// hook uses it: objects pushed to a repository wait in a quarantine that
// only git's own environment (GIT_OBJECT_DIRECTORY, ...) points at.
type CatFile struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
}

// NewCatFile starts `git cat-file --batch` in dir with this process's
// environment.
func NewCatFile(dir string) (*CatFile, error) { return newCatFile(dir, nil) }

// newCatFile is NewCatFile with env added to this process's environment.
func newCatFile(dir string, env []string) (*CatFile, error) {
	cmd := exec.Command("git", "cat-file", "--batch")
	cmd.Dir, cmd.Env = dir, append(NoReplaceEnv(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // as every git m1nd runs (GitCmd)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("git cat-file: %w", err)
	}
	return &CatFile{cmd: cmd, in: in, out: bufio.NewReaderSize(out, 64*1024)}, nil
}

// Close ends the git process.
func (c *CatFile) Close() error {
	c.in.Close()
	return c.cmd.Wait()
}

// ReadObject returns an object's type and contents.
func (c *CatFile) ReadObject(h Hash) (ObjectType, []byte, error) {
	if _, err := fmt.Fprintln(c.in, h.String()); err != nil {
		return "", nil, err
	}
	header, err := c.out.ReadString('\n')
	if err != nil {
		return "", nil, err
	}
	fields := strings.Fields(header)
	if len(fields) == 2 && fields[1] == "missing" {
		return "", nil, fmt.Errorf("%s: %w", h, ErrObjectNotFound)
	}
	if len(fields) != 3 {
		return "", nil, fmt.Errorf("git cat-file: unexpected header %q", header)
	}
	size, err := strconv.Atoi(fields[2])
	if err != nil {
		return "", nil, err
	}
	data := make([]byte, size+1) // the contents and a new line
	if _, err := io.ReadFull(c.out, data); err != nil {
		return "", nil, err
	}
	return ObjectType(fields[1]), data[:size], nil
}

// ReadCommit reads and decodes a commit.
func (c *CatFile) ReadCommit(h Hash) (*Commit, error) { return readCommit(c, h) }

// ReadFileInTree returns the file at name (a slash path) in tree.
func (c *CatFile) ReadFileInTree(tree Hash, name string) ([]byte, error) {
	return fileInTree(c, tree, name)
}

// ReadBlob reads a blob's contents.
func (c *CatFile) ReadBlob(h Hash) ([]byte, error) { return readTyped(c, BlobObject, h) }

// TreeEntries reads one tree.
func (c *CatFile) TreeEntries(tree Hash) ([]TreeEntry, error) { return treeEntries(c, tree) }
