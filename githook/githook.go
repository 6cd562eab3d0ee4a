package githook

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/m1nd/m1nd/brain"
	"github.com/m1nd/m1nd/chain"
	"github.com/m1nd/m1nd/gitstore"
	"github.com/m1nd/m1nd/laws"
	"github.com/m1nd/m1nd/rules"
)

// The git hooks m1nd installs.
const (
	GitHookReferenceTransaction = "reference-transaction"
	GitHookPreReceive           = "pre-receive"
)

// hookMarker marks a hook script as m1nd's own.
const hookMarker = "# m1nd-hook"

// chainedDir is the folder, beside m1nd's hook, that keeps the hook that
// was there before it: it still runs, first, under its own name (its $0
// ends in that name, as scripts that look at it expect).
const chainedDir = "m1nd-chained"

// legacyChainedSuffix is how m1nd once kept such a hook (name.m1nd-chained
// beside it); installing again moves it into chainedDir.
const legacyChainedSuffix = ".m1nd-chained"

// HooksDir is where git looks for hooks in the worktree repo was opened
// in: core.hooksPath (relative to the worktree root, or to the repository
// when bare; the worktree's own config first) or the common dir's hooks.
func HooksDir(repo *gitstore.Repo) string {
	p, ok := repo.ConfigValue("core", "hooksPath")
	return hooksPathOr(repo, p, ok)
}

// hooksPathOr is the hooks folder core.hooksPath p (set: ok) names, or the
// common dir's hooks.
func hooksPathOr(repo *gitstore.Repo, p string, ok bool) string {
	if ok && strings.TrimSpace(p) != "" {
		p = strings.TrimSpace(p)
		if strings.HasPrefix(p, "~/") {
			if home, err := os.UserHomeDir(); err == nil {
				p = filepath.Join(home, p[2:])
			}
		}
		if !filepath.IsAbs(p) {
			base := repo.WorkTree()
			if base == "" {
				base = repo.CommonDir()
			}
			p = filepath.Join(base, p)
		}
		return p
	}
	return filepath.Join(repo.CommonDir(), "hooks")
}

// hookScript runs a chained earlier hook first (chained, a shell word: its
// path), with the same input, then m1nd, and only when the input names an
// m1nd ref: plain git work stays as fast as it was. reference-transaction
// runs for the prepared, committed and aborted states; only prepared can
// refuse, so the other two start no m1nd at all, and with no chained hook
// they start nothing: the script leaves before reading its input (git
// ignores a hook's closed stdin).
//
// `git pack-refs` (so `git gc`) runs this hook twice for every loose ref
// it prunes, one ref per transaction (git 2.39, measured): at 10k loose
// refs, m1nd started for each was more than a minute. A prune needs no
// m1nd: the script answers it with shell builtins alone (see prunePath),
// which leaves git's own cost of starting any hook, about a millisecond
// per start.
func hookScript(name, command, chained string, args ...string) string {
	read := "input=$(cat)\n"
	if name == GitHookReferenceTransaction {
		read = `[ "$1" = prepared ] || exit 0
` + prunePath + `input=$(printf '%s %s %s\n' "$old" "$new" "$ref"; [ -z "$more" ] || printf '%s\n' "$more"; cat)
` + packingPath
	}
	return fmt.Sprintf(`#!/bin/sh
%s: keeps raw git writes to refs/m1nd/ honest. 'm1nd hooks uninstall' removes it.
chained=%s
if [ -x "$chained" ]; then
	input=$(cat)
	printf '%%s\n' "$input" | "$chained" "$@" || exit $?
%selse
%sfi
case "$input" in
*" refs/m1nd/"*) ;;
%s*) exit 0 ;;
esac
installed=%s
m1nd=$installed
case "$m1nd" in
*/*) [ -x "$m1nd" ] || m1nd=$(command -v m1nd) ;;
*) m1nd=$(command -v "$m1nd") ;;
esac
if [ -z "$m1nd" ]; then
	echo "%s" >&2
	exit 1
fi
printf '%%s\n' "$input" | "$m1nd" hooks run %s "$@"
`, hookMarker, chained, onlyPreparedAfterChain(name), indent(read), wakes(args), shellQuote(command), cannotFind(name), quoteAll(append([]string{name}, args...)))
}

