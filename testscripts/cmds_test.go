package testscripts

// The scenarios' own commands, written in Go so that no script needs curl,
// sed or cut to read JSON, nor a shell loop that sleeps while it polls:
//
//	jsonobj FILE [KEY...]               one JSON object, with these keys
//	owner GET|POST PATH [BODY-FILE]     talk to the running owner
//	jsonget [-env NAME] FILE PATH...    read values out of a JSON document
//	waitphase [-timeout D] MISSION PHASE
//	waitfor [-timeout D] exists FILE | listen HOST:PORT | owner | runner ID
//	spawnwithin [-timeout D] LIMIT SINCE-FILE SPAWN-ARGS...
//	passkey NAME register | passkey NAME sign OPTIONS-FILE
//	canonical FILE                      a mission letter's canonical bytes
//	waitqueue [-timeout D] MISSION STATE    until the landing queue says STATE
//	approvepins [CONFIG...]             approve runners.toml's build runners, as at a terminal
//
// Each is registered in Params.Cmds (see TestScripts). jsonget also comes
// as jsonval, a program on PATH (see TestMain), for the shell helpers that
// loop, where a script command cannot run.

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/m1nd/m1nd/brain"
	"github.com/m1nd/m1nd/chain"
	"github.com/m1nd/m1nd/gitstore"
	"github.com/m1nd/m1nd/internal/secret"
	"github.com/m1nd/m1nd/internal/trayclient"
	"github.com/m1nd/m1nd/ops"
	"github.com/m1nd/m1nd/rules"
	"github.com/m1nd/m1nd/rules/rulestest"
	"github.com/m1nd/m1nd/runners"
	"github.com/m1nd/m1nd/tray"
)

// scriptCmds are the commands every scenario may use.
var scriptCmds = map[string]func(*testscript.TestScript, bool, []string){
	"jsonobj":     cmdJSONObj,
	"jsonget":     cmdJSONGet,
	"jsonset":     cmdJSONSet,
	"owner":       cmdOwner,
	"waitphase":   cmdWaitPhase,
	"waitfor":     cmdWaitFor,
	"spawnwithin": cmdSpawnWithin,
	"passkey":     cmdPasskey,
	"canonical":   cmdCanonical,
	"waitqueue":   cmdWaitQueue,
	"approvepins": cmdApprovePins,
}

// defaultWait bounds every wait that is given no -timeout. It is generous
// because the machine may be busy; a wait that succeeds returns as soon as
// its condition holds.
const defaultWait = 30 * time.Second

// pollEvery is how often a wait looks again.
const pollEvery = 50 * time.Millisecond

// cmdJSONObj implements `[!] jsonobj FILE [KEY...]`: FILE (or stdout/stderr
// of the last command) holds exactly one JSON object, nothing before or
// after it but white space, with every KEY at its top level. Regexps can
// only say a line looks like JSON; this says it parses.
func cmdJSONObj(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 1 {
		ts.Fatalf("usage: jsonobj FILE [KEY...]")
	}
	err := checkJSONObj([]byte(ts.ReadFile(args[0])), args[1:])
	switch {
	case err != nil && !neg:
		ts.Fatalf("%s: %v", args[0], err)
	case err == nil && neg:
		ts.Fatalf("%s: unexpectedly one JSON object with keys %q", args[0], args[1:])
	}
}

func checkJSONObj(data []byte, keys []string) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	var obj map[string]json.RawMessage
	if err := dec.Decode(&obj); err != nil {
		return fmt.Errorf("not a JSON object: %v", err)
	}
	if obj == nil {
		return fmt.Errorf("not a JSON object: null")
	}
	if _, err := dec.Token(); err != io.EOF {
		return fmt.Errorf("something after the object")
	}
	for _, k := range keys {
		if _, ok := obj[k]; !ok {
			return fmt.Errorf("no top-level key %q", k)
		}
	}
	return nil
}

