package testscripts

// Real git servers on loopback for the forge round trip (issue 27):
// git-http-backend behind Debian's nginx with basic auth (fcgiwrap in
// between, as Debian documents it), gitolite3 behind a loopback sshd, and
// a plain bare repository on disk. Each serves bare repositories from a
// folder on this machine, so a test can look at what a push left there.
// The servers are the packages' own binaries, started here with configs
// of the test's own; .ci/run installs them (nginx-light, fcgiwrap,
// gitolite3, openssh-server) and under CI a missing one fails the test.

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/m1nd/m1nd/brain"
	"github.com/m1nd/m1nd/gitstore"
	"github.com/m1nd/m1nd/rules/rulestest"
	"github.com/m1nd/m1nd/testkit/gittest"
)

// forge is a git server: where its repositories live, how a clone names
// them, and how a repository gets m1nd's hook the way that server's admin
// would install it.
type forge struct {
	name string
	// dir is the folder of bare repository name on this machine.
	dir func(name string) string
	// url is what a clone pushes to for name.
	url func(name string) string
	// config is git config a clone of this forge needs (ssh's key).
	config [][2]string
	// create makes bare repository name, with m1nd's hook when guarded.
	create func(t *testing.T, name string, guarded bool)
	// trust has guarded repository name take the first key set whose
	// fingerprint is fp (hooks install --bare --trust-key), as its admin
	// does once the first person registered their passkey.
	trust func(t *testing.T, name, fp string)
}

// needTools skips the test when a server binary is missing, or fails it
// under CI, where .ci/run installs them.
func needTools(t *testing.T, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("%s is not installed (.ci/run installs it): %v", tool, err)
			}
			t.Skipf("%s is not installed (apt-get install nginx-light fcgiwrap gitolite3 openssh-server): %v", tool, err)
		}
	}
}