// besideChained is the chained-hook word of a script installed in a hooks
// folder: the hook kept in chainedDir beside it.
func besideChained(name string) string {
	return `"${0%/*}/` + chainedDir + `/` + name + `"`
}

// Script is the hook script m1nd installs as name, running command with
// args: what a forge that manages its repositories' hooks itself (Gitea)
// is given to hold, through its own settings, instead of a file m1nd
// writes.
func Script(name, command string, args ...string) string {
	return hookScript(name, command, besideChained(name), args...)
}

// GiteaManaged reports whether the hooks folder dir is one Gitea manages:
// Gitea writes hooks/<name> as a runner of hooks/<name>.d/ (its own hook
// there is named gitea) and writes them again when it regenerates hooks,
// so a hook m1nd wrote there would not last.
func GiteaManaged(dir string) bool {
	_, err := os.Lstat(filepath.Join(dir, GitHookPreReceive+".d", "gitea"))
	return err == nil
}

// cannotFind is what a hook says when the m1nd it was installed with is
// gone: on a remote, to the pusher, what the server's admin must do (the
// pusher can run nothing there); in a clone, what its owner runs. It goes
// between double quotes in the script, $installed expanded: it holds no
// double quote, backslash, backtick or other dollar.
func cannotFind(name string) string {
	if name == GitHookPreReceive {
		return "m1nd: this push moves refs/m1nd/ refs, and the server's hook that checks them cannot find m1nd (installed as $installed): the server's admin installs m1nd where the server's git runs it (its PATH, or the path above) and runs 'm1nd hooks install --bare' in this repository again; nothing was pushed"
	}
	return "m1nd: this git command moves refs/m1nd/ refs, and the hook that checks them cannot find m1nd (installed as $installed): run 'm1nd init' with the m1nd you use, or 'm1nd hooks uninstall'"
}

// wakes is the case patterns, beyond refs/m1nd/, that make a hook call
// m1nd: the branches a remote protects (--protect NAME in args). A pattern
// that also matches a longer name only wakes m1nd for nothing.
func wakes(args []string) string {
	var b strings.Builder
	for i := 0; i+1 < len(args); i++ {
		if args[i] == protectFlag {
			fmt.Fprintf(&b, "*%s*) ;;\n", shellQuote(" "+laws.ProtectedRef(args[i+1])))
		}
	}
	return b.String()
}

func quoteAll(words []string) string {
	out := make([]string, len(words))
	for i, w := range words {
		out[i] = shellQuote(w)
	}
	return strings.Join(out, " ")
}

// prunePath is the reference-transaction script's answer to `git
// pack-refs` pruning one loose m1nd ref, in shell builtins (no process).
// The input is one line deleting a refs/m1nd/ ref whose loose file holds
// the deleted value, and nobody holds packed-refs.lock. That is a prune and
// nothing else: git's files backend takes packed-refs.lock before the
// prepared hook of every deletion that is not a prune (it must take the ref
// out of packed-refs too) and keeps it while the hook runs, and pack-refs
// has written the value to packed-refs before it prunes (a ref that moved
// since fails git's own compare-and-swap first). Anything else — another
// line, a held lock, a reftable repository — goes to m1nd, whose
// CheckTransaction also reads packed-refs. The script lives in m1nd's own
// hooks folder in the common git dir (GuardDir), so the repository is the
// one two folders up, in every worktree it guards.
const prunePath = `gitdir="${0%/*}/../.."
more=
if IFS=' ' read -r old new ref; then
	case "$new:$ref" in
	*[!0]*:*|:*) ;;
	*:refs/m1nd/*)
		if [ ! -e "$gitdir/packed-refs.lock" ] && [ ! -d "$gitdir/reftable" ] &&
			[ -f "$gitdir/$ref" ] && IFS= read -r loose <"$gitdir/$ref" && [ "$loose" = "$old" ] &&
			! IFS= read -r more && [ -z "$more" ]; then
			exit 0
		fi ;;
	esac
else
	exit 0
fi
`