// cmdOwner implements `[!] owner GET|POST PATH [BODY-FILE]`: one request to
// the owner that runs for the repository of the script's current
// directory, found through its runtime dir's serve.json with
// trayclient.Find (no owner, or a dead one, fails the script, negated or
// not). The request goes to the loopback address the owner recorded, so
// its Host is the one the owner checks; a POST carries the owner's own
// Origin (as the tray's page would), Content-Type application/json and
// the bytes of BODY-FILE (a file, or stdout/stderr of the last command).
// The reply's body is the command's stdout, and its stderr is one line
// `status N`. A status outside 2xx fails the command, so `! owner ...`
// asserts a refusal; check which with `stderr '^status 403$'`.
func cmdOwner(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 2 || (args[0] == "GET" && len(args) != 2) || (args[0] == "POST" && len(args) != 3) || (args[0] != "GET" && args[0] != "POST") {
		ts.Fatalf("usage: owner GET PATH | owner POST PATH BODY-FILE")
	}
	method, path := args[0], args[1]
	if !strings.HasPrefix(path, "/") {
		ts.Fatalf("owner: PATH must start with /: %q", path)
	}
	url, err := ownerURL(ts)
	ts.Check(err)
	var body io.Reader
	if method == "POST" {
		body = strings.NewReader(ts.ReadFile(args[2]))
	}
	req, err := http.NewRequest(method, url+path, body)
	ts.Check(err)
	if method == "POST" {
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Origin", url)
	}
	if cookie := ts.Getenv(sessionCookieEnv); cookie != "" {
		req.Header.Set("Cookie", cookie)
	}
	status, reply, err := do(req)
	if err != nil {
		ts.Fatalf("owner %s %s: %v", method, path, err)
	}
	ts.Stdout().Write(reply)
	fmt.Fprintf(ts.Stderr(), "status %d\n", status)
	ok := status >= 200 && status < 300
	switch {
	case !ok && !neg:
		ts.Fatalf("owner %s %s: status %d", method, path, status)
	case ok && neg:
		ts.Fatalf("owner %s %s: status %d, want a refusal", method, path, status)
	}
}

var httpClient = &http.Client{Timeout: 30 * time.Second}

// sessionCookieEnv holds, in a script's environment, the session cookie
// `passkey NAME login` got from its owner; owner requests carry it, as
// the human's page does.
const sessionCookieEnv = "M1ND_TEST_SESSION_COOKIE"

// do sends req and reads the whole reply.
func do(req *http.Request) (int, []byte, error) {
	resp, err := httpClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	return resp.StatusCode, data, err
}

// ownerURL is the URL of the owner running for the script's repository.
func ownerURL(ts *testscript.TestScript) (string, error) {
	dir, err := runtimeDir(ts)
	if err != nil {
		return "", err
	}
	url := trayclient.Find(dir)
	if url == "" {
		return "", fmt.Errorf("no owner is running for the repository at %s (no live %s in %s)", ts.MkAbs("."), trayclient.RecordFile, dir)
	}
	return url, nil
}

// runtimeDir is m1nd's runtime dir of the repository at the script's
// current directory (the common git dir's m1nd/, also from a worktree).
func runtimeDir(ts *testscript.TestScript) (string, error) {
	repo, err := gitstore.Open(ts.MkAbs("."))
	if err != nil {
		return "", err
	}
	defer repo.Close()
	return repo.RuntimeDir(), nil
}

