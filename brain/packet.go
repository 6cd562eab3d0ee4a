package brain

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/m1nd/m1nd/rules"
)

// Files returns, by block id, the files at HEAD each block covers,
// sorted; the HEAD tree is listed once however many blocks are asked.
func (s *Store) Files(blocks ...*Block) (map[string][]string, error) {
	_, files, err := s.headFiles()
	if err != nil {
		return nil, err
	}
	out := make(map[string][]string, len(blocks))
	for _, b := range blocks {
		out[b.BlockID] = b.resolve(files)
	}
	return out, nil
}

// Packet composes the mission packet for block id from the current store:
// refused no_store without one, unknown_block for an id it lacks.
func (s *Store) Packet(id, ask string, now time.Time) (string, error) {
	snap, ok, err := s.Snapshot()
	if err != nil {
		return "", err
	}
	if !ok {
		return "", rules.Refuse(rules.NoStore, "")
	}
	b := snap.Block(id)
	if b == nil {
		return "", rules.Refusef(rules.UnknownBlock, "block_id", "this brain has no block %s", rules.Echo(id))
	}
	files, err := s.Files(b)
	if err != nil {
		return "", err
	}
	return ComposePacket(s.Brain, snap, b, files[b.BlockID], ask, now), nil
}

// maxPacketFiles bounds the "Likely files" list of a packet.
const maxPacketFiles = 40