// packingPath is the reference-transaction script's answer to `git
// pack-refs` writing packed-refs, in shell builtins (no process): every
// line creates a ref in packed-refs (a zero old value) at the value its
// loose file already holds, while packed-refs.lock is held. Such a
// transaction moves no ref: the loose file shadows the packed value and
// holds the same one. An ordinary creation never looks like it: git
// checks, before the hook runs, that a ref it creates does not exist, so
// its loose file cannot hold the new value. Anything else goes to m1nd.
const packingPath = `if [ -e "$gitdir/packed-refs.lock" ] && [ ! -d "$gitdir/reftable" ]; then
	same=1
	while IFS=' ' read -r o n r; do
		case "$o:$n:$r" in
		*[!0]*:*:*|:*|*::*|*:*:) same=; break ;;
		esac
		if [ -f "$gitdir/$r" ] && IFS= read -r v <"$gitdir/$r" && [ "$v" = "$n" ]; then :; else same=; break; fi
	done <<-EOF
$input
EOF
	[ -z "$same" ] || exit 0
fi
`

// onlyPreparedAfterChain: with a chained hook the input is read for it in
// every state, and only then does m1nd leave the states that cannot refuse.
func onlyPreparedAfterChain(name string) string {
	if name == GitHookReferenceTransaction {
		return "\t[ \"$1\" = prepared ] || exit 0\n"
	}
	return ""
}

func indent(s string) string {
	lines := strings.SplitAfter(s, "\n")
	for i, l := range lines {
		if l != "" && l != "\n" {
			lines[i] = "\t" + l
		}
	}
	return strings.Join(lines, "")
}

func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func isOurHook(path string) bool {
	data, err := gitstore.ReadRegular(path, 1<<20)
	return err == nil && strings.Contains(string(data), hookMarker)
}

// InstallGitHook writes m1nd's hook name into dir, calling command with
// args after the hook's name (flags m1nd's hook takes, such as
// --require-passkey). A hook that was there is kept and chained (moved
// into chainedDir, run first under its own name); installing again only
// refreshes m1nd's script, and moves a hook chained the old way
// (name.m1nd-chained) into chainedDir. changed is false when nothing
// moved.
func InstallGitHook(dir, name, command string, args ...string) (changed bool, err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return false, err
	}
	path := filepath.Join(dir, name)
	chained := filepath.Join(dir, chainedDir, name)
	moved, err := moveLegacyChained(path, chained)
	if err != nil {
		return false, err
	}
	script := Script(name, command, args...)
	if old, err := gitstore.ReadRegular(path, 1<<20); err == nil {
		if string(old) == script {
			return moved, nil
		}
		if !strings.Contains(string(old), hookMarker) {
			if _, err := os.Lstat(chained); err == nil {
				return false, fmt.Errorf("%s exists and so does %s: m1nd will not overwrite either; move one away", path, chained)
			}
			if err := os.MkdirAll(filepath.Dir(chained), 0o755); err != nil {
				return false, err
			}
			if err := os.Rename(path, chained); err != nil {
				return false, err
			}
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return false, err
	}
	return true, gitstore.WriteFileAtomic(path, []byte(script), 0o755)
}

// moveLegacyChained moves a hook chained as path.m1nd-chained to chained.
func moveLegacyChained(path, chained string) (bool, error) {
	legacy := path + legacyChainedSuffix
	if _, err := os.Lstat(legacy); err != nil {
		return false, nil
	}
	if _, err := os.Lstat(chained); err == nil {
		return false, fmt.Errorf("%s exists and so does %s: m1nd will not overwrite either; move one away", legacy, chained)
	}
	if err := os.MkdirAll(filepath.Dir(chained), 0o755); err != nil {
		return false, err
	}
	return true, os.Rename(legacy, chained)
}

// UninstallGitHook removes m1nd's hook and puts a chained one back.
func UninstallGitHook(dir, name string) (changed bool, err error) {
	path := filepath.Join(dir, name)
	if !isOurHook(path) {
		return false, nil
	}
	if err := os.Remove(path); err != nil {
		return false, err
	}
	for _, chained := range []string{filepath.Join(dir, chainedDir, name), path + legacyChainedSuffix} {
		if _, err := os.Lstat(chained); err == nil {
			if err := os.Rename(chained, path); err != nil {
				return true, err
			}
			break
		}
	}
	_ = os.Remove(filepath.Join(dir, chainedDir)) // once empty
	return true, nil
}