// cmdJSONGet implements `[!] jsonget [-env NAME] FILE PATH...`. FILE (a
// file, or stdout/stderr of the last command) holds one JSON value. Each
// PATH is dot-separated: an object's key or, in an array, a 0-based index,
// so missions.0.head.phase; "." is the whole document (keys holding a dot
// cannot be named). Without -env, each value is printed on a line of its
// own, becoming the command's stdout: a string as its text (a string with
// new lines spans several), anything else as compact JSON in the
// document's own key order (so a sub-object written to a file is that
// object). With -env NAME, exactly one PATH, the value
// (spelled the same way) is set as the script's $NAME instead, and stdout
// is left as it was, so later lines can still check the command that
// printed the document. A PATH that is not there fails the command;
// negated, every PATH must be absent.
func cmdJSONGet(ts *testscript.TestScript, neg bool, args []string) {
	const usage = "usage: jsonget [-env NAME] FILE PATH..."
	env := ""
	if len(args) > 0 && args[0] == "-env" {
		if len(args) != 4 {
			ts.Fatalf("%s (with -env, exactly one PATH)", usage)
		}
		env, args = args[1], args[2:]
	}
	if len(args) < 2 {
		ts.Fatalf("%s", usage)
	}
	if neg && env != "" {
		ts.Fatalf("jsonget: ! jsonget -env sets nothing; use ! jsonget FILE PATH")
	}
	doc := []byte(ts.ReadFile(args[0]))
	if neg {
		for _, path := range args[1:] {
			values, err := jsonValues(doc, []string{path})
			var missing *missingError
			switch {
			case errors.As(err, &missing):
			case err != nil:
				ts.Fatalf("%s: %v", args[0], err)
			default:
				ts.Fatalf("%s: %s is there (%s)", args[0], path, values[0])
			}
		}
		return
	}
	values, err := jsonValues(doc, args[1:])
	if err != nil {
		ts.Fatalf("%s: %v", args[0], err)
	}
	if env != "" {
		ts.Setenv(env, values[0])
		return
	}
	out := ts.Stdout()
	for _, v := range values {
		fmt.Fprintln(out, v)
	}
}

// missingError is a PATH that is not in the document.
type missingError struct{ path, at string }

func (e *missingError) Error() string {
	if e.at == e.path {
		return fmt.Sprintf("no %s", e.path)
	}
	return fmt.Sprintf("no %s (nothing at %s)", e.path, e.at)
}

// jsonValues reads doc, one JSON value, and spells the value at each path;
// a path that is not there is a *missingError.
func jsonValues(doc []byte, paths []string) ([]string, error) {
	dec := json.NewDecoder(bytes.NewReader(doc))
	var root json.RawMessage
	if err := dec.Decode(&root); err != nil {
		return nil, fmt.Errorf("not JSON: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("something after the JSON value")
	}
	var values []string
	for _, path := range paths {
		raw, err := jsonAt(root, path)
		if err != nil {
			return nil, err
		}
		values = append(values, spell(raw))
	}
	return values, nil
}

// jsonAt walks path down from raw.
func jsonAt(raw json.RawMessage, path string) (json.RawMessage, error) {
	if path == "." {
		return raw, nil
	}
	segs := strings.Split(path, ".")
	for i, seg := range segs {
		at := strings.Join(segs[:i+1], ".")
		switch trimmed := bytes.TrimLeft(raw, " \t\r\n"); {
		case len(trimmed) > 0 && trimmed[0] == '{':
			var obj map[string]json.RawMessage
			if err := json.Unmarshal(raw, &obj); err != nil {
				return nil, err
			}
			v, ok := obj[seg]
			if !ok {
				return nil, &missingError{path: path, at: at}
			}
			raw = v
		case len(trimmed) > 0 && trimmed[0] == '[':
			var arr []json.RawMessage
			if err := json.Unmarshal(raw, &arr); err != nil {
				return nil, err
			}
			n, err := strconv.Atoi(seg)
			if err != nil || n < 0 || n >= len(arr) {
				return nil, &missingError{path: path, at: at}
			}
			raw = arr[n]
		default:
			return nil, &missingError{path: path, at: at}
		}
	}
	return raw, nil
}

// spell is how jsonget prints a value: a string as its text, anything else
// as compact JSON.
func spell(raw json.RawMessage) string {
	var s string
	if t := bytes.TrimSpace(raw); len(t) > 0 && t[0] == '"' && json.Unmarshal(t, &s) == nil {
		return s
	}
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}

// jsonvalMain is jsonget as a program on PATH, named jsonval, for shell
// helpers that loop (where a script command cannot run): `jsonval FILE|-
// PATH...` prints the values as jsonget does ("-" is stdin) and exits 1
// when a PATH is not there.
func jsonvalMain() int {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: jsonval FILE|- PATH...")
		return 2
	}
	var doc []byte
	var err error
	if os.Args[1] == "-" {
		doc, err = io.ReadAll(os.Stdin)
	} else {
		doc, err = os.ReadFile(os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "jsonval:", err)
		return 1
	}
	values, err := jsonValues(doc, os.Args[2:])
	if err != nil {
		fmt.Fprintf(os.Stderr, "jsonval: %s: %v\n", os.Args[1], err)
		return 1
	}
	for _, v := range values {
		fmt.Println(v)
	}
	return 0
}

