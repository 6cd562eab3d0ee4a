package gitstore

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
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
func NewCatFile(dir string) (*CatFile, error) {
	cmd := exec.Command("git", "cat-file", "--batch")
	cmd.Dir, cmd.Env = dir, NoReplaceEnv()
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

// BatchFiles reads the file at path in each of commits with one `git
// cat-file --batch` process, every request written before the first answer
// is read (git's own pipeline: one process, no round trip per object). It
// is the cold read of many documents at once; an object that is missing
// is an error naming it.
func BatchFiles(ctx context.Context, dir string, commits []Hash, path string) ([][]byte, error) {
	if len(commits) == 0 {
		return nil, nil
	}
	cmd := exec.CommandContext(ctx, "git", "cat-file", "--batch")
	cmd.Dir, cmd.Env = dir, NoReplaceEnv()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	outPipe, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("git cat-file: %w", err)
	}
	go func() {
		w := bufio.NewWriterSize(in, 64*1024)
		for _, h := range commits {
			w.WriteString(h.String())
			w.WriteByte(':')
			w.WriteString(path)
			w.WriteByte('\n')
		}
		w.Flush()
		in.Close()
	}()
	out := bufio.NewReaderSize(outPipe, 256*1024)
	files := make([][]byte, len(commits))
	var readErr error
	for i, h := range commits {
		header, err := out.ReadString('\n')
		if err != nil {
			readErr = fmt.Errorf("git cat-file: %s:%s: %w", h, path, err)
			break
		}
		fields := strings.Fields(header)
		if len(fields) != 3 {
			readErr = fmt.Errorf("%s:%s: %w", h, path, ErrObjectNotFound)
			break
		}
		size, err := strconv.Atoi(fields[2])
		if err != nil {
			readErr = fmt.Errorf("git cat-file: unexpected header %q", header)
			break
		}
		data := make([]byte, size+1)
		if _, err := io.ReadFull(out, data); err != nil {
			readErr = fmt.Errorf("git cat-file: %s:%s: %w", h, path, err)
			break
		}
		files[i] = data[:size]
	}
	if readErr != nil {
		cmd.Process.Kill()
		cmd.Wait()
		return nil, readErr
	}
	if err := cmd.Wait(); err != nil {
		return nil, fmt.Errorf("git cat-file: %v: %s", err, strings.TrimSpace(stderr.String()))
	}
	return files, nil
}