// SetGitHooks installs (install true, calling command) or removes the
// named git hooks in dir and returns the paths it changed, in order; on an
// error, the paths changed before it. args[name] are the flags that hook
// is called with.
func SetGitHooks(dir string, names []string, install bool, command string, args map[string][]string) ([]string, error) {
	changed := []string{}
	for _, name := range names {
		var did bool
		var err error
		if install {
			did, err = InstallGitHook(dir, name, command, args[name]...)
		} else {
			did, err = UninstallGitHook(dir, name)
		}
		if err != nil {
			return changed, err // it names the hook's path
		}
		if did {
			changed = append(changed, filepath.Join(dir, name))
		}
	}
	return changed, nil
}

// ParseUpdates reads "<old> <new> <ref>" lines (the reference-transaction
// and pre-receive input) for refs under refs/m1nd/.
func ParseUpdates(r io.Reader) ([]laws.Update, error) {
	return ParseRefUpdates(r, func(ref string) bool { return strings.HasPrefix(ref, chain.RefRoot) })
}

// ParseRefUpdates reads "<old> <new> <ref>" lines for the refs keep says
// yes to; the others are skipped unparsed (every commit of a repository
// passes through reference-transaction).
func ParseRefUpdates(r io.Reader, keep func(ref string) bool) ([]laws.Update, error) {
	var out []laws.Update
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		if len(f) != 3 {
			return nil, fmt.Errorf("unexpected hook input line %q", sc.Text())
		}
		if !keep(f[2]) {
			continue
		}
		old, err1 := gitstore.ParseHash(f[0])
		new, err2 := gitstore.ParseHash(f[1])
		if err := errors.Join(err1, err2); err != nil {
			return nil, fmt.Errorf("hook input line %q: %w", sc.Text(), err)
		}
		out = append(out, laws.Update{Old: old, New: new, Ref: f[2]})
	}
	return out, sc.Err()
}

// CheckTransaction is the reference-transaction hook in its prepared
// state: every m1nd ref the transaction moves must keep its chain's laws,
// judged by kinds (nil: laws.Shipped).
//
// git reports the old value as zero when the writer gave none (`git
// update-ref REF NEW`), so a zero old value is read from the repository.
// `git pack-refs` shows up as a write of each ref's own value to
// packed-refs and then a deletion, with its old value, of a loose file that
// packed-refs now holds; a real deletion of that ref is refused.
//
// packed-refs is read at most once per transaction: parsing it is O(refs),
// and a transaction may move thousands of refs.
func CheckTransaction(repo *gitstore.Repo, updates []laws.Update, kinds chain.Kinds) ([]*laws.RefFault, error) {
	refs := &txRefs{repo: repo}
	// The store and the keys are read through git's own ref order; one that
	// cannot be read fails the transaction rather than reading as none (no
	// keys would let terminal gestures through).
	// Every commit a transaction brings is judged as new: the tray's old
	// human-ui claim is refused, and a gesture needs its proof, or the place
	// in history a key change anchored (brain.KeysAt).
	judge, err := laws.ForTransaction(repo.RuntimeDir(), lawHeads(updates, repo.ReadRef))
	if err != nil {
		return nil, err
	}
	judge.Kinds = kinds
	// pack-refs writes packed-refs in a transaction of its own, each line
	// stating no old value and the value it read. While packed-refs.lock is
	// held, a line whose ref has a loose file of another value moves
	// nothing: the loose file (moved by a post since pack-refs read it)
	// shadows the packed value, and git will leave it in place.
	_, err = os.Lstat(filepath.Join(repo.CommonDir(), "packed-refs.lock"))
	packedWrite := err == nil
	var faults []*laws.RefFault
	for _, u := range updates {
		stated := u.Old
		if u.Old.IsZero() {
			if packedWrite && !u.New.IsZero() {
				if _, inLoose, err := repo.LooseRef(u.Ref); err == nil && inLoose {
					continue
				}
			}
			if cur, ok := refs.current(u.Ref); ok {
				u.Old = cur
			}
		}
		judge.Packing = func(u laws.Update) bool { return refs.packing(stated, u) }
		if f := judge.Check(repo, u); f != nil {
			faults = append(faults, f)
		}
	}
	return faults, nil
}