// waitArgs takes a leading `-timeout D` off args. A negated wait asserts
// that something does NOT happen, so it must say how long it watches.
func waitArgs(ts *testscript.TestScript, neg bool, args []string, usage string) (time.Duration, []string) {
	timeout := defaultWait
	if len(args) >= 2 && args[0] == "-timeout" {
		d, err := time.ParseDuration(args[1])
		if err != nil || d <= 0 {
			ts.Fatalf("%s: bad -timeout %q", usage, args[1])
		}
		timeout, args = d, args[2:]
	} else if neg {
		ts.Fatalf("%s: a negated wait needs -timeout (how long nothing must happen)", usage)
	}
	return timeout, args
}

// poll calls check until it reports done or the timeout passes. A negated
// poll succeeds when the timeout passes first; its failure names what
// happened. check's string says what it saw, for the failure message.
func poll(ts *testscript.TestScript, neg bool, timeout time.Duration, what string, check func() (bool, string)) {
	deadline := time.Now().Add(timeout)
	for {
		done, saw := check()
		if done {
			if neg {
				ts.Fatalf("%s: it happened (%s)", what, saw)
			}
			return
		}
		if time.Now().After(deadline) {
			if !neg {
				ts.Fatalf("%s: not within %v; last seen: %s", what, timeout, saw)
			}
			return
		}
		time.Sleep(pollEvery)
	}
}

// cmdWaitPhase implements `[!] waitphase [-timeout D] MISSION_ID PHASE`:
// reads the mission's head letter straight from the repository of the
// script's current directory (chain.Missions, no process per look) until
// its phase is PHASE, for at most D (default 30s). On time-out it fails
// with the last phase seen and the chain's phases so far. Negated (needs
// -timeout), the head must not reach PHASE within D. Its stdout is empty.
func cmdWaitPhase(ts *testscript.TestScript, neg bool, args []string) {
	const usage = "usage: waitphase [-timeout D] MISSION_ID PHASE"
	timeout, args := waitArgs(ts, neg, args, usage)
	if len(args) != 2 {
		ts.Fatalf("%s", usage)
	}
	id, phase := args[0], args[1]
	if _, err := chain.MissionRef(id); err != nil {
		ts.Fatalf("waitphase: %v", err)
	}
	repo, err := gitstore.Open(ts.MkAbs("."))
	ts.Check(err)
	defer repo.Close()
	m := &chain.Missions{Repo: repo}
	ts.Stdout() // nothing: stdout and stderr no longer hold the last command's
	poll(ts, neg, timeout, fmt.Sprintf("mission %s to reach %s", id, phase), func() (bool, string) {
		head, ok, err := m.HeadOf(id)
		switch {
		case err != nil:
			return false, err.Error()
		case !ok:
			return false, "no letters yet"
		case head.Letter.Phase == phase:
			return true, fmt.Sprintf("#%d %s", head.Letter.MissionSeq, head.Letter.Phase)
		}
		return false, fmt.Sprintf("#%d %s (chain: %s)", head.Letter.MissionSeq, head.Letter.Phase, phases(m, id))
	})
}

