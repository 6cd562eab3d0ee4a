package ops

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/m1nd/m1nd/brain"
	"github.com/m1nd/m1nd/chain"
	"github.com/m1nd/m1nd/gitstore"
	"github.com/m1nd/m1nd/internal/runs"
)

// A card is titled by its ask's first line: two missions on one block
// look different. The ask lives in the packet a runner here was given
// (runs.SidePacket); a mission no runner here ran has no title, and a
// card falls back to its block's name.

// titleMemo remembers each packet's ask line by the packet's size and
// modification time: a packet is written once, when its run begins.
type titleMemo struct {
	mu    sync.Mutex
	known map[string]titleSeen
}

type titleSeen struct {
	stamp string
	title string
}

// Titles is the ask line of each mission of heads whose packet this
// machine keeps, by mission id.
func (b *Flows) Titles(heads []*chain.Head) (map[string]string, error) {
	out := map[string]string{}
	dir := runs.SideDir(b.repo.RuntimeDir())
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return out, nil
	}
	if err != nil {
		return nil, fmt.Errorf("titles: %w", err)
	}
	packets := map[string]fs.DirEntry{}
	for _, e := range entries {
		if id, ok := strings.CutSuffix(e.Name(), ".packet.md"); ok && chain.ValidMissionID(id) {
			packets[id] = e
		}
	}
	for _, h := range heads {
		e, ok := packets[h.MissionID]
		if !ok {
			continue
		}
		if title := b.title(filepath.Join(dir, e.Name()), e); title != "" {
			out[h.MissionID] = title
		}
	}
	return out, nil
}

// title is one packet's ask line, read once per size and time; "" when it
// cannot be read.
func (b *Flows) title(path string, e fs.DirEntry) string {
	fi, err := e.Info()
	if err != nil || !fi.Mode().IsRegular() {
		return ""
	}
	stamp := fmt.Sprintf("%d %d", fi.Size(), fi.ModTime().UnixNano())
	b.titles.mu.Lock()
	seen, ok := b.titles.known[path]
	b.titles.mu.Unlock()
	if ok && seen.stamp == stamp {
		return seen.title
	}
	packet, err := readHead(path, packetCap)
	if err != nil {
		return ""
	}
	title := brain.Ask(packet, brain.TitleBytes)
	b.titles.mu.Lock()
	if b.titles.known == nil || len(b.titles.known) > 4096 {
		b.titles.known = map[string]titleSeen{}
	}
	b.titles.known[path] = titleSeen{stamp, title}
	b.titles.mu.Unlock()
	return title
}

// readHead reads at most limit bytes from the start of path.
func readHead(path string, limit int64) ([]byte, error) {
	f, err := gitstore.OpenRuntime(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, limit))
}