// txRefs reads refs for one CheckTransaction. It keeps packed-refs as
// first read, error included, so the transaction parses it once at most.
type txRefs struct {
	repo      *gitstore.Repo
	packed    map[string]gitstore.Hash
	packedErr error
}

// packedRefs is packed-refs, read on first use.
func (t *txRefs) packedRefs() (map[string]gitstore.Hash, error) {
	if t.packed == nil && t.packedErr == nil {
		t.packed, t.packedErr = t.repo.PackedRefs()
	}
	return t.packed, t.packedErr
}

// current is the ref's value as git's ReadRef order has it: the loose
// file, else packed-refs.
func (t *txRefs) current(name string) (gitstore.Hash, bool) {
	if h, ok, err := t.repo.LooseRef(name); err != nil || ok {
		return h, err == nil
	}
	p, err := t.packedRefs()
	h, ok := p[name]
	return h, err == nil && ok
}

// packing reports whether the deletion u, whose writer stated the old
// value stated, is pack-refs pruning a loose file packed-refs now holds at
// the same value: such a deletion moves nothing.
func (t *txRefs) packing(stated gitstore.Hash, u laws.Update) bool {
	if stated.IsZero() {
		return false
	}
	loose, inLoose, err := t.repo.LooseRef(u.Ref)
	if err != nil || (inLoose && loose != u.Old) {
		return false
	}
	p, err := t.packedRefs()
	if err != nil || p[u.Ref] != u.Old {
		return false
	}
	if inLoose {
		return true // the loose copy of the packed value goes: nothing moves
	}
	return t.prunedAlready(u)
}

// prunedAlready is packing for a deletion whose loose file is gone.
func (t *txRefs) prunedAlready(u laws.Update) bool {
	// The loose file is gone already (another pack-refs pruned it):
	// this removes nothing, unless the deletion is real and takes
	// the ref out of packed-refs too — then its git holds
	// packed-refs.lock with the ref left out of it. A pack-refs
	// writing it keeps the ref at the same value.
	pending, locked, err := t.repo.PackedRefsLock()
	if err != nil {
		return false
	}
	if !locked || pending[u.Ref] == u.Old {
		return true
	}
	// The lock may be another pack-refs's, read mid-write. The git
	// that deletes this ref for real is ours (it holds the ref's
	// lock, so no other git can): it keeps packed-refs.lock while
	// this hook runs. Another's goes within moments.
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
		if _, locked, err := t.repo.PackedRefsLock(); err != nil {
			return false
		} else if !locked {
			p, err := t.repo.PackedRefs()
			return err == nil && p[u.Ref] == u.Old
		}
	}
	return false
}

// PushPolicy is what a remote's admin chose for its pre-receive.
type PushPolicy struct {
	// RequirePasskey refuses every terminal gesture, before the brain's
	// first key too (hooks install --bare --require-passkey): a team's
	// setting, where every human gesture is signed in a tray.
	RequirePasskey bool
	// Protect names the branches a push may move only to a tree the gate
	// of a landed mission passed on (hooks install --bare --protect NAME).
	Protect []string
	// TrustKeys are the fingerprints (brain.ParseFingerprint's form) of the
	// first key sets the remote takes (hooks install --bare --trust-key
	// FP): the team's, never the first pusher's. With none, the remote
	// takes no first key set at all.
	TrustKeys []string
	// Kinds are the kinds judged (nil: laws.Shipped).
	Kinds chain.Kinds
}

// The pre-receive's flags for a policy (`m1nd hooks run pre-receive`).
const (
	requirePasskeyFlag = "--require-passkey"
	protectFlag        = "--protect"
	trustKeyFlag       = "--trust-key"
)

// HookArgs are the flags the pre-receive script calls `m1nd hooks run
// pre-receive` with to keep this policy.
func (p PushPolicy) HookArgs() []string {
	var args []string
	if p.RequirePasskey {
		args = append(args, requirePasskeyFlag)
	}
	for _, b := range p.Protect {
		args = append(args, protectFlag, b)
	}
	for _, fp := range p.TrustKeys {
		args = append(args, trustKeyFlag, strings.ReplaceAll(fp, " ", ""))
	}
	return args
}