// cmdWaitQueue implements `[!] waitqueue [-timeout D] MISSION_ID STATE`:
// waits until the mission, in merge_wait, stands in the landing queue in
// STATE (ready, target_moved, conflict, gate_failed, …), as `m1nd mission
// show` says it.
func cmdWaitQueue(ts *testscript.TestScript, neg bool, args []string) {
	const usage = "usage: waitqueue [-timeout D] MISSION_ID STATE"
	timeout, args := waitArgs(ts, neg, args, usage)
	if len(args) != 2 {
		ts.Fatalf("%s", usage)
	}
	id, state := args[0], args[1]
	repo, err := gitstore.Open(ts.MkAbs("."))
	ts.Check(err)
	defer repo.Close()
	b := ops.New(repo, "")
	ts.Stdout()
	poll(ts, neg, timeout, fmt.Sprintf("mission %s to stand %s in the landing queue", id, state), func() (bool, string) {
		head, err := b.Current(id)
		if err != nil {
			return false, err.Error()
		}
		queue, err := b.Queue(context.Background(), []*chain.Head{head})
		if err != nil {
			return false, err.Error()
		}
		q := queue[id]
		if q == nil {
			return false, "#" + fmt.Sprint(head.Letter.MissionSeq) + " " + head.Letter.Phase + ", not in merge_wait"
		}
		return q.State == state, q.State + ": " + q.Why
	})
}

// phases lists a mission's letters as "#1 judging, #2 executing".
func phases(m *chain.Missions, id string) string {
	log, err := m.Log(context.Background(), id)
	if err != nil {
		return err.Error()
	}
	var out []string
	for _, e := range log {
		out = append(out, fmt.Sprintf("#%d %s", e.Decoded.MissionSeq, e.Decoded.Phase))
	}
	return strings.Join(out, ", ")
}

// cmdWaitFor implements `[!] waitfor [-timeout D] CONDITION`, polling every
// 50ms for at most D (default 30s) until CONDITION holds:
//
//	exists FILE       FILE exists
//	listen HOST:PORT  something accepts TCP connections there
//	owner             serve.json names a live owner (trayclient.Find) that answers HTTP
//	runner ID         that owner lists runner ID as seen and not lost
//	                  (GET /api/runnerd/status: last_seen set, lost false)
//
// On time-out it fails saying what it saw last. Negated (needs -timeout),
// CONDITION must not come to hold within D: a bounded wait for something
// that must not happen. Its stdout is empty.
func cmdWaitFor(ts *testscript.TestScript, neg bool, args []string) {
	const usage = "usage: waitfor [-timeout D] exists FILE | listen HOST:PORT | owner | runner ID"
	timeout, args := waitArgs(ts, neg, args, usage)
	if len(args) == 0 {
		ts.Fatalf("%s", usage)
	}
	var check func() (bool, string)
	switch cond := args[0]; {
	case cond == "exists" && len(args) == 2:
		file := ts.MkAbs(args[1])
		check = func() (bool, string) {
			_, err := os.Stat(file)
			if err != nil {
				return false, err.Error()
			}
			return true, file + " exists"
		}
	case cond == "listen" && len(args) == 2:
		check = func() (bool, string) {
			c, err := net.DialTimeout("tcp", args[1], time.Second)
			if err != nil {
				return false, err.Error()
			}
			c.Close()
			return true, args[1] + " accepted a connection"
		}
	case cond == "owner" && len(args) == 1:
		check = func() (bool, string) {
			url, err := ownerURL(ts)
			if err != nil {
				return false, err.Error()
			}
			status, _, err := get(url + "/")
			if err != nil {
				return false, err.Error()
			}
			return true, fmt.Sprintf("%s answered %d", url, status)
		}
	case cond == "runner" && len(args) == 2:
		check = func() (bool, string) { return runnerLive(ts, args[1]) }
	default:
		ts.Fatalf("%s", usage)
	}
	ts.Stdout() // nothing: stdout and stderr no longer hold the last command's
	poll(ts, neg, timeout, "waitfor "+strings.Join(args, " "), check)
}

// get is a GET with a short deadline, for polling.
func get(url string) (int, []byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "GET", url, nil)
	if err != nil {
		return 0, nil, err
	}
	return do(req)
}

// runnerLive reports whether the owner lists runner id as announced and
// not lost.
func runnerLive(ts *testscript.TestScript, id string) (bool, string) {
	url, err := ownerURL(ts)
	if err != nil {
		return false, err.Error()
	}
	live, said, err := liveRunners(url)
	if err != nil {
		return false, err.Error()
	}
	return live[id], said
}