// ComposePacket writes the mission packet for block b: the markdown an
// agent receives (clipboard, direct delivery or a runner), whose sha256 is
// the mission's packet_ref. It is a pure function of its inputs.
func ComposePacket(brainName string, snap *Snapshot, b *Block, files []string, ask string, now time.Time) string {
	var w strings.Builder
	paint := b.Colour(now)
	fmt.Fprintf(&w, "# Mission packet — %s\n\n", b.Name)
	fmt.Fprintf(&w, "Block `%s` (%s, %s) · boundary v%d · contract v%d · %s: %s · store v%d\n\n",
		b.BlockID, b.Kind, b.State, b.BoundaryVersion, b.ContractVersion, paint.Colour, paint.Why, snap.StoreVersion)
	w.WriteString("## What should change?\n\n")
	if ask = strings.TrimSpace(ask); ask == "" {
		ask = "(the owner has not said yet: ask before changing anything)"
	}
	w.WriteString(ask + "\n\n")
	if len(files) > 0 {
		fmt.Fprintf(&w, "## Likely files (%d)\n\n", len(files))
		writeList(&w, files, maxPacketFiles)
		w.WriteString("\n")
	}
	w.WriteString("## Receipts & evidence state\n\n")
	fmt.Fprintf(&w, "- required: %s\n", orNone(strings.Join(b.ReceiptContract.Required, ", ")))
	for _, stored := range b.Receipts {
		var r rules.Receipt
		if json.Unmarshal(stored.Receipt, &r) != nil {
			continue
		}
		status := "passed"
		if failing(&r) {
			status = fmt.Sprintf("failed (exit %d)", *r.Evidence.ExitStatus)
		}
		fmt.Fprintf(&w, "- %s receipt at boundary v%d, %s, imported at store v%d\n", r.Type, r.Scope.BoundaryVersion, status, stored.StoreVersion)
	}
	if len(b.Receipts) == 0 {
		w.WriteString("- no receipt yet\n")
	}
	w.WriteString("\n## Connected systems\n\n")
	if len(b.Sockets) == 0 {
		w.WriteString("- none recorded\n")
	}
	for _, sk := range b.Sockets {
		name := sk.To
		if to := snap.Block(sk.To); to != nil {
			name = fmt.Sprintf("%s (%s)", sk.To, to.Name)
		}
		fmt.Fprintf(&w, "- %s\n", name)
	}
	w.WriteString("\n## Block details\n\n")
	if b.Purpose != "" {
		w.WriteString(b.Purpose + "\n\n")
	}
	for _, m := range b.Membership {
		fmt.Fprintf(&w, "- %s `%s`\n", m.Role, m.Path)
	}
	fmt.Fprintf(&w, "\n---\n\nProve the change with the block's receipt contract; a green gate is merge_wait, never landed.\nComposed by m1nd for brain %s at store v%d, %s.\n", brainName, snap.StoreVersion, now.UTC().Format(time.RFC3339))
	return w.String()
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// maxNamingPaths bounds the member paths a naming packet shows.
const maxNamingPaths = 40

// NamingPacket is what a naming-runner reads to name one block: its id,
// current name and purpose and its member paths (at most 40) — never a
// file's contents. The answer is one line: {"name","purpose"}.
func NamingPacket(b *Block, files []string) string {
	var w strings.Builder
	fmt.Fprintf(&w, "# Name this block\n\nBlock %s, now called %q (%s).\n", b.BlockID, b.Name, b.Purpose)
	fmt.Fprintf(&w, "\n## Member paths (%d)\n\n", len(files))
	writeList(&w, files, maxNamingPaths)
	w.WriteString("\n## Answer\n\nPrint one JSON line last: {\"name\":\"<at most 40 characters>\",\"purpose\":\"<at most 120 characters>\"}.\nPlain prose only: no markup, links, paths, e-mail addresses or keys.\n")
	return w.String()
}

// CurationPacket is what a hand-runner reads to propose candidate_edit ops
// for the whole skeleton.
func CurationPacket(snap *Snapshot, ask string) string {
	var w strings.Builder
	fmt.Fprintf(&w, "# Curate skeleton %s (store v%d)\n\n", snap.Skeleton.SkeletonID, snap.StoreVersion)
	if ask = strings.TrimSpace(ask); ask != "" {
		fmt.Fprintf(&w, "The owner asks: %s\n\n", ask)
	}
	w.WriteString("## Blocks\n\n")
	for _, b := range snap.Blocks {
		fmt.Fprintf(&w, "- %s %q (%s):", b.BlockID, b.Name, b.State)
		for i, m := range b.Membership {
			if i == maxNamingPaths {
				w.WriteString(" …")
				break
			}
			fmt.Fprintf(&w, " %s `%s`", m.Role, m.Path)
		}
		w.WriteString("\n")
	}
	w.WriteString("\n## Answer\n\nPrint one JSON line last: an array of candidate_edit ops (rename, merge, split, move_member, resolve_seam, assign_unmapped). They are applied all or none, and every name and purpose passes the o5 sanitizer.\n")
	return w.String()
}

// writeList writes items as a Markdown list of at most max lines, the
// last saying how many more there were.
func writeList(w *strings.Builder, items []string, max int) {
	for i, item := range items {
		if i == max {
			fmt.Fprintf(w, "- … and %d more\n", len(items)-max)
			return
		}
		fmt.Fprintf(w, "- %s\n", item)
	}
}

// askHeading is the heading of the ask in a mission packet.
const askHeading = "## What should change?"

// AskLine is the first line of the ask in a mission packet (what a merge
// commit is titled by), at most 120 bytes: Ask cut for a subject line.
func AskLine(packet []byte) string { return Ask(packet, 120) }

// TitleBytes caps a mission's title (Ask) where the human reads it: a
// card, the mission view. The page wraps it; a first line longer than
// this is no title.
const TitleBytes = 1000

// Ask is the first line of the ask in a mission packet (what a card is
// titled by): the first line of text under "What should change?", else
// the packet's first line of text that is no heading; "" for none. It is
// one line of plain text, at most max bytes.
func Ask(packet []byte, max int) string {
	lines := strings.Split(string(packet), "\n")
	pick := func(from int) string {
		for _, l := range lines[from:] {
			l = strings.TrimSpace(l)
			if l == "" {
				continue
			}
			if strings.HasPrefix(l, "#") {
				return ""
			}
			return rules.CutBytes(rules.Visible(strings.Join(strings.Fields(l), " ")), max)
		}
		return ""
	}
	for i, l := range lines {
		if strings.TrimSpace(l) == askHeading {
			if ask := pick(i + 1); ask != "" && !strings.HasPrefix(ask, "(") {
				return ask
			}
		}
	}
	for i, l := range lines {
		if t := strings.TrimSpace(l); t != "" && !strings.HasPrefix(t, "#") && !strings.HasPrefix(t, "Block `") {
			return pick(i)
		}
	}
	return ""
}