// freePort is a loopback port nobody listened on a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// startDaemon starts a server in the foreground, stopped at cleanup with
// its whole process group (fcgiwrap -c forks workers, nginx its worker:
// killing the parent alone left them running, holding the port and
// every file the test binary had open), and waits for it to listen on
// port.
func startDaemon(t *testing.T, port int, logPath string, name string, args ...string) {
	t.Helper()
	log, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(name, args...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
		log.Close()
	})
	if port == 0 {
		return
	}
	for deadline := time.Now().Add(10 * time.Second); ; {
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err == nil {
			c.Close()
			return
		}
		if time.Now().After(deadline) {
			out, _ := os.ReadFile(logPath)
			t.Fatalf("%s does not listen on %d: %v\n%s", name, port, err, out)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// teamKey is the first passkey of the team whose remotes these tests make.
func teamKey() *rulestest.Authenticator { return rulestest.Named("the team's first key") }

// keySetFingerprint is the fingerprint of repo's first key set, as brain
// keys shows it: what a remote's admin trusts and a newcomer's sync names.
func keySetFingerprint(t testing.TB, repo *gitstore.Repo) string {
	t.Helper()
	head, ok, err := repo.ReadRef(brain.KeysRef)
	if err != nil || !ok {
		t.Fatalf("no key set to name: %v", err)
	}
	first, err := brain.FirstSet(repo, head)
	if err != nil {
		t.Fatal(err)
	}
	return first.Fingerprint()
}

// trustKeySet has the guarded bare repository at dir take the first key
// set with fingerprint fp (hooks install --bare --trust-key).
func trustKeySet(t testing.TB, dir, fp string) {
	t.Helper()
	if out, err := exec.Command(m1ndBin(t), "-C", dir, "hooks", "install", "--bare", "--trust-key", fp).CombinedOutput(); err != nil {
		t.Fatalf("hooks install --bare --trust-key: %v\n%s", err, out)
	}
}

// bareRepo makes a bare repository at dir, with m1nd's hook when guarded.
func bareRepo(t *testing.T, dir string, guarded bool) {
	t.Helper()
	if out, err := exec.Command("git", "init", "-q", "--bare", dir).CombinedOutput(); err != nil {
		t.Fatalf("git init --bare: %v\n%s", err, out)
	}
	if guarded {
		if out, err := exec.Command(m1ndBin(t), "-C", dir, "hooks", "install", "--bare").CombinedOutput(); err != nil {
			t.Fatalf("hooks install --bare: %v\n%s", err, out)
		}
	}
}

// fileForge is bare repositories on disk, reached by path.
func fileForge(t *testing.T) *forge {
	root := t.TempDir()
	f := &forge{name: "bare", dir: func(name string) string { return filepath.Join(root, name+".git") }}
	f.url = f.dir
	f.create = func(t *testing.T, name string, guarded bool) { bareRepo(t, f.dir(name), guarded) }
	f.trust = func(t *testing.T, name, fp string) { trustKeySet(t, f.dir(name), fp) }
	return f
}

// httpForgeSite is git-http-backend behind nginx with basic auth:
// fastcgi_read_timeout is how long nginx waits on the backend's silence
// before it answers 504 (a push whose hooks outlive it is cut short).
type httpForgeSite struct {
	*forge
	port int
}

// httpForge starts nginx and fcgiwrap serving the repositories of one
// folder over smart HTTP, every request behind basic auth (alice), with
// the given fastcgi_read_timeout.
func httpForge(t *testing.T, readTimeout time.Duration) *httpForgeSite {
	t.Helper()
	needTools(t, "nginx", "fcgiwrap")
	run := t.TempDir()
	root := filepath.Join(run, "repos")
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	// nginx reads {PLAIN} passwords as they are: a test's credentials.
	if err := os.WriteFile(filepath.Join(run, "htpasswd"), []byte("alice:{PLAIN}s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(run, "fcgi.sock")
	startDaemon(t, 0, filepath.Join(run, "fcgiwrap.log"), "fcgiwrap", "-c", "4", "-s", "unix:"+sock)
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(sock); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("fcgiwrap made no socket")
		}
	}
	port := freePort(t)
	conf := fmt.Sprintf(`daemon off;
master_process on;
worker_processes 1;
user root;
pid %[1]s/nginx.pid;
error_log %[1]s/nginx-error.log;
events { worker_connections 64; }
http {
	access_log off;
	client_body_temp_path %[1]s/body;
	fastcgi_temp_path %[1]s/fastcgi;
	proxy_temp_path %[1]s/proxy;
	uwsgi_temp_path %[1]s/uwsgi;
	scgi_temp_path %[1]s/scgi;
	client_max_body_size 0;
	server {
		listen 127.0.0.1:%[2]d;
		auth_basic "m1nd test forge";
		auth_basic_user_file %[1]s/htpasswd;
		location / {
			include /etc/nginx/fastcgi_params;
			fastcgi_pass unix:%[3]s;
			fastcgi_param SCRIPT_FILENAME /usr/lib/git-core/git-http-backend;
			fastcgi_param GIT_PROJECT_ROOT %[4]s;
			fastcgi_param GIT_HTTP_EXPORT_ALL "";
			fastcgi_param PATH_INFO $uri;
			fastcgi_param REMOTE_USER $remote_user;
			fastcgi_param PATH /usr/local/bin:/usr/bin:/bin;
			fastcgi_read_timeout %[5]ds;
		}
	}
}
`, run, port, sock, root, int(readTimeout.Seconds()))
	confPath := filepath.Join(run, "nginx.conf")
	if err := os.WriteFile(confPath, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	startDaemon(t, port, filepath.Join(run, "nginx.log"), "nginx", "-c", confPath, "-p", run, "-e", filepath.Join(run, "nginx-error.log"))
	f := &forge{name: "http", dir: func(name string) string { return filepath.Join(root, name+".git") }}
	f.url = func(name string) string { return fmt.Sprintf("http://alice:s3cret@127.0.0.1:%d/%s.git", port, name) }
	f.create = func(t *testing.T, name string, guarded bool) { bareRepo(t, f.dir(name), guarded) }
	f.trust = func(t *testing.T, name, fp string) { trustKeySet(t, f.dir(name), fp) }
	// Basic auth holds: without credentials nginx answers 401.
	bareRepo(t, f.dir("private"), false)
	anon := exec.Command("git", "ls-remote", fmt.Sprintf("http://127.0.0.1:%d/private.git", port))
	anon.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0", "GIT_ASKPASS=")
	if out, err := anon.CombinedOutput(); err == nil || !strings.Contains(string(out), "could not read Username") {
		t.Fatalf("an anonymous ls-remote was not refused (%v):\n%s", err, out)
	}
	return &httpForgeSite{forge: f, port: port}
}

// gitoliteUser is the account gitolite runs as: sshd logs in as it for
// every client key, and it owns the repositories. .ci/run makes it; a
// test run as root makes it when it is missing.
const gitoliteUser = "m1nd-gitolite"

// gitoliteForge starts sshd on loopback in front of gitolite3, set up for
// this test with an admin key, repo-specific hooks enabled (LOCAL_CODE)
// and m1nd's pre-receive as the hook "m1nd" a repository opts into with
// `option hook.pre-receive = m1nd` in gitolite.conf, pushed through the
// gitolite-admin repository as its admin does it.
func gitoliteForge(t *testing.T) *forge {
	t.Helper()
	needTools(t, "gitolite", "/usr/sbin/sshd", "ssh", "ssh-keygen")
	if os.Geteuid() != 0 {
		t.Skip("the gitolite forge needs root (sshd logs in as another account)")
	}
	u, err := user.Lookup(gitoliteUser)
	if err != nil {
		if out, err := exec.Command("useradd", "--system", "--create-home", "--shell", "/bin/sh", gitoliteUser).CombinedOutput(); err != nil {
			t.Fatalf("useradd %s: %v\n%s", gitoliteUser, err, out)
		}
		if u, err = user.Lookup(gitoliteUser); err != nil {
			t.Fatal(err)
		}
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	// The account's home is this test's: a fresh gitolite every run.
	base, err := os.MkdirTemp("", "m1nd-gitolite-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(base, "home")
	// -p '*': no password, but not locked ("!"), which sshd without PAM
	// takes for a closed account and refuses every key of.
	if out, err := exec.Command("usermod", "-d", home, "-p", "*", gitoliteUser).CombinedOutput(); err != nil {
		t.Fatalf("usermod: %v\n%s", err, out)
	}
	client := filepath.Join(base, "client")
	for _, d := range []string{home, filepath.Join(home, "bin"), filepath.Join(home, "local", "hooks", "repo-specific"), client} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// The server's m1nd: a copy of the pair the account can run.
	m1nd := filepath.Join(home, "bin", "m1nd")
	data, err := os.ReadFile(m1ndBin(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"m1nd", "m1nd-full"} {
		if err := os.WriteFile(filepath.Join(home, "bin", name), data, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	key := filepath.Join(client, "admin")
	if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "admin", "-f", key).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen: %v\n%s", err, out)
	}
	pub := filepath.Join(home, "admin.pub")
	if data, err := os.ReadFile(key + ".pub"); err != nil || os.WriteFile(pub, data, 0o644) != nil {
		t.Fatalf("admin.pub: %v", err)
	}
	// The hook gitolite links in: the script hooks install --bare --print
	// writes, naming the server's m1nd.
	scratch := filepath.Join(base, "scratch.git")
	bareRepo(t, scratch, false)
	linkHook := func(t *testing.T, more ...string) {
		script, err := exec.Command(m1nd, append([]string{"-C", scratch, "hooks", "install", "--bare", "--print"}, more...)...).Output()
		if err != nil {
			t.Fatalf("hooks install --bare --print: %v", err)
		}
		if err := os.WriteFile(filepath.Join(home, "local", "hooks", "repo-specific", "m1nd"), script, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := chownTree(home, uid, gid); err != nil {
			t.Fatal(err)
		}
	}
	linkHook(t)
	asGit := func(script string) {
		t.Helper()
		cmd := exec.Command("su", "-s", "/bin/sh", "-c", script, gitoliteUser)
		cmd.Env = []string{"HOME=" + home, "PATH=" + filepath.Join(home, "bin") + ":/usr/bin:/bin", "USER=" + gitoliteUser}
		cmd.Dir = home
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("as %s: %s: %v\n%s", gitoliteUser, script, err, out)
		}
	}
	asGit("gitolite setup -pk " + pub)
	// repo-specific hooks, from LOCAL_CODE ($HOME/local).
	asGit(`perl -0pi -e 's/# LOCAL_CODE\s+=>\s+"\$ENV\{HOME\}\/local",/LOCAL_CODE => "\$ENV{HOME}\/local",/; s/# (\x27repo-specific-hooks\x27,)/$1/' .gitolite.rc && grep -q '^\s*LOCAL_CODE' .gitolite.rc && grep -q "^\s*'repo-specific-hooks'," .gitolite.rc`)

	hostKey := filepath.Join(base, "host_key")
	if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", hostKey).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen host: %v\n%s", err, out)
	}
	if err := os.MkdirAll("/run/sshd", 0o755); err != nil {
		t.Fatal(err)
	}
	port := freePort(t)
	sshdConf := filepath.Join(base, "sshd_config")
	if err := os.WriteFile(sshdConf, []byte(fmt.Sprintf(`ListenAddress 127.0.0.1
Port %d
HostKey %s
PidFile %s/sshd.pid
AuthorizedKeysFile %%h/.ssh/authorized_keys
AllowUsers %s
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
PermitRootLogin no
`, port, hostKey, base, gitoliteUser)), 0o600); err != nil {
		t.Fatal(err)
	}
	startDaemon(t, port, filepath.Join(base, "sshd.log"), "/usr/sbin/sshd", "-D", "-e", "-f", sshdConf)

	sshCommand := fmt.Sprintf("ssh -i %s -o IdentitiesOnly=yes -o BatchMode=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR", key)
	f := &forge{
		name:   "gitolite",
		dir:    func(name string) string { return filepath.Join(home, "repositories", name+".git") },
		url:    func(name string) string { return fmt.Sprintf("ssh://%s@127.0.0.1:%d/%s", gitoliteUser, port, name) },
		config: [][2]string{{"core.sshCommand", sshCommand}},
	}
	// The hook is one script for every repository that opts in: a trust is
	// the script linked in again with it.
	f.trust = func(t *testing.T, _, fp string) { linkHook(t, "--trust-key", fp) }
	admin := gittest.Open(t, filepath.Join(client, "gitolite-admin"))
	gittest.Open(t, client).Git("-c", "core.sshCommand="+sshCommand, "clone", "-q", f.url("gitolite-admin"), admin.Dir)
	admin.Git("config", "core.sshCommand", sshCommand)
	f.create = func(t *testing.T, name string, guarded bool) {
		t.Helper()
		conf := filepath.Join(admin.Dir, "conf", "gitolite.conf")
		entry := fmt.Sprintf("\nrepo %s\n    RW+ = admin\n", name)
		if guarded {
			entry += "    option hook.pre-receive = m1nd\n"
		}
		old, err := os.ReadFile(conf)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(conf, append(old, entry...), 0o644); err != nil {
			t.Fatal(err)
		}
		admin.Git("commit", "-q", "-am", "add "+name)
		admin.Git("push", "-q", "origin", "master")
		if guarded {
			if _, err := os.Lstat(filepath.Join(f.dir(name), "hooks", "pre-receive.h00-m1nd")); err != nil {
				t.Fatalf("gitolite did not link m1nd's hook into %s: %v", name, err)
			}
		}
	}
	return f
}

// chownTree gives every file under root to uid:gid.
func chownTree(root string, uid, gid int) error {
	return filepath.Walk(root, func(path string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(path, uid, gid)
	})
}

// giteaVersion is the Gitea .ci/gitea.sh builds from its Go module.
const giteaVersion = "1.27.3"

// giteaDir is where .ci/gitea.sh left Gitea: its binary, and its source
// tree, whose options/ a build without bindata reads at run time.
func giteaDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("M1ND_GITEA_DIR")
	if dir == "" {
		home, _ := os.UserHomeDir()
		dir = filepath.Join(home, ".cache", "m1nd-gitea", giteaVersion)
	}
	if _, err := os.Stat(filepath.Join(dir, "gitea")); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("no Gitea in %s (.ci/gitea.sh builds it): %v", dir, err)
		}
		t.Skipf("no Gitea in %s: run .ci/gitea.sh (builds Gitea %s from its Go module, about 4 minutes)", dir, giteaVersion)
	}
	return dir
}

// giteaForge starts Gitea on loopback (sqlite, one admin, alice), its
// built-in ssh server too, with DISABLE_GIT_HOOKS = false: a guarded
// repository gets m1nd's pre-receive through Gitea's git-hooks API, as an
// admin sets it (PATCH /repos/{owner}/{repo}/hooks/git/pre-receive), and
// survives Gitea writing the repository's hooks again. overSSH makes the
// clones push over ssh instead of HTTP.
func giteaForge(t *testing.T, overSSH bool) *forge {
	t.Helper()
	dir := giteaDir(t)
	needTools(t, "ssh", "ssh-keygen")
	work := t.TempDir()
	bin := filepath.Join(dir, "gitea")
	port, sshPort := freePort(t), freePort(t)
	env := append(os.Environ(), "GITEA_I_AM_BEING_UNSAFE_RUNNING_AS_ROOT=true", "GITEA_WORK_DIR="+work)
	gitea := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(bin, append([]string{"--config", filepath.Join(work, "app.ini"), "--work-path", work}, args...)...)
		cmd.Env, cmd.Dir = env, work
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("gitea %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return strings.TrimSpace(string(out))
	}
	secret := func(name string) string {
		cmd := exec.Command(bin, "generate", "secret", name)
		cmd.Env = env
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("gitea generate secret %s: %v", name, err)
		}
		return strings.TrimSpace(string(out))
	}
	runUser := "root"
	if u, err := user.Current(); err == nil {
		runUser = u.Username
	}
	ini := fmt.Sprintf(`APP_NAME = m1nd test forge
RUN_USER = %[1]s
RUN_MODE = prod
WORK_PATH = %[2]s
[server]
PROTOCOL = http
HTTP_ADDR = 127.0.0.1
HTTP_PORT = %[3]d
ROOT_URL = http://127.0.0.1:%[3]d/
LOCAL_ROOT_URL = http://127.0.0.1:%[3]d/
APP_DATA_PATH = %[2]s/data
STATIC_ROOT_PATH = %[4]s
START_SSH_SERVER = true
SSH_DOMAIN = 127.0.0.1
SSH_LISTEN_HOST = 127.0.0.1
SSH_PORT = %[5]d
SSH_LISTEN_PORT = %[5]d
BUILTIN_SSH_SERVER_USER = %[1]s
OFFLINE_MODE = true
LFS_START_SERVER = false
[database]
DB_TYPE = sqlite3
PATH = %[2]s/data/gitea.db
[repository]
ROOT = %[2]s/repos
[security]
INSTALL_LOCK = true
SECRET_KEY = %[6]s
INTERNAL_TOKEN = %[7]s
DISABLE_GIT_HOOKS = false
[service]
DISABLE_REGISTRATION = true
[indexer]
REPO_INDEXER_ENABLED = false
[cron]
ENABLED = false
[log]
MODE = console
LEVEL = warn
`, runUser, work, port, filepath.Join(dir, "src"), sshPort, secret("SECRET_KEY"), secret("INTERNAL_TOKEN"))
	if err := os.WriteFile(filepath.Join(work, "app.ini"), []byte(ini), 0o600); err != nil {
		t.Fatal(err)
	}
	gitea("migrate")
	const password = "s3cret-Passw0rd"
	gitea("admin", "user", "create", "--admin", "--username", "alice", "--password", password, "--email", "alice@example.com", "--must-change-password=false")
	cmd := exec.Command(bin, "--config", filepath.Join(work, "app.ini"), "--work-path", work, "web")
	cmd.Env, cmd.Dir = env, work
	log, err := os.Create(filepath.Join(work, "web.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait(); log.Close() })
	api := func(method, path, body string) string {
		t.Helper()
		req, err := http.NewRequest(method, fmt.Sprintf("http://127.0.0.1:%d/api/v1%s", port, path), strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.SetBasicAuth("alice", password)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("gitea API %s %s: %v", method, path, err)
		}
		defer resp.Body.Close()
		out, _ := io.ReadAll(resp.Body)
		if resp.StatusCode >= 300 {
			t.Fatalf("gitea API %s %s: %s\n%s", method, path, resp.Status, out)
		}
		return string(out)
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/api/v1/version", port)); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			out, _ := os.ReadFile(filepath.Join(work, "web.log"))
			t.Fatalf("gitea does not answer on %d:\n%s", port, out)
		}
	}
	f := &forge{name: "gitea", dir: func(name string) string { return filepath.Join(work, "repos", "alice", name+".git") }}
	f.url = func(name string) string {
		return fmt.Sprintf("http://alice:%s@127.0.0.1:%d/alice/%s.git", password, port, name)
	}
	if overSSH {
		key := filepath.Join(work, "alice-key")
		if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "alice", "-f", key).CombinedOutput(); err != nil {
			t.Fatalf("ssh-keygen: %v\n%s", err, out)
		}
		pub, err := os.ReadFile(key + ".pub")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := json.Marshal(map[string]string{"title": "alice", "key": strings.TrimSpace(string(pub))})
		api("POST", "/user/keys", string(body))
		f.name = "gitea-ssh"
		f.url = func(name string) string {
			return fmt.Sprintf("ssh://%s@127.0.0.1:%d/alice/%s.git", runUser, sshPort, name)
		}
		f.config = [][2]string{{"core.sshCommand", fmt.Sprintf("ssh -i %s -o IdentitiesOnly=yes -o BatchMode=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR", key)}}
	}
	f.trust = func(t *testing.T, name, fp string) {
		script, err := exec.Command(m1ndBin(t), "-C", f.dir(name), "hooks", "install", "--bare", "--trust-key", fp, "--print").Output()
		if err != nil {
			t.Fatalf("hooks install --bare --trust-key --print: %v", err)
		}
		body, _ := json.Marshal(map[string]string{"content": string(script)})
		api("PATCH", "/repos/alice/"+name+"/hooks/git/pre-receive", string(body))
	}
	f.create = func(t *testing.T, name string, guarded bool) {
		t.Helper()
		api("POST", "/user/repos", fmt.Sprintf(`{"name":%q}`, name))
		if !guarded {
			return
		}
		// hooks install --bare refuses a Gitea repository and says to use
		// the API; --print gives the script to set through it.
		script, err := exec.Command(m1ndBin(t), "-C", f.dir(name), "hooks", "install", "--bare", "--print").Output()
		if err != nil {
			t.Fatalf("hooks install --bare --print: %v", err)
		}
		body, _ := json.Marshal(map[string]string{"content": string(script)})
		api("PATCH", "/repos/alice/"+name+"/hooks/git/pre-receive", string(body))
		// Gitea writes the repository's hooks again (its admin task
		// "resynchronize hooks"): the one set through its API stays.
		gitea("admin", "regenerate", "hooks")
		if _, err := os.Stat(filepath.Join(f.dir(name), "hooks", "pre-receive.d", "pre-receive")); err != nil {
			t.Fatalf("m1nd's hook did not survive Gitea regenerating hooks: %v", err)
		}
	}
	return f
}