// liveRunners asks the owner at url which runners have announced and are
// not lost; said is the owner's whole answer, for a failure's message.
func liveRunners(url string) (live map[string]bool, said string, err error) {
	status, body, err := get(url + "/api/runnerd/status")
	if err != nil {
		return nil, "", err
	}
	var reply struct {
		Runners []struct {
			RunnerID string `json:"runner_id"`
			LastSeen string `json:"last_seen"`
			Lost     bool   `json:"lost"`
		} `json:"runners"`
	}
	said = strings.TrimSpace(string(body))
	if status != http.StatusOK || json.Unmarshal(body, &reply) != nil {
		return nil, "", fmt.Errorf("status %d: %s", status, said)
	}
	live = map[string]bool{}
	for _, r := range reply.Runners {
		live[r.RunnerID] = r.LastSeen != "" && !r.Lost
	}
	return live, said, nil
}

// cmdJSONSet implements `jsonset FILE KEY VALUE-FILE|-`: FILE holds one
// JSON object; KEY (a top-level key) is set to the JSON value that
// VALUE-FILE holds (a file, or "-" for the last command's stdout), or
// removed when VALUE-FILE is "delete". The object is written back compact
// with its keys sorted: what it says, not how, is what a scenario edits
// (m1nd post reads any key order).
func cmdJSONSet(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: jsonset FILE KEY VALUE-FILE|-|delete")
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal([]byte(ts.ReadFile(args[0])), &obj); err != nil || obj == nil {
		ts.Fatalf("jsonset: %s does not hold a JSON object: %v", args[0], err)
	}
	switch src := args[2]; src {
	case "delete":
		delete(obj, args[1])
	default:
		if src == "-" {
			src = "stdout"
		}
		value := json.RawMessage(strings.TrimSpace(ts.ReadFile(src)))
		if !json.Valid(value) {
			ts.Fatalf("jsonset: %s does not hold one JSON value", args[2])
		}
		obj[args[1]] = value
	}
	out, err := json.Marshal(obj)
	if err != nil {
		ts.Fatalf("jsonset: %v", err)
	}
	ts.Check(os.WriteFile(ts.MkAbs(args[0]), append(out, '\n'), 0o644))
}