// FirstKeys judges a push that creates refs/m1nd/keys on a remote: its
// first key set is taken only when it is one the admin trusts (TrustKeys,
// by the set's fingerprint), so an agent that pushes a key set of its own
// first squats nothing. nil when u is not such a creation, or its first
// set is trusted.
func (p PushPolicy) FirstKeys(objs gitstore.Objects, u laws.Update) *laws.RefFault {
	if u.Ref != brain.KeysRef || !u.Old.IsZero() || u.New.IsZero() {
		return nil
	}
	first, err := brain.FirstSet(objs, u.New)
	if err != nil {
		return &laws.RefFault{Ref: u.Ref, Commit: u.New.String(), Code: string(rules.InvalidLetter), Lesson: err.Error()}
	}
	fp := first.Fingerprint()
	if slices.Contains(p.TrustKeys, fp) {
		return nil
	}
	lesson := fmt.Sprintf("this remote takes only the first key set its admin trusts, and this one (%s) is not it: ", first.Named())
	if len(p.TrustKeys) == 0 {
		lesson += "it trusts none yet; its admin runs m1nd hooks install --bare --trust-key 'FINGERPRINT' there, with the team's key set fingerprint (m1nd brain keys shows it in the clone that registered the first key)"
	} else {
		lesson += "it trusts " + strings.Join(p.TrustKeys, ", ") + "; the team's first key set is pushed by the clone that registered it"
	}
	return &laws.RefFault{Ref: u.Ref, Commit: u.New.String(), Code: string(rules.HumanGestureRequired), Lesson: lesson}
}

// Keeps reports whether a pushed ref is the pre-receive's business under
// this policy: an m1nd ref, or a protected branch.
func (p PushPolicy) Keeps(ref string) bool {
	return strings.HasPrefix(ref, chain.RefRoot) || p.protected(ref) != ""
}

// protected is the protected branch ref names, "" for none.
func (p PushPolicy) protected(ref string) string {
	for _, b := range p.Protect {
		if ref == laws.ProtectedRef(b) {
			return b
		}
	}
	return ""
}

// CheckPush is the pre-receive hook: the pushed objects are read through
// git (they wait in its quarantine) and every m1nd ref must keep its laws.
// Every pushed commit is judged as new. A protected branch (policy.Protect)
// may move only to a gated tree, judged against the store as the push
// leaves it (laws.CheckProtected).
func CheckPush(dir string, updates []laws.Update, policy PushPolicy) ([]*laws.RefFault, error) {
	if len(updates) == 0 {
		return nil, nil
	}
	objs, err := gitstore.NewCatFile(dir)
	if err != nil {
		return nil, err
	}
	defer objs.Close()
	repo, err := gitstore.Open(dir)
	if err != nil {
		return nil, err
	}
	defer repo.Close()
	judge, err := laws.ForTransaction("", lawHeads(updates, repo.ReadRef))
	if err != nil {
		return nil, err
	}
	judge.RequirePasskey, judge.Kinds = policy.RequirePasskey, policy.Kinds
	var faults []*laws.RefFault
	for _, u := range updates {
		f := policy.FirstKeys(objs, u)
		switch branch := policy.protected(u.Ref); {
		case f != nil:
		case branch != "":
			f = judge.CheckProtected(objs, u, branch)
		default:
			f = judge.Check(objs, u)
		}
		if f != nil {
			faults = append(faults, f)
		}
	}
	return faults, nil
}

// lawHeads is the head function of laws.SetHeads once updates are
// applied: the value an update moves a ref to, else its value now. A
// landed letter, a gesture or a deletion of a folded mission moved in the
// same transaction as the store, the keys or the archive is judged
// against their new values, whose commits are judged in the same pass.
func lawHeads(updates []laws.Update, read func(string) (gitstore.Hash, bool, error)) func(string) (gitstore.Hash, error) {
	return func(ref string) (gitstore.Hash, error) {
		for _, u := range updates {
			if u.Ref == ref {
				return u.New, nil
			}
		}
		h, _, err := read(ref)
		return h, err
	}
}