// cmdSpawnWithin implements `spawnwithin [-timeout D] LIMIT SINCE-FILE
// SPAWN-ARGS...`: runs `m1nd spawn SPAWN-ARGS... --json` every 200ms until
// one is accepted, for at most D (default 10s), and measures the time from
// the moment in SINCE-FILE (`date +%s.%N`, written when the clock should
// start: before a daemon starts, or a pin is added) to that spawn. Its
// stdout is the accepted spawn's reply; its stderr says "spawn accepted
// after N.N s". It fails when no spawn was accepted within D (saying what
// the last one answered), or the first took longer than LIMIT.
func cmdSpawnWithin(ts *testscript.TestScript, neg bool, args []string) {
	const usage = "usage: spawnwithin [-timeout D] LIMIT SINCE-FILE SPAWN-ARGS..."
	if neg {
		ts.Fatalf("unsupported: ! spawnwithin")
	}
	timeout := 10 * time.Second
	if len(args) >= 2 && args[0] == "-timeout" {
		d, err := time.ParseDuration(args[1])
		if err != nil || d <= 0 {
			ts.Fatalf("%s: bad -timeout %q", usage, args[1])
		}
		timeout, args = d, args[2:]
	}
	if len(args) < 3 {
		ts.Fatalf("%s", usage)
	}
	limit, err := time.ParseDuration(args[0])
	if err != nil {
		ts.Fatalf("%s: bad LIMIT %q", usage, args[0])
	}
	secs, err := strconv.ParseFloat(strings.TrimSpace(ts.ReadFile(args[1])), 64)
	if err != nil {
		ts.Fatalf("%s: %s does not hold a time (date +%%s.%%N): %v", usage, args[1], err)
	}
	since := time.Unix(0, int64(secs*1e9))
	spawn := append(append([]string{"spawn"}, args[2:]...), "--json")
	for {
		err := ts.Exec("m1nd", spawn...)
		took := time.Since(since)
		if err == nil {
			reply := ts.ReadFile("stdout")
			if took > limit {
				ts.Fatalf("spawn accepted after %.1f s: more than %v", took.Seconds(), limit)
			}
			fmt.Fprint(ts.Stdout(), reply)
			fmt.Fprintf(ts.Stderr(), "spawn accepted after %.1f s\n", took.Seconds())
			return
		}
		if took > timeout {
			ts.Fatalf("no spawn accepted within %.1f s; the last answered: %s%s", took.Seconds(), ts.ReadFile("stdout"), ts.ReadFile("stderr"))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// cmdPasskey implements `passkey NAME register|id|enrolment|login` and
// `passkey NAME sign OPTIONS-FILE`: a software passkey named NAME (the same key in
// every command of a scenario, rulestest.Named). register writes it as the
// brain's first key set in the repository at the current directory, as
// the tray's registration does (brain.RegisterFirstKey); id prints its
// credential id; enrolment prints the enrolment request a teammate's tray
// makes for it (POST /api/passkey/enrolment); login logs in to the
// running owner with it, as the page does, and keeps the session's cookie
// for the script's later owner requests. sign reads a gesture's
// options (the owner's reply to /api/gesture/options, a file or stdout)
// and prints the commit body a browser sends: the gesture's id and the
// passkey's assertion over its challenge, made on the running owner's
// page.
func cmdPasskey(ts *testscript.TestScript, neg bool, args []string) {
	const usage = "usage: passkey NAME register|id|enrolment|login | passkey NAME sign OPTIONS-FILE"
	if neg || len(args) < 2 || (args[1] == "sign") != (len(args) == 3) || len(args) > 3 {
		ts.Fatalf(usage)
	}
	a := rulestest.Named(args[0])
	now := time.Now().UTC().Truncate(time.Second)
	key := brain.Passkey{CredentialID: a.ID, PublicKey: a.Key.PKIX, Label: args[0], AddedAt: chain.Timestamp(now)}
	switch args[1] {
	case "register":
		repo, err := gitstore.Open(ts.MkAbs("."))
		ts.Check(err)
		defer repo.Close()
		_, err = brain.RegisterFirstKey(context.Background(), repo, key, now)
		ts.Check(err)
		return
	case "id":
		fmt.Fprintln(ts.Stdout(), a.ID)
		return
	case "enrolment":
		data, _ := json.Marshal(struct {
			Schema string `json:"schema"`
			brain.Passkey
		}{tray.EnrolmentSchema, key})
		fmt.Fprintln(ts.Stdout(), base64.RawURLEncoding.EncodeToString(data))
		return
	case "login":
		passkeyLogin(ts, a)
		return
	case "sign":
	default:
		ts.Fatalf(usage)
	}
	var opts struct {
		GestureID string `json:"gesture_id"`
		PublicKey struct {
			Challenge string `json:"challenge"`
		} `json:"publicKey"`
	}
	if err := json.Unmarshal([]byte(ts.ReadFile(args[2])), &opts); err != nil || opts.GestureID == "" {
		ts.Fatalf("passkey sign: %s holds no gesture's options: %v", args[2], err)
	}
	challenge, err := base64.RawURLEncoding.DecodeString(opts.PublicKey.Challenge)
	ts.Check(err)
	url, err := ownerURL(ts)
	ts.Check(err)
	a.Origin = strings.TrimSuffix(strings.Replace(url, "127.0.0.1", "localhost", 1), "/")
	p := a.Assert(challenge, nil)
	body, _ := json.Marshal(map[string]any{"gesture_id": opts.GestureID, "credential": map[string]any{"id": p.CredentialID, "type": "public-key",
		"response": map[string]any{"authenticatorData": p.AuthenticatorData, "clientDataJSON": p.ClientDataJSON, "signature": p.Signature}}})
	ts.Stdout().Write(append(body, '\n'))
}

// passkeyLogin logs in to the script's owner with a: the session's
// options, a's assertion over their challenge made on the owner's page,
// the login; the cookie it sets goes to sessionCookieEnv.
func passkeyLogin(ts *testscript.TestScript, a *rulestest.Authenticator) {
	url, err := ownerURL(ts)
	ts.Check(err)
	a.Origin = strings.TrimSuffix(strings.Replace(url, "127.0.0.1", "localhost", 1), "/")
	post := func(path string, body []byte) *http.Response {
		req, err := http.NewRequest("POST", url+path, strings.NewReader(string(body)))
		ts.Check(err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Origin", url)
		resp, err := httpClient.Do(req)
		ts.Check(err)
		return resp
	}
	resp := post("/api/session/options", []byte("{}"))
	var opts struct {
		PublicKey struct {
			Challenge string `json:"challenge"`
		} `json:"publicKey"`
	}
	err = json.NewDecoder(resp.Body).Decode(&opts)
	resp.Body.Close()
	if err != nil || resp.StatusCode != 200 {
		ts.Fatalf("passkey login: options: status %d, %v", resp.StatusCode, err)
	}
	challenge, err := base64.RawURLEncoding.DecodeString(opts.PublicKey.Challenge)
	ts.Check(err)
	p := a.Assert(challenge, nil)
	body, _ := json.Marshal(map[string]any{"credential": map[string]any{"id": p.CredentialID, "type": "public-key",
		"response": map[string]any{"authenticatorData": p.AuthenticatorData, "clientDataJSON": p.ClientDataJSON, "signature": p.Signature}}})
	resp = post("/api/session/login", body)
	reply, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || len(resp.Cookies()) == 0 {
		ts.Fatalf("passkey login: status %d: %s", resp.StatusCode, reply)
	}
	c := resp.Cookies()[0]
	ts.Setenv(sessionCookieEnv, c.Name+"="+c.Value)
}

// cmdCanonical implements `canonical FILE`: the canonical bytes of the
// mission letter in FILE (a file, or stdout), with no new line after them:
// what a raw git write of that letter holds, as m1nd would write it.
func cmdCanonical(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: canonical FILE")
	}
	l, err := chain.DecodeLetter([]byte(ts.ReadFile(args[0])))
	ts.Check(err)
	ts.Stdout().Write(l.Canonical())
}

// cmdApprovePins implements `approvepins [CONFIG...]`: the build runners
// of the repository's runners.toml (or of the CONFIG files, together),
// with its runnerd key, approved as the next
// version of refs/m1nd/pins as `m1nd runners approve` does at a terminal
// (origin human-tty), for the scenarios whose subject is not that verb
// (runners_approve.txtar drives the verb at a real terminal). It prints
// "approved runner pins vN".
func cmdApprovePins(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("usage: approvepins [CONFIG...]")
	}
	repo, err := gitstore.Open(ts.MkAbs("."))
	ts.Check(err)
	defer repo.Close()
	files := []string{filepath.Join(repo.RuntimeDir(), runners.ConfigFile)}
	if len(args) > 0 {
		files = files[:0]
		for _, a := range args {
			files = append(files, ts.MkAbs(a))
		}
	}
	key, err := secret.RunnerPublicKey(repo)
	ts.Check(err)
	var approvals []brain.ApprovedRunner
	for _, file := range files {
		cfg, err := runners.LoadConfig(file)
		ts.Check(err)
		more, _ := runners.Approvals(cfg, key)
		approvals = append(approvals, more...)
	}
	if len(approvals) == 0 {
		ts.Fatalf("approvepins: runners.toml pins no build runner")
	}
	ctx := context.Background()
	p, set, err := brain.PreparePins(ctx, repo, approvals, time.Now().UTC().Truncate(time.Second))
	ts.Check(err)
	_, err = (&brain.Store{Repo: repo}).CommitPins(ctx, p, rules.OriginHumanTTY, nil)
	ts.Check(err)
	fmt.Fprintf(ts.Stdout(), "approved runner pins v%d\n", set.Version)
}
